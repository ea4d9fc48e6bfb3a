"""Figure marking: a student's pen on the figure, anchored to what it marks: a circled vertex, point, label,
angle or bar top, ticks across a side's middle, a bar or a shape shaded inside its outline.

Marks are placed from the renderer's ``figure_<type>`` boxes: a polygon's vertices from its vertex labels
(the point of its box nearest each label), its sides between them, bars from their boxes, points and
labels from theirs. Circles always ring something printed; hatching is clipped to a region inside the
shape (a polygon pulled 40 % towards its centroid, a bar's inset outline), so it never crosses a side.
A page without a figure is not a page this op can act on: ``applies`` says so, the pipeline records a
skip, and ``degrade`` raises ``NotApplicableError`` rather than returning an unmarked page under a
marking label. Marks are kept apart (their footprints never touch), so the number of marks can be read
back from the pixels as the number of separate pen-ink blobs on the figure. A figure whose marked
elements leave room for fewer marks than the severity asks for (one circle, a number line) gets the
rest as small circles round its small elements, then along its axes, then anywhere on it, each moved
onto the nearest print, so every severity fits every figure instead of failing on simple ones.
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
# Footprint radius of each mark kind, inches; circles round a box and hatches scale with what they mark.
_RADIUS_IN = {"circle": 0.14, "tick": 0.12}
_GAP_IN = 0.08  # clear space between marks, so each stays one blob of ink (at least ``_gap``)
_BLOB_IN = 0.025  # ink closer than this is joined when counting marks (double ticks, pen lifts)
_PEN_MM = (0.4, 0.7)  # the pen's stroke width
_COUNT = {1: (1, 1), 2: (2, 3), 3: (4, 6)}


def _blob_px(dpi: float) -> int:
    """The measure's joining radius in whole pixels (``_BLOB_IN`` at ``dpi``)."""
    return max(1, int(round(_BLOB_IN * dpi)))


def _gap(dpi: float) -> float:
    """Clear space between two marks' footprints (their paths), page px: ``_GAP_IN``, or more where the measure
    would join them. Ink within twice the joining radius (in whole pixels: 2 px at 60 dpi, 0.033 in) counts as one
    mark, and each stroke's ink reaches half the pen's width beyond its path: the gap is twice the radius, the widest
    pen (half on each side) and a pixel of anti-aliasing on each side. At 60 dpi two circles 0.08 in apart touched
    after the joining (benchmarks/results_degrade.md, pages 811 and 978)."""
    return max(_GAP_IN * dpi, 2 * _blob_px(dpi) + 2 + _PEN_MM[1] * dpi / 25.4)


def _figure_boxes(page: RenderedPage) -> list[Box]:
    return [b for b in page.layout if b.kind.startswith("figure_")]


def _centre(b: Box) -> tuple[float, float]:
    return (b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2


def polygon_vertices(polygon: Box, boxes: list[Box], dpi: float) -> list[tuple[float, float]]:
    """Where a polygon's named vertices are (page px), in order round the polygon: each vertex label (a
    short name beside the polygon) marks the point of the polygon's box nearest to it. Side labels
    ("41 ft") are wider than tall and are left out; a polygon with fewer than two named vertices gets none."""
    reach = 0.35 * dpi
    out = []
    for b in boxes:
        if b.kind != "figure_label" or (b.x1 - b.x0) > 1.6 * (b.y1 - b.y0):
            continue
        cx, cy = _centre(b)
        if not (polygon.x0 - reach <= cx <= polygon.x1 + reach and polygon.y0 - reach <= cy <= polygon.y1 + reach):
            continue
        x, y = min(max(cx, polygon.x0), polygon.x1), min(max(cy, polygon.y0), polygon.y1)
        # A label inside the box names the vertex on the nearest edge.
        if polygon.x0 < x < polygon.x1 and polygon.y0 < y < polygon.y1:
            edges = {(polygon.x0, y): x - polygon.x0, (polygon.x1, y): polygon.x1 - x,
                     (x, polygon.y0): y - polygon.y0, (x, polygon.y1): polygon.y1 - y}
            x, y = min(edges, key=edges.get)
        out.append((round(float(x), 2), round(float(y), 2)))
    if len(out) < 2:
        return []
    mx, my = np.mean([p[0] for p in out]), np.mean([p[1] for p in out])
    return sorted(set(out), key=lambda p: np.arctan2(p[1] - my, p[0] - mx))


# Figure elements that print words or numbers: a vertex's name, a value, an angle's size beside its arc (its box holds
# both). Hatching keeps clear of them, as a student shades round what is written: a shape shaded through its angles'
# "(x + 20)°" was a severity-1 mark said to have no effect, over a given the solution needs (photo_sweep, seed
# 8675309, page 5). A polygon's shading is pulled further in (``_SHRINK``) until it is clear, else not offered.
_WRITTEN = ("figure_label", "figure_text", "figure_angle_mark")
_SHRINK = (0.4, 0.5, 0.6, 0.7)
_CLEAR_IN = 0.04  # clear space between a hatch's region and printed writing


def _clear_of_writing(region: list[list[float]], written: list[Box], dpi: float) -> bool:
    """Whether the polygon ``region`` (page px) keeps ``_CLEAR_IN`` clear of every box in ``written``."""
    if not written:
        return True
    pts = np.asarray(region, float)
    x0, y0 = np.floor(pts.min(axis=0)).astype(int)
    x1, y1 = np.ceil(pts.max(axis=0)).astype(int)
    inside = np.zeros((y1 - y0 + 1, x1 - x0 + 1), np.uint8)
    cv2.fillPoly(inside, [np.round(pts - [x0, y0]).astype(np.int32)], 1)
    margin = _CLEAR_IN * dpi
    for b in written:
        bx0, by0 = max(int(np.floor(b.x0 - margin)) - x0, 0), max(int(np.floor(b.y0 - margin)) - y0, 0)
        bx1, by1 = int(np.ceil(b.x1 + margin)) - x0 + 1, int(np.ceil(b.y1 + margin)) - y0 + 1
        if bx1 > 0 and by1 > 0 and inside[by0:by1, bx0:bx1].any():
            return False
    return True


def _shrunk(points: list[tuple[float, float]], by: float) -> list[list[float]]:
    """The polygon ``points`` pulled towards their centroid by the share ``by``: a hatch inside it never
    reaches the sides."""
    c = np.mean(points, axis=0)
    return [[round(float(v), 2) for v in c + (np.array(p) - c) * (1 - by)] for p in points]


def _candidates(page: RenderedPage) -> list[dict[str, Any]]:
    """Every place a mark could go, anchored to a figure primitive: the mark kind, its footprint disc, the
    element it marks, and what it is drawn from (a vertex, a side's two ends, a bar's outline)."""
    boxes = _figure_boxes(page)
    if not boxes:
        return []
    dpi = page.dpi
    r_circle = _RADIUS_IN["circle"] * dpi
    written = [b for b in boxes if b.kind in _WRITTEN]
    out: list[dict[str, Any]] = []

    def add(kind: str, element: str, centre: tuple[float, float], radius: float, box: Box, **extra: Any) -> None:
        out.append({"kind": kind, "element": element, "centre": [round(float(centre[0]), 2),
                                                                 round(float(centre[1]), 2)],
                    "radius": round(float(radius), 2), "box": [float(v) for v in (box.x0, box.y0, box.x1, box.y1)],
                    **extra})

    for b in boxes:
        ptype = b.kind.removeprefix("figure_")
        name = f"{b.kind}:{b.ref}"
        declared = marks_for(ptype)
        w, h = b.x1 - b.x0, b.y1 - b.y0
        if ptype == "polygon":
            vertices = polygon_vertices(b, boxes, dpi)
            for i, v in enumerate(vertices):  # a circled vertex encloses the corner and its angle
                add("circle", f"{name}:vertex{i}", v, r_circle, b)
            for i in range(len(vertices) if len(vertices) >= 3 else 0):  # ticks across each side's middle
                a, c = np.array(vertices[i]), np.array(vertices[(i + 1) % len(vertices)])
                side = np.degrees(np.arctan2(*(c - a)[::-1]))
                add("tick", f"{name}:side{i}", (a + c) / 2, _RADIUS_IN["tick"] * dpi, b, tick_deg=round(side + 90, 2))
            if len(vertices) >= 3 and min(w, h) >= 0.4 * dpi:  # shading inside, clear of the sides and the writing
                inner = next((r for r in (_shrunk(vertices, by) for by in _SHRINK)
                              if _clear_of_writing(r, written, dpi)), None)
                if inner is not None:
                    c = np.mean(inner, axis=0)
                    reach = max(np.hypot(p[0] - c[0], p[1] - c[1]) for p in inner)
                    add("hatch", f"{name}:inside", c, reach, b, region=inner)
        elif ptype == "bar":
            if w >= 0.12 * dpi and h >= 0.25 * dpi:  # a bar coloured in, inside its outline
                inset_x, inset_y = 0.18 * w, min(0.12 * h, 0.06 * dpi)
                region = [[b.x0 + inset_x, b.y0 + inset_y], [b.x1 - inset_x, b.y0 + inset_y],
                          [b.x1 - inset_x, b.y1 - inset_y], [b.x0 + inset_x, b.y1 - inset_y]]
                if _clear_of_writing(region, written, dpi):
                    add("hatch", f"{name}:inside", _centre(b), 0.5 * float(np.hypot(w, h)), b,
                        region=[[round(x, 2), round(y, 2)] for x, y in region])
            add("circle", f"{name}:top", ((b.x0 + b.x1) / 2, b.y0), r_circle, b)  # the bar's value
        elif ptype == "point":
            add("circle", name, _centre(b), r_circle, b)
        elif ptype == "segment" and "tick" in declared and max(w, h) >= 0.3 * dpi:
            add("tick", name, _centre(b), _RADIUS_IN["tick"] * dpi, b)  # direction from the print when drawn
        elif "circle" in declared and ptype not in ("curve", "polygon"):
            if max(w, h) > 0.6 * dpi:  # a title or a long label is underlined, not circled
                add("underline", name, ((b.x0 + b.x1) / 2, b.y1 + 0.04 * dpi), 0.5 * w + 0.04 * dpi, b)
            else:  # a label, an angle, a tick mark: circled round its whole box
                add("circle", name, _centre(b), max(r_circle, 0.5 * float(np.hypot(w, h)) + 0.03 * dpi), b)
        elif "scribble" in declared and min(w, h) >= 0.25 * dpi:  # a region shaded inside, its outline kept
            cx, cy = _centre(b)
            ring = np.linspace(0, 2 * np.pi, 16, endpoint=False)
            region = [[round(cx + 0.3 * w * np.cos(t), 2), round(cy + 0.3 * h * np.sin(t), 2)] for t in ring]
            if _clear_of_writing(region, written, dpi):
                add("hatch", f"{name}:inside", (cx, cy), 0.3 * max(w, h), b, region=region)
    return out


def _spare_places(page: RenderedPage) -> list[list[dict[str, Any]]]:
    """Small circles for figures with too few markable elements, each round something printed: first
    the centre of each small element (a label, a point, a tick), then along the edges of the larger ones."""
    boxes = _figure_boxes(page)
    r = _RADIUS_IN["circle"] * page.dpi

    def place(name: str, cx: float, cy: float, box: Box) -> dict[str, Any]:
        return {"kind": "circle", "element": name, "centre": [round(float(cx), 2), round(float(cy), 2)],
                "radius": round(float(r), 2), "box": [float(v) for v in (box.x0, box.y0, box.x1, box.y1)]}

    small = [place(f"{b.kind}:{b.ref}:spare", *_centre(b), b) for b in boxes
             if max(b.x1 - b.x0, b.y1 - b.y0) <= 3 * r and b.kind != "figure"]
    pitch = 2 * r + _gap(page.dpi)
    edges = []
    for b in boxes:  # axes, tick rows and curves have print along their edges; a shape's box does not
        if b.kind not in ("figure_axis", "figure_tick", "figure_curve") or max(b.x1 - b.x0, b.y1 - b.y0) <= 3 * r:
            continue
        # Along the box's left and bottom edges (an axis, a curve's foot, a shape's base), snapped to ink when drawn.
        for t in np.arange(0, b.x1 - b.x0, pitch):
            edges.append(place(f"{b.kind}:{b.ref}:bottom{int(t)}:spare", b.x0 + t, b.y1, b))
        for t in np.arange(0, b.y1 - b.y0, pitch):
            edges.append(place(f"{b.kind}:{b.ref}:left{int(t)}:spare", b.x0, b.y1 - t, b))
    # Last, anywhere on the figure (snapped to print when there is print within reach).
    inner = [b for b in boxes if b.kind != "figure"]
    fx0, fy0 = min(b.x0 for b in inner), min(b.y0 for b in inner)
    fx1, fy1 = max(b.x1 for b in inner), max(b.y1 for b in inner)
    nx, ny = max(2, int((fx1 - fx0) // pitch) + 1), max(2, int((fy1 - fy0) // pitch) + 1)
    x0, y0 = (fx0 + fx1 - (nx - 1) * pitch) / 2, (fy0 + fy1 - (ny - 1) * pitch) / 2
    whole = Box("figure_area", "all", fx0, fy0, fx1, fy1)
    grid = [place(f"figure_area:{i}_{j}:spare", x0 + i * pitch, y0 + j * pitch, whole)
            for j in range(ny) for i in range(nx)]
    return [small, edges, grid]


def _apart(a: dict[str, Any], b: dict[str, Any], gap: float) -> bool:
    """Whether two marks' footprints keep ``gap`` apart: discs, or a hatch's own region against a disc."""
    if (a["kind"] == "hatch") != (b["kind"] == "hatch"):
        hatch, disc = (a, b) if a["kind"] == "hatch" else (b, a)
        region = np.asarray(hatch["region"], np.float32).reshape(-1, 1, 2)
        inside = cv2.pointPolygonTest(region, (float(disc["centre"][0]), float(disc["centre"][1])), True)
        return -inside >= disc["radius"] + 1.5 * gap  # a clipped hatch fills its region to the edge
    return bool(np.hypot(a["centre"][0] - b["centre"][0], a["centre"][1] - b["centre"][1])
                >= a["radius"] + b["radius"] + gap)


def _pick(cands: list[dict[str, Any]], order: list[int], chosen: list[dict[str, Any]], want: int, gap: float,
          rng: np.random.Generator) -> None:
    """Add candidates in ``order`` to ``chosen`` (in place) while they keep clear of every mark so far."""
    for i in order:
        if len(chosen) >= want:
            return
        c = cands[int(i)]
        if any(c["element"] == m["element"] for m in chosen):
            continue
        if all(_apart(c, m, gap) for m in chosen):
            mark = {**c, "seed": int(rng.integers(2**31 - 1))}
            if c["kind"] == "tick":
                mark["count"] = int(rng.integers(1, 3))
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
        gap = _gap(page.dpi)
        chosen: list[dict[str, Any]] = []
        order = list(rng.permutation(len(cands)))
        if severity == 3:  # "extensive": shade a shape when there is one to shade
            order = sorted(order, key=lambda i: cands[i]["kind"] != "hatch")[:1] + order
        _pick(cands, order, chosen, want, gap, rng)
        if len(chosen) < lo:  # only then, so a page that had room draws the marks it always drew
            chosen = _fill_with_spares(page, chosen, lo, want, gap, rng)
        if len(chosen) < lo:
            raise DegradationError(f"figure_marking severity {severity} needs {lo} separate places to mark on"
                                   f" the figure; this figure has room for {len(chosen)}")
        pen = str(rng.choice(list(PENS), p=[0.5, 0.35, 0.15]))
        rgb = np.clip(np.array(PENS[pen]) + rng.integers(-15, 16, 3), 0, 255)
        return {"pen": pen, "rgb": [int(c) for c in rgb],
                "width_px": round(float(rng.uniform(*_PEN_MM)) * page.dpi / 25.4, 3), "marks": chosen}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return mark_figure(image, params, page), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        pen = pen_mask(before, after).astype(np.uint8)
        h, w = pen.shape
        sx = w / page.width
        blob = _blob_px(page.dpi * sx)
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
