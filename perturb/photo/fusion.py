"""Geometric ops as coordinate maps, so a chain of them is one composed map and one cv2.remap.

A geometric op describes itself by a ``Warp``: the size of its output frame, a forward map
(input frame -> output frame, used for layout boxes and the sheet's outline) and an inverse map
(output -> input, used to sample pixels), plus an optional shading gain for a bent sheet. A chain
of warps is applied by walking a coarse grid of output pixels back through every inverse map,
upsampling the composed map to full resolution exactly (bilinear between grid nodes, padded by
one cell so the frame edges are interpolated, not clamped) and remapping once. Boxes move once,
through the composed forward map, so they do not inflate hull by hull.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from perturb.photo.base import Op
from perturb.photo.fields import FIELD_STEP, Light, grid
from perturb.photo.geometry import PointMap, desk_tone, lay_on_desk, move_boxes
from perturb.photo.worker import later
from synth.records import RenderedPage

Shade = Callable[[np.ndarray], np.ndarray]  # points on the sheet, in the warp's input frame -> lighting gain
_OUTLINE_SAMPLES = 16  # points per page edge when tracking the sheet's outline through a chain
# Grid spacing (px) of the composed map's nodes: 16 px where the nodes' second differences say bilinear
# interpolation between them stays within MAX_MAP_ERROR_PX of the true map, else 8. Mild chains pass at 16
# (a quarter of the nodes to walk back through every warp); a steep keystone or a sharp fold needs 8.
# Against a 4 px reference, over 140 A4 chains of paper_warp + keystone + tilt at severities 1-3, the 99.99th
# percentile error on the sheet was <= 0.13 px either way (the estimate undershoots by up to 1.6x).
COARSE_STEP = 16
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


class GeometricOp(Op):
    """An op that moves pixels; ``apply`` is the one-op case of ``apply_chain``."""

    stage = "geometry"

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        raise NotImplementedError

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        raise NotImplementedError

    def sample_in_chain(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                        outline: np.ndarray) -> dict[str, Any]:
        """Sample knowing where the sheet is in the current frame (after earlier geometric ops)."""
        return self.sample_params(rng, severity, page)

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        warp = self.warp(params, page)
        return remap_chain(image, page, [warp], desk_of([params])), moved_page(page, [warp])

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        return self.measure_warp(params, page, self.warp(params, page), page_outline(page))


def desk_of(params_list: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The desk the sheet lies on: the first op in the chain that sampled one."""
    return next((p for p in params_list if "desk_rgb" in p), None)


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
    step = COARSE_STEP
    src = _walk_nodes(warps, scale, out_w, out_h, step)
    if _interpolation_error(src, *(src_size or (out_w, out_h))) > MAX_MAP_ERROR_PX:
        step = FIELD_STEP
        src = _walk_nodes(warps, scale, out_w, out_h, step)
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


def sheet_shading(page: RenderedPage, warps: Sequence[Warp]) -> Light:
    """The chain's shading (a bent sheet's light) as lighting of the flat page, before any pixel moves.

    Shading is a function of the point on the sheet, so lighting the flat sheet and then moving it
    equals moving it and lighting each photo pixel from where it came. Each warp's shade is evaluated
    where the page's grid points are when that warp acts; the product is one gain on the FIELD_STEP
    grid of the page (a fold's crease included), so the remap needs no gain and its map nodes can be
    16 px apart wherever the geometry allows.
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
        if k < shaded[-1]:  # where the page's points are when the next warp acts
            p = warp.forward(p)
    return Light(gain.reshape(xs.shape).astype(np.float32))


def remap_chain(image: np.ndarray, page: RenderedPage, warps: Sequence[Warp],
                desk_params: dict[str, Any] | None, light: Light | None = None) -> np.ndarray:
    """Apply a chain of warps to ``image`` (a raster of ``page``) with one remap; desk where the sheet is not.

    ``light`` is lighting of the flat sheet still to apply (a capture's shadow and glare): it is applied
    with the sheet's own shading in one pass.
    """
    h, w = image.shape[:2]
    scale = w / page.width
    out_w, out_h = max(1, round(warps[-1].width * scale)), max(1, round(warps[-1].height * scale))
    # The composed map and the desk (numpy, one core) are built on a worker while the page is lit and low-passed.
    maps = None if all(wp.matrix is not None for wp in warps) else \
        later(chain_maps, warps, scale, out_w, out_h, (w, h))
    tone = None if desk_params is None else later(desk_tone, out_h, out_w, desk_params)
    image = antialias((light or Light()).then(sheet_shading(page, warps)).apply(image), print_scale(page, warps))
    # With a desk, the page is warped with an alpha channel and composited (geometry.lay_on_desk).
    src, border = (image, cv2.BORDER_REPLICATE) if desk_params is None else \
        (cv2.cvtColor(image, cv2.COLOR_RGB2RGBA), cv2.BORDER_CONSTANT)
    if maps is None:
        warped = _warp_homographies(src, warps, scale, out_w, out_h, border)
    else:
        map_x, map_y = maps.result()
        # Float maps straight in: OpenCV's 4-channel remap takes them twice as fast as fixed-point maps
        # (6 vs 13 ms CPU on an A4 page at 150 dpi), and 3 channels run alike either way, so converting
        # the maps (another 1.6 ms) buys nothing.
        warped = cv2.remap(src, map_x, map_y, cv2.INTER_LINEAR, borderMode=border, borderValue=0)
    if desk_params is None:
        return warped
    alpha = cv2.extractChannel(warped, 3)  # one contiguous plane: numpy's min over a strided view is slow
    if cv2.minMaxLoc(alpha)[0] == 255:
        return cv2.cvtColor(warped, cv2.COLOR_RGBA2RGB)
    return lay_on_desk(warped, desk_params, alpha, tone.result())


def _warp_homographies(image: np.ndarray, warps: Sequence[Warp], scale: float, out_w: int, out_h: int,
                       border: int) -> np.ndarray:
    m = np.eye(3)
    for wp in warps:
        m = np.asarray(wp.matrix, np.float64) @ m
    to_px = np.diag([scale, scale, 1.0])
    m = to_px @ m @ np.linalg.inv(to_px)
    return cv2.warpPerspective(image, m, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=border, borderValue=0)
