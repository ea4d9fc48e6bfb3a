"""``wedge``: one sector of a pie chart, with its name and its angle (or, on a percent chart, its share)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import element_name, fmt, hidden, with_value


class WedgeElement(Element, total=False):
    angle: float  # degrees
    start_deg: float  # where it starts, degrees counter-clockwise
    show_angle: bool  # false: the angle is not printed (the unknown sector, or a percent chart)
    value_text: str  # what a percent chart prints instead of the angle ("25%")


def _describe(el: WedgeElement, spec: Mapping[str, Any]) -> str:
    name = element_name(el) or str(el.get("text") or "")
    base = f"The sector for {name}" if name else "A sector"
    if el.get("angle") is not None and el.get("show_angle", True) and not hidden(el):
        return f"{base} has angle {fmt(el['angle'])}°."
    if el.get("value_text") and not hidden(el):  # a percent chart prints the share, not the angle
        return f"{base} is labelled {fmt(el['value_text'])}."
    return with_value(base, {**el, "text": None}, "is") if name else f"{base} is drawn."


PRIMITIVES.register(Primitive("wedge", WedgeElement, describe=_describe, named_by_label=True, marks=("scribble",)))
