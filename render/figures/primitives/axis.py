"""``axis``: a chart's, a grid's or a number line's axis, with its name, range and steps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import element_name, fmt


class AxisElement(Element, total=False):
    axis: str  # "x" or "y", where the id does not say (``axis_x``, ``axis_y``)
    min: float
    max: float
    step: float
    title: str


def _describe(el: AxisElement, spec: Mapping[str, Any]) -> str:
    name = element_name(el) or str(el.get("axis", ""))
    direction = {"axis_x": "horizontal", "axis_y": "vertical"}.get(str(el.get("id")))
    if name in ("x", "y"):
        base = f"The {name}-axis"
    elif name:
        base = f"The {direction} axis, labelled {name}," if direction else f"The {name} axis"
    else:
        base = "An axis"
    parts = []
    if el.get("min") is not None and el.get("max") is not None:
        parts.append(f"runs from {fmt(el['min'])} to {fmt(el['max'])}")
    if el.get("step") is not None:
        parts.append(f"in steps of {fmt(el['step'])}")
    if el.get("title"):
        parts.append(f"and is titled “{el['title']}”")
    return f"{base} {' '.join(parts)}." if parts else f"{base} is drawn."


PRIMITIVES.register(Primitive("axis", AxisElement, describe=_describe))
