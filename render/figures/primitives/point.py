"""``point``: a dot at a named point (a vertex), a plotted point (x, y), a chart value or a number-line arrow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import cap, element_name, fmt, hidden, named


class PointElement(Element, total=False):
    at: str  # the named point it marks (plane geometry, solids)
    x: float  # coordinates on a grid
    y: float
    show_coords: bool  # write "(x, y)" beside it
    label_side: str  # "left": its text goes left of the dot


def _draw(s: Scene, e: PointElement) -> Rect:
    return s.canvas.dot(s.p(e["at"]), s.line * 1.4)


def _describe(el: PointElement, spec: Mapping[str, Any]) -> str:
    base = cap(named("point", el))
    if "x" in el and "y" in el and not hidden(el):
        return f"{base} is at ({fmt(el['x'])}, {fmt(el['y'])})."
    if el.get("value") is not None and not hidden(el):
        where = f"The point at {element_name(el)}" if el.get("category") else base
        return f"{where} has value {fmt(el['value'])}{el.get('unit', '')}."
    return f"{base} is marked."


PRIMITIVES.register(Primitive("point", PointElement, draw=_draw, layer=2, describe=_describe, named_by_label=True,
                              marks=("circle", "arc")))
