"""``gridline``: squared paper behind a drawing, or a chart's value gridlines."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive

GRID_RGB = (160, 182, 210)  # the pale blue-grey of squared exercise paper
GRID_PT = 0.45


class GridlineElement(Element, total=False):
    origin: str  # a named point one line runs through
    step: float  # world units per square
    bounds: list[float]  # [x0, y0, x1, y1]: offsets from ``origin`` (world units, y up) the sheet covers


def _draw(s: Scene, e: GridlineElement) -> Rect:
    """Squared paper over the scene's drawing area, with a line through the ``origin`` point every ``step``."""
    step = float(e["step"]) * s.world_scale
    if step <= 0:
        raise ValueError(f"figure element {e['id']!r}: grid step must be positive, got {e['step']!r}")
    ox, oy = s.p(e["origin"])
    x0, y0, x1, y1 = s.area
    if "bounds" in e:  # a sheet under part of the drawing: offsets from the origin in world units, y up
        bx0, by0, bx1, by1 = (float(v) * step / float(e["step"]) for v in e["bounds"])
        x0, x1 = max(x0, ox + bx0), min(x1, ox + bx1)
        y0, y1 = max(y0, oy - by1), min(y1, oy - by0)
    width = GRID_PT * s.dpi / 72
    xs = [ox + i * step for i in range(math.ceil((x0 - ox) / step), math.floor((x1 - ox) / step) + 1)]
    ys = [oy + i * step for i in range(math.ceil((y0 - oy) / step), math.floor((y1 - oy) / step) + 1)]
    if len(xs) < 2 or len(ys) < 2:
        raise ValueError(f"figure element {e['id']!r}: a grid step of {e['step']!r} leaves no whole square")
    # Whole squares only, the way a sheet of squared paper is cut.
    left, right, top, bottom = xs[0], xs[-1], ys[0], ys[-1]
    for x in xs:
        s.canvas.polyline([(x, top), (x, bottom)], width=width, color=GRID_RGB)
    for y in ys:
        s.canvas.polyline([(left, y), (right, y)], width=width, color=GRID_RGB)
    return (left - 1.5, top - 1.5, right + 1.5, bottom + 1.5)


def _describe_group(els: list[GridlineElement], spec: Mapping[str, Any]) -> str:
    return "A grid is drawn." if len(els) == 1 else f"A grid of {len(els)} lines is drawn."


PRIMITIVES.register(Primitive("gridline", GridlineElement, draw=_draw, layer=-1, describe_group=_describe_group))
