"""The scene a primitive's drawer draws on: the canvas, named points in pixels, and sizes at the page's DPI.

Figure kinds built from named points (plane geometry, solids) fit their points to the canvas, make
one :class:`Scene` and let every element's primitive draw itself on it (``render_elements`` in
:mod:`render.figures.geometry`). Lengths follow the page: a line is ``LINE_PT`` points wide and
labels are ``LABEL_PT`` points high at any DPI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from render.figures._draw import Canvas, Point, Rect

LABEL_PT = 11.0
LINE_PT = 1.15  # main outline width in points (about 0.4 mm, a sharp pencil or a textbook line)


class Scene:
    """Everything an element drawer needs: the canvas, named points in pixels, sizes at this DPI.

    ``area`` is the drawing's part of the canvas (squared paper covers it) and ``strip`` the band
    under it kept for a key (a legend is centred in it); both default to the whole canvas and an
    empty band at its foot.
    """

    def __init__(self, canvas: Canvas, points: Mapping[str, Point], dpi: int, world_scale: float, *,
                 area: Rect | None = None, strip: Rect | None = None) -> None:
        self.canvas, self.points, self.dpi, self.world_scale = canvas, dict(points), dpi, world_scale
        self.line = LINE_PT * dpi / 72
        self.font_px = round(LABEL_PT * dpi / 72)
        self.gap = 0.05 * dpi
        w, h = float(canvas.width), float(canvas.height)
        self.area = area if area is not None else (0.0, 0.0, w, h)
        self.strip = strip if strip is not None else (0.0, h, w, h)
        pts = list(self.points.values())
        self.center = (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)) if pts else (0.0, 0.0)

    def p(self, name: str) -> Point:
        try:
            return self.points[name]
        except KeyError:
            raise KeyError(f"figure element refers to point {name!r}, which is not in spec['points']") from None

    def away(self, anchor: Point, element: Mapping[str, Any], fallback: Point | None = None) -> Point:
        """The direction a label goes: the element's ``dir`` (y up), else away from the figure's centre."""
        if "dir" in element:
            dx, dy = element["dir"]
            return unit((dx, -dy))
        if fallback is not None:
            return fallback
        v = (anchor[0] - self.center[0], anchor[1] - self.center[1])
        return unit(v) if math.hypot(*v) > 1e-6 else (0.0, -1.0)

    def write(self, anchor: Point, direction: Point, element: Mapping[str, Any]) -> Rect:
        return self.canvas.label(anchor, direction, str(element["text"]), self.font_px, gap=self.gap,
                                 style=element.get("style", "sans"))

    def dash(self) -> tuple[float, float]:
        """The dash pattern (on, off) of dashed lines, in px."""
        return (0.06 * self.dpi, 0.045 * self.dpi)


def unit(v: Point) -> Point:
    n = math.hypot(*v)
    return (v[0] / n, v[1] / n) if n else (0.0, 0.0)


def lerp(a: Point, b: Point, t: float) -> Point:
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)
