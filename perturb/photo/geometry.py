"""Page geometry for the geometric ops: moving layout boxes and laying the warped page on a desk."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import cv2
import numpy as np

from perturb.photo.fields import upsample
from perturb.photo.worker import in_halves
from synth.records import Box, RenderedPage

PointMap = Callable[[np.ndarray], np.ndarray]

# Desk and table tops seen around a photographed page: light wood, dark wood, grey laminate, cloth.
DESK_RGB = ((168, 128, 88), (98, 68, 46), (122, 121, 116), (64, 70, 82), (140, 112, 84))


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


def sample_desk(rng: np.random.Generator) -> dict[str, Any]:
    base = np.array(DESK_RGB[int(rng.integers(len(DESK_RGB)))], float)
    rgb = np.clip(base * rng.uniform(0.85, 1.1), 0, 255).round().astype(int).tolist()
    return {"desk_rgb": rgb, "desk_seed": int(rng.integers(2**31 - 1)),
            "desk_grain_angle_deg": round(float(rng.uniform(-20, 20)), 2)}


def desk_tone(height: int, width: int, params: dict[str, Any]) -> np.ndarray:
    """A wood-grain-like table top's brightness (1 = its base colour ``desk_rgb``), deterministic from the
    desk params, at quarter resolution of (height, width), float32.

    The desk is out of the reading area and out of focus, so it is built at quarter resolution and
    upsampled once, as one grey plane (``lay_on_desk``).
    """
    rng = np.random.default_rng(int(params["desk_seed"]))
    gh, gw = max(2, height // 4), max(2, width // 4)
    blotch = cv2.resize(rng.normal(0, 1, (max(2, gh // 16), max(2, gw // 16))).astype(np.float32), (gw, gh),
                        interpolation=cv2.INTER_CUBIC)
    a = np.deg2rad(float(params.get("desk_grain_angle_deg", 0.0)))
    # Distance across the grain, by broadcasting a column of rows against a row of columns.
    across = np.add.outer(np.arange(gh, dtype=np.float32) * np.float32(np.cos(a)),
                          np.arange(gw, dtype=np.float32) * np.float32(-np.sin(a)))
    wobble = cv2.resize(rng.normal(0, 1, (max(2, gh // 24), max(2, gw // 6))).astype(np.float32), (gw, gh),
                        interpolation=cv2.INTER_CUBIC)
    grain = np.sin(across * np.float32(0.9) + np.float32(3.0) * wobble)
    grain += np.sin(across * np.float32(0.23) + np.float32(1.7) * wobble)
    # tone = 1 + 0.05 blotch + 0.05 * (mean of the two grain waves), plus fine noise from OpenCV's generator
    # (seeded from the params), four times faster than numpy's.
    cv2.setRNGSeed(int(params["desk_seed"]))
    fine = np.empty((gh, gw), np.float32)
    cv2.randn(fine, 0.0, 0.015)
    return cv2.scaleAdd(blotch, 0.05, cv2.scaleAdd(grain, 0.025, fine + np.float32(1.0)))


def lay_on_desk(warped: np.ndarray, params: dict[str, Any], alpha: np.ndarray | None = None,
                tone: np.ndarray | None = None) -> np.ndarray:
    """Composite a warped page over the desk, with a soft contact shadow; RGB out.

    ``warped`` is RGBA and premultiplied: the page was warped with an opaque alpha channel and a
    transparent black border, so at the sheet's edge its colour is already weighted by coverage
    and "page over desk" is ``rgb + (1 - alpha) * desk``. One 4-channel warp costs less than
    warping the page and a coverage mask separately. ``alpha`` is its alpha plane and ``tone`` the desk's
    ``desk_tone``, if the caller has them.
    """
    h, w = warped.shape[:2]
    alpha = cv2.extractChannel(warped, 3) if alpha is None else alpha  # the caller may have it already
    # The contact shadow is a blur of the sheet's footprint at 1/8 resolution: sampling the coverage
    # there (every 8th pixel) is as good as averaging it, and far cheaper.
    small = alpha[4::8, 4::8].astype(np.float32)
    tone = desk_tone(h, w, params) if tone is None else tone
    tone = tone * upsample(1 - (0.45 / 255) * cv2.GaussianBlur(small, (0, 0), 2.0), *tone.shape)
    # The desk is a grey tone times one colour: what shows of it, (1 - alpha) * tone, is worked out in one
    # 8-bit plane (tone in steps of 1/255 of its largest value) and coloured by one multiply with a plane
    # of the colour scaled by that largest value. A third of the upsampling of a colour desk.
    top = max(float(tone.max()), 1e-3)
    tone_u8 = np.clip(tone * (255.0 / top) + 0.5, 0, 255).astype(np.uint8)
    shows = cv2.multiply(cv2.bitwise_not(alpha), cv2.resize(tone_u8, (w, h), interpolation=cv2.INTER_LINEAR),
                         scale=1 / 255)
    rgb = np.clip(np.asarray(params["desk_rgb"], np.float64) * top, 0, 255).round().astype(np.uint8)
    colour = np.tile(rgb, w).reshape(1, w, 3)  # one row, repeated below: numpy fills a 3-vector pixel by pixel
    out = cv2.cvtColor(warped, cv2.COLOR_RGBA2RGB)

    def rows(r: slice) -> None:  # OpenCV's per-pixel arithmetic is serial: two halves side by side
        n = r.stop - r.start
        desk = cv2.multiply(cv2.cvtColor(shows[r], cv2.COLOR_GRAY2RGB), np.broadcast_to(colour, (n, w, 3)).copy(),
                            scale=1 / 255)
        cv2.add(out[r], desk, dst=out[r])

    in_halves(rows, h)
    return out

