"""Plane-geometry and trig figure elements the visual misreads read: a right triangle on squared paper, a polygon's
corners counted, a second line across the parallels, a circle with a slice cut out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from render.describe import describe_figure
from render.figures import draw_figure
from synth.generators import get_family
from synth.generators.triangle_angle_sum import polygon_points
from synth.records import Figure
from tests.generators._fixed import elements, injected_and_verified, problem_with

TRIG_GRID = {"names": "ABC", "unit": "cm", "flip": False, "level": "side", "func": "sin", "angle": 30,
             "op": "divide", "known": 12, "known_side": "opp", "grid": 3, "image_role": "required",
             "answer_unit": "cm"}
PENTAGON = {"level": "polygon", "sides": 5, "known": [110, 105, 105, 90], "x_at": 0, "image_role": "required"}
TWO_LINES = {"relation": "corresponding", "phi": 58, "given_pos": [0, 3], "x_pos": [1, 3], "g": 122,
             "x_form": [3, 41], "g_form": None, "psi": 78, "h": 102, "h_pos": [0, 3], "image_role": "required"}
CUT_OUT = {"ask": "arc", "given": "radius", "r": 13, "theta": 90, "unit": "ft", "turn": 17, "angle_of": "slice",
           "image_role": "required", "answer_unit": "ft"}


def _sampled(family_id: str, difficulties: tuple[str, ...], key: str, seeds: int = 60) -> list[dict]:
    family = get_family(family_id)
    found = [family.sample(np.random.default_rng(s), d) for s in range(seeds) for d in difficulties]
    return [p for p in found if p.get(key) is not None]


# -- a right triangle on squared paper ----------------------------------------------------------------


def test_a_leg_on_squared_paper_is_counted_and_the_hypotenuse_worked_from_it() -> None:
    p = problem_with("trig.right_triangle.ratios", TRIG_GRID)
    assert [s.text for s in p.steps] == ["12 ÷ sin 30°", "12 ÷ (1/2)", "24 cm"]
    els = elements(p)
    assert els["side_BC"]["squares"] == 4 and not {"text", "value"} & set(els["side_BC"])
    assert els["grid_key"]["text"] == "1 square = 3 cm" and els["side_AB"]["text"] == "x"
    assert "squared paper" in p.question_text and "12" not in p.question_text


def test_the_key_ignored_takes_the_squares_for_centimetres() -> None:
    p = problem_with("trig.right_triangle.ratios", TRIG_GRID)
    v = injected_and_verified(p, "misread_scale")
    assert [s.text for s in v.steps] == ["4 ÷ sin 30°", "4 ÷ (1/2)", "8 cm"]
    assert v.error.edit["changes"] == [{"param": "grid", "from": 3, "to": 1}, {"param": "known", "from": 12, "to": 4}]
    assert elements(p)["side_BC"]["squares"] == 4  # the figure still shows the truth


def test_a_leg_miscounted_is_one_square_out() -> None:
    p = problem_with("trig.right_triangle.ratios", TRIG_GRID)
    seen = set()
    for seed in range(6):
        v = injected_and_verified(p, "miscount", seed)
        seen.add(v.error.edit["to"])
        assert v.steps[0].text == f"{v.error.edit['to']} ÷ sin 30°"
    assert seen == {9, 15}


def test_only_a_counted_leg_is_known_and_the_hypotenuse_is_asked_on_squared_paper() -> None:
    gridded = _sampled("trig.right_triangle.ratios", ("easy", "medium", "hard"), "grid")
    assert len(gridded) >= 10
    for p in gridded:
        # sin 30° from the opposite leg, cos 60° from the adjacent one: x runs across the squares, so it cannot be
        # counted, and the known leg lies along a grid line whole squares long.
        assert (p["func"], p["angle"], p["known_side"], p["op"]) in (("sin", 30, "opp", "divide"),
                                                                    ("cos", 60, "adj", "divide"))
        assert p["known"] % p["grid"] == 0 and p["known"] // p["grid"] >= 2


# -- a polygon's corners counted --------------------------------------------------------------------


def test_a_pentagon_takes_its_angle_sum_from_its_number_of_sides() -> None:
    p = problem_with("geometry.triangle.angle_sum", PENTAGON)
    assert [s.text for s in p.steps] == ["(5 − 2) × 180 − (110 + 105 + 105 + 90)", "3 × 180 − (110 + 105 + 105 + 90)",
                                         "540 − (110 + 105 + 105 + 90)", "540 − 410", "130"]
    assert p.answer_text == "130°"


def test_the_polygon_is_drawn_with_its_angles_but_no_letters_and_the_question_does_not_name_it() -> None:
    p = problem_with("geometry.triangle.angle_sum", PENTAGON)
    els = elements(p)
    assert len(els["polygon"]["points"]) == 5
    marks = [e for e in els.values() if e["type"] == "angle_mark"]
    assert sorted(e.get("value", 0) for e in marks) == [0, 90, 105, 105, 110] and els["angle_x"]["text"] == "x"
    assert not [e for e in els.values() if e["type"] == "label"]
    assert "pentagon" not in p.question_text and "5" not in p.question_text


def test_counting_the_first_corner_again_adds_a_side_and_180_degrees() -> None:
    p = problem_with("geometry.triangle.angle_sum", PENTAGON)
    (reading,) = get_family(p.family).figure_readings(p.params)
    # One corner fewer would leave x = 130° − 180° < 0, which no pupil keeps: only the extra corner is offered.
    assert (reading.kind, reading.element, reading.misreads) == ("miscount", "polygon", (6,))
    v = injected_and_verified(p, "miscount")
    assert v.steps[0].text == "(6 − 2) × 180 − (110 + 105 + 105 + 90)" and v.shown_answer == "310"


def test_a_polygon_stated_in_the_text_offers_no_miscount() -> None:
    p = problem_with("geometry.triangle.angle_sum", {**PENTAGON, "image_role": "useful"})
    assert "pentagon (5 sides)" in p.question_text
    assert get_family(p.family).figure_readings(p.params) == ()


def test_sampled_polygons_are_convex_and_drawn_with_their_own_angles() -> None:
    family = get_family("geometry.triangle.angle_sum")
    polygons = _sampled(family.id, ("hard",), "sides")
    assert {p["sides"] for p in polygons} == {5, 6}
    for p in polygons:
        angles = family.angles(p)
        assert len(angles) == p["sides"] and sum(angles) == 180 * (p["sides"] - 2)
        assert all(85 <= a <= 165 for a in angles)
        pts = polygon_points(angles)
        assert pts is not None
        for i, v in enumerate(pts):  # the interior angle at each drawn corner is the one printed there
            a, b = pts[i - 1], pts[(i + 1) % len(pts)]
            turn = math.degrees(math.atan2(b[1] - v[1], b[0] - v[0]) - math.atan2(a[1] - v[1], a[0] - v[0]))
            assert math.isclose(360 - turn % 360, angles[i], abs_tol=1e-6)


# -- a second line across the parallels ------------------------------------------------------------


def test_the_angle_on_the_other_line_read_for_the_given_one_is_a_label_misread() -> None:
    p = problem_with("geometry.angles.parallel_lines", TWO_LINES)
    assert [s.text for s in p.steps][0] == "3x + 41 = 122"
    labels = [r for r in get_family(p.family).figure_readings(p.params) if r.kind == "misread_label"]
    assert [(r.element, r.misreads) for r in labels] == [("angle_given", (102,))]
    v = injected_and_verified(p, "misread_label")
    assert v.steps[0].text == "3x + 41 = 102" and v.error.edit["to"] == 102


def test_the_second_line_is_unmarked_and_its_angle_sits_where_the_given_angle_does_on_its_own_line() -> None:
    p = problem_with("geometry.angles.parallel_lines", TWO_LINES)
    els = elements(p)
    assert els["line_AB"]["arrows"] == els["line_CD"]["arrows"] == 1 and "arrows" not in els["line_UV"]
    given, other = els["angle_given"], els["angle_h"]
    assert (given["at"], given["arms"]) == ("E", ["F", "B"])  # below AB, to the right of ST
    assert (other["at"], other["arms"]) == ("G", ["H", "B"]) and other["value"] == 102
    assert "Angle HGB is marked 102°." in describe_figure(p.figure)


def test_sampled_second_lines_stay_apart_from_the_first_and_give_a_visibly_other_angle() -> None:
    for p in _sampled("geometry.angles.parallel_lines", ("easy", "medium"), "h"):
        g, h = p["g"], p["h"]
        assert min(abs(h - g), abs(h - (180 - g))) >= 10 and abs(p["psi"] - p["phi"]) >= 15
        figure = get_family("geometry.angles.parallel_lines").figure(p)
        pts = figure.spec["points"]
        # UV stays at least 0.6 to the right of ST over the whole height they are drawn (so they never cross there).
        for first, second in (("S", "U"), ("E", "G"), ("F", "H"), ("T", "V")):
            assert pts[second][0] - pts[first][0] >= 0.6 - 1e-9


def test_the_parallel_arrows_are_drawn_near_the_right_hand_end_clear_of_the_crossings() -> None:
    figure = get_family("geometry.angles.parallel_lines").figure({**TWO_LINES, "image_role": "required"})
    plain = {**figure.spec, "elements": [{**e, "arrows": 0} if e["id"] == "line_AB" else e
                                         for e in figure.spec["elements"]]}
    with_arrow = draw_figure(Figure(figure.kind, {**figure.spec, "draw_only": ["line_AB"]}), 100).pixels
    without = draw_figure(Figure(figure.kind, {**plain, "draw_only": ["line_AB"]}), 100).pixels
    _, xs = np.nonzero((with_arrow != without).any(axis=2))
    line = next(b for b in draw_figure(figure, 100).boxes if b.ref == "line_AB")
    assert len(xs) and xs.min() > line.x0 + 0.8 * (line.x1 - line.x0)


# -- a circle with a slice cut out -----------------------------------------------------------------


def test_the_arc_left_by_a_cut_out_slice_takes_the_rest_of_the_turn() -> None:
    p = problem_with("geometry.circle.circumference_arc", CUT_OUT)
    assert [s.text for s in p.steps] == ["(360 − 90)/360 × 2 × 3.14 × 13", "270/360 × 2 × 3.14 × 13",
                                         "3/4 × 2 × 3.14 × 13", "3/4 × 6.28 × 13", "3/4 × 81.64", "61.23 ft"]
    # The question asks for what is left of the circle; the slice's angle is only in the figure.
    assert ("left" in p.question_text or "remains" in p.question_text) and "90" not in p.question_text


def test_the_drawn_arc_runs_the_long_way_and_the_marked_angle_is_the_slices() -> None:
    p = problem_with("geometry.circle.circumference_arc", CUT_OUT)
    els = elements(p)
    assert els["arc_AB"]["end"] - els["arc_AB"]["start"] == 270 and els["angle_O"]["value"] == 90
    assert "drawn the long way round" in describe_figure(p.figure)


def test_the_slices_angle_read_as_the_shapes_works_the_slices_arc() -> None:
    p = problem_with("geometry.circle.circumference_arc", CUT_OUT)
    v = injected_and_verified(p, "misread_relation")
    assert [s.text for s in v.steps] == ["90/360 × 2 × 3.14 × 13", "1/4 × 2 × 3.14 × 13", "1/4 × 6.28 × 13",
                                         "1/4 × 81.64", "20.41 ft"]
    assert "misreads the angle at O in the figure, taking sector where the figure shows slice" in v.error.explanation


@pytest.mark.parametrize("ask", ["arc", "sector_perimeter"])
def test_cut_out_circles_are_sampled_for_arcs_and_perimeters_but_not_on_squared_paper(ask: str) -> None:
    difficulty = "medium" if ask == "arc" else "hard"
    cut = _sampled("geometry.circle.circumference_arc", (difficulty,), "angle_of")
    assert cut and all(p["ask"] == ask and "grid" not in p for p in cut)


# -- a triangle on squared paper beside its enlargement on plain paper --------------------------------

SMALL_ON_GRID = {"level": "separate", "unit": "ft", "names": ["ABC", "DEF"], "small": [6, 8, 10], "k": "3",
                 "pair": 2, "ask": 1, "direction": "up", "grid": 2, "grid_on": "small", "q_from": 10, "q_to": 30,
                 "q_known": 8, "image_role": "required", "answer_unit": "ft"}


def test_a_counted_leg_scaled_by_the_printed_hypotenuses_gives_the_enlarged_leg() -> None:
    p = problem_with("geometry.similar_triangles", SMALL_ON_GRID)
    assert [s.text for s in p.steps] == ["8 × (30 ÷ 10)", "8 × 3", "EF = 24 ft"]
    els = elements(p)
    assert els["side_BC"]["squares"] == 4 and not {"text", "value"} & set(els["side_BC"])
    assert (els["side_CA"]["text"], els["side_FD"]["text"], els["side_EF"]["text"]) == ("10 ft", "30 ft", "x")
    assert "squared paper" in p.question_text and "not drawn to scale" in p.question_text


def test_only_the_small_triangle_sits_on_the_squared_paper() -> None:
    p = problem_with("geometry.similar_triangles", SMALL_ON_GRID)
    x0, y0, x1, y1 = elements(p)["grid"]["bounds"]
    origin = p.figure.spec["points"]["A"]
    inside = {n for n, (x, y) in p.figure.spec["points"].items()
              if x0 <= x - origin[0] <= x1 and y0 <= y - origin[1] <= y1}
    assert inside == {"A", "B", "C"}
    boxes = {b.ref: b for b in draw_figure(p.figure, 100).boxes}
    assert boxes["grid"].x1 < boxes["triangle_DEF"].x0  # the grid's ink stops before the enlargement


def test_with_one_triangle_counted_the_key_ignored_shrinks_the_answer() -> None:
    p = problem_with("geometry.similar_triangles", SMALL_ON_GRID)
    v = injected_and_verified(p, "misread_scale")
    assert [s.text for s in v.steps] == ["4 × (30 ÷ 10)", "4 × 3", "EF = 12 ft"]
    assert v.error.edit["changes"] == [{"param": "grid", "from": 2, "to": 1}, {"param": "q_known", "from": 8, "to": 4}]
