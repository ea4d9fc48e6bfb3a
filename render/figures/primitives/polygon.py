"""``polygon``: an outline through named points (optionally filled or dashed), or a ring round a group of objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect, union
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import cap, named, with_value

SHAPES = ("triangle", "rectangle", "square", "quadrilateral", "parallelogram", "trapezium", "rhombus", "kite",
          "pentagon", "hexagon")


class PolygonElement(Element, total=False):
    points: list[str]  # the corners, in order
    vertices: list[str]
    shape: str  # what it is called ("triangle"); else the id's prefix when that names a shape
    sides: int
    fill: list[int]  # RGB
    dashed: bool
    width: float  # line width as a multiple of the outline's
    tint: str  # on a solid: "side" or "top", filled like a visible face (a key cube's faces)
    group: int  # in an object array: the group it rings


def _draw(s: Scene, e: PolygonElement) -> Rect:
    pts = [s.p(n) for n in e["points"]]
    boxes = []
    if e.get("fill"):
        boxes.append(s.canvas.polygon_fill(pts, tuple(e["fill"])))
    boxes.append(s.canvas.polyline(pts, width=s.line * e.get("width", 1.0), closed=True,
                                   dash=s.dash() if e.get("dashed") else None))
    return union(boxes)


def _describe(el: PolygonElement, spec: Mapping[str, Any]) -> str:
    prefix = str(el.get("id", "")).split("_")[0]
    shape = el.get("shape") or (prefix if prefix in SHAPES else "polygon")
    return with_value(cap(named(str(shape), el)), el, "is labelled")


PRIMITIVES.register(Primitive("polygon", PolygonElement, draw=_draw, layer=0, describe=_describe,
                              marks=("scribble",)))
