"""``hand``: the hour or minute hand of an analogue clock."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import element_name, with_value


class HandElement(Element, total=False):
    slot: int  # which clock of the figure
    hand: str  # "hour" or "minute"
    hour: int  # the time the clock shows
    minute: int


def _describe(el: HandElement, spec: Mapping[str, Any]) -> str:
    if el.get("hour") is not None and el.get("minute") is not None:
        return ""  # its clock face already states the time it shows
    name = element_name(el) or str(el.get("hand", ""))
    base = f"The {name} hand" if name else "A clock hand"
    return with_value(base, el, "points to")


PRIMITIVES.register(Primitive("hand", HandElement, describe=_describe))
