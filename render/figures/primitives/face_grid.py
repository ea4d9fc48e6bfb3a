"""``face_grid``: a solid's face ruled into cubes, the counts along its two edges being what a pupil reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect, points_box, union
from render.figures._scene import Scene, lerp
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import fmt, generic


class FaceGridElement(Element, total=False):
    face: str  # the id of the face it rules (drawn only when that face is seen)
    points: list[str]  # [P0, P1, P2, P3]: the face's corners
    divisions: list[int]  # [m, n]: cells along P0→P1 and along P0→P3
    visible: bool  # set by the solid drawer


def _draw(s: Scene, e: FaceGridElement) -> Rect:
    p0, p1, p2, p3 = (s.p(n) for n in e["points"])
    if not e.get("visible"):
        return points_box([p0, p1, p2, p3], 0.0)
    m, n = (int(v) for v in e["divisions"])
    width = s.line * 0.55
    boxes = []
    for i in range(1, m):  # lines across the face, from edge P0P1 to edge P3P2
        t = i / m
        boxes.append(s.canvas.polyline([lerp(p0, p1, t), lerp(p3, p2, t)], width=width))
    for j in range(1, n):
        t = j / n
        boxes.append(s.canvas.polyline([lerp(p0, p3, t), lerp(p1, p2, t)], width=width))
    return union(boxes) if boxes else points_box([p0, p1, p2, p3], 0.0)


def _describe(el: FaceGridElement, spec: Mapping[str, Any]) -> str:
    points, divisions = el.get("points"), el.get("divisions")
    if not (isinstance(points, (list, tuple)) and len(points) == 4 and isinstance(divisions, (list, tuple))
            and len(divisions) == 2):
        return generic(el)
    side = str(el.get("face", "")).removeprefix("face_").replace("_", " ")
    where = f" ({side})" if side and side != str(el.get("face", "")) else ""
    m, n = (fmt(d) for d in divisions)
    p0, p1, p3 = (str(points[i]) for i in (0, 1, 3))
    return f"Face {''.join(map(str, points))}{where} is ruled into {m} × {n} squares, {m} along {p0}{p1} and " \
           f"{n} along {p0}{p3}."


PRIMITIVES.register(Primitive("face_grid", FaceGridElement, draw=_draw, describe=_describe))
