"""``step``: one leg (the run or the rise) of a gradient's step triangle, dashed along a grid line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import plural, xy

# "from" is a keyword, so the two ends are declared in the functional form.
_Ends = TypedDict("_Ends", {"from": "list[float]", "to": "list[float]"}, total=False)


class StepElement(_Ends, Element, total=False):
    """``from``/``to``: [x, y] on the grid."""


def _leg(start: Any, end: Any, spec: Mapping[str, Any]) -> str:
    """One leg of a step: across or up/down, with the squares it spans when the grid step is known."""
    (xa, ya), (xb, yb) = start, end
    if ya == yb and xa != xb:
        size, step, way = abs(xb - xa), spec.get("grid_step"), "across"
    elif xa == xb and ya != yb:
        size, step, way = abs(yb - ya), spec.get("y_grid_step", spec.get("grid_step")), "up" if yb > ya else "down"
    else:
        return f"to {xy(end)}"
    if isinstance(step, (int, float)) and step > 0 and (size / step).is_integer():
        return f"{way} {plural(size / step, 'square')} to {xy(end)}"
    return f"{way} to {xy(end)}"


def _describe_group(els: list[StepElement], spec: Mapping[str, Any]) -> str:
    """A gradient's step triangle as one path: from the first point across, then up or down to the second."""
    legs = [e for e in els if all(isinstance(e.get(k), (list, tuple)) and len(e[k]) == 2
                                  and all(isinstance(v, (int, float)) for v in e[k]) for k in ("from", "to"))]
    if not legs:
        return "A dashed step is drawn." if len(els) == 1 else f"{len(els)} dashed steps are drawn."
    if any(list(a["to"]) != list(b["from"]) for a, b in zip(legs, legs[1:])):  # not one path: each on its own
        return " ".join(f"A dashed step is drawn from {xy(e['from'])} {_leg(e['from'], e['to'], spec)}."
                        for e in legs)
    path = ", then ".join(_leg(e["from"], e["to"], spec) for e in legs)
    return f"A dashed step is drawn from {xy(legs[0]['from'])} {path}."


PRIMITIVES.register(Primitive("step", StepElement, describe_group=_describe_group))
