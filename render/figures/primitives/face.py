"""``face``: a planar face of a solid (tinted when the viewer sees it), or the face of an analogue clock."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect, points_box
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import cap, hidden, named, with_value

TOP_TINT = (232, 232, 232)
SIDE_TINT = (246, 246, 246)


class FaceElement(Element, total=False):
    points: list[str]  # a solid's face: its corners (the solid drawer decides from its normal whether it is seen)
    visible: bool  # set by the solid drawer
    top: bool  # set by the solid drawer: it faces up (a little darker)
    slot: int  # a clock face: which clock of the figure, and the time it shows
    hour: int
    minute: int


def _draw(s: Scene, e: FaceElement) -> Rect:
    pts = [s.p(n) for n in e["points"]]
    if e.get("visible"):
        return s.canvas.polygon_fill(pts, TOP_TINT if e.get("top") else SIDE_TINT)
    return points_box(pts, 0.0)


def _describe(el: FaceElement, spec: Mapping[str, Any]) -> str:
    if el.get("hour") is not None and el.get("minute") is not None and not hidden(el):
        return f"A clock face shows {int(el['hour'])}:{int(el['minute']):02d}."
    return with_value(cap(named("face", el)), el, "is labelled")


PRIMITIVES.register(Primitive("face", FaceElement, draw=_draw, layer=0, describe=_describe, marks=("scribble",)))
