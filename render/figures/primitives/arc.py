"""``arc``: part of a circle about a named centre, from ``start`` to ``end`` degrees counter-clockwise."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Point, Rect, ellipse_points
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import cap, named, with_value
from render.figures.primitives.circle import round_extent


class ArcElement(Element, total=False):
    center: str  # the named centre point
    centre: str
    radius: float  # in the figure's length units
    start: float  # degrees, counter-clockwise from the x direction
    end: float
    dashed: bool
    plane: str  # on a solid: "screen" faces the viewer, else it lies flat
    flatten: float  # set by the solid drawer


def _extent(points: Mapping[str, Point], e: ArcElement) -> Rect:
    return round_extent(points[e["center"]], float(e["radius"]), float(e["start"]), float(e["end"]))


def _draw(s: Scene, e: ArcElement) -> Rect:
    c = s.p(e["center"])
    r = float(e["radius"]) * s.world_scale
    return s.canvas.polyline(ellipse_points(c, r, r, float(e["start"]), float(e["end"]), 2.0), width=s.line,
                             dash=s.dash() if e.get("dashed") else None)


def _describe(el: ArcElement, spec: Mapping[str, Any]) -> str:
    """An arc; one drawn the long way round its centre (a circle with a slice cut out) says so, since the angle
    marked between its radii is then the empty slice's, not the arc's."""
    start, end, centre = el.get("start"), el.get("end"), el.get("center") or el.get("centre")
    if isinstance(start, (int, float)) and isinstance(end, (int, float)) and end - start > 180 and centre:
        return f"An arc about centre {centre} is drawn the long way round, more than half a circle."
    return with_value(cap(named("arc", el)), el, "is labelled")


PRIMITIVES.register(Primitive("arc", ArcElement, draw=_draw, layer=1, extent=_extent, describe=_describe))
