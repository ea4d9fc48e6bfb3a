"""``segment``: a side or edge between two named points (its length, parallel arrows, dashes), or a line on a grid."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypedDict

from render.figures._draw import Point, Rect, union
from render.figures._scene import Scene, unit
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import cap, hidden, named, plural, with_value, xy

# "from" is a keyword, so the two ends are declared in the functional form.
_Ends = TypedDict("_Ends", {"from": "str | list[float]", "to": "str | list[float]"}, total=False)


class SegmentElement(_Ends, Element, total=False):
    """``from``/``to``: point names, or [x, y] on a coordinate grid."""

    extend: bool  # a grid line drawn across the whole window
    arrows: int  # parallel-line chevrons
    arrow_at: float  # where along it the chevrons sit (0.5: the middle)
    text_at: float  # where along it the text sits
    dashed: bool
    width: float  # line width as a multiple of the outline's
    squares: int  # its length counted in squares of the grid behind it
    faces: list[str]  # a solid's edge: dashed when every one of these faces is hidden


def _draw(s: Scene, e: SegmentElement) -> Rect:
    a, b = s.p(e["from"]), s.p(e["to"])  # type: ignore[arg-type]
    width = s.line * e.get("width", 1.0)
    boxes = [s.canvas.polyline([a, b], width=width, dash=s.dash() if e.get("dashed") else None)]
    d = unit((b[0] - a[0], b[1] - a[1]))
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


def _describe(el: SegmentElement, spec: Mapping[str, Any]) -> str:
    ends = el.get("from"), el.get("to")
    if all(isinstance(e, (list, tuple)) and len(e) == 2 for e in ends):
        what = "A line is drawn through" if el.get("extend") else "A segment is drawn from"
        return f"{what} {xy(ends[0])} {'and' if el.get('extend') else 'to'} {xy(ends[1])}."
    if isinstance(el.get("squares"), int) and not el.get("text") and not hidden(el):
        # A side on squared paper: its length is counted in squares (and scaled by the grid's key).
        return f"{cap(named('segment', el))} runs along {plural(el['squares'], 'grid square')}."
    return with_value(cap(named("segment", el)), el, "is labelled")


PRIMITIVES.register(Primitive("segment", SegmentElement, draw=_draw, layer=1, describe=_describe, marks=("tick",)))
