"""``tick``: an axis's ticks and their numbers (described together, with how the axes are numbered)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import element_name, fmt, quantity


class TickElement(Element, total=False):
    pass  # ``index``: its division on a number line; ``text``: the number written under it


def _numbering(spec: Mapping[str, Any]) -> str:
    """How the axes are numbered, where the y axis counts in other steps than the x axis, a coordinate grid
    numbers only some of its lines, or a chart leaves several gridlines between two numbers (which a reader
    must count; one unnumbered line is the halfway mark).

    Empty otherwise (then the ticks keep their plain sentence).
    """
    # a coordinate grid whose y axis counts in other steps, or that numbers only some of its lines
    if "y_grid_step" in spec or "y_label_step" in spec or spec.get("label_step", spec.get("grid_step")) != \
            spec.get("grid_step"):
        gx, lx = spec.get("grid_step"), spec.get("label_step", spec.get("grid_step"))
        gy, ly = spec.get("y_grid_step", gx), spec.get("y_label_step", lx)
        if None in (gx, lx, gy, ly):
            return ""
        return (f"Each grid square is {fmt(gx)} across and {fmt(gy)} up: the x-axis is numbered every "
                f"{fmt(lx)} and the y-axis every {fmt(ly)}.")
    every, step, top = spec.get("label_every"), spec.get("y_step"), spec.get("y_max")
    if not all(isinstance(v, (int, float)) for v in (every, step, top)) or every <= 2 or step <= 0:
        return ""
    numbered = [k * step for k in range(int(top // step + 1e-9) + 1) if k % every == 0]
    return (f"The vertical axis is numbered {fmt(numbered)}, with a gridline every {fmt(step)} "
            "(the lines between the numbers carry no number).")


def _describe_group(els: list[TickElement], spec: Mapping[str, Any]) -> str:
    shown = [q for q in (quantity(e) or element_name(e) for e in els) if q]
    if not shown and _numbering(spec):
        return _numbering(spec)
    return f"The axis ticks are labelled {', '.join(shown)}." if shown else "Axis ticks are drawn."


PRIMITIVES.register(Primitive("tick", TickElement, describe_group=_describe_group))
