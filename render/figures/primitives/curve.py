"""``curve``: a graph on a coordinate grid (``y = ax² + bx + c``) or the line joining a line chart's values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import cap, fmt, hidden, named


class CurveElement(Element, total=False):
    coeffs: list[str | float]  # [a, b, c] of y = ax² + bx + c (fractions as strings)
    values: list[float]  # a line chart's values, one per category
    expression: str  # its formula as printed
    equation: str


def _describe(el: CurveElement, spec: Mapping[str, Any]) -> str:
    formula = el.get("expression") or el.get("equation") or el.get("text")
    base = cap(named("curve", el))
    if isinstance(el.get("values"), (list, tuple)) and not hidden(el):
        return f"A line joins the values {fmt(el['values'])}."
    return f"{base} shows {formula}." if formula and not hidden(el) else f"{base} is drawn."


PRIMITIVES.register(Primitive("curve", CurveElement, describe=_describe, marks=("circle",)))
