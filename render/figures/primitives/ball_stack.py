"""``ball_stack``: equal balls stacked in a tube, each touching the next (what they touch gives their diameter)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect, ellipse_points, union
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import generic, hidden, plural


class BallStackElement(Element, total=False):
    base: str  # the named centre of the tube's base
    radius: float  # in length units
    count: int
    touches: str  # "sides" (the curved side) or "ends" (base and lid)
    flatten: float  # set by the solid drawer: how flat each ball's equator looks


def _draw(s: Scene, e: BallStackElement) -> Rect:
    """Equal balls stacked up the axis from ``base``: a circle each, and the near half of its equator thinner."""
    bx, by = s.p(e["base"])
    r = float(e["radius"]) * s.world_scale
    n = int(e["count"])
    if n < 1:
        raise ValueError(f"figure element {e['id']!r}: a stack needs at least 1 ball, got {e['count']!r}")
    flat = float(e.get("flatten", 0.3))
    boxes = []
    for i in range(n):
        c = (bx, by - (2 * i + 1) * r)
        boxes.append(s.canvas.polyline(ellipse_points(c, r, r, 0, 360, 2.0), width=s.line))
        boxes.append(s.canvas.polyline(ellipse_points(c, r, r * flat, 180, 360, 3.0), width=s.line * 0.45))
    return union(boxes)


def _describe(el: BallStackElement, spec: Mapping[str, Any]) -> str:
    """How many balls there are and what they touch, which says which of the tube's printed lengths gives their
    diameter (the pupil counts them and reads the contacts off the drawing)."""
    count, touches = el.get("count"), el.get("touches")
    if not isinstance(count, int) or touches not in ("sides", "ends") or hidden(el):
        return generic(el)
    where = ("the tube's curved side, and the top ball stops short of the lid" if touches == "sides"
             else "the tube's base and its lid, with a gap between the balls and the curved side")
    return f"{plural(count, 'equal ball')} are stacked up the tube, each touching the next; they touch {where}."


PRIMITIVES.register(Primitive("ball_stack", BallStackElement, draw=_draw, describe=_describe))
