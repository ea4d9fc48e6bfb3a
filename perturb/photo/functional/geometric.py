"""Geometric kernels: the sheet's shape and the camera's pose as coordinate maps, applied as one remap.

A geometric op describes itself by a ``Warp``: the size of its output frame, a forward map
(input frame -> output frame, used for layout boxes and the sheet's outline) and an inverse map
(output -> input, used to sample pixels), plus an optional shading gain for a bent sheet. A chain
of warps is applied by walking a coarse grid of output pixels back through every inverse map,
upsampling the composed map to full resolution exactly (bilinear between grid nodes, padded by
one cell so the frame edges are interpolated, not clamped) and remapping once. Boxes move once,
through the composed forward map, so they do not inflate hull by hull. Where the sheet does not
cover the frame, a desk shows (``desk.desk_image``), drawn in the sheet's plane.

Each op's warp is built here from its params (``tilt_warp``, ``keystone_warp``, ``bent_sheet_warp``,
``placement_warp``, ``quarter_turn_warp``); sampling those params is the op module's job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from perturb.photo.functional.camera import IN_FOCUS_PX, defocus
from perturb.photo.functional.desk import desk_photo
from perturb.photo.functional.lighting import FIELD_STEP, Light, grid, paper_mottle, scene_gain
from perturb.photo.worker import in_halves, later
from synth.records import Box, RenderedPage

PointMap = Callable[[np.ndarray], np.ndarray]
Shade = Callable[[np.ndarray], np.ndarray]  # points on the sheet, in the warp's input frame -> lighting gain
_OUTLINE_SAMPLES = 16  # points per page edge when tracking the sheet's outline through a chain
# Grid spacing (px) of the composed map's nodes: 16 px where the nodes' second differences say bilinear
# interpolation between them stays within MAX_MAP_ERROR_PX of the true map, else 8, else 6. Mild chains pass at 16
# (a quarter of the nodes to walk back through every warp); a steep keystone or a sharp fold needs 8, and a
# steep keystone seen by the pinhole camera on a bent and tilted sheet 6 (at 8 its error reached 0.21 px at the
# 99.9th percentile: tests/perturb/test_fusion_maps.py; the error goes with the spacing's square, so 6 px has
# 0.56 of it at 1.8x the nodes, where 4 px costs 4x). Against a 4 px reference,
# over 140 A4 chains of paper_warp + keystone + tilt at severities 1-3 (before the pinhole keystone), the 99.99th
# percentile error on the sheet was <= 0.13 px at 16 or 8 (the estimate undershoots by up to 1.6x).
COARSE_STEP = 16
MAP_STEPS = (COARSE_STEP, 8, 6)  # the map's own spacings, not the lighting grid's (FIELD_STEP, also 8)
_DOF_STEP = 32  # grid of the depth-of-field blur's sigma (it varies smoothly over the photo)
MINIFY_BLUR_BELOW = 0.75  # chains that shrink the sheet more than this are low-passed first (antialias)
MAX_MAP_ERROR_PX = 0.08


@dataclass(frozen=True)
class Warp:
    width: int
    height: int
    forward: PointMap
    inverse: PointMap
    shade: Shade | None = None
    bends: bool = False  # straight lines do not stay straight: sample box edges densely
    # The pixel map as a 3x3 homography (input -> output pixel centres), when it is one: a chain of
    # homographies composes into one matrix and one cv2.warpPerspective, faster than a general remap.
    matrix: np.ndarray | None = None


def page_outline(page: RenderedPage) -> np.ndarray:
    """Points along the border of the sheet, in page units, clockwise from the top-left corner."""
    t = np.linspace(0.0, 1.0, _OUTLINE_SAMPLES, endpoint=False)
    w, h = float(page.width), float(page.height)
    return np.concatenate([np.stack([t * w, 0 * t], 1), np.stack([0 * t + w, t * h], 1),
                           np.stack([w - t * w, 0 * t + h], 1), np.stack([0 * t, h - t * h], 1)])


def polygon_area(points: np.ndarray) -> float:
    x, y = points[:, 0], points[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def page_corners(page: RenderedPage) -> np.ndarray:
    w, h = page.width, page.height
    return np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)


def homography_map(matrix: np.ndarray) -> PointMap:
    m = np.asarray(matrix, np.float64)

    def forward(pts: np.ndarray) -> np.ndarray:
        out = cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(-1, 1, 2), m)
        return out.reshape(-1, 2)

    return forward


def move_boxes(page: RenderedPage, forward: PointMap, width: int, height: int, *,
               edge_samples: int = 2) -> RenderedPage:
    """New page whose boxes are the clipped axis-aligned hulls of the mapped box outlines.

    ``edge_samples`` > 2 samples points along each edge, for maps that bend straight lines.
    """
    if not page.layout:
        return replace(page, width=width, height=height)
    t = np.linspace(0.0, 1.0, edge_samples)
    x0, y0, x1, y1 = (np.array([getattr(b, k) for b in page.layout], np.float64)[:, None]
                      for k in ("x0", "y0", "x1", "y1"))
    ones = np.ones_like(t)
    # Every box's outline (top, right, bottom, left edges), all mapped in one call.
    xs = np.concatenate([x0 + (x1 - x0) * t, x1 * ones, x1 - (x1 - x0) * t, x0 * ones], axis=1)
    ys = np.concatenate([y0 * ones, y0 + (y1 - y0) * t, y1 * ones, y1 - (y1 - y0) * t], axis=1)
    p = forward(np.stack([xs.ravel(), ys.ravel()], axis=1)).reshape(*xs.shape, 2)
    lo = np.clip(p.min(axis=1), 0.0, [float(width), float(height)]).round(2).tolist()
    hi = np.clip(p.max(axis=1), 0.0, [float(width), float(height)]).round(2).tolist()
    boxes = tuple(Box(b.kind, b.ref, a[0], a[1], c[0], c[1]) for b, a, c in zip(page.layout, lo, hi, strict=True))
    return replace(page, width=width, height=height, layout=boxes)


def compose_forward(warps: Sequence[Warp]) -> PointMap:
    def forward(p: np.ndarray) -> np.ndarray:
        for w in warps:
            p = w.forward(p)
        return p

    return forward


def moved_page(page: RenderedPage, warps: Sequence[Warp]) -> RenderedPage:
    edge = 9 if any(w.bends for w in warps) else 2
    return move_boxes(page, compose_forward(warps), warps[-1].width, warps[-1].height, edge_samples=edge)


def _padded_nodes(n: int, step: int) -> np.ndarray:
    """Grid node coordinates, one cell beyond each edge, matching cv2.resize's pixel centres."""
    cells = -(-n // step) + 2
    return (np.arange(cells, dtype=np.float64) - 0.5) * step - 0.5


def _upsample_nodes(field: np.ndarray, width: int, height: int, step: int) -> np.ndarray:
    gh, gw = field.shape[:2]
    full = cv2.resize(field.astype(np.float32), (gw * step, gh * step), interpolation=cv2.INTER_LINEAR)
    return full[step:step + height, step:step + width]


def _walk_nodes(warps: Sequence[Warp], scale: float, out_w: int, out_h: int, step: int) -> np.ndarray:
    """Source pixel of every grid node, walked back through every inverse map."""
    xs, ys = np.meshgrid(_padded_nodes(out_w, step), _padded_nodes(out_h, step))
    q = np.stack([xs.ravel(), ys.ravel()], 1) / scale
    for w in reversed(warps):
        q = w.inverse(q)
    return (q * scale).reshape(*xs.shape, 2)


def _interpolation_error(src: np.ndarray, src_w: int, src_h: int) -> float:
    """Estimated largest error (px) of bilinear interpolation between the nodes, where they land on the sheet.

    Between nodes h apart, linear interpolation misses a smooth map by up to h^2 |f''| / 8, and the
    nodes' second difference is h^2 f'': the estimate is a second difference over 8, along each axis,
    over runs of three nodes that all land on the input image (off it the map is not sampled).
    """
    inside = (src[..., 0] >= 0) & (src[..., 0] <= src_w) & (src[..., 1] >= 0) & (src[..., 1] <= src_h)
    worst = 0.0
    thirds = (slice(None, -2), slice(1, -1), slice(2, None))
    for cut in ([(k,) for k in thirds], [(slice(None), k) for k in thirds]):  # along rows, then along columns
        a, b, c = (src[k] for k in cut)
        runs = inside[cut[0]] & inside[cut[1]] & inside[cut[2]]
        if runs.any():  # the second difference (c - b) - (b - a), at runs of three nodes on the image
            worst = max(worst, float(np.abs((c - b) - (b - a)).max(axis=-1)[runs].max()) / 8)
    return worst


def chain_maps(warps: Sequence[Warp], scale: float, out_w: int, out_h: int,
               src_size: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Full-resolution source maps (pixels of the input image) for a chain of warps.

    ``src_size`` is the input image's (width, height), where the map's accuracy is checked (default: the
    output's). Shading is not part of the map: ``sheet_shading`` lights the page first.
    """
    for step in MAP_STEPS:  # the coarsest grid whose nodes say bilinear interpolation stays within the bound
        src = _walk_nodes(warps, scale, out_w, out_h, step)
        if _interpolation_error(src, *(src_size or (out_w, out_h))) <= MAX_MAP_ERROR_PX:
            break
    return _upsample_nodes(src[..., 0], out_w, out_h, step), _upsample_nodes(src[..., 1], out_w, out_h, step)


def print_scale(page: RenderedPage, warps: Sequence[Warp]) -> float:
    """How much a chain shrinks (or enlarges) the sheet, as the square root of its area ratio."""
    outline = compose_forward(warps)(page_outline(page))
    return float(np.sqrt(polygon_area(outline) / max(page.width * page.height, 1)))


def antialias(image: np.ndarray, scale: float) -> np.ndarray:
    """Low-pass an image a chain will shrink by ``scale``, as a camera's optics and sensor do.

    Bilinear sampling at under 3/4 size skips pixels: 1-px strokes come out anywhere from black to
    nearly gone depending on where they fall. A Gaussian of sigma 0.5 sqrt(1/s^2 - 1) px first
    (0.44 px at 3/4 size, 1 px at 0.45) keeps them as the grey a lens would make of them.
    """
    if scale >= MINIFY_BLUR_BELOW:
        return image
    sigma = 0.5 * float(np.sqrt(1.0 / scale**2 - 1.0))
    # Taps out to 2 sigma (3 up to sigma 0.75, then 5): OpenCV's own choice for 8-bit images reaches 3 sigma,
    # which for these small sigmas only adds taps of weight under 0.5% each, at a fifth more time.
    taps = 2 * max(1, round(2 * sigma)) + 1
    return cv2.GaussianBlur(image, (taps, taps), sigma)


def sheet_points(page: RenderedPage, warps: Sequence[Warp], xs: np.ndarray, ys: np.ndarray,
                 scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Where photo pixels (xs, ys) come from on the sheet: page points (x, y) walked back through every warp,
    and the product of the warps' shading there (a bent sheet's light), None when no warp shades."""
    q = np.stack([xs.ravel(), ys.ravel()], 1).astype(np.float64) / scale
    shade = None
    for warp in reversed(warps):
        q = warp.inverse(q)
        if warp.shade is not None:
            g = warp.shade(q)
            shade = g if shade is None else shade * g
    shape = xs.shape
    return q[:, 0].reshape(shape), q[:, 1].reshape(shape), None if shade is None else shade.reshape(shape)


def sheet_shading(page: RenderedPage, warps: Sequence[Warp]) -> Light:
    """A bent sheet's own shading (the warps' shade) as lighting of the flat page, applied before the remap.

    Shading is a function of the point on the sheet, so lighting the flat sheet and then moving it equals
    lighting each photo pixel from where it came, and it stays exactly on the sheet (a field on the photo's
    coarse grid would smear a dark bend across the sheet's edge onto the desk). Each warp's shade is evaluated
    where the page's grid points are when that warp acts.
    """
    shaded = [k for k, warp in enumerate(warps) if warp.shade is not None]
    if not shaded:
        return Light()
    xs, ys = grid(page.height, page.width)
    p = np.stack([xs.ravel(), ys.ravel()], 1).astype(np.float64)
    gain = None
    for k, warp in enumerate(warps[:shaded[-1] + 1]):
        if warp.shade is not None:
            g = warp.shade(p)
            gain = g if gain is None else gain * g
        if k < shaded[-1]:
            p = warp.forward(p)
    return Light(gain.reshape(xs.shape).astype(np.float32))


def page_texture(page: RenderedPage, base: dict[str, Any]) -> np.ndarray:
    """The paper's mottle (``paper_mottle``) on the flat page's FIELD_STEP grid, as a gain."""
    xs, ys = grid(page.height, page.width)
    return paper_mottle(base, xs, ys, page.width)


def sheet_light(page: RenderedPage, warps: Sequence[Warp], height: int, width: int, scale: float,
                base: dict[str, Any], textured: bool = False) -> np.ndarray:
    """The camera's base light on a ``height`` x ``width`` photo (pixels) of ``page`` moved by ``warps``, as a
    gain on the photo's FIELD_STEP grid (gh, gw, 3): the room's light on desk and sheet alike, and on the sheet
    only its paper texture (its bend's shading went on with the remap: ``sheet_shading``).

    Light belongs to the scene: computed in photo coordinates, after the geometry, so a shadow or a gradient
    crosses the sheet's edge onto the desk unbroken.
    """
    xs, ys = grid(height, width)
    gain = scene_gain(base, xs, ys, width, height)
    if textured:  # the paper's mottle went on the flat page with the remap (``remap_chain``'s texture)
        return gain
    plain = [replace(w, shade=None) for w in warps]
    if plain and all(w.matrix is not None for w in plain[1:]) and plain[0].matrix is None:
        # A bent sheet (the first warp) under the camera's pose: walk a grid twice as coarse back (the map is
        # smooth; a bent sheet's inverse is most of the cost) and interpolate the sheet points to the field's.
        cx, cy = grid(height, width, 2 * FIELD_STEP)
        qx, qy, _ = sheet_points(page, plain, cx, cy, scale)
        size = (xs.shape[1], xs.shape[0])
        px, py = (cv2.resize(q.astype(np.float32), size, interpolation=cv2.INTER_LINEAR) for q in (qx, qy))
    else:
        px, py, _ = sheet_points(page, plain, xs, ys, scale)
    mottle = paper_mottle(base, px.astype(np.float32), py.astype(np.float32), page.width)
    inside = (px >= 0) & (px <= page.width) & (py >= 0) & (py <= page.height)
    return (gain * np.where(inside, mottle, 1.0)[..., None]).astype(np.float32)


def remap_chain(image: np.ndarray, page: RenderedPage, warps: Sequence[Warp],
                desk_params: dict[str, Any] | None, texture: dict[str, Any] | None = None) -> np.ndarray:
    """Apply a chain of warps to ``image`` (a raster of ``page``) with one remap; desk where the sheet is not.

    Light is not applied here: it falls on the photographed scene afterwards (``sheet_light``), desk included.
    ``texture`` (the camera's base layer) puts the paper's mottle on the flat page in the same pass as a bent
    sheet's shading (both are functions of the point on the sheet); ``sheet_light(..., textured=True)`` then
    leaves it out.
    """
    h, w = image.shape[:2]
    scale = w / page.width
    out_w, out_h = max(1, round(warps[-1].width * scale)), max(1, round(warps[-1].height * scale))
    # The composed map and the desk (numpy, one core) are built on a worker while the page is low-passed.
    maps = None if all(wp.matrix is not None for wp in warps) else \
        later(chain_maps, warps, scale, out_w, out_h, (w, h))
    desk = None if desk_params is None else \
        later(desk_photo, desk_params, out_h, out_w, desk_plane(warps, scale), page.width)
    flat = sheet_shading(page, warps)
    if texture is not None:
        flat = flat.times(page_texture(page, texture))
    minify = print_scale(page, warps)
    # With a desk, the page is warped with an alpha channel (premultiplied: a transparent black border), so at
    # the sheet's anti-aliased edge "page over desk" is rgb + (1 - alpha) desk (``lay_on_desk``).
    if desk is not None and minify >= MINIFY_BLUR_BELOW:  # no low-pass: each band gets its alpha as it is lit
        src, border = np.empty((h, w, 4), np.uint8), cv2.BORDER_CONSTANT
        flat.apply(image, then=lambda lit, rows: cv2.cvtColor(lit[rows], cv2.COLOR_RGB2RGBA, dst=src[rows]))
    else:
        image = antialias(flat.apply(image), minify)
        src, border = (image, cv2.BORDER_REPLICATE) if desk is None else \
            (cv2.cvtColor(image, cv2.COLOR_RGB2RGBA), cv2.BORDER_CONSTANT)
    if maps is None:
        warped = _warp_homographies(src, warps, scale, out_w, out_h, border)
    else:
        map_x, map_y = maps.result()
        # Float maps straight in: OpenCV's 4-channel remap takes them twice as fast as fixed-point maps.
        warped = cv2.remap(src, map_x, map_y, cv2.INTER_LINEAR, borderMode=border, borderValue=0)
    out = warped if desk is None else lay_on_desk(warped, desk.result())
    field = None if desk_params is None or "aperture_mm" not in desk_params else \
        depth_of_field(page, warps, scale, out_w, out_h, desk_params)
    return out if field is None else defocus(out, field)


def depth_of_field(page: RenderedPage, warps: Sequence[Warp], scale: float, out_w: int, out_h: int,
                   scene: dict[str, Any]) -> np.ndarray | None:
    """The defocus blur's sigma (photo px) over the photo of a sheet tipped or bent towards the camera.

    A lens of aperture D focused at one distance spreads a point at another into a disk of diameter
    D f |1/s - 1/z| on the sensor; in photo pixels that is D |m_s - m_z|, with m the photo's pixels per mm of
    the sheet at each distance (the magnification is f / z). Where the sheet is not foreshortened (along a
    tipped page's edges, along a bend's axis) the chain's local scale is that magnification, so m is the larger
    singular value of the chain's Jacobian, found on a coarse grid of the photo. The phone focuses at
    ``focus_frac`` of the frame; a disk of diameter c spreads c / 4 along each axis. A flat sheet square to the
    camera is in focus everywhere (m is the same at every point), so only keystone and paper warp blur. None when
    the grid stays under ``IN_FOCUS_PX`` (the field between its nodes cannot exceed them): nothing to blur.
    """
    step = _DOF_STEP
    src = _walk_nodes(warps, scale, out_w, out_h, step)
    du_y, du_x = np.gradient(src[..., 0], step)
    dv_y, dv_x = np.gradient(src[..., 1], step)
    # Singular values of the inverse map's Jacobian [[du_x, du_y], [dv_x, dv_y]] (closed form for 2 x 2);
    # the forward map's larger one is the inverse of the smaller.
    q = np.hypot((du_x + dv_y) / 2, (dv_x - du_y) / 2)
    r = np.hypot((du_x - dv_y) / 2, (dv_x + du_y) / 2)
    m = 1.0 / np.maximum(np.abs(q - r), 1e-6)
    fx, fy = scene["focus_frac"]
    nodes_x, nodes_y = _padded_nodes(out_w, step), _padded_nodes(out_h, step)
    focus = m[int(np.abs(nodes_y - fy * out_h).argmin()), int(np.abs(nodes_x - fx * out_w).argmin())]
    per_mm = page.dpi * scale / 25.4  # source pixels per mm of the sheet
    sigma = float(scene["aperture_mm"]) * per_mm * np.abs(m - focus) / 4
    return None if sigma.max() < IN_FOCUS_PX else _upsample_nodes(sigma, out_w, out_h, step)


def lay_on_desk(warped: np.ndarray, desk: np.ndarray) -> np.ndarray:
    """The premultiplied RGBA sheet over the desk (full-size RGB): rgb + (255 - alpha) / 255 desk, in bytes (the desk
    whole where the sheet is not, blended at the edge pixels it partly covers, without searching for them), the two
    halves side by side: OpenCV's channel extraction and multiply run on one core."""
    out = np.empty((*warped.shape[:2], 3), np.uint8)

    def rows(r: slice) -> None:
        uncovered = cv2.cvtColor(cv2.bitwise_not(cv2.extractChannel(warped[r], 3)), cv2.COLOR_GRAY2RGB)
        cv2.cvtColor(warped[r], cv2.COLOR_RGBA2RGB, dst=out[r])
        cv2.add(out[r], cv2.multiply(desk[r], uncovered, scale=1 / 255), dst=out[r])

    in_halves(rows, warped.shape[0])
    return out


def _warp_homographies(image: np.ndarray, warps: Sequence[Warp], scale: float, out_w: int, out_h: int,
                       border: int) -> np.ndarray:
    m = np.eye(3)
    for wp in warps:
        m = np.asarray(wp.matrix, np.float64) @ m
    to_px = np.diag([scale, scale, 1.0])
    m = to_px @ m @ np.linalg.inv(to_px)
    return cv2.warpPerspective(image, m, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=border, borderValue=0)


# ------------------------------------------------------------------------------ the camera's frame


FRAME_ASPECTS = {"3:4": 3 / 4, "9:16": 9 / 16}  # short side over long side of a phone photo


def frame_size(scene: dict[str, Any], area: float) -> tuple[int, int]:
    """The photo's (width, height) in page units: the camera's aspect, portrait or landscape, and the page's
    own area (so a photo keeps the page's pixel count whatever the sheet's pose)."""
    r = FRAME_ASPECTS[scene["frame_aspect"]]
    short, long = int(round(np.sqrt(area * r))), int(round(np.sqrt(area / r)))
    return (long, short) if scene["frame_landscape"] else (short, long)


def frame_warp(scene: dict[str, Any], outline: np.ndarray, area: float, flat: tuple[float, float]) -> Warp:
    """The camera framing the sheet, placed by ``frame_offset`` within the room left, never turned.
    ``frame_scale: flat_sheet``: the scale that makes the flat sheet (``flat``, its width and height) fill
    ``frame_fill`` of the frame, reduced only as far as the posed sheet's bounding box needs to fill no more than
    that: the camera never zooms in on a sheet because an op made it look smaller (a tipped page's far edge
    shrinks, its near edge does not grow), so a severer pose is never a closer photo. Older records (no
    ``frame_scale``) scale the posed sheet's bounding box to ``frame_fill`` (above 1 the frame crops it)."""
    fw, fh = frame_size(scene, area)
    lo, hi = outline.min(axis=0), outline.max(axis=0)
    size = np.maximum(hi - lo, 1e-6)
    s = float(scene["frame_fill"]) * min(fw / size[0], fh / size[1])
    if scene.get("frame_scale") == "flat_sheet":
        s = min(s, float(scene["frame_fill"]) * min(fw / flat[0], fh / flat[1]))
    room = (np.array([fw, fh], float) - s * size) / 2
    centre = np.array([fw, fh], float) / 2 + np.asarray(scene["frame_offset"], float) * np.abs(room)
    mid = (lo + hi) / 2
    m = np.array([[s, 0.0, centre[0] - s * mid[0]], [0.0, s, centre[1] - s * mid[1]], [0.0, 0.0, 1.0]])
    return Warp(fw, fh, affine_map(m), affine_map(np.linalg.inv(m)), matrix=m)


# ------------------------------------------------------------------------------ the desk


def desk_plane(warps: Sequence[Warp], scale: float) -> np.ndarray:
    """Desk-plane units (page units of the flat sheet) -> photo pixels: the chain's planar warps composed.

    The desk lies in the sheet's plane, so the camera's pose (keystone, tilt, framing, a quarter turn) moves it
    exactly as it moves the sheet; a bent sheet's own shape (no matrix) does not bend the desk under it.
    """
    m = np.eye(3)
    for wp in warps:
        if wp.matrix is not None:
            m = np.asarray(wp.matrix, np.float64) @ m
    return np.diag([scale, scale, 1.0]) @ m


# ------------------------------------------------------------------------------ tilt


def tilt_matrix(params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, int, int, float]:
    """Homography page -> photo (counter-clockwise for positive angles), the photo size and the print scale."""
    a = np.deg2rad(float(params["angle_deg"]))
    c, s = np.cos(a), np.sin(a)
    rot = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]])  # counter-clockwise on screen (y points down)
    centre = np.array([page.width / 2, page.height / 2])
    corners = (page_corners(page) - centre) @ rot[:2, :2].T
    margin = float(params["margin_frac"]) * page.width
    half = np.abs(corners).max(axis=0) + margin
    # Scale the turned sheet and its margin to the page's pixel count (never enlarge it).
    scale = min(1.0, float(np.sqrt(page.width * page.height / (4 * half[0] * half[1]))))
    width, height = int(np.ceil(2 * half[0] * scale)), int(np.ceil(2 * half[1] * scale))
    to_origin = np.array([[1, 0, -centre[0]], [0, 1, -centre[1]], [0, 0, 1]])
    to_canvas = np.array([[scale, 0, width / 2], [0, scale, height / 2], [0, 0, 1]])
    return to_canvas @ rot @ to_origin, width, height, scale


def tilt_warp(params: dict[str, Any], page: RenderedPage) -> Warp:
    """The page turned in its plane by ``angle_deg`` and framed whole (``tilt_matrix``)."""
    m, w, h, _ = tilt_matrix(params, page)
    return Warp(w, h, homography_map(m), homography_map(np.linalg.inv(m)), matrix=m)


# ------------------------------------------------------------------------------ keystone


def _quad(side: str, ratio: float, margin: float, jitter: np.ndarray, w: float, h: float) -> np.ndarray:
    """Destination corners (TL, TR, BR, BL) of a page whose ``side`` edge is ``ratio`` times its opposite."""
    # Build with the short edge on top of an upright frame, then turn the frame to put it on ``side``.
    long_is_w = side in ("top", "bottom")
    fw, fh = (w, h) if long_is_w else (h, w)
    a = fw / 2 - margin * w
    depth = fh - 2 * margin * w
    # A pinhole camera CAMERA_DISTANCE from the sheet's middle, the sheet tipped by theta: its near edge framed at
    # full width, its far edge ``ratio`` of that, and its length on the photo cos(theta) (1 + ratio) / 2 of the
    # near edge's scale, theta being the tip at which the edges' depths differ by that ratio (the homography through
    # the four corners then spaces the rows as the camera does; 0.55 + 0.45 ratio before made the sheet 18 % too
    # long at ratio 0.55, its near rows taller than the camera sees them).
    sin_t = min(CAMERA_DISTANCE * (1 - ratio) / (fh / w / 2 * (1 + ratio)), 0.95)
    foreshorten = float(np.sqrt(1 - sin_t ** 2)) * (1 + ratio) / 2
    top = fh / 2 - depth * foreshorten / 2
    bottom = fh / 2 + depth * foreshorten / 2
    q = np.array([[fw / 2 - ratio * a, top], [fw / 2 + ratio * a, top], [fw / 2 + a, bottom], [fw / 2 - a, bottom]])
    if side == "bottom":
        q = np.array([[fw, fh]]) - q[[2, 3, 0, 1]]
    elif side == "left":  # frame is (h x w): rotate it a quarter turn counter-clockwise into (w x h)
        q = np.stack([q[:, 1], fw - q[:, 0]], axis=1)[[1, 2, 3, 0]]
    elif side == "right":
        q = np.stack([fh - q[:, 1], q[:, 0]], axis=1)[[3, 0, 1, 2]]
    return q + jitter * w


def keystone_quad(params: dict[str, Any], page: RenderedPage) -> np.ndarray:
    return _quad(params["short_side"], float(params["ratio"]), float(params["margin_frac"]),
                 np.asarray(params["corner_jitter"], float), page.width, page.height)


def keystone_warp(params: dict[str, Any], page: RenderedPage) -> Warp:
    """The page seen at an angle: the homography taking its corners to ``keystone_quad``."""
    m = cv2.getPerspectiveTransform(page_corners(page).astype(np.float32),
                                    keystone_quad(params, page).astype(np.float32))
    return Warp(page.width, page.height, homography_map(m), homography_map(np.linalg.inv(m)), matrix=m)


# ------------------------------------------------------------------------------ paper warp


PROFILE_S = np.linspace(-1.0, 1.0, 1025)  # profile coordinate, in page widths from the centre
_CREASE_WIDTH = 0.004  # a fold's dark crease line, page widths
# The phone above the desk, in page widths: a phone's main camera (about 26 mm equivalent, 69 x 54 degrees) frames
# an A4 sheet with a margin from about 25 cm. A part of the sheet lifted by h comes nearer the lens and looks
# larger by CAMERA_DISTANCE / (CAMERA_DISTANCE - h).
CAMERA_DISTANCE = 1.2
# How far any part of a bent or folded sheet rises off (or sinks below) its resting plane, in page widths: 5 cm
# on A4, a badly bent sheet; higher it is a tube, not a page lying on a desk. A curl lifts one edge alone, rolled up
# as a sheet kept rolled or a notebook's page by its spine does, and rises further there (6.7 cm on A4): at 5 cm a
# curl bowed a worksheet's writing 0.019-0.046 of the width, short of severity 3's "severe bending or curling", so
# no curl was ever drawn there (benchmarks/results_cer.md, round 11).
MAX_LIFT = 0.24
MAX_CURL_LIFT = 0.32


def max_lift(kind: str) -> float:
    """How far a sheet of this kind (bend, fold, curl) may rise off its resting plane, in page widths."""
    return MAX_CURL_LIFT if kind == "curl" else MAX_LIFT


def bend_profile(params: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Height (fraction of width) along the profile axis, and its slope, tabulated over PROFILE_S."""
    kind, s0 = params["kind"], float(params["s0"])
    if kind == "bend":
        f = np.cos(2 * np.pi * PROFILE_S / float(params["period"]) + float(params["phase"]))
    elif kind == "fold":  # a crease: two flat panels meeting at s0, ridge or valley
        f = -np.abs(PROFILE_S - s0) * float(params["ridge"])
    else:  # curl: the sheet lifts off the desk quadratically past s0
        f = np.maximum(0.0, PROFILE_S - s0) ** 2 * 4
    h = float(params["amplitude"]) * f
    return h, np.gradient(h, PROFILE_S)


def parallax(h_tab: np.ndarray) -> np.ndarray:
    """How much larger the camera sees each profile point lifted by ``h_tab`` (page widths) than the resting plane."""
    return CAMERA_DISTANCE / (CAMERA_DISTANCE - np.minimum(h_tab, 0.9 * CAMERA_DISTANCE))


def profile_span(params: dict[str, Any], page: RenderedPage) -> float:
    """How far the page reaches along the profile axis from its centre, in page widths (its corners' furthest)."""
    a = np.deg2rad(float(params["axis_deg"]))
    half = np.array([page.width / 2, page.height / 2])
    corners = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]]) * half
    return float(np.abs(corners @ np.array([np.cos(a), np.sin(a)])).max()) / page.width


def max_amplitude(params: dict[str, Any], page: RenderedPage) -> float:
    """The amplitude at which the sheet's highest (or lowest) point on the page is ``max_lift`` off its plane."""
    span = profile_span(params, page)
    on_page = np.abs(PROFILE_S) <= span
    h, _ = bend_profile({**params, "amplitude": 1.0})
    return max_lift(params["kind"]) / max(float(np.abs(h[on_page]).max()), 1e-6)


def foreshortening(slope: np.ndarray) -> np.ndarray:
    """How far each profile point moves towards the centre as the sheet tilts out of the page plane."""
    fore = np.cumsum(1.0 - 1.0 / np.sqrt(1.0 + slope**2)) * (PROFILE_S[1] - PROFILE_S[0])
    return fore - np.interp(0.0, PROFILE_S, fore)


def forward_map(params: dict[str, Any], page: RenderedPage):
    """Page pixel -> photo pixel: parallax of the lifted sheet plus foreshortening along the profile."""
    h_tab, slope = bend_profile(params)
    fore = foreshortening(slope)
    grow = parallax(h_tab)
    a = np.deg2rad(float(params["axis_deg"]))
    n = np.array([np.cos(a), np.sin(a)])
    w = float(page.width)
    c = np.array([page.width / 2, page.height / 2])
    zoom = float(params.get("zoom", 1.0))  # the camera backs off so the lifted sheet stays in frame

    def forward(p: np.ndarray) -> np.ndarray:
        d = p - c
        s = (d @ n) / w
        g = np.interp(s, PROFILE_S, grow)
        return c + zoom * (d * g[:, None] - np.outer(np.interp(s, PROFILE_S, fore) * w, n))

    return forward, h_tab, slope, n


def shading(params: dict[str, Any], s: np.ndarray, h_tab: np.ndarray, slope: np.ndarray,
            min_crease: float = 0.0) -> np.ndarray:
    """Lambertian light on the bent sheet, relative to a flat sheet, plus a dark crease for folds.

    The shading is sampled on a grid of the page (sheet_shading), so a crease narrower than about a
    grid spacing would alias into dashes: ``min_crease`` (page widths) widens it, keeping its total darkening.
    """
    sl = np.interp(s, PROFILE_S, slope)
    shade = (1.0 - sl * float(params["light_slant"])) / np.sqrt(1.0 + sl**2)
    if params["kind"] == "fold":
        width = max(_CREASE_WIDTH, min_crease)
        depth = 0.12 * _CREASE_WIDTH / width
        shade = shade * (1.0 - depth * np.exp(-(((s - float(params["s0"])) / width) ** 2)))
    # Facets turned to the light cannot get much whiter than white paper; room light from every side (walls,
    # ceiling) keeps a facet turned away from the lamp at half the light of the flat sheet or more.
    return np.clip(shade, 0.5, 1.03)


def inverse_map(params: dict[str, Any], page: RenderedPage):
    """Photo point -> page point.

    The forward map moves a point along the profile axis n by a function of its profile coordinate
    s alone, u(s) = s g(s) - fore(s), and scales its other coordinate by g(s) (``parallax``). So the inverse
    reads s back from a table of u (one interpolation), then undoes the scale: exact to the tables'
    resolution, and one polishing step of the fixed-point iteration takes it below 1e-4 px. Where
    u(s) is not increasing (never for the sampled ranges) it falls back to iterating from scratch.
    """
    forward, h_tab, slope, n = forward_map(params, page)
    grow = parallax(h_tab)
    u_tab = PROFILE_S * grow - foreshortening(slope)
    w = float(page.width)
    c = np.array([page.width / 2, page.height / 2])
    zoom = float(params.get("zoom", 1.0))
    perp = np.array([-n[1], n[0]])
    monotonic = bool(np.all(np.diff(u_tab) > 0))

    def inverse(q: np.ndarray) -> np.ndarray:
        q = np.asarray(q, np.float64)
        if monotonic:
            d = q - c
            u = (d @ n) / (zoom * w)
            s = np.interp(u, u_tab, PROFILE_S)
            # Beyond the table the forward map is affine (h and fore held at their end values).
            below, above = u < u_tab[0], u > u_tab[-1]
            s[below] = PROFILE_S[0] + (u[below] - u_tab[0]) / grow[0]
            s[above] = PROFILE_S[-1] + (u[above] - u_tab[-1]) / grow[-1]
            across = (d @ perp) / (zoom * np.interp(s, PROFILE_S, grow))
            p = c + np.outer(s * w, n) + np.outer(across, perp)
            rounds = 1
        else:
            p, rounds = np.array(q), 12
        for _ in range(rounds):
            step = q - forward(p)
            p += step
            if np.abs(step).max() < 1e-4:  # pixels; converged long before the map's interpolation error
                break
        return p

    return inverse


def shade_map(params: dict[str, Any], page: RenderedPage):
    """Lighting gain at photo points, from where on the sheet they come from (``p``)."""
    _, h_tab, slope, n = forward_map(params, page)
    centre = np.array([page.width / 2, page.height / 2])

    # 1.25 spacings of the FIELD_STEP grid the shading is applied on (sheet_shading).
    min_crease = 1.25 * FIELD_STEP / page.width

    def shade(p: np.ndarray) -> np.ndarray:
        return shading(params, ((p - centre) @ n) / page.width, h_tab, slope, min_crease)

    return shade


def bent_sheet_warp(params: dict[str, Any], page: RenderedPage) -> Warp:
    """A bent, folded or curling sheet: its maps and its shading (straight lines bend: ``bends``)."""
    return Warp(page.width, page.height, forward_map(params, page)[0], inverse_map(params, page),
                shade=shade_map(params, page), bends=True)


# ------------------------------------------------------------------------------ rotation


_CV2_CODE = {"90cw": cv2.ROTATE_90_CLOCKWISE, "90ccw": cv2.ROTATE_90_COUNTERCLOCKWISE, "180": cv2.ROTATE_180}


def _point_map(rotation: str, width: float, height: float):
    """Page -> photo for a quarter-turn photo of a width x height frame (pixel-edge coordinates)."""
    def forward(p: np.ndarray) -> np.ndarray:
        x, y = p[:, 0], p[:, 1]
        if rotation == "90cw":
            return np.stack([height - y, x], axis=1)
        if rotation == "90ccw":
            return np.stack([y, width - x], axis=1)
        return np.stack([width - x, height - y], axis=1)

    return forward


_INVERSE = {"90cw": "90ccw", "90ccw": "90cw", "180": "180"}


def quarter_turn_warp(params: dict[str, Any], page: RenderedPage) -> Warp:
    """The photo turned a quarter (or half) turn: an exact permutation of pixels, as a homography."""
    rotation = params["rotation"]
    w, h = (page.height, page.width) if rotation != "180" else (page.width, page.height)
    # Boxes use pixel-edge coordinates (a W-wide page spans 0..W); pixel sampling uses pixel
    # centres (0..W-1), so the remap's maps turn a W-1 by H-1 frame.
    edge = _point_map(rotation, page.width, page.height)
    centre_inv = _point_map(_INVERSE[rotation], w - 1, h - 1)
    fw, fh = page.width - 1, page.height - 1  # pixel-centre frame of the input
    matrix = {"90cw": [[0, -1, fh], [1, 0, 0], [0, 0, 1]], "90ccw": [[0, 1, 0], [-1, 0, fw], [0, 0, 1]],
              "180": [[-1, 0, fw], [0, -1, fh], [0, 0, 1]]}[rotation]
    return Warp(w, h, edge, centre_inv, matrix=np.array(matrix, np.float64))


def quarter_turn(image: np.ndarray, rotation: str) -> np.ndarray:
    """A lone quarter turn: an exact pixel permutation, faster than a remap."""
    return cv2.rotate(image, _CV2_CODE[rotation])


# ------------------------------------------------------------------------------ background


def placement_matrix(params: dict[str, Any], frame_w: float, frame_h: float) -> np.ndarray:
    """Similarity: input point -> photo point (scale about the anchor, turn, move to the centre)."""
    k, a = float(params["scale"]), np.deg2rad(float(params["angle_deg"]))
    c, s = np.cos(a) * k, np.sin(a) * k
    ax, ay = params["anchor"]
    cx, cy = params["centre_frac"][0] * frame_w, params["centre_frac"][1] * frame_h
    return np.array([[c, s, cx - c * ax - s * ay], [-s, c, cy + s * ax - c * ay], [0.0, 0.0, 1.0]])


def affine_map(m: np.ndarray):
    def forward(p: np.ndarray) -> np.ndarray:
        return p @ m[:2, :2].T + m[:2, 2]

    return forward


def placement_warp(params: dict[str, Any], page: RenderedPage) -> Warp:
    """The sheet placed on the desk in the frame: scaled about its anchor, turned a little, moved."""
    fw, fh = params.get("frame_size", (page.width, page.height))
    m = placement_matrix(params, fw, fh)
    return Warp(int(fw), int(fh), affine_map(m), affine_map(np.linalg.inv(m)), matrix=m)
