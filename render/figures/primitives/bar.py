"""``bar``: one bar of a bar chart, drawn to its value on the chart's scale."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import element_name, with_value


class BarElement(Element, total=False):
    pass  # ``index``: its category slot (the label with the same index names it); ``value``: its height


def _describe(el: BarElement, spec: Mapping[str, Any]) -> str:
    name = element_name(el)
    base = f"The bar for {name}" if name else "A bar"
    return with_value(base, el, "has height")


PRIMITIVES.register(Primitive("bar", BarElement, describe=_describe, named_by_label=True,
                              marks=("scribble", "circle")))
