"""Drawing what is counted or scaled: cubes ruled on a cuboid's faces, a key cube, step triangles, y axes in 2s."""

from __future__ import annotations

import numpy as np

from render.figures import draw_figure
from render.figures.solids import camera, visible_faces
from synth.generators import get_family
from synth.records import Figure

DPI = 150
CUBES = {"shape": "cuboid", "ask": "volume", "l": 10, "w": 4, "h": 6, "unit": "cm", "cube": 2, "nl": 5, "nw": 2,
         "nh": 3, "image_role": "required"}


def _only(fig: Figure, *ids: str) -> np.ndarray:
    return draw_figure(Figure(fig.kind, {**fig.spec, "draw_only": list(ids)}), DPI).pixels


def _ink(pixels: np.ndarray, level: int = 200) -> np.ndarray:
    return pixels.min(axis=2) < level


def test_the_key_cube_beside_a_stack_hides_no_face_of_the_cuboid() -> None:
    spec = get_family("solid.prism.volume_surface").figure(CUBES).spec
    points = {k: tuple(v) for k, v in spec["points3d"].items()}
    faces = [e for e in spec["elements"] if e["type"] == "face"]
    seen = visible_faces(points, faces, camera(spec["view"]))
    assert {k for k, v in seen.items() if v} == {"face_front", "face_top", "face_right"}
    assert any(k.startswith("K") for k in points)  # the key cube's corners are in the same spec


def test_cube_lines_are_drawn_on_visible_faces_only() -> None:
    fig = get_family("solid.prism.volume_surface").figure(CUBES)
    assert _ink(_only(fig, "cubes_front")).sum() > 0
    grid = next(e for e in fig.spec["elements"] if e["id"] == "cubes_front")
    hidden = {**grid, "id": "cubes_back", "face": "face_back", "points": ["E", "F", "G", "H"]}
    spec = {**fig.spec, "elements": [*fig.spec["elements"], hidden]}
    assert _ink(_only(Figure(fig.kind, spec), "cubes_back")).sum() == 0


def test_the_front_face_is_ruled_into_as_many_columns_as_cubes_counted() -> None:
    fig = get_family("solid.prism.volume_surface").figure(CUBES)
    image = draw_figure(Figure(fig.kind, {**fig.spec, "draw_only": ["cubes_front"]}), DPI)
    box = next(b for b in image.boxes if b.ref == "cubes_front")
    # Vertical edges stay vertical in this projection: the nl - 1 inner lines are the tall runs of ink.
    ink = _ink(image.pixels, 235)[int(box.y0):int(box.y1) + 1, int(box.x0):int(box.x1) + 1]
    tall = ink.sum(axis=0) > 0.5 * ink.shape[0]
    assert int(np.count_nonzero(np.diff(tall.astype(int)) == 1)) + int(tall[0]) == CUBES["nl"] - 1


def test_step_legs_are_dashed_lines_along_the_grid() -> None:
    params = {"A": [11, 1], "B": [7, 9], "scale": 1, "image_role": "required", "rise": 8, "run": 4}
    fig = get_family("coordinate.line.through_points").figure(params)
    image = draw_figure(Figure(fig.kind, {**fig.spec, "elements": [e for e in fig.spec["elements"]
                                                                    if e["id"] in ("step_run", "step_rise")]}), DPI)
    ink = _ink(image.pixels)
    run = next(b for b in image.boxes if b.ref == "step_run")
    rise = next(b for b in image.boxes if b.ref == "step_rise")
    row = ink[int((run.y0 + run.y1) / 2), int(run.x0):int(run.x1) + 1]
    col = ink[int(rise.y0):int(rise.y1) + 1, int((rise.x0 + rise.x1) / 2)]
    assert int(np.count_nonzero(np.diff(row.astype(int)) == 1)) >= 4  # dashes, not one stroke
    assert int(np.count_nonzero(np.diff(col.astype(int)) == 1)) >= 8
    assert run.x1 - run.x0 > run.y1 - run.y0 and rise.y1 - rise.y0 > rise.x1 - rise.x0


def _line_positions(profile: np.ndarray) -> np.ndarray:
    starts = np.flatnonzero(np.diff(profile.astype(int)) == 1)
    return starts


def test_a_y_axis_in_twos_keeps_the_grid_squares_square() -> None:
    params = {"coeffs": [0, -4, -8], "xs": [-4, -3], "ys": [8, 4], "ks": [3, 1], "image_role": "required",
              "y_step": 2}
    fig = get_family("coordinate.graph.read_value").figure(params)
    pixels = draw_figure(Figure(fig.kind, {**fig.spec, "elements": [{"id": "grid", "type": "gridline"}]}), DPI).pixels
    grid = pixels.min(axis=2) < 250
    h, w = grid.shape
    xs = _line_positions(grid[h // 2 + 3, :])
    ys = _line_positions(grid[:, w // 2 + 3])
    dx, dy = np.median(np.diff(xs)), np.median(np.diff(ys))
    assert abs(dx - dy) <= 1.5, (dx, dy)
    y0, y1 = fig.spec["y_range"]
    assert len(ys) == (y1 - y0) // 2 + 1  # one horizontal line every 2 units
