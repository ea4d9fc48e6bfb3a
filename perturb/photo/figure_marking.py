"""Figure marking: a student's pen on the figure: a circled vertex, ticks on a side, an angle arc, a scribble.

Marks are placed from the renderer's ``figure_<type>`` boxes. A page without a figure is not a
page this op can act on: ``applies`` says so, the pipeline records a skip, and ``degrade``
raises ``NotApplicableError`` rather than returning an unmarked page under a marking label.
Marks are kept apart (their footprints never touch), so the number of marks can be read back
from the pixels as the number of separate pen-ink blobs on the figure. A figure whose marked
elements leave room for fewer marks than the severity asks for (one circle, a number line) gets
the rest as small circles on its other elements and then anywhere on it, so every severity fits
every figure instead of failing on simple ones.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import DegradationError, Op, Rubric
from perturb.photo.functional.ink import mark_figure
from perturb.photo.measure import luma, pen_mask
from render.figures.primitives import marks_for
from synth.records import Box, RenderedPage

# Number of separate marks on the figure: 1 one marked element; 2 several, partly obscuring;
# 3 extensive (four or more, scribbles included), heavily obscuring.
BINS = {1: (1, 1), 2: (2, 3), 3: (4, 10_000)}
PENS = {"blue": (30, 60, 175), "red": (200, 35, 45), "pencil": (95, 95, 100)}
# Footprint radius of each mark kind, inches; scribbles scale with the shape they cover.
_RADIUS_IN = {"circle": 0.16, "arc": 0.3, "tick": 0.12}
_GAP_IN = 0.08  # clear space between marks, so each stays one blob of ink
_BLOB_IN = 0.025  # ink closer than this is joined when counting marks (double ticks, pen lifts)
_COUNT = {1: (1, 1), 2: (2, 3), 3: (4, 6)}


def _figure_boxes(page: RenderedPage) -> list[Box]:
    return [b for b in page.layout if b.kind.startswith("figure_")]


def _candidates(page: RenderedPage) -> list[dict[str, Any]]:
    """Every place a mark could go: the mark kind, its footprint disc, and the element it marks."""
    boxes = _figure_boxes(page)
    if not boxes:
        return []
    fx0, fy0 = min(b.x0 for b in boxes), min(b.y0 for b in boxes)
    fx1, fy1 = max(b.x1 for b in boxes), max(b.y1 for b in boxes)
    centre = ((fx0 + fx1) / 2, (fy0 + fy1) / 2)
    points = [((p.x0 + p.x1) / 2, (p.y0 + p.y1) / 2) for p in boxes if p.kind == "figure_point"]
    out = []
    for b in boxes:
        ptype = b.kind.removeprefix("figure_")
        cx, cy = (b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2
        inside = [p for p in points if b.x0 <= p[0] <= b.x1 and b.y0 <= p[1] <= b.y1]
        if ptype == "polygon" and len(inside) >= 3:  # the vertices' centroid is inside; the box centre may not be
            cx, cy = float(np.mean([p[0] for p in inside])), float(np.mean([p[1] for p in inside]))
        for kind in marks_for(ptype):  # the marks each primitive declares (render.figures.primitives)
            if kind == "scribble":
                r = 0.3 * min(b.x1 - b.x0, b.y1 - b.y0)
                if r < 0.12 * page.dpi:
                    continue
            else:
                span = 0.6 * np.hypot(b.x1 - b.x0, b.y1 - b.y0) if kind == "circle" else 0.0
                r = max(_RADIUS_IN[kind] * page.dpi, span)
            toward = float(np.degrees(np.arctan2(centre[1] - cy, centre[0] - cx)))
            out.append({"kind": kind, "element": f"{b.kind}:{b.ref}", "centre": [round(cx, 2), round(cy, 2)],
                        "radius": round(float(r), 2), "toward_deg": round(toward, 2),
                        "box": [b.x0, b.y0, b.x1, b.y1]})
    return out


def _spare_places(page: RenderedPage) -> list[list[dict[str, Any]]]:
    """Small circles for figures with too few markable elements: first one on each figure element
    (any kind), then a grid over the whole figure; tiers in the order they are tried."""
    boxes = _figure_boxes(page)
    r = _RADIUS_IN["circle"] * page.dpi
    pitch = 2 * r + _GAP_IN * page.dpi

    def place(name: str, cx: float, cy: float, box: list[float]) -> dict[str, Any]:
        return {"kind": "circle", "element": name, "centre": [round(cx, 2), round(cy, 2)], "radius": round(r, 2),
                "box": box}

    on_elements = [place(f"{b.kind}:{b.ref}:spare", (b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2, [b.x0, b.y0, b.x1, b.y1])
                   for b in boxes]
    fx0, fy0 = min(b.x0 for b in boxes), min(b.y0 for b in boxes)
    fx1, fy1 = max(b.x1 for b in boxes), max(b.y1 for b in boxes)
    # At least two grid places each way, so even a very small figure takes four separate marks.
    nx, ny = max(2, int((fx1 - fx0) // pitch) + 1), max(2, int((fy1 - fy0) // pitch) + 1)
    x0, y0 = (fx0 + fx1 - (nx - 1) * pitch) / 2, (fy0 + fy1 - (ny - 1) * pitch) / 2
    grid = [place(f"figure_area:{i}_{j}", x0 + i * pitch, y0 + j * pitch, [fx0, fy0, fx1, fy1])
            for j in range(ny) for i in range(nx)]
    return [on_elements, grid]


def _pick(cands: list[dict[str, Any]], order: list[int], chosen: list[dict[str, Any]], want: int, gap: float,
          rng: np.random.Generator) -> None:
    """Add candidates in ``order`` to ``chosen`` (in place) while they keep clear of every mark so far."""
    for i in order:
        if len(chosen) >= want:
            return
        c = cands[int(i)]
        if any(c["element"] == m["element"] for m in chosen):
            continue
        if all(np.hypot(c["centre"][0] - m["centre"][0], c["centre"][1] - m["centre"][1])
               >= c["radius"] + m["radius"] + gap for m in chosen):
            mark = {**c, "seed": int(rng.integers(2**31 - 1))}
            if c["kind"] == "tick":
                mark["count"] = int(rng.integers(1, 3))
            if c["kind"] != "arc":
                mark.pop("toward_deg", None)
            chosen.append(mark)


def _fill_with_spares(page: RenderedPage, chosen: list[dict[str, Any]], lo: int, want: int, gap: float,
                      rng: np.random.Generator) -> list[dict[str, Any]]:
    """Marks enough for the severity when the figure's elements leave too little room apart.

    Spare circles are added around the marks already chosen; when a large one (a circle round a
    whole curve) leaves no room, the largest is given up and the filling tried again. Spares keep
    twice the usual gap: a spare lands anywhere, often beside a mark's fattest stroke.
    """
    tiers = _spare_places(page)
    kept = list(chosen)
    while True:
        trial = list(kept)
        for tier in tiers:
            _pick(tier, list(rng.permutation(len(tier))), trial, want, 2 * gap, rng)
        if len(trial) >= lo or not kept:
            return trial
        kept.remove(max(kept, key=lambda m: (m["radius"], m["element"])))


class FigureMarking(Op):
    subtype = "figure_marking"
    family = "interference"
    rubric = Rubric("marks", BINS, "separate pen marks on the figure")
    stage = "marks"
    stage_rank = 1
    requirement = "needs figure_* boxes in the page layout (the page has no figure)"

    def applies(self, page: RenderedPage) -> bool:
        return bool(_figure_boxes(page))

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        cands = _candidates(page)
        lo, hi = _COUNT[severity]
        want = int(rng.integers(lo, hi + 1))
        gap = _GAP_IN * page.dpi
        chosen: list[dict[str, Any]] = []
        order = list(rng.permutation(len(cands)))
        if severity == 3:  # "extensive": cover a shape when there is one to cover
            order = sorted(order, key=lambda i: cands[i]["kind"] != "scribble")[:1] + order
        _pick(cands, order, chosen, want, gap, rng)
        if len(chosen) < lo:  # only then, so a page that had room draws the marks it always drew
            chosen = _fill_with_spares(page, chosen, lo, want, gap, rng)
        if len(chosen) < lo:
            raise DegradationError(f"figure_marking severity {severity} needs {lo} separate places to mark on"
                                   f" the figure; this figure has room for {len(chosen)}")
        pen = str(rng.choice(list(PENS), p=[0.5, 0.35, 0.15]))
        rgb = np.clip(np.array(PENS[pen]) + rng.integers(-15, 16, 3), 0, 255)
        return {"pen": pen, "rgb": [int(c) for c in rgb],
                "width_px": round(float(rng.uniform(0.4, 0.7)) * page.dpi / 25.4, 3), "marks": chosen}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return mark_figure(image, params, page), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        pen = pen_mask(before, after).astype(np.uint8)
        h, w = pen.shape
        sx = w / page.width
        blob = max(1, int(round(_BLOB_IN * page.dpi * sx)))
        joined = cv2.dilate(pen, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * blob + 1, 2 * blob + 1)))
        n, _, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
        min_area = (2 * blob + 1) ** 2  # a stray speck is not a mark
        marks = int((stats[1:, cv2.CC_STAT_AREA] >= min_area).sum()) if n > 1 else 0
        # How much of the figure's own print now lies under pen ink.
        sy = h / page.height
        fig = np.zeros_like(pen, bool)
        for b in _figure_boxes(page):
            fig[int(b.y0 * sy):int(np.ceil(b.y1 * sy)), int(b.x0 * sx):int(np.ceil(b.x1 * sx))] = True
        printed = (luma(before) < 128) & fig
        covered = cv2.dilate(pen, np.ones((3, 3), np.uint8)).astype(bool)
        return {"marks": marks, "kinds": sorted({m["kind"] for m in params["marks"]}),
                "figure_print_covered": round(float((covered & printed).sum() / max(printed.sum(), 1)), 4),
                "pen_pixel_frac": round(float(pen.mean()), 6)}


register(FigureMarking())
