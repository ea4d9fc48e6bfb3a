"""``object``: a counted picture in an object array (an apple, an empty place), or a protractor laid on an angle.

Counted objects are described together (how many, per labelled group); a protractor is a measuring
tool laid on the figure, described on its own: where it sits and what its two scales read where the
measured arm crosses them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from render.figures._draw import Point, Rect, points_box, union
from render.figures._scene import Scene, unit
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import element_name, fmt, hidden

PROTRACTOR_FILL = (236, 242, 248)  # clear plastic, a little blue
SCALE_PT = 6.5  # the protractor's printed numbers


class ObjectElement(Element, total=False):
    group: int  # in an object array: the group, row and column it sits in
    row: int
    col: int
    # a protractor (``name: "protractor"``): its centre, a point its straight edge runs toward, a point on
    # the side its half-disc covers, its radius in length units, and the scale whose 0 lies on the base arm
    at: str
    base: str
    side: str
    radius: float
    scale: str  # "outer" or "inner"


def _polar(center: Point, u: Point, n: Point, deg: float, r: float) -> Point:
    """The point ``r`` from ``center`` at ``deg`` degrees from ``u`` turning toward ``n``."""
    t = math.radians(deg)
    c, si = math.cos(t), math.sin(t)
    return (center[0] + r * (u[0] * c + n[0] * si), center[1] + r * (u[1] * c + n[1] * si))


def _frame(s: Scene, e: ObjectElement) -> tuple[Point, Point, Point, float]:
    """Centre, unit vector along the straight edge (toward ``base``), unit normal into the half-disc, radius px."""
    v, b, side = s.p(e["at"]), s.p(e["base"]), s.p(e["side"])
    u = unit((b[0] - v[0], b[1] - v[1]))
    n = (-u[1], u[0])
    if n[0] * (side[0] - v[0]) + n[1] * (side[1] - v[1]) < 0:
        n = (-n[0], -n[1])
    return v, u, n, float(e["radius"]) * s.world_scale


def _draw(s: Scene, e: ObjectElement) -> Rect:
    """A see-through protractor, ticks every 5°, the outer scale numbered every 10° and the inner one (on a
    shorter arc, where three-digit numbers 10° apart would run together) every 20°."""
    if e.get("name") != "protractor":
        raise ValueError(f"figure element {e['id']!r}: plane geometry draws the object 'protractor', "
                         f"not {e.get('name')!r}")
    if e.get("scale") not in ("outer", "inner"):
        raise ValueError(f"figure element {e['id']!r}: protractor scale must be 'outer' or 'inner', "
                         f"got {e.get('scale')!r}")
    v, u, n, radius = _frame(s, e)

    def at(deg: float, r: float) -> Point:
        return _polar(v, u, n, deg, r)

    rim = [at(d, radius) for d in range(0, 181, 2)]
    boxes = [s.canvas.polygon_fill(rim, PROTRACTOR_FILL)]
    thin = s.line * 0.55
    boxes.append(s.canvas.polyline([*rim, rim[0]], width=thin))
    boxes.append(s.canvas.polyline([at(d, radius * 0.42) for d in range(0, 181, 3)], width=thin))
    # The centre mark on the straight edge.
    boxes.append(s.canvas.polyline([at(90, 0.0), at(90, 0.05 * s.dpi)], width=thin))
    size = max(1, round(SCALE_PT * s.dpi / 72))
    for deg in range(0, 181, 5):
        long = deg % 10 == 0
        boxes.append(s.canvas.polyline([at(deg, radius), at(deg, radius - (0.08 if long else 0.045) * s.dpi)],
                                       width=thin))
        if not long:
            continue
        # The outer scale counts from the base arm when it is the one to read, else from the other end.
        outer = deg if e["scale"] == "outer" else 180 - deg
        lift = 0.04 * s.dpi if deg in (0, 180) else 0.0  # the end numbers sit above the straight edge
        numbers = [(radius - 0.15 * s.dpi, outer)]
        if deg % 20 == 0:  # the inner arc is too short for a number every 10° ("10090" at 6.5 pt)
            numbers.append((radius - 0.3 * s.dpi, 180 - outer))
        for r, text in numbers:
            x, y = at(deg, r)
            boxes.append(s.canvas.text((x + n[0] * lift, y + n[1] * lift), str(text), size))
    return union(boxes)


def _extent(points: Mapping[str, Point], e: ObjectElement) -> Rect:
    """World box of a protractor's half-disc (y up, so the normal is worked out here, not by the scene)."""
    v, b, side = points[e["at"]], points[e["base"]], points[e["side"]]
    u = unit((b[0] - v[0], b[1] - v[1]))
    n = (-u[1], u[0])
    if n[0] * (side[0] - v[0]) + n[1] * (side[1] - v[1]) < 0:
        n = (-n[0], -n[1])
    return points_box([_polar(v, u, n, d, float(e["radius"])) for d in range(0, 181, 5)], 0.0)


def _is_protractor(el: ObjectElement) -> bool:
    return el.get("name") == "protractor"


def _describe(el: ObjectElement, spec: Mapping[str, Any]) -> str:
    """A protractor laid on an angle: where it sits and what its two scales show where the measured arm
    crosses them (both, since which one to read is the pupil's call). No angle is printed on the figure."""
    at, base, side, value = el.get("at"), el.get("base"), el.get("side"), el.get("value")
    if not all(isinstance(v, str) for v in (at, base, side)) or el.get("scale") not in ("outer", "inner"):
        return "A protractor is drawn."
    text = (f"A protractor is laid on angle {base}{at}{side}, centred on {at} with its straight edge along {at}{base}; "
            f"its two scales run from 0 to 180 in opposite directions, the {el['scale']} one from 0 on arm {at}{base}.")
    if isinstance(value, (int, float)) and not hidden(el):
        outer = value if el["scale"] == "outer" else 180 - value
        text += f" Arm {at}{side} crosses the outer scale at {fmt(outer)} and the inner scale at {fmt(180 - outer)}."
    return text


def _by_group(els: list[ObjectElement], spec: Mapping[str, Any]) -> str:
    """Objects drawn in several labelled groups (trays A and B): how many in each, since a question may ask
    about one of them. Empty unless every object has a group and every group a label."""
    counts = Counter(e.get("group") for e in els)
    names = {e.get("group"): fmt(e["text"]) for e in spec.get("elements", ()) if isinstance(e, Mapping)
             and e.get("type") == "label" and e.get("group") is not None and e.get("text") and not hidden(e)}
    if len(counts) < 2 or not set(counts) <= set(names):
        return ""
    parts = [f"{c} in {names[g]}" for g, c in counts.items()]
    return f"There are {len(els)} objects drawn: {', '.join(parts[:-1])} and {parts[-1]}."


def _describe_group(els: list[ObjectElement], spec: Mapping[str, Any]) -> str:
    grouped = _by_group(els, spec)
    if grouped:
        return grouped
    n = len(els)
    counts = Counter(element_name(e) or "object" for e in els)
    if list(counts) == ["object"]:
        return f"There {'is 1 object' if n == 1 else f'are {n} objects'} drawn."
    parts = [f"{c} {name}{'' if c == 1 or name.endswith('s') else 's'}" for name, c in counts.items()]
    return f"There {'is' if n == 1 else 'are'} {n} object{'' if n == 1 else 's'} drawn: {', '.join(parts)}."


PRIMITIVES.register(Primitive("object", ObjectElement, draw=_draw, layer=-0.5, extent=_extent, describe=_describe,
                              describe_group=_describe_group, alone=_is_protractor, marks=("circle", "scribble")))
