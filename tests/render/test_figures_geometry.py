"""Geometry and solid figure drawers: deterministic pixels, one box per primitive, ink inside its box."""

from __future__ import annotations

import numpy as np
import pytest

from render.figures import draw_figure
from render.figures.solids import visible_faces
from synth.generators import get_family
from synth.generators.base import DIFFICULTIES
from synth.records import Figure

FAMILIES = (
    "geometry.triangle.angle_sum", "geometry.pythagoras", "geometry.similar_triangles", "geometry.circle.area",
    "geometry.circle.circumference_arc", "geometry.polygon.area_perimeter", "geometry.angles.parallel_lines",
    "solid.prism.volume_surface", "solid.cylinder.volume_surface", "solid.cone.volume",
    "solid.sphere.volume_surface", "trig.right_triangle.ratios",
)  # fmt: skip
DPI = 100


def _figures(family_id: str, seeds: int = 6) -> list[Figure]:
    family = get_family(family_id)
    out = []
    for seed in range(seeds):
        fig = family.figure(family.sample(np.random.default_rng(seed), DIFFICULTIES[seed % 3]))
        assert fig is not None
        out.append(fig)
    return out


@pytest.mark.parametrize("family_id", FAMILIES)
def test_same_spec_gives_the_same_bytes(family_id: str) -> None:
    fig = _figures(family_id, 1)[0]
    a, b = draw_figure(fig, DPI), draw_figure(fig, DPI)
    assert a.pixels.tobytes() == b.pixels.tobytes() and a.boxes == b.boxes


@pytest.mark.parametrize("family_id", FAMILIES)
def test_every_element_gets_one_box_of_its_type_inside_the_image(family_id: str) -> None:
    for fig in _figures(family_id):
        image = draw_figure(fig, DPI)
        h, w, _ = image.pixels.shape
        assert (w, h) == (round(fig.spec["size_in"][0] * DPI), round(fig.spec["size_in"][1] * DPI))
        assert [(b.ref, b.kind) for b in image.boxes] == [(e["id"], f"figure_{e['type']}")
                                                          for e in fig.spec["elements"]]
        for b in image.boxes:
            assert 0 <= b.x0 < b.x1 <= w and 0 <= b.y0 < b.y1 <= h, b


@pytest.mark.parametrize("family_id", FAMILIES)
def test_each_primitive_drawn_alone_leaves_ink_only_inside_its_box(family_id: str) -> None:
    for fig in _figures(family_id, 3):
        boxes = {b.ref: b for b in draw_figure(fig, DPI).boxes}
        inked = 0
        for element in fig.spec["elements"]:
            alone = draw_figure(Figure(fig.kind, {**fig.spec, "draw_only": [element["id"]]}), DPI)
            ys, xs = np.nonzero(alone.pixels.min(axis=2) < 250)
            if len(xs) == 0:
                continue  # a hidden face has a place but no ink
            inked += 1
            b = boxes[element["id"]]
            assert b.x0 - 1 <= xs.min() and xs.max() <= b.x1 + 1, (element, b, xs.min(), xs.max())
            assert b.y0 - 1 <= ys.min() and ys.max() <= b.y1 + 1, (element, b, ys.min(), ys.max())
        assert inked >= len(fig.spec["elements"]) - 3


@pytest.mark.parametrize("family_id", FAMILIES)
def test_labels_do_not_run_off_the_figure(family_id: str) -> None:
    for fig in _figures(family_id):
        image = draw_figure(fig, DPI)
        h, w, _ = image.pixels.shape
        labelled = {e["id"] for e in fig.spec["elements"] if e.get("text")}
        for b in image.boxes:
            if b.ref in labelled:
                assert b.x0 > 0 and b.y0 > 0 and b.x1 < w and b.y1 < h, b


def test_cuboid_hides_exactly_the_back_bottom_and_left_faces() -> None:
    family = get_family("solid.prism.volume_surface")
    params = {"shape": "cuboid", "ask": "volume", "l": 8, "w": 3, "h": 5, "unit": "cm", "image_role": "useful"}
    spec = family.figure(params).spec
    from render.figures.solids import camera

    points = {k: tuple(v) for k, v in spec["points3d"].items()}
    faces = [e for e in spec["elements"] if e["type"] == "face"]
    seen = visible_faces(points, faces, camera(spec["view"]))
    assert {k for k, v in seen.items() if v} == {"face_front", "face_top", "face_right"}


def test_a_hidden_edge_is_drawn_dashed() -> None:
    family = get_family("solid.prism.volume_surface")
    params = {"shape": "cuboid", "ask": "volume", "l": 8, "w": 3, "h": 5, "unit": "cm", "image_role": "useful"}
    fig = family.figure(params)

    def ink_runs(edge: str) -> int:
        img = draw_figure(Figure(fig.kind, {**fig.spec, "draw_only": [edge]}), 150)
        box = next(b for b in img.boxes if b.ref == edge)
        column = img.pixels[int(box.y0):int(box.y1) + 1, int(box.x0):int(box.x1) + 1].min(axis=2) < 200
        profile = column.any(axis=0) if box.x1 - box.x0 > box.y1 - box.y0 else column.any(axis=1)
        return int(np.count_nonzero(np.diff(profile.astype(int)) == 1))

    assert ink_runs("edge_EF") >= 4  # back bottom edge: dashes
    assert ink_runs("edge_length") <= 1  # front bottom edge: one solid stroke


def test_figures_are_drawn_from_the_true_values() -> None:
    family = get_family("geometry.pythagoras")
    params = {"names": "ABC", "unit": "cm", "flip": False, "find": "hyp", "a": 6, "b": 8, "c": 10,
              "image_role": "required"}
    spec = family.figure(params).spec
    pts = {k: np.array(v) for k, v in spec["points"].items()}
    assert np.isclose(np.linalg.norm(pts["B"] - pts["C"]), 6) and np.isclose(np.linalg.norm(pts["A"] - pts["C"]), 8)
    assert np.isclose(np.linalg.norm(pts["A"] - pts["B"]), 10)


def _grid_rectangle() -> Figure:
    family = get_family("geometry.polygon.area_perimeter")
    return family.figure({"shape": "rectangle", "l": 21, "w": 9, "unit": "cm", "grid": 3, "image_role": "required"})


def test_a_shape_on_squared_paper_spans_its_number_of_squares() -> None:
    fig = _grid_rectangle()
    grid = draw_figure(Figure(fig.kind, {**fig.spec, "draw_only": ["grid"]}), 150).pixels
    row = grid[grid.shape[0] // 2].min(axis=1) < 250
    xs = np.flatnonzero(np.diff(row.astype(int)) == 1)  # the left edge of each vertical grid line
    spacing = np.diff(xs)
    assert len(xs) >= 8 and spacing.max() - spacing.min() <= 1
    side = next(b for b in draw_figure(fig, 150).boxes if b.ref == "side_AB")
    # 21 cm at 3 cm a square: AB runs along 7 squares (its box adds a line width and a little padding).
    assert abs((side.x1 - side.x0) - 7 * spacing.mean()) < 6


def test_the_grid_key_sits_under_the_drawing_clear_of_every_other_mark() -> None:
    boxes = draw_figure(_grid_rectangle(), 150).boxes
    key = next(b for b in boxes if b.ref == "grid_key")
    assert all(key.y0 >= b.y1 for b in boxes if b.ref != "grid_key")


def test_a_protractor_lies_centred_on_its_vertex_with_its_half_disc_over_the_angle() -> None:
    family = get_family("geometry.triangle.angle_sum")
    params = {"level": "two_angles", "names": "ABC", "a": 65, "b": 50, "protractor": "outer",
              "image_role": "required"}
    fig = family.figure(params)
    boxes = {b.ref: b for b in draw_figure(fig, 150).boxes}
    tool, triangle = boxes["protractor"], boxes["triangle_ABC"]
    # Standing on the base line AB (the triangle's lowest edge), no ink below it ...
    assert abs(tool.y1 - triangle.y1) < 2
    # ... a half-disc as tall as its radius, centred on A (the triangle's leftmost point here).
    radius_px = (tool.x1 - tool.x0) / 2
    assert abs((tool.y1 - tool.y0) - radius_px) < 4 and abs(tool.x0 + radius_px - triangle.x0) < 4
