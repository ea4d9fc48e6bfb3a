"""Data figures (grids, charts, tables, number lines, clocks, object arrays): deterministic, drawn to scale, boxed."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from render.figures import draw_figure
from synth.generators import get_family
from synth.records import Figure

FAMILIES = (
    "coordinate.slope.two_points", "coordinate.line.through_points", "coordinate.intercepts",
    "coordinate.graph.read_value", "statistics.mean.bar_chart", "statistics.median_mode.table",
    "statistics.pie_chart.reading", "statistics.line_chart.reading", "probability.table.two_way",
    "commonsense.number_line", "commonsense.clock.interval", "commonsense.counting.objects",
)
DPI = 100


@cache
def _figure(family_id: str, difficulty: str, seed: int = 0) -> Figure:
    problem = get_family(family_id).build(np.random.default_rng(seed), difficulty=difficulty, question_type="free",
                                          problem_id="f")
    assert problem.figure is not None
    return problem.figure


def _ink_bbox(pixels: np.ndarray) -> tuple[int, int, int, int] | None:
    ink = np.argwhere((pixels < 245).any(axis=2))
    if not len(ink):
        return None
    (y0, x0), (y1, x1) = ink.min(axis=0), ink.max(axis=0)
    return int(x0), int(y0), int(x1) + 1, int(y1) + 1


@pytest.mark.parametrize("family_id", FAMILIES)
@pytest.mark.parametrize("difficulty", ("easy", "medium", "hard"))
def test_same_spec_gives_the_same_bytes_and_one_box_per_element(family_id: str, difficulty: str) -> None:
    figure = _figure(family_id, difficulty)
    a, b = draw_figure(figure, DPI), draw_figure(figure, DPI)
    assert a.pixels.tobytes() == b.pixels.tobytes() and a.boxes == b.boxes
    w_in, h_in = figure.spec["size_in"]
    assert a.pixels.shape == (round(h_in * DPI), round(w_in * DPI), 3) and a.pixels.dtype == np.uint8
    elements = {e["id"]: e["type"] for e in figure.spec["elements"]}
    assert sorted(box.ref for box in a.boxes) == sorted(elements)
    for box in a.boxes:
        assert box.kind == f"figure_{elements[box.ref]}"
        assert 0 <= box.x0 < box.x1 <= a.pixels.shape[1] and 0 <= box.y0 < box.y1 <= a.pixels.shape[0]


@pytest.mark.parametrize("family_id", FAMILIES)
def test_each_primitive_drawn_alone_inks_only_inside_its_box(family_id: str) -> None:
    figure = _figure(family_id, "medium", 1)
    full = {box.ref: box for box in draw_figure(figure, DPI).boxes}
    for element in figure.spec["elements"]:
        alone = draw_figure(Figure(figure.kind, {**figure.spec, "elements": [element]}), DPI)
        (box,) = alone.boxes
        assert box == full[element["id"]]  # the layout does not depend on the other elements
        ink = _ink_bbox(alone.pixels)
        assert ink is not None, element
        assert box.x0 <= ink[0] and box.y0 <= ink[1] and ink[2] <= box.x1 and ink[3] <= box.y1, (element, ink, box)


def test_bars_are_drawn_to_the_value_scale() -> None:
    figure = _figure("statistics.mean.bar_chart", "medium", 4)
    boxes = {b.ref: b for b in draw_figure(figure, 200).boxes}
    bars = [e for e in figure.spec["elements"] if e["type"] == "bar"]
    heights = np.array([boxes[e["id"]].y1 - boxes[e["id"]].y0 for e in bars], dtype=float)
    values = np.array([e["value"] for e in bars], dtype=float)
    per_unit = heights / values
    assert per_unit.max() - per_unit.min() < 4 / values.min()  # within a few pixels of one scale


def test_number_line_point_sits_over_its_division() -> None:
    figure = _figure("commonsense.number_line", "easy", 2)
    boxes = {b.ref: b for b in draw_figure(figure, 200).boxes}
    n = figure.spec["divisions"]
    centre = {e["id"]: (boxes[e["id"]].x0 + boxes[e["id"]].x1) / 2 for e in figure.spec["elements"]}
    point = next(e for e in figure.spec["elements"] if e["type"] == "point")
    expected = centre["tick_0"] + (centre[f"tick_{n}"] - centre["tick_0"]) * point["index"] / n
    assert abs(centre[point["id"]] - expected) <= 2


def test_clock_minute_hand_points_at_the_minute() -> None:
    spec = {"size_in": [2.0, 2.2], "faces": 1, "elements": [
        {"id": "hand_minute_1", "type": "hand", "slot": 0, "hand": "minute", "hour": 3, "minute": 15}]}
    image = draw_figure(Figure("clock", spec), 150)
    (box,) = image.boxes
    assert box.x1 - box.x0 > 3 * (box.y1 - box.y0)  # a quarter past: the hand lies flat, pointing right
    cx = image.pixels.shape[1] / 2
    assert box.x1 - cx > 4 * (cx - box.x0)


def test_unknown_element_types_are_refused_with_the_element_named() -> None:
    figure = _figure("statistics.mean.bar_chart", "easy")
    bad = Figure(figure.kind, {**figure.spec, "elements": [{"id": "x_1", "type": "wedge"}]})
    with pytest.raises(ValueError, match="x_1"):
        draw_figure(bad, DPI)
