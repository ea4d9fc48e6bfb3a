"""``disc_lines``: a cylinder ruled into equal discs (a stack of coins), the count being what a pupil reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect, ellipse_points, points_box, union
from render.figures._scene import Scene, lerp
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import generic, hidden


class DiscLinesElement(Element, total=False):
    center: str  # the named ends of the cylinder's axis
    top: str
    radius: float  # in length units
    count: int  # discs in the stack
    flatten: float  # set by the solid drawer


def _draw(s: Scene, e: DiscLinesElement) -> Rect:
    """The near half of the horizontal circle between each two discs of a stack (thinner than the outline)."""
    bottom, top = s.p(e["center"]), s.p(e["top"])
    r = float(e["radius"]) * s.world_scale
    ry = r * float(e.get("flatten", 1.0))
    n = int(e["count"])
    if n < 1:
        raise ValueError(f"figure element {e['id']!r}: a stack needs a count of at least 1 disc, got {e['count']!r}")
    boxes = [s.canvas.polyline(ellipse_points(lerp(bottom, top, i / n), r, ry, 180, 360, 2.0), width=s.line * 0.6)
             for i in range(1, n)]
    return union(boxes) if boxes else points_box([bottom, top], 0.0)


def _describe(el: DiscLinesElement, spec: Mapping[str, Any]) -> str:
    count = el.get("count")
    if not isinstance(count, int) or hidden(el):
        return generic(el)
    return f"The cylinder is ruled into {count} equal discs stacked one on another."


PRIMITIVES.register(Primitive("disc_lines", DiscLinesElement, draw=_draw, describe=_describe))
