"""Plane-geometry figures (triangles, polygons, circles, parallel lines) drawn from a spec of named points.

Spec (beside ``size_in`` and ``elements``): ``points`` maps a name to ``[x, y]`` in any length
unit with y up. The drawer fits the points, and what circles, arcs and protractors reach beyond
them, to the figure with a margin for labels; then each element is drawn by its primitive
(:mod:`render.figures.primitives`, one module per ``type``, each documenting its fields), layered
fills, lines, marks, text. Elements refer to points by name (``segment`` ``from``/``to``, ``label``
``at``, ``angle_mark`` ``at`` + ``arms``); squared paper (``gridline``) covers the drawing area and
a ``legend`` gets a strip of its own under the drawing.

``draw_only`` (element ids) draws just those elements in the full figure's layout.
Any labelled element may carry ``dir`` [dx, dy] (y up) to choose the side its text goes on;
otherwise text goes away from the centre of the figure. ``style`` picks the font (``italic`` for
unknowns such as x).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from render.figures import FigureImage, drawer
from render.figures._draw import Canvas, Point, Rect, clip, points_box, union
from render.figures._scene import LABEL_PT, Scene
from render.figures.primitives import PRIMITIVES
from synth.records import Box, Figure

SceneDrawer = Callable[[Scene, Mapping[str, Any]], Rect]


def render_elements(canvas: Canvas, points: Mapping[str, Point], elements: list[Mapping[str, Any]], dpi: int,
                    world_scale: float, extra: Mapping[str, SceneDrawer] = {}, only: Collection[str] | None = None,
                    area: Rect | None = None, strip: Rect | None = None) -> tuple[Box, ...]:
    """Draw every element by its primitive (layered: fills, lines, marks, text); one box per element, in spec order.

    ``extra`` overrides how this figure kind draws a type (a solid's flattened circles); ``area`` and
    ``strip`` are the drawing's part of the canvas and the band under it for a key (see ``Scene``).
    ``only`` (element ids) draws just those elements, keeping the layout of the whole figure: a
    composer can highlight one primitive, and a test can check that its ink stays in its box.
    """
    scene = Scene(canvas, points, dpi, world_scale, area=area, strip=strip)
    rects: dict[int, Rect] = {}
    order = sorted((i for i in range(len(elements)) if only is None or elements[i]["id"] in only),
                   key=lambda i: (_layer(elements[i]["type"]), i))
    for i in order:
        e = elements[i]
        fn = extra.get(e["type"]) or _scene_drawer(e["type"])
        if fn is None:
            known = sorted({*extra, *(k for k, p in PRIMITIVES.items() if p.draw is not None)})
            raise ValueError(f"figure element {e.get('id')!r} has type {e.get('type')!r}; "
                             f"this drawer knows {known}")
        rects[i] = clip(fn(scene, e), canvas.width, canvas.height)
    return tuple(Box(kind=f"figure_{e['type']}", ref=str(e["id"]), x0=round(rects[i][0], 2), y0=round(rects[i][1], 2),
                     x1=round(rects[i][2], 2), y1=round(rects[i][3], 2)) for i, e in enumerate(elements) if i in rects)


def _layer(element_type: str) -> float:
    primitive = PRIMITIVES.get(element_type)
    return primitive.layer if primitive is not None else 1


def _scene_drawer(element_type: str) -> SceneDrawer | None:
    primitive = PRIMITIVES.get(element_type)
    return primitive.draw if primitive is not None else None


def extents_of(points: Mapping[str, Point], elements: list[Mapping[str, Any]]) -> list[Rect]:
    """World boxes the elements reach beyond their points (a circle's rim, a protractor's half-disc)."""
    out = []
    for e in elements:
        primitive = PRIMITIVES.get(e["type"])
        if primitive is not None and primitive.extent is not None:
            out.append(primitive.extent(points, e))
    return out


def fit(points: Mapping[str, Point], extents: list[Rect], width: int, height: int, margin: tuple[float, float],
        ) -> tuple[dict[str, Point], float]:
    """Map points (y up) into a width x height image with ``margin`` px free on every side.

    ``extents`` are extra world boxes that must fit (a circle's reach beyond its centre).
    Returns the pixel points and the pixels per world unit.
    """
    boxes = [points_box([p], 0.0) for p in points.values()] + list(extents)
    x0, y0, x1, y1 = union(boxes)
    span_x, span_y = max(x1 - x0, 1e-9), max(y1 - y0, 1e-9)
    scale = min(max(1.0, width - 2 * margin[0]) / span_x, max(1.0, height - 2 * margin[1]) / span_y)
    ox = (width - span_x * scale) / 2 - x0 * scale
    oy = (height - span_y * scale) / 2 + y1 * scale
    return {k: (ox + x * scale, oy - y * scale) for k, (x, y) in points.items()}, scale


def label_margins(canvas: Canvas, elements: list[Mapping[str, Any]], dpi: int) -> tuple[float, float]:
    """Room to leave around the drawing (x, y) so the widest label fits outside any edge."""
    size = round(LABEL_PT * dpi / 72)
    extents = [canvas.text_size(str(e["text"]), size, e.get("style", "sans")) for e in elements
               if e.get("text") not in (None, "")]
    w = max((x for x, _ in extents), default=0.0)
    h = max((y for _, y in extents), default=0.0)
    gap = 0.09 * dpi
    return max(0.12 * dpi, w + gap), max(0.12 * dpi, h + gap)


def canvas_for(spec: Mapping[str, Any], dpi: int) -> Canvas:
    try:
        w_in, h_in = spec["size_in"]
    except (KeyError, TypeError, ValueError):
        raise ValueError("figure spec needs size_in = [width, height] in inches") from None
    return Canvas(max(1, round(w_in * dpi)), max(1, round(h_in * dpi)))


@drawer("plane_geometry")
def draw_plane_geometry(figure: Figure, dpi: int) -> FigureImage:
    """Triangles, polygons, circles and parallel lines from named points (see the module docstring)."""
    spec = figure.spec
    canvas = canvas_for(spec, dpi)
    points = {k: (float(v[0]), float(v[1])) for k, v in spec["points"].items()}
    extents = extents_of(points, spec["elements"])
    # A key gets a strip of its own under the drawing; the rest is fitted above it.
    legend = any(e["type"] == "legend" for e in spec["elements"])
    strip = round(LABEL_PT * dpi / 72 * 1.9) if legend else 0
    drawing_h = max(1, canvas.height - strip)
    # Angle labels sit inside their angle, within the drawing: only labels placed outside it need a margin
    # (reserving room for "(3x − 10)°" on every side shrank triangles until their angle labels collided).
    labelled = [e for e in spec["elements"] if e["type"] not in ("legend", "angle_mark")]
    margin = label_margins(canvas, labelled, dpi)
    if any(e["type"] == "gridline" for e in spec["elements"]):  # squared paper runs on past the drawing
        margin = (max(margin[0], 0.3 * dpi), max(margin[1], 0.25 * dpi))
    px, scale = fit(points, extents, canvas.width, drawing_h, margin)
    boxes = render_elements(canvas, px, spec["elements"], dpi, scale, only=spec.get("draw_only"),
                            area=(0.0, 0.0, float(canvas.width), float(drawing_h)),
                            strip=(0.0, float(drawing_h), float(canvas.width), float(canvas.height)))
    return FigureImage(canvas.pixels(), boxes)
