"""``circle``: a circle about a named centre (optionally filled or dashed; on a solid, a flattened rim)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from render.figures._draw import Point, Rect, ellipse_points, points_box, union
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import cap, named, with_value


class CircleElement(Element, total=False):
    center: str  # the named centre point
    centre: str  # the centre's name, where a spec spells it so (descriptions read either)
    radius: float  # in the figure's length units: the size it is drawn at, not a printed number
    fill: list[int]  # RGB
    dashed: bool
    plane: str  # on a solid: "screen" faces the viewer (a sphere's outline), else it lies flat
    hidden_back: bool  # on a solid: its far half is dashed
    flatten: float  # set by the solid drawer: how much a flat circle is squashed by the view
    start: float  # on a solid: the part drawn, degrees counter-clockwise
    end: float


def round_extent(center: Point, radius: float, start: float, end: float) -> Rect:
    """World box of the drawn part of a circle about ``center`` from ``start`` to ``end`` degrees."""
    pts = [(center[0] + radius * math.cos(math.radians(t)), center[1] + radius * math.sin(math.radians(t)))
           for t in [start + (end - start) * i / 90 for i in range(91)]]
    return points_box(pts, 0.0)


def _extent(points: Mapping[str, Point], e: CircleElement) -> Rect:
    return round_extent(points[e["center"]], float(e["radius"]), 0.0, 360.0)


def _draw(s: Scene, e: CircleElement) -> Rect:
    c = s.p(e["center"])
    r = float(e["radius"]) * s.world_scale
    boxes = []
    if e.get("fill"):
        boxes.append(s.canvas.polygon_fill(ellipse_points(c, r, r, 0, 360, 2.0), tuple(e["fill"])))
    boxes.append(s.canvas.polyline(ellipse_points(c, r, r, 0, 360, 2.0), width=s.line,
                                   dash=s.dash() if e.get("dashed") else None))
    return union(boxes)


def _describe(el: CircleElement, spec: Mapping[str, Any]) -> str:
    # ``radius`` is the size it is drawn at, not a printed number: a radius or diameter the pupil reads is
    # its own labelled segment (on squared paper, a segment counted in squares), described with that segment.
    base = cap(named("circle", el))
    if el.get("centre") or el.get("center"):
        base += f" with centre {el.get('centre') or el.get('center')}"
    return with_value(base, el, "is labelled")


PRIMITIVES.register(Primitive("circle", CircleElement, draw=_draw, layer=0, extent=_extent, describe=_describe,
                              marks=("scribble",)))
