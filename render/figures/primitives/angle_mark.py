"""``angle_mark``: an arc inside an angle (double for a second equal angle), with its size written between the arms."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from render.figures._draw import Point, Rect, ellipse_points, union
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import angle_name, with_value


class AngleMarkElement(Element, total=False):
    at: str  # the vertex
    vertex: str  # the vertex, where a spec names it so
    arms: list[str]  # [P, Q]: the arc runs inside angle PVQ, the short way round
    arcs: int  # 2: a double arc
    size: float  # the arc's radius as a multiple of the usual


def arm_angles(s: Scene, e: Mapping[str, Any]) -> tuple[Point, float, float]:
    """Vertex and the two arm directions (degrees, counter-clockwise on screen), short way round."""
    v = s.p(e["at"])
    p, q = (s.p(n) for n in e["arms"])
    a1 = math.degrees(math.atan2(-(p[1] - v[1]), p[0] - v[0]))
    a2 = math.degrees(math.atan2(-(q[1] - v[1]), q[0] - v[0]))
    sweep = (a2 - a1) % 360
    if sweep > 180:
        a1, a2, sweep = a2, a1, 360 - sweep
    return v, a1, a1 + sweep


def _draw(s: Scene, e: AngleMarkElement) -> Rect:
    v, start, end = arm_angles(s, e)
    sweep = end - start
    # Narrow angles get a wider arc so the label fits between the arms.
    radius = s.dpi * (0.2 if sweep >= 50 else 0.2 + (50 - sweep) * 0.006) * e.get("size", 1.0)
    boxes = []
    for k in range(int(e.get("arcs", 1))):
        r = radius + k * 0.035 * s.dpi
        boxes.append(s.canvas.polyline(ellipse_points(v, r, r, start, end, 3.0), width=s.line * 0.8))
    if e.get("text") not in (None, ""):
        mid = math.radians((start + end) / 2)
        direction = (math.cos(mid), -math.sin(mid))
        r = radius + (int(e.get("arcs", 1)) - 1) * 0.035 * s.dpi
        style = e.get("style", "sans")
        w, h = s.canvas.text_size(str(e["text"]), s.font_px, style)
        # Far enough out that the label sits clear of the arc and, in a narrow angle, between the arms.
        reach = abs(direction[0]) * w / 2 + abs(direction[1]) * h / 2
        half = math.radians(max(sweep, 1.0) / 2)
        near = r + s.gap * 0.6 + reach
        far = max(near, (math.hypot(w, h) / 2 + s.gap * 0.5) / math.sin(half))  # fits whatever its orientation
        dist = _first_fit(near, far, direction, (w, h), (start, end), s.gap * 0.5)
        center = (v[0] + direction[0] * dist, v[1] + direction[1] * dist)
        boxes.append(s.canvas.text(center, str(e["text"]), s.font_px, style=style))
    return union(boxes)


def _first_fit(near: float, far: float, direction: Point, size: tuple[float, float],
               arms_deg: tuple[float, float], clearance: float) -> float:
    """The least distance along the bisector (from ``near`` up to ``far``) where a w x h label lies between the arms.

    The label is upright, so in a narrow angle whose bisector runs along the text it fits much
    closer to the vertex than a bound for any orientation says; closer labels keep clear of the
    labels at the other corners of a small triangle.
    """
    w, h = size
    # Arm directions in y-up coordinates; the angle runs counter-clockwise from the first to the second.
    u1 = (math.cos(math.radians(arms_deg[0])), math.sin(math.radians(arms_deg[0])))
    u2 = (math.cos(math.radians(arms_deg[1])), math.sin(math.radians(arms_deg[1])))
    corners = [(sx * w / 2, sy * h / 2) for sx in (-1, 1) for sy in (-1, 1)]
    dist = near
    while dist < far:
        cx, cy = direction[0] * dist, -direction[1] * dist  # the label's centre, y up
        if all(u1[0] * (cy - dy) - u1[1] * (cx + dx) >= clearance and
               u2[1] * (cx + dx) - u2[0] * (cy - dy) >= clearance for dx, dy in corners):
            return dist
        dist += 1.0
    return far


def _describe(el: AngleMarkElement, spec: Mapping[str, Any]) -> str:
    return with_value(angle_name(el), el, "is marked")


PRIMITIVES.register(Primitive("angle_mark", AngleMarkElement, draw=_draw, layer=2, describe=_describe,
                              marks=("arc",)))
