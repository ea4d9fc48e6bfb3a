"""``tick_mark``: equal-length marks across a side (sides with the same number of ticks are equal)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect, union
from render.figures._scene import Scene, unit
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import element_name


class TickMarkElement(Element, total=False):
    on: list[str]  # [P, Q]: the side it crosses, at its middle
    count: int  # how many ticks side by side


def _draw(s: Scene, e: TickMarkElement) -> Rect:
    a, b = (s.p(n) for n in e["on"])
    d = unit((b[0] - a[0], b[1] - a[1]))
    normal = (-d[1], d[0])
    half, spacing = 0.06 * s.dpi, 0.04 * s.dpi
    n = int(e.get("count", 1))
    mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    boxes = []
    for i in range(n):
        off = (i - (n - 1) / 2) * spacing
        c = (mid[0] + d[0] * off, mid[1] + d[1] * off)
        boxes.append(s.canvas.polyline([(c[0] - normal[0] * half, c[1] - normal[1] * half),
                                        (c[0] + normal[0] * half, c[1] + normal[1] * half)], width=s.line * 0.9))
    return union(boxes)


def _describe_group(els: list[TickMarkElement], spec: Mapping[str, Any]) -> str:
    names = [element_name(e) for e in els if element_name(e)]
    where = f" on {', '.join(names)}" if names else ""
    return f"Tick marks{where} show equal lengths."


PRIMITIVES.register(Primitive("tick_mark", TickMarkElement, draw=_draw, layer=2, describe_group=_describe_group,
                              marks=("circle",)))
