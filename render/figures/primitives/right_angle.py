"""``right_angle``: the small square in the corner of a right angle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect
from render.figures._scene import Scene, unit
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import angle_name


class RightAngleElement(Element, total=False):
    at: str  # the vertex
    vertex: str
    arms: list[str]  # the two points the arms run toward


def _draw(s: Scene, e: RightAngleElement) -> Rect:
    v = s.p(e["at"])
    size = 0.11 * s.dpi
    u1, u2 = (unit((s.p(n)[0] - v[0], s.p(n)[1] - v[1])) for n in e["arms"])
    c1 = (v[0] + u1[0] * size, v[1] + u1[1] * size)
    c2 = (v[0] + u2[0] * size, v[1] + u2[1] * size)
    corner = (c1[0] + u2[0] * size, c1[1] + u2[1] * size)
    return s.canvas.polyline([c1, corner, c2], width=s.line * 0.8)


def _describe(el: RightAngleElement, spec: Mapping[str, Any]) -> str:
    name = angle_name(el)
    return f"{name} is marked as a right angle." if not name.startswith("An ") else "A right angle is marked."


PRIMITIVES.register(Primitive("right_angle", RightAngleElement, draw=_draw, layer=2, describe=_describe,
                              marks=("circle",)))
