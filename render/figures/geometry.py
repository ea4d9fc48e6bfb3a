"""Plane-geometry figures (triangles, polygons, circles, parallel lines) drawn from a spec of named points.

Spec (beside ``size_in`` and ``elements``): ``points`` maps a name to ``[x, y]`` in any length
unit with y up; the drawer fits them to the figure with a margin for labels. Elements refer to
points by name:

- ``polygon`` ``points``: an outline (optional ``fill`` RGB); ``segment`` ``from``/``to``
  (optional ``text`` placed outside the figure, ``dashed``, ``arrows`` = n chevrons for parallel
  lines, at ``arrow_at`` of the way along it (default the middle), ``width`` multiplier);
- ``label`` ``at``: a vertex letter; ``point`` ``at``: a dot; ``text`` ``at`` (+ ``dir``);
- ``angle_mark`` ``at`` + ``arms`` [P, Q]: an arc inside angle PVQ with optional ``text``
  (``arcs`` = 2 for a double arc); ``right_angle`` ``at`` + ``arms``: the small square;
- ``tick_mark`` ``on`` [P, Q], ``count``: equal-length marks;
- ``circle`` ``center`` + ``radius``; ``arc`` ``center`` + ``radius`` + ``start``/``end`` degrees
  counter-clockwise (optional ``dashed``, ``fill`` for circles).

- ``object`` named ``protractor`` ``at`` (its centre) + ``base`` (a point its straight edge runs
  toward) + ``side`` (a point on the side its half-disc covers) + ``radius`` (length units) +
  ``scale`` (``outer`` or ``inner``: the scale whose 0 lies on the ``base`` arm): a see-through
  protractor laid on an angle, ticks every 5°, the outer scale numbered every 10° and the inner
  one (on a shorter arc, where three-digit numbers 10° apart would run together) every 20°;
- ``gridline`` ``origin`` (a point name) + ``step`` (world units per square): squared paper
  behind the figure, one line through ``origin`` every ``step``, covering the drawing area, or only
  ``bounds`` [x0, y0, x1, y1] (world offsets from ``origin``, y up) when given;
  ``legend`` ``text``: its key (``1 square = 2 cm``), written in a strip under the drawing.

``draw_only`` (element ids) draws just those elements in the full figure's layout.
Any labelled element may carry ``dir`` [dx, dy] (y up) to choose the side its text goes on;
otherwise text goes away from the centre of the figure. ``style`` picks the font (``italic`` for
unknowns such as x).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from typing import Any

from render.figures import FigureImage, drawer
from render.figures._draw import Canvas, Point, Rect, clip, ellipse_points, points_box, union
from synth.records import Box, Figure

LABEL_PT = 11.0
LINE_PT = 1.15  # main outline width in points (about 0.4 mm, a sharp pencil or a textbook line)


class Scene:
    """Everything an element drawer needs: the canvas, named points in pixels, sizes at this DPI."""

    def __init__(self, canvas: Canvas, points: Mapping[str, Point], dpi: int, world_scale: float) -> None:
        self.canvas, self.points, self.dpi, self.world_scale = canvas, dict(points), dpi, world_scale
        self.line = LINE_PT * dpi / 72
        self.font_px = round(LABEL_PT * dpi / 72)
        self.gap = 0.05 * dpi
        pts = list(self.points.values())
        self.center = (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)) if pts else (0.0, 0.0)

    def p(self, name: str) -> Point:
        try:
            return self.points[name]
        except KeyError:
            raise KeyError(f"figure element refers to point {name!r}, which is not in spec['points']") from None

    def away(self, anchor: Point, element: Mapping[str, Any], fallback: Point | None = None) -> Point:
        """The direction a label goes: the element's ``dir`` (y up), else away from the figure's centre."""
        if "dir" in element:
            dx, dy = element["dir"]
            return _unit((dx, -dy))
        if fallback is not None:
            return fallback
        v = (anchor[0] - self.center[0], anchor[1] - self.center[1])
        return _unit(v) if math.hypot(*v) > 1e-6 else (0.0, -1.0)

    def write(self, anchor: Point, direction: Point, element: Mapping[str, Any]) -> Rect:
        return self.canvas.label(anchor, direction, str(element["text"]), self.font_px, gap=self.gap,
                                 style=element.get("style", "sans"))


def _unit(v: Point) -> Point:
    n = math.hypot(*v)
    return (v[0] / n, v[1] / n) if n else (0.0, 0.0)


def _draw_polygon(s: Scene, e: Mapping[str, Any]) -> Rect:
    pts = [s.p(n) for n in e["points"]]
    boxes = []
    if e.get("fill"):
        boxes.append(s.canvas.polygon_fill(pts, tuple(e["fill"])))
    boxes.append(s.canvas.polyline(pts, width=s.line * e.get("width", 1.0), closed=True,
                                   dash=_dash(s) if e.get("dashed") else None))
    return union(boxes)


def _dash(s: Scene) -> tuple[float, float]:
    return (0.06 * s.dpi, 0.045 * s.dpi)


def _draw_segment(s: Scene, e: Mapping[str, Any]) -> Rect:
    a, b = s.p(e["from"]), s.p(e["to"])
    width = s.line * e.get("width", 1.0)
    boxes = [s.canvas.polyline([a, b], width=width, dash=_dash(s) if e.get("dashed") else None)]
    d = _unit((b[0] - a[0], b[1] - a[1]))
    for i in range(int(e.get("arrows", 0))):
        boxes.append(_chevron(s, a, b, d, i, int(e["arrows"]), float(e.get("arrow_at", 0.5))))
    if e.get("text") not in (None, ""):
        mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
        normal = (-d[1], d[0])
        if (mid[0] - s.center[0]) * normal[0] + (mid[1] - s.center[1]) * normal[1] < 0:
            normal = (-normal[0], -normal[1])
        at = e.get("text_at", 0.5)
        anchor = (a[0] + (b[0] - a[0]) * at, a[1] + (b[1] - a[1]) * at)
        boxes.append(s.write(anchor, s.away(anchor, e, normal), e))
    return union(boxes)


def _chevron(s: Scene, a: Point, b: Point, d: Point, i: int, n: int, at: float = 0.5) -> Rect:
    """A parallel-line arrowhead (>) on the segment, n of them side by side around ``at`` (0.5: the middle)."""
    size = 0.055 * s.dpi
    pos = at + (i - (n - 1) / 2) * size * 0.9 / max(1.0, math.hypot(b[0] - a[0], b[1] - a[1]))
    tip = (a[0] + (b[0] - a[0]) * pos + d[0] * size / 2, a[1] + (b[1] - a[1]) * pos + d[1] * size / 2)
    back = (tip[0] - d[0] * size, tip[1] - d[1] * size)
    wing = (-d[1] * size * 0.6, d[0] * size * 0.6)
    pts = [(back[0] + wing[0], back[1] + wing[1]), tip, (back[0] - wing[0], back[1] - wing[1])]
    return s.canvas.polyline(pts, width=s.line)


def _draw_label(s: Scene, e: Mapping[str, Any]) -> Rect:
    at = s.p(e["at"])
    return s.write(at, s.away(at, e), e)


def _draw_text(s: Scene, e: Mapping[str, Any]) -> Rect:
    at = s.p(e["at"])
    return s.write(at, s.away(at, e, (0.0, 0.0)), e)


def _draw_point(s: Scene, e: Mapping[str, Any]) -> Rect:
    return s.canvas.dot(s.p(e["at"]), s.line * 1.4)


def _arm_angles(s: Scene, e: Mapping[str, Any]) -> tuple[Point, float, float]:
    """Vertex and the two arm directions (degrees, counter-clockwise on screen), short way round."""
    v = s.p(e["at"])
    p, q = (s.p(n) for n in e["arms"])
    a1 = math.degrees(math.atan2(-(p[1] - v[1]), p[0] - v[0]))
    a2 = math.degrees(math.atan2(-(q[1] - v[1]), q[0] - v[0]))
    sweep = (a2 - a1) % 360
    if sweep > 180:
        a1, a2, sweep = a2, a1, 360 - sweep
    return v, a1, a1 + sweep


def _draw_angle(s: Scene, e: Mapping[str, Any]) -> Rect:
    v, start, end = _arm_angles(s, e)
    sweep = end - start
    # Narrow angles get a wider arc so the label fits between the arms.
    radius = s.dpi * (0.2 if sweep >= 50 else 0.2 + (50 - sweep) * 0.006) * e.get("size", 1.0)
    boxes = []
    for k in range(int(e.get("arcs", 1))):
        r = radius + k * 0.035 * s.dpi
        boxes.append(s.canvas.polyline(ellipse_points(v, r, r, start, end, 3.0), width=s.line * 0.8))
    if e.get("text") not in (None, ""):
        mid = math.radians((start + end) / 2)
        direction = (math.cos(mid), -math.sin(mid))
        r = radius + (int(e.get("arcs", 1)) - 1) * 0.035 * s.dpi
        style = e.get("style", "sans")
        w, h = s.canvas.text_size(str(e["text"]), s.font_px, style)
        # Far enough out that the label sits clear of the arc and, in a narrow angle, between the arms.
        reach = abs(direction[0]) * w / 2 + abs(direction[1]) * h / 2
        half = math.radians(max(sweep, 1.0) / 2)
        near = r + s.gap * 0.6 + reach
        far = max(near, (math.hypot(w, h) / 2 + s.gap * 0.5) / math.sin(half))  # fits whatever its orientation
        dist = _first_fit(near, far, direction, (w, h), (start, end), s.gap * 0.5)
        center = (v[0] + direction[0] * dist, v[1] + direction[1] * dist)
        boxes.append(s.canvas.text(center, str(e["text"]), s.font_px, style=style))
    return union(boxes)


def _first_fit(near: float, far: float, direction: Point, size: tuple[float, float],
               arms_deg: tuple[float, float], clearance: float) -> float:
    """The least distance along the bisector (from ``near`` up to ``far``) where a w x h label lies between the arms.

    The label is upright, so in a narrow angle whose bisector runs along the text it fits much
    closer to the vertex than a bound for any orientation says; closer labels keep clear of the
    labels at the other corners of a small triangle.
    """
    w, h = size
    # Arm directions in y-up coordinates; the angle runs counter-clockwise from the first to the second.
    u1 = (math.cos(math.radians(arms_deg[0])), math.sin(math.radians(arms_deg[0])))
    u2 = (math.cos(math.radians(arms_deg[1])), math.sin(math.radians(arms_deg[1])))
    corners = [(sx * w / 2, sy * h / 2) for sx in (-1, 1) for sy in (-1, 1)]
    dist = near
    while dist < far:
        cx, cy = direction[0] * dist, -direction[1] * dist  # the label's centre, y up
        if all(u1[0] * (cy - dy) - u1[1] * (cx + dx) >= clearance and
               u2[1] * (cx + dx) - u2[0] * (cy - dy) >= clearance for dx, dy in corners):
            return dist
        dist += 1.0
    return far


PROTRACTOR_FILL = (236, 242, 248)  # clear plastic, a little blue
SCALE_PT = 6.5  # the protractor's printed numbers


def _protractor_frame(s: Scene, e: Mapping[str, Any]) -> tuple[Point, Point, Point, float]:
    """Centre, unit vector along the straight edge (toward ``base``), unit normal into the half-disc, radius px."""
    v, b, side = s.p(e["at"]), s.p(e["base"]), s.p(e["side"])
    u = _unit((b[0] - v[0], b[1] - v[1]))
    n = (-u[1], u[0])
    if n[0] * (side[0] - v[0]) + n[1] * (side[1] - v[1]) < 0:
        n = (-n[0], -n[1])
    return v, u, n, float(e["radius"]) * s.world_scale


def _polar(center: Point, u: Point, n: Point, deg: float, r: float) -> Point:
    """The point ``r`` from ``center`` at ``deg`` degrees from ``u`` turning toward ``n``."""
    t = math.radians(deg)
    c, si = math.cos(t), math.sin(t)
    return (center[0] + r * (u[0] * c + n[0] * si), center[1] + r * (u[1] * c + n[1] * si))


def _draw_object(s: Scene, e: Mapping[str, Any]) -> Rect:
    if e.get("name") != "protractor":
        raise ValueError(f"figure element {e['id']!r}: plane geometry draws the object 'protractor', "
                         f"not {e.get('name')!r}")
    if e.get("scale") not in ("outer", "inner"):
        raise ValueError(f"figure element {e['id']!r}: protractor scale must be 'outer' or 'inner', "
                         f"got {e.get('scale')!r}")
    v, u, n, radius = _protractor_frame(s, e)

    def at(deg: float, r: float) -> Point:
        return _polar(v, u, n, deg, r)

    rim = [at(d, radius) for d in range(0, 181, 2)]
    boxes = [s.canvas.polygon_fill(rim, PROTRACTOR_FILL)]
    thin = s.line * 0.55
    boxes.append(s.canvas.polyline([*rim, rim[0]], width=thin))
    boxes.append(s.canvas.polyline([at(d, radius * 0.42) for d in range(0, 181, 3)], width=thin))
    # The centre mark on the straight edge.
    boxes.append(s.canvas.polyline([at(90, 0.0), at(90, 0.05 * s.dpi)], width=thin))
    size = max(1, round(SCALE_PT * s.dpi / 72))
    for deg in range(0, 181, 5):
        long = deg % 10 == 0
        boxes.append(s.canvas.polyline([at(deg, radius), at(deg, radius - (0.08 if long else 0.045) * s.dpi)],
                                       width=thin))
        if not long:
            continue
        # The outer scale counts from the base arm when it is the one to read, else from the other end.
        outer = deg if e["scale"] == "outer" else 180 - deg
        lift = 0.04 * s.dpi if deg in (0, 180) else 0.0  # the end numbers sit above the straight edge
        numbers = [(radius - 0.15 * s.dpi, outer)]
        if deg % 20 == 0:  # the inner arc is too short for a number every 10° ("10090" at 6.5 pt)
            numbers.append((radius - 0.3 * s.dpi, 180 - outer))
        for r, text in numbers:
            x, y = at(deg, r)
            boxes.append(s.canvas.text((x + n[0] * lift, y + n[1] * lift), str(text), size))
    return union(boxes)


def _draw_right_angle(s: Scene, e: Mapping[str, Any]) -> Rect:
    v = s.p(e["at"])
    size = 0.11 * s.dpi
    u1, u2 = (_unit((s.p(n)[0] - v[0], s.p(n)[1] - v[1])) for n in e["arms"])
    c1 = (v[0] + u1[0] * size, v[1] + u1[1] * size)
    c2 = (v[0] + u2[0] * size, v[1] + u2[1] * size)
    corner = (c1[0] + u2[0] * size, c1[1] + u2[1] * size)
    return s.canvas.polyline([c1, corner, c2], width=s.line * 0.8)


def _draw_ticks(s: Scene, e: Mapping[str, Any]) -> Rect:
    a, b = (s.p(n) for n in e["on"])
    d = _unit((b[0] - a[0], b[1] - a[1]))
    normal = (-d[1], d[0])
    half, spacing = 0.06 * s.dpi, 0.04 * s.dpi
    n = int(e.get("count", 1))
    mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    boxes = []
    for i in range(n):
        off = (i - (n - 1) / 2) * spacing
        c = (mid[0] + d[0] * off, mid[1] + d[1] * off)
        boxes.append(s.canvas.polyline([(c[0] - normal[0] * half, c[1] - normal[1] * half),
                                        (c[0] + normal[0] * half, c[1] + normal[1] * half)], width=s.line * 0.9))
    return union(boxes)


def _draw_circle(s: Scene, e: Mapping[str, Any]) -> Rect:
    c = s.p(e["center"])
    r = float(e["radius"]) * s.world_scale
    boxes = []
    if e.get("fill"):
        boxes.append(s.canvas.polygon_fill(ellipse_points(c, r, r, 0, 360, 2.0), tuple(e["fill"])))
    boxes.append(s.canvas.polyline(ellipse_points(c, r, r, 0, 360, 2.0), width=s.line,
                                   dash=_dash(s) if e.get("dashed") else None))
    return union(boxes)


def _draw_arc(s: Scene, e: Mapping[str, Any]) -> Rect:
    c = s.p(e["center"])
    r = float(e["radius"]) * s.world_scale
    return s.canvas.polyline(ellipse_points(c, r, r, float(e["start"]), float(e["end"]), 2.0), width=s.line,
                             dash=_dash(s) if e.get("dashed") else None)


ELEMENT_DRAWERS: dict[str, Callable[[Scene, Mapping[str, Any]], Rect]] = {
    "polygon": _draw_polygon, "segment": _draw_segment, "label": _draw_label, "text": _draw_text,
    "point": _draw_point, "angle_mark": _draw_angle, "right_angle": _draw_right_angle,
    "tick_mark": _draw_ticks, "circle": _draw_circle, "arc": _draw_arc, "object": _draw_object,
}  # fmt: skip
# Fills first, then lines, then marks, then text: labels stay readable over lines.
_LAYER = {"gridline": -1, "object": -0.5, "polygon": 0, "circle": 0, "face": 0, "arc": 1, "segment": 1, "tick_mark": 2,
          "right_angle": 2, "angle_mark": 2, "point": 2, "label": 3, "text": 3, "legend": 3}


def render_elements(canvas: Canvas, points: Mapping[str, Point], elements: list[Mapping[str, Any]], dpi: int,
                    world_scale: float, extra: Mapping[str, Callable[[Scene, Mapping[str, Any]], Rect]] = {},
                    only: Collection[str] | None = None) -> tuple[Box, ...]:
    """Draw every element (layered: fills, lines, marks, text) and return one box per element, in spec order.

    ``only`` (element ids) draws just those elements, keeping the layout of the whole figure: a
    composer can highlight one primitive, and a test can check that its ink stays in its box.
    """
    scene = Scene(canvas, points, dpi, world_scale)
    table = {**ELEMENT_DRAWERS, **extra}
    rects: dict[int, Rect] = {}
    order = sorted((i for i in range(len(elements)) if only is None or elements[i]["id"] in only),
                   key=lambda i: (_LAYER.get(elements[i]["type"], 1), i))
    for i in order:
        e = elements[i]
        try:
            fn = table[e["type"]]
        except KeyError:
            raise ValueError(f"figure element {e.get('id')!r} has type {e.get('type')!r}; "
                             f"this drawer knows {sorted(table)}") from None
        rects[i] = clip(fn(scene, e), canvas.width, canvas.height)
    return tuple(Box(kind=f"figure_{e['type']}", ref=str(e["id"]), x0=round(rects[i][0], 2), y0=round(rects[i][1], 2),
                     x1=round(rects[i][2], 2), y1=round(rects[i][3], 2)) for i, e in enumerate(elements) if i in rects)


def fit(points: Mapping[str, Point], extents: list[Rect], width: int, height: int, margin: tuple[float, float],
        ) -> tuple[dict[str, Point], float]:
    """Map points (y up) into a width x height image with ``margin`` px free on every side.

    ``extents`` are extra world boxes that must fit (a circle's reach beyond its centre).
    Returns the pixel points and the pixels per world unit.
    """
    boxes = [points_box([p], 0.0) for p in points.values()] + list(extents)
    x0, y0, x1, y1 = union(boxes)
    span_x, span_y = max(x1 - x0, 1e-9), max(y1 - y0, 1e-9)
    scale = min(max(1.0, width - 2 * margin[0]) / span_x, max(1.0, height - 2 * margin[1]) / span_y)
    ox = (width - span_x * scale) / 2 - x0 * scale
    oy = (height - span_y * scale) / 2 + y1 * scale
    return {k: (ox + x * scale, oy - y * scale) for k, (x, y) in points.items()}, scale


def label_margins(canvas: Canvas, elements: list[Mapping[str, Any]], dpi: int) -> tuple[float, float]:
    """Room to leave around the drawing (x, y) so the widest label fits outside any edge."""
    size = round(LABEL_PT * dpi / 72)
    extents = [canvas.text_size(str(e["text"]), size, e.get("style", "sans")) for e in elements
               if e.get("text") not in (None, "")]
    w = max((x for x, _ in extents), default=0.0)
    h = max((y for _, y in extents), default=0.0)
    gap = 0.09 * dpi
    return max(0.12 * dpi, w + gap), max(0.12 * dpi, h + gap)


def canvas_for(spec: Mapping[str, Any], dpi: int) -> Canvas:
    try:
        w_in, h_in = spec["size_in"]
    except (KeyError, TypeError, ValueError):
        raise ValueError("figure spec needs size_in = [width, height] in inches") from None
    return Canvas(max(1, round(w_in * dpi)), max(1, round(h_in * dpi)))


def _round_extent(center: Point, radius: float, e: Mapping[str, Any]) -> Rect:
    """World box of a circle, or of just the drawn part of an arc."""
    start, end = (0.0, 360.0) if e["type"] == "circle" else (float(e["start"]), float(e["end"]))
    pts = [(center[0] + radius * math.cos(math.radians(t)), center[1] + radius * math.sin(math.radians(t)))
           for t in [start + (end - start) * i / 90 for i in range(91)]]
    return points_box(pts, 0.0)


GRID_RGB = (160, 182, 210)  # the pale blue-grey of squared exercise paper
GRID_PT = 0.45


def _grid_drawer(area: Rect) -> Callable[[Scene, Mapping[str, Any]], Rect]:
    """Squared paper over ``area`` (px), with a line through the ``origin`` point every ``step`` world units."""

    def draw(s: Scene, e: Mapping[str, Any]) -> Rect:
        step = float(e["step"]) * s.world_scale
        if step <= 0:
            raise ValueError(f"figure element {e['id']!r}: grid step must be positive, got {e['step']!r}")
        ox, oy = s.p(e["origin"])
        x0, y0, x1, y1 = area
        if "bounds" in e:  # a sheet under part of the drawing: offsets from the origin in world units, y up
            bx0, by0, bx1, by1 = (float(v) * step / float(e["step"]) for v in e["bounds"])
            x0, x1 = max(x0, ox + bx0), min(x1, ox + bx1)
            y0, y1 = max(y0, oy - by1), min(y1, oy - by0)
        width = GRID_PT * s.dpi / 72
        xs = [ox + i * step for i in range(math.ceil((x0 - ox) / step), math.floor((x1 - ox) / step) + 1)]
        ys = [oy + i * step for i in range(math.ceil((y0 - oy) / step), math.floor((y1 - oy) / step) + 1)]
        if len(xs) < 2 or len(ys) < 2:
            raise ValueError(f"figure element {e['id']!r}: a grid step of {e['step']!r} leaves no whole square")
        # Whole squares only, the way a sheet of squared paper is cut.
        left, right, top, bottom = xs[0], xs[-1], ys[0], ys[-1]
        for x in xs:
            s.canvas.polyline([(x, top), (x, bottom)], width=width, color=GRID_RGB)
        for y in ys:
            s.canvas.polyline([(left, y), (right, y)], width=width, color=GRID_RGB)
        return (left - 1.5, top - 1.5, right + 1.5, bottom + 1.5)

    return draw


def _legend_drawer(strip: Rect) -> Callable[[Scene, Mapping[str, Any]], Rect]:
    """The key under the drawing, centred in its own strip so no label or line runs into it."""

    def draw(s: Scene, e: Mapping[str, Any]) -> Rect:
        center = ((strip[0] + strip[2]) / 2, (strip[1] + strip[3]) / 2)
        return s.canvas.text(center, str(e["text"]), s.font_px, style=e.get("style", "sans"))

    return draw


def _protractor_extent(points: Mapping[str, Point], e: Mapping[str, Any]) -> Rect:
    """World box of a protractor's half-disc (y up, so the normal is worked out here, not by the scene)."""
    v, b, side = points[e["at"]], points[e["base"]], points[e["side"]]
    u = _unit((b[0] - v[0], b[1] - v[1]))
    n = (-u[1], u[0])
    if n[0] * (side[0] - v[0]) + n[1] * (side[1] - v[1]) < 0:
        n = (-n[0], -n[1])
    return points_box([_polar(v, u, n, d, float(e["radius"])) for d in range(0, 181, 5)], 0.0)


@drawer("plane_geometry")
def draw_plane_geometry(figure: Figure, dpi: int) -> FigureImage:
    """Triangles, polygons, circles and parallel lines from named points (see the module docstring)."""
    spec = figure.spec
    canvas = canvas_for(spec, dpi)
    points = {k: (float(v[0]), float(v[1])) for k, v in spec["points"].items()}
    extents = [_round_extent(points[e["center"]], float(e["radius"]), e) for e in spec["elements"]
               if e["type"] in ("circle", "arc")]
    extents += [_protractor_extent(points, e) for e in spec["elements"] if e["type"] == "object"]
    # A key gets a strip of its own under the drawing; the rest is fitted above it.
    legend = any(e["type"] == "legend" for e in spec["elements"])
    strip = round(LABEL_PT * dpi / 72 * 1.9) if legend else 0
    drawing_h = max(1, canvas.height - strip)
    # Angle labels sit inside their angle, within the drawing: only labels placed outside it need a margin
    # (reserving room for "(3x − 10)°" on every side shrank triangles until their angle labels collided).
    labelled = [e for e in spec["elements"] if e["type"] not in ("legend", "angle_mark")]
    margin = label_margins(canvas, labelled, dpi)
    if any(e["type"] == "gridline" for e in spec["elements"]):  # squared paper runs on past the drawing
        margin = (max(margin[0], 0.3 * dpi), max(margin[1], 0.25 * dpi))
    px, scale = fit(points, extents, canvas.width, drawing_h, margin)
    extra = {"gridline": _grid_drawer((0.0, 0.0, float(canvas.width), float(drawing_h))),
             "legend": _legend_drawer((0.0, float(drawing_h), float(canvas.width), float(canvas.height)))}
    boxes = render_elements(canvas, px, spec["elements"], dpi, scale, extra=extra, only=spec.get("draw_only"))
    return FigureImage(canvas.pixels(), boxes)
