"""Figure descriptions (MathReal's DG text) written from the figure spec."""

from __future__ import annotations

import pytest

from render.describe import describe_figure
from synth.generators import get_family
from synth.records import Figure

TRIANGLE = Figure("triangle", {"size_in": [3, 2], "elements": [
    {"id": "pt_A", "type": "point", "label": "A"},
    {"id": "label_A", "type": "label", "text": "A"},
    {"id": "label_B", "type": "label", "text": "B"},
    {"id": "side_AB", "type": "segment", "from": "A", "to": "B", "value": 5, "unit": "cm"},
    {"id": "side_BC", "type": "segment", "from": "B", "to": "C", "text": "7.5 cm", "value": 7.5, "unit": "cm"},
    {"id": "angle_B", "type": "angle_mark", "vertex": "B", "value": 40.0, "unit": "°"},
    {"id": "angle_C", "type": "angle_mark", "vertex": "C", "value": 50, "unit": "°", "hidden": True},
    {"id": "right_A", "type": "right_angle", "vertex": "A"},
]})


def test_no_figure_has_no_description() -> None:
    assert describe_figure(None) is None


def test_each_element_kind_gets_a_readable_sentence_with_its_drawn_value() -> None:
    text = describe_figure(TRIANGLE)
    assert text.startswith("The figure is a triangle diagram.")
    assert "Segment AB is labelled 5 cm." in text
    assert "Segment BC is labelled 7.5 cm." in text  # the printed text, not a re-formatted value
    assert "The angle at B is marked 40°." in text  # 40.0 prints as a worksheet would
    assert "The angle at A is marked as a right angle." in text


def test_hidden_values_are_not_revealed() -> None:
    text = describe_figure(TRIANGLE)
    assert "The angle at C is marked with a question mark" in text
    assert "50" not in text


def test_repetitive_primitives_are_summarised_once() -> None:
    chart = Figure("bar_chart", {"title": "Books read", "elements": [
        {"id": "axis_y", "type": "axis", "label": "y", "min": 0, "max": 10, "step": 2, "title": "books"},
        *[{"id": f"tick_{v}", "type": "tick", "text": str(v)} for v in (0, 2, 4)],
        *[{"id": f"grid_{v}", "type": "gridline"} for v in range(5)],
        {"id": "bar_1", "type": "bar", "label": "Mon", "value": 4},
        {"id": "bar_2", "type": "bar", "label": "Tue", "value": 6},
        {"id": "apple_1", "type": "object", "name": "apple"}, {"id": "apple_2", "type": "object", "name": "apple"},
    ]})
    text = describe_figure(chart)
    assert "Its title is “Books read”." in text
    assert "The y-axis runs from 0 to 10 in steps of 2 and is titled “books”." in text
    assert text.count("tick") == 1 and "The axis ticks are labelled 0, 2, 4." in text
    assert "A grid of 5 lines is drawn." in text
    assert "The bar for Mon has height 4. The bar for Tue has height 6." in text
    assert "There are 2 objects drawn: 2 apples." in text


def test_chart_categories_name_their_bars_and_undrawn_objects_are_left_out() -> None:
    chart = Figure("bar_chart", {"elements": [
        {"id": "bar_0", "type": "bar", "index": 0, "value": 5},
        {"id": "label_0", "type": "label", "index": 0, "text": "Ana"},
        {"id": "obj_1", "type": "object", "present": True}, {"id": "obj_2", "type": "object", "present": False},
    ]})
    text = describe_figure(chart)
    assert "The bar for Ana has height 5." in text and "label" not in text
    assert "There is 1 object drawn." in text


def test_tables_read_row_by_row_and_clocks_state_their_time() -> None:
    table = Figure("table", {"elements": [
        {"id": f"cell_{r}_{c}", "type": "cell", "row": r, "col": c, "text": t}
        for r, row in enumerate([["Day", "Temp"], ["Mon", "28"]]) for c, t in enumerate(row)]})
    assert "A table with 2 rows: row 1: Day, Temp; row 2: Mon, 28." in describe_figure(table)
    clock = Figure("clock", {"elements": [{"id": "face_1", "type": "face", "hour": 9, "minute": 5},
                                          {"id": "hand_1", "type": "hand", "hand": "hour", "hour": 9, "minute": 5}]})
    assert describe_figure(clock) == "The figure is a clock. A clock face shows 9:05."


def test_angles_are_named_by_their_arms() -> None:
    fig = Figure("plane_geometry", {"elements": [
        {"id": "angle_given", "type": "angle_mark", "at": "F", "arms": ["D", "E"], "text": "78°", "value": 78},
        {"id": "right_A", "type": "right_angle", "at": "A", "arms": ["B", "D"]}]})
    assert describe_figure(fig) == ("The figure is a plane geometry diagram. Angle DFE is marked 78°. "
                                    "Angle BAD is marked as a right angle.")


def test_unknown_element_types_still_get_a_sentence() -> None:
    text = describe_figure(Figure("net", {"elements": [{"id": "s1", "type": "spiral_arm", "label": "S", "value": 3}]}))
    assert "Spiral arm S is labelled 3." in text


def test_same_spec_gives_the_same_text_and_accepts_manifest_dicts() -> None:
    row_figure = {"kind": TRIANGLE.kind, "spec": TRIANGLE.spec, "bbox": None}
    assert describe_figure(row_figure) == describe_figure(TRIANGLE)


def test_a_spec_without_an_elements_list_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"spec\['elements'\] must be a list"):
        describe_figure(Figure("triangle", {"size_in": [3, 2]}))


def test_manifest_rows_carry_the_description_and_validate(tiny_run) -> None:
    import dataclasses

    import jsonschema

    from synth.manifest import from_row, read_manifest, schema, to_row

    row = next(read_manifest(tiny_run))
    assert row["figure"] is None and row["figure_description"] is None
    item = from_row(row)
    with_figure = dataclasses.replace(item, problem=dataclasses.replace(item.problem, figure=TRIANGLE))
    new = to_row(with_figure)
    assert new["figure_description"] == describe_figure(TRIANGLE)
    jsonschema.validate(new, schema())


# -- figure elements read by counting or against a scale ------------------------------------------------


def test_a_pictogram_key_says_what_each_drawn_picture_stands_for() -> None:
    fig = Figure("object_array", {"shape": "dot", "groups": [[2, 3]], "key": True, "elements": [
        *[{"id": f"object_A_0_{c}", "type": "object", "group": 0, "row": 0, "col": c, "present": True}
          for c in range(3)],
        {"id": "key", "type": "key", "text": "= 3 counters"}]})
    text = describe_figure(fig)
    assert text.endswith("There are 3 objects drawn. A key under the picture says each dot drawn stands for "
                         "3 counters.")
    assert "A key is labelled" not in text


def test_percent_pie_sectors_read_as_the_printed_percentages_and_an_unlabelled_sector_stays_unlabelled() -> None:
    fig = Figure("pie_chart", {"elements": [
        {"id": "wedge_0", "type": "wedge", "index": 0, "angle": 270, "text": "Dog", "show_angle": False,
         "value": 75, "unit": "%", "value_text": "75%"},
        {"id": "wedge_1", "type": "wedge", "index": 1, "angle": 90, "text": "Cat", "show_angle": False}]})
    assert describe_figure(fig) == ("The figure is a pie chart. The sector for Dog is labelled 75%. "
                                    "The sector for Cat is drawn.")


def _line_chart(label_every: int) -> Figure:
    return Figure("line_chart", {"n_points": 2, "y_max": 80, "y_step": 5, "label_every": label_every, "elements": [
        {"id": "axis_y", "type": "axis", "label": "Height (cm)"}, {"id": "ticks_y", "type": "tick"},
        {"id": "point_0", "type": "point", "index": 0, "value": 35}]})


def test_a_value_axis_numbered_only_at_round_values_lists_its_numbers_and_gridline_step() -> None:
    text = describe_figure(_line_chart(4))
    assert ("The vertical axis is numbered 0, 20, 40, 60, 80, with a gridline every 5 (the lines between the "
            "numbers carry no number).") in text
    assert "Axis ticks are drawn." not in text


def test_a_value_axis_numbered_at_every_line_or_every_other_line_keeps_its_plain_sentence() -> None:
    for every in (1, 2):
        text = describe_figure(_line_chart(every))
        assert "Axis ticks are drawn." in text and "numbered" not in text


CUBE_STACK = Figure("solid", {"points3d": {}, "elements": [
    {"id": "face_front", "type": "face", "points": ["A", "B", "C", "D"]},
    {"id": "edge_length", "type": "segment", "from": "A", "to": "B", "faces": ["face_front", "face_bottom"]},
    {"id": "cubes_front", "type": "face_grid", "face": "face_front", "points": ["A", "B", "C", "D"],
     "divisions": [5, 3]},
    {"id": "cubes_right", "type": "face_grid", "face": "face_right", "points": ["B", "F", "G", "C"],
     "divisions": [2, 3]},
    {"id": "key_front", "type": "polygon", "points": ["K0", "K1", "K2", "K3"], "tint": "side"},
    {"id": "key_top", "type": "polygon", "points": ["K3", "K2", "K5", "K4"], "tint": "top"},
    {"id": "key_edge", "type": "segment", "from": "K0", "to": "K1", "text": "3 mm", "value": 3},
    {"id": "key_caption", "type": "text", "at": "KT", "text": "1 cube"}]})


def test_a_cuboid_ruled_into_cubes_gives_the_squares_along_each_edge_and_its_key_cube() -> None:
    assert describe_figure(CUBE_STACK) == (
        "The figure is a solid diagram. Face ABCD is drawn. Segment AB is drawn. "
        "Face ABCD (front) is ruled into 5 × 3 squares, 5 along AB and 3 along AD. "
        "Face BFGC (right) is ruled into 2 × 3 squares, 2 along BF and 3 along BC. "
        "A key beside the solid shows a small shaded block labelled “1 cube”, with its edge marked 3 mm.")


def _grid(elements: list[dict], **spec: object) -> Figure:
    return Figure("coordinate_grid", {"x_range": [-2, 12], "y_range": [-2, 10], "grid_step": 1, "label_step": 1,
                                      **spec, "elements": [
                                          {"id": "grid", "type": "gridline"}, *elements,
                                          {"id": "ticks_x", "type": "tick"}, {"id": "ticks_y", "type": "tick"}]})


def test_a_gradient_step_is_one_path_across_then_up_or_down_counted_in_squares() -> None:
    steps = [{"id": "step_run", "type": "step", "from": [11, 1], "to": [7, 1]},
             {"id": "step_rise", "type": "step", "from": [7, 1], "to": [7, 9]}]
    assert ("A dashed step is drawn from (11, 1) across 4 squares to (7, 1), then up 8 squares to (7, 9)."
            in describe_figure(_grid(steps)))
    falling = [{"id": "step_run", "type": "step", "from": [-4, 6], "to": [4, 6]},
               {"id": "step_rise", "type": "step", "from": [4, 6], "to": [4, 2]}]
    assert ("A dashed step is drawn from (-4, 6) across 4 squares to (4, 6), then down 2 squares to (4, 2)."
            in describe_figure(_grid(falling, grid_step=2)))  # a square is 2 units on this grid


def test_a_y_axis_counting_in_twos_is_stated_and_a_plain_grid_is_described_as_before() -> None:
    assert describe_figure(_grid([], y_grid_step=2, y_label_step=2)).endswith(
        "A grid is drawn. Each grid square is 1 across and 2 up: the x-axis is numbered every 1 and the y-axis "
        "every 2.")
    assert describe_figure(_grid([])) == "The figure is a coordinate grid. A grid is drawn. Axis ticks are drawn."


def test_a_protractor_is_described_by_what_its_scales_show_and_its_angle_is_not_read_as_printed() -> None:
    family = get_family("geometry.angles.parallel_lines")
    params = {"relation": "co_interior", "phi": 80, "given_pos": [1, 1], "x_pos": [0, 2], "g": 100,
              "x_form": [2, 30], "g_form": None, "protractor": "outer", "image_role": "required"}
    text = describe_figure(family.figure(params))
    assert ("A protractor is laid on angle CFE, centred on F with its straight edge along FC; its two scales run "
            "from 0 to 180 in opposite directions, the outer one from 0 on arm FC. Arm FE crosses the outer scale "
            "at 100 and the inner scale at 80.") in text
    assert "Angle EFC is drawn." in text and "marked 100" not in text and "object" not in text


def test_a_circle_is_not_given_the_radius_it_is_drawn_at() -> None:
    fig = Figure("plane_geometry", {"elements": [
        {"id": "circle", "type": "circle", "center": "O", "radius": 20},
        {"id": "radius_r", "type": "segment", "from": "O", "to": "P", "squares": 4}]})
    assert describe_figure(fig) == ("The figure is a plane geometry diagram. A circle with centre O is drawn. "
                                    "Segment OP runs along 4 grid squares.")
