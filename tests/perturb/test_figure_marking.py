"""figure_marking: marks go on the figure, are counted back from the pixels, and pages without a figure are skipped."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import cv2
import numpy as np
import pytest

from perturb.photo import REGISTRY, degrade
from perturb.photo.base import NotApplicableError
from perturb.photo.figure_marking import BINS
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.generators import get_family
from synth.records import Box, RenderedPage


def with_figure(pixels: np.ndarray, page: RenderedPage, rng: np.random.Generator) -> tuple[np.ndarray, RenderedPage]:
    """The page with a labelled triangle drawn below the solution and its ``figure_*`` boxes.

    Stands in for the figure renderer's output (same box kinds) so the op is tested without it.
    """
    img = pixels.copy()
    w, h, dpi = page.width, page.height, page.dpi
    x0, y0, size = 0.3 * w, 0.5 * h, 0.45 * w
    pts = np.array([[x0 + rng.uniform(0, 0.2) * size, y0 + rng.uniform(0.75, 0.95) * size],
                    [x0 + rng.uniform(0.8, 1.0) * size, y0 + rng.uniform(0.75, 0.95) * size],
                    [x0 + rng.uniform(0.25, 0.75) * size, y0 + rng.uniform(0.0, 0.15) * size]])
    line = max(1, round(dpi / 60))
    ink = (25, 25, 30)
    boxes = []
    shift = 4
    for i, name in enumerate("ABC"):
        a, b = pts[i], pts[(i + 1) % 3]
        cv2.line(img, tuple(np.round(a * 16).astype(int)), tuple(np.round(b * 16).astype(int)), ink, line,
                 cv2.LINE_AA, shift)
        boxes.append(Box("figure_segment", f"side_{name}{'ABC'[(i + 1) % 3]}", *np.minimum(a, b) - line,
                         *np.maximum(a, b) + line))
    centre = pts.mean(axis=0)
    r_dot = max(2, round(0.02 * dpi))
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = 0.011 * dpi
    for i, name in enumerate("ABC"):
        p = pts[i]
        cv2.circle(img, tuple(np.round(p * (1 << shift)).astype(int)), r_dot << shift, ink, -1, cv2.LINE_AA, shift)
        boxes.append(Box("figure_point", f"point_{name}", *(p - r_dot), *(p + r_dot)))
        away = (p - centre) / np.linalg.norm(p - centre)
        (tw, th), _ = cv2.getTextSize(name, font, scale, line)
        org = p + away * 0.15 * dpi - [tw / 2, -th / 2]
        cv2.putText(img, name, tuple(np.round(org).astype(int)), font, scale, ink, line, cv2.LINE_AA)
        boxes.append(Box("figure_label", f"label_{name}", org[0], org[1] - th, org[0] + tw, org[1] + 2))
    # angle mark at A, between AB and AC
    a, b, c = pts
    r = 0.18 * dpi
    ang = sorted([np.degrees(np.arctan2(*(b - a)[::-1])), np.degrees(np.arctan2(*(c - a)[::-1]))])
    cv2.ellipse(img, tuple(np.round(a).astype(int)), (round(r), round(r)), 0, ang[0], ang[1], ink, line, cv2.LINE_AA)
    boxes.append(Box("figure_angle_mark", "angle_A", a[0], a[1] - r, a[0] + r, a[1]))
    boxes.append(Box("figure_polygon", "triangle", *pts.min(axis=0), *pts.max(axis=0)))
    rounded = tuple(Box(bx.kind, bx.ref, *(round(float(v), 2) for v in (bx.x0, bx.y0, bx.x1, bx.y1))) for bx in boxes)
    return img, replace(page, layout=page.layout + rounded)


@cache
def figure_pages(dpi: int = 60) -> tuple[tuple[np.ndarray, RenderedPage], ...]:
    out = []
    for i, family in enumerate(["arithmetic.order_of_operations", "algebra.linear.two_step"] * 2):
        p = get_family(family).build(np.random.default_rng(i), difficulty="medium", question_type="free",
                                     problem_id=f"f{i}")
        r = render_page(p, clean_variant(p), dpi=dpi)
        out.append(with_figure(r.pixels, r.page, np.random.default_rng(100 + i)))
    return tuple(out)


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_counted_marks_land_in_the_severity_bin_and_equal_the_marks_drawn(severity: int) -> None:
    lo, hi = BINS[severity]
    for seed in range(24):
        img, page = figure_pages()[seed % 4]
        _, _, rec = degrade(img, page, "figure_marking", severity, np.random.default_rng(seed))
        assert lo <= rec.measured["marks"] <= hi, (seed, rec.measured)
        assert rec.measured["marks"] == len(rec.params["marks"]), (seed, rec.params["marks"], rec.measured)


@pytest.mark.parametrize("number", [154, 811, 978])
def test_marks_placed_apart_are_counted_apart_at_60_dpi(number: int) -> None:
    """benchmarks/degrade.py's bench pages at 60 dpi: two circles 0.08 in apart (4.8 px) touched once the measure
    joined ink within its 2 px radius, so four marks read as three at severity 3 (below its bin). Marks keep clear of
    the joining distance and the pen now."""
    from tests.conftest import benchmark

    sheet = benchmark("degrade").Sheet(number, 60, "handwritten" if number % 2 else "printed")
    _, _, rec = degrade(sheet.pixels, sheet.page, "figure_marking", 3, np.random.default_rng(number))
    assert rec.measured["marks"] == len(rec.params["marks"]) >= BINS[3][0], (rec.params["marks"], rec.measured)


def test_pen_ink_stays_on_the_figure() -> None:
    img, page = figure_pages()[0]
    rec = degrade(img, page, "figure_marking", 3, np.random.default_rng(5))[2]
    out = REGISTRY["figure_marking"].apply(img, rec.params, page)[0]  # the pen alone, no camera on top
    fig = [b for b in page.layout if b.kind.startswith("figure_")]
    x0, y0 = min(b.x0 for b in fig) - 0.4 * page.dpi, min(b.y0 for b in fig) - 0.4 * page.dpi
    x1, y1 = max(b.x1 for b in fig) + 0.4 * page.dpi, max(b.y1 for b in fig) + 0.4 * page.dpi
    changed = np.argwhere((img != out).any(axis=2))
    assert changed.size and rec.measured["pen_pixel_frac"] > 0
    assert changed[:, 1].min() >= x0 and changed[:, 1].max() <= x1
    assert changed[:, 0].min() >= y0 and changed[:, 0].max() <= y1


def test_severity_three_covers_more_of_the_figure_than_severity_one() -> None:
    covered = {s: np.median([degrade(*figure_pages()[k % 4], "figure_marking", s, np.random.default_rng(k))[2]
                             .measured["figure_print_covered"] for k in range(8)]) for s in (1, 3)}
    assert covered[3] > covered[1]


def test_a_page_without_a_figure_is_reported_as_not_applicable() -> None:
    img, page = figure_pages()[0]
    bare = replace(page, layout=tuple(b for b in page.layout if not b.kind.startswith("figure_")))
    assert not REGISTRY["figure_marking"].applies(bare) and REGISTRY["figure_marking"].applies(page)
    with pytest.raises(NotApplicableError, match="figure_marking does not apply to this page"):
        degrade(img, bare, "figure_marking", 1, np.random.default_rng(0))


def test_replay_draws_the_same_marks() -> None:
    img, page = figure_pages()[1]
    out, _, rec = degrade(img, page, "figure_marking", 2, np.random.default_rng(3))
    again, _, rec2 = degrade(img, page, "figure_marking", 2, None, params=rec.params)
    assert out.tobytes() == again.tobytes() and rec2.measured == rec.measured


@cache
def sparse_figure_pages() -> tuple[tuple[np.ndarray, RenderedPage], ...]:
    """Real figures with few markable elements: a semicircle with its centre, a number line with one point,
    a graph whose only circled element is the whole curve (its circle leaves no room for a second mark)."""
    out = []
    for family in ("geometry.circle.area", "commonsense.number_line", "coordinate.graph.read_value"):
        p = get_family(family).build(np.random.default_rng(2), difficulty="hard", question_type="free",
                                     problem_id="sparse")
        r = render_page(p, clean_variant(p), dpi=60)
        out.append((r.pixels, r.page))
    return tuple(out)


@pytest.mark.parametrize("severity", [2, 3])
def test_figures_with_few_elements_still_take_every_severity_with_countable_marks(severity: int) -> None:
    lo, hi = BINS[severity]
    for k, (img, page) in enumerate(sparse_figure_pages()):
        assert REGISTRY["figure_marking"].applies(page)
        for seed in range(4):
            _, _, rec = degrade(img, page, "figure_marking", severity, np.random.default_rng(seed))
            assert lo <= rec.measured["marks"] <= hi, (k, seed, rec.measured)
            assert rec.measured["marks"] == len(rec.params["marks"]), (k, seed, rec.params["marks"], rec.measured)


def test_shading_keeps_clear_of_the_figures_writing() -> None:
    """Bench pages at 150 dpi whose triangles print their angles inside ("46°", "x"): the old shading ran through
    them, a mark over the givens the solution needs (at severity 1 in photo_sweep with seed 8675309). A hatch's pen
    ink now stays out of every label and angle mark's box; the shading is still drawn where there is room."""
    from perturb.photo.functional.ink import figure_pen
    from tests.conftest import benchmark

    hatches = 0
    for number in (4, 12, 18):
        sheet = benchmark("degrade").Sheet(number, 150, "handwritten" if number % 2 else "printed")
        written = [b for b in sheet.page.layout if b.kind in ("figure_label", "figure_text", "figure_angle_mark")]
        assert written
        for severity in (1, 2, 3):
            for seed in (number, number + 1000):
                _, _, rec = degrade(sheet.pixels, sheet.page, "figure_marking", severity, np.random.default_rng(seed))
                for mark in (m for m in rec.params["marks"] if m["kind"] == "hatch"):
                    hatches += 1
                    ink = figure_pen(sheet.pixels, {**rec.params, "marks": [mark]}, sheet.page) > 0
                    for b in written:
                        box = ink[int(b.y0):int(np.ceil(b.y1)), int(b.x0):int(np.ceil(b.x1))]
                        assert not box.any(), (number, severity, seed, b.ref, int(box.sum()))
    assert hatches >= 3, f"{hatches} shadings drawn on these triangles: too few for the test to say anything"
