"""Solids (prisms, cylinders, cones, spheres) drawn from 3D points, with hidden edges dashed.

Spec: ``points3d`` maps a name to ``[x, y, z]`` (y up, the viewer on the +z side); ``view`` is
``{"azimuth": degrees about the vertical axis, "elevation": degrees looked down from}``. The
drawer projects orthographically, so vertical edges stay vertical and horizontal circles become
ellipses, as in a textbook. With ``"true_heights": true`` in the view, vertical lengths keep their
true size on the page (the sketch a textbook draws on squared paper: the upright plane through the
axis is drawn flat, circles are still squashed), so heights and widths line up with a grid. Elements:

- ``face`` ``points``: a planar face; the drawer decides from its outward normal whether the
  viewer sees it (visible faces get a light tint, the top one a little darker);
- ``segment`` ``from``/``to`` (+ ``text``): an edge; with ``faces`` [face ids] it is dashed when
  every one of those faces is hidden, otherwise ``dashed`` says so;
- ``circle`` ``center`` + ``radius``: a horizontal circle (an ellipse on the page); with
  ``hidden_back`` its far half is dashed. With ``plane: "screen"`` it is a circle facing the
  viewer (a sphere's outline); ``arc`` is the same with ``start``/``end`` degrees;
- ``face_grid`` ``face`` + ``points`` [P0, P1, P2, P3] + ``divisions`` [m, n]: thin lines ruling
  that face into m cells along P0→P1 and n along P0→P3 (a cuboid built from cubes), drawn only
  when the face is visible;
- ``disc_lines`` ``center`` + ``top`` (the axis' ends) + ``radius`` + ``count``: a cylinder ruled into
  ``count`` equal discs (a stack of coins), drawn as the near half of each circle between two discs;
- ``ball_stack`` ``base`` (the centre of the tube's base) + ``radius`` + ``count`` + ``touches`` (``sides`` or
  ``ends``): ``count`` equal balls one on another up the axis from ``base``, each touching the next (drawn
  as circles facing the viewer, each with a faint equator);
- ``gridline`` and ``legend`` as in plane geometry: squared paper through ``origin`` (use with
  ``true_heights``) and its key in a strip under the drawing;
- ``point``, ``label``, ``text``, ``right_angle``, ``angle_mark``, ``polygon`` as in plane geometry; a
  ``polygon`` with ``tint`` ``side`` or ``top`` is filled like a visible face (a key cube's faces).
  Only ``face`` points decide which side is inside the solid, so other points (a key cube
  drawn beside it with polygons) do not change which faces are hidden.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from render.figures import FigureImage, drawer
from render.figures._draw import Point, Rect, ellipse_points, union
from render.figures._scene import LABEL_PT, Scene
from render.figures.geometry import canvas_for, fit, label_margins, render_elements
from render.figures.primitives.arc import ArcElement
from render.figures.primitives.circle import CircleElement
from render.figures.primitives.face import SIDE_TINT, TOP_TINT
from synth.records import Figure

Vec = tuple[float, float, float]


def camera(view: Mapping[str, Any]) -> tuple[float, float, float, float]:
    a, e = math.radians(float(view.get("azimuth", -30))), math.radians(float(view.get("elevation", 20)))
    return math.cos(a), math.sin(a), math.cos(e), math.sin(e)


def to_camera(p: Vec, cam: tuple[float, float, float, float]) -> Vec:
    """(screen x, screen y, depth toward the viewer) of a world point."""
    ca, sa, ce, se = cam
    x, y, z = p
    x1, z1 = x * ca + z * sa, -x * sa + z * ca
    return x1, y * ce - z1 * se, z1 * ce + y * se


def _sub(a: Vec, b: Vec) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _dot(a: Vec, b: Vec) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def face_normal(face: list[Vec], inside: Vec) -> Vec:
    """The face's normal, turned to point away from a point inside the solid."""
    n = _cross(_sub(face[1], face[0]), _sub(face[2], face[0]))
    centre = tuple(sum(p[i] for p in face) / len(face) for i in range(3))
    return n if _dot(n, _sub(centre, inside)) >= 0 else (-n[0], -n[1], -n[2])  # type: ignore[arg-type]


def solid_centre(points: Mapping[str, Vec], faces: list[Mapping[str, Any]]) -> Vec:
    """The centroid of the faces' corner points: inside a convex solid, whatever else the spec holds."""
    names = list(dict.fromkeys(k for f in faces for k in f["points"])) or list(points)
    return tuple(sum(points[k][i] for k in names) / len(names) for i in range(3))  # type: ignore[return-value]


def visible_faces(points: Mapping[str, Vec], faces: list[Mapping[str, Any]],
                  cam: tuple[float, float, float, float]) -> dict[str, bool]:
    """Which faces turn toward the viewer (back-face test against the solid's centroid)."""
    inside = solid_centre(points, faces)
    out = {}
    for f in faces:
        n = face_normal([points[k] for k in f["points"]], inside)  # type: ignore[arg-type]
        out[f["id"]] = to_camera(n, cam)[2] - to_camera((0.0, 0.0, 0.0), cam)[2] > 1e-9
    return out


def _draw_circle(s: Scene, e: CircleElement | ArcElement) -> Rect:
    c = s.p(e["center"])
    r = float(e["radius"]) * s.world_scale
    ry = r * float(e.get("flatten", 1.0))
    start, end = float(e.get("start", 0)), float(e.get("end", 360))
    dash = (0.06 * s.dpi, 0.045 * s.dpi)
    if e.get("flatten", 1.0) == 1.0 or not e.get("hidden_back"):
        return s.canvas.polyline(ellipse_points(c, r, ry, start, end, 2.0), width=s.line)
    # Screen angles 180..360 are the near half of a horizontal circle seen from above.
    front = s.canvas.polyline(ellipse_points(c, r, ry, 180, 360, 2.0), width=s.line)
    back = s.canvas.polyline(ellipse_points(c, r, ry, 0, 180, 2.0), width=s.line * 0.8, dash=dash)
    return union([front, back])


@drawer("solid")
def draw_solid(figure: Figure, dpi: int) -> FigureImage:
    """Prisms, cylinders, cones and spheres (see the module docstring)."""
    spec = figure.spec
    view = spec.get("view", {})
    cam = camera(view)
    world: dict[str, Vec] = {k: (float(v[0]), float(v[1]), float(v[2])) for k, v in spec["points3d"].items()}
    flat = {k: to_camera(p, cam)[:2] for k, p in world.items()}
    if view.get("true_heights"):  # lift each point by what the view's tilt took off its height
        flat = {k: (x, y + world[k][1] * (1 - cam[2])) for k, (x, y) in flat.items()}
    faces = [e for e in spec["elements"] if e["type"] == "face"]
    seen = visible_faces(world, faces, cam) if faces else {}
    centre = solid_centre(world, faces) if faces else (0.0, 0.0, 0.0)
    sin_e = cam[3]
    elements, extents = [], []
    for e in spec["elements"]:
        e2 = dict(e)
        if e["type"] == "face":
            e2["visible"] = seen[e["id"]]
            normal = face_normal([world[k] for k in e["points"]], centre)
            e2["top"] = normal[1] > 0.5 * math.sqrt(_dot(normal, normal))
        elif e["type"] == "face_grid":
            e2["visible"] = seen[e["face"]]
        elif e["type"] == "polygon" and "tint" in e:
            e2["fill"] = TOP_TINT if e["tint"] == "top" else SIDE_TINT
        elif e["type"] == "segment" and "faces" in e:
            e2["dashed"] = not any(seen[f] for f in e["faces"])
            if e2["dashed"]:
                e2["width"] = 0.8
        elif e["type"] == "disc_lines":
            e2["flatten"] = sin_e
        elif e["type"] == "ball_stack":
            e2["flatten"] = sin_e
            bx, by = flat[e["base"]]
            r = float(e["radius"])
            extents.append((bx - r, by, bx + r, by + 2 * r * int(e["count"])))
        elif e["type"] in ("circle", "arc"):
            e2["flatten"] = 1.0 if e.get("plane") == "screen" else sin_e
            cx, cy = flat[e["center"]]
            r = float(e["radius"])
            extents.append((cx - r, cy - r * e2["flatten"], cx + r, cy + r * e2["flatten"]))
        elements.append(e2)
    canvas = canvas_for(spec, dpi)
    # A key gets a strip of its own under the drawing, and squared paper runs on past the solid (as in
    # plane geometry).
    strip = round(LABEL_PT * dpi / 72 * 1.9) if any(e["type"] == "legend" for e in elements) else 0
    drawing_h = max(1, canvas.height - strip)
    margin = label_margins(canvas, [e for e in elements if e["type"] != "legend"], dpi)
    if any(e["type"] == "gridline" for e in elements):
        margin = (max(margin[0], 0.3 * dpi), max(margin[1], 0.25 * dpi))
    px, scale = fit(flat, extents, canvas.width, drawing_h, margin)
    # Circles and arcs lie flat on a solid (squashed by the view, their far half dashed): drawn here, not as on a
    # plane figure; every other element by its primitive.
    extra = {"circle": _draw_circle, "arc": _draw_circle}
    boxes = render_elements(canvas, px, elements, dpi, scale, extra=extra, only=spec.get("draw_only"),
                            area=(0.0, 0.0, float(canvas.width), float(drawing_h)),
                            strip=(0.0, float(drawing_h), float(canvas.width), float(canvas.height)))
    return FigureImage(canvas.pixels(), boxes)


def project(points3d: Mapping[str, list[float]], view: Mapping[str, Any]) -> dict[str, Point]:
    """Where each 3D point lands (world units, y up): lets callers place labels or check a layout."""
    cam = camera(view)
    return {k: to_camera((float(v[0]), float(v[1]), float(v[2])), cam)[:2] for k, v in points3d.items()}
