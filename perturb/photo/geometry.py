"""Page geometry for the geometric ops: moving layout boxes and laying the warped page on a desk."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import cv2
import numpy as np

from perturb.photo.fields import upsample
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
    t = np.linspace(0.0, 1.0, edge_samples)
    boxes = []
    for b in page.layout:
        xs = np.concatenate([b.x0 + (b.x1 - b.x0) * t, np.full_like(t, b.x1),
                             b.x1 - (b.x1 - b.x0) * t, np.full_like(t, b.x0)])
        ys = np.concatenate([np.full_like(t, b.y0), b.y0 + (b.y1 - b.y0) * t,
                             np.full_like(t, b.y1), b.y1 - (b.y1 - b.y0) * t])
        p = forward(np.stack([xs, ys], axis=1))
        x0, x1 = (min(max(float(v), 0.0), float(width)) for v in (p[:, 0].min(), p[:, 0].max()))
        y0, y1 = (min(max(float(v), 0.0), float(height)) for v in (p[:, 1].min(), p[:, 1].max()))
        boxes.append(Box(b.kind, b.ref, round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2)))
    return replace(page, width=width, height=height, layout=tuple(boxes))


def sample_desk(rng: np.random.Generator) -> dict[str, Any]:
    base = np.array(DESK_RGB[int(rng.integers(len(DESK_RGB)))], float)
    rgb = np.clip(base * rng.uniform(0.85, 1.1), 0, 255).round().astype(int).tolist()
    return {"desk_rgb": rgb, "desk_seed": int(rng.integers(2**31 - 1)),
            "desk_grain_angle_deg": round(float(rng.uniform(-20, 20)), 2)}


def desk(height: int, width: int, params: dict[str, Any]) -> np.ndarray:
    """A wood-grain-like table top, deterministic from the desk params."""
    rng = np.random.default_rng(int(params["desk_seed"]))
    gh, gw = max(2, height // 4), max(2, width // 4)
    blotch = cv2.resize(rng.normal(0, 1, (max(2, gh // 16), max(2, gw // 16))).astype(np.float32), (gw, gh),
                        interpolation=cv2.INTER_CUBIC)
    ys, xs = np.mgrid[0:gh, 0:gw].astype(np.float32)
    a = np.deg2rad(float(params.get("desk_grain_angle_deg", 0.0)))
    across = -xs * np.sin(a) + ys * np.cos(a)
    wobble = cv2.resize(rng.normal(0, 1, (max(2, gh // 24), max(2, gw // 6))).astype(np.float32), (gw, gh),
                        interpolation=cv2.INTER_CUBIC)
    grain = np.sin(across * 0.9 + 3.0 * wobble) * 0.5 + np.sin(across * 0.23 + 1.7 * wobble) * 0.5
    shade = 1.0 + 0.05 * blotch + 0.05 * grain
    # Built at half resolution: the desk is out of the reading area and slightly out of focus anyway.
    hh, hw = max(2, height // 2), max(2, width // 2)
    gain = upsample(shade, hh, hw) + rng.standard_normal((hh, hw), dtype=np.float32) * np.float32(0.015)
    rgb = np.asarray(params["desk_rgb"], np.float32)
    half = np.clip(gain[..., None] * rgb, 0, 255).astype(np.uint8)
    return cv2.resize(half, (width, height), interpolation=cv2.INTER_LINEAR)


def lay_on_desk(warped: np.ndarray, coverage: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """Blend a warped page over the desk by its coverage (0..1), with a soft contact shadow."""
    h, w = warped.shape[:2]
    table = desk(h, w, params)
    small = cv2.resize(coverage, (max(2, w // 8), max(2, h // 8)), interpolation=cv2.INTER_AREA)
    shadow = cv2.GaussianBlur(small, (0, 0), 2.0)
    table = cv2.multiply(table, cv2.merge([1 - 0.45 * upsample(shadow, h, w)] * 3), dtype=cv2.CV_8U)
    cov = np.ascontiguousarray(coverage, np.float32)
    return cv2.blendLinear(warped, table, cov, 1.0 - cov)


def warp_homography(image: np.ndarray, matrix: np.ndarray, width: int, height: int,
                    desk_params: dict[str, Any]) -> np.ndarray:
    m = np.asarray(matrix, np.float64)
    flags = cv2.INTER_LINEAR
    warped = cv2.warpPerspective(image, m, (width, height), flags=flags, borderMode=cv2.BORDER_REPLICATE)
    ones = np.full(image.shape[:2], 255, np.uint8)
    cov = cv2.warpPerspective(ones, m, (width, height), flags=flags, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return lay_on_desk(warped, cov.astype(np.float32) / 255.0, desk_params)


def warp_remap(image: np.ndarray, map_x: np.ndarray, map_y: np.ndarray,
               desk_params: dict[str, Any]) -> np.ndarray:
    warped = cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    ones = np.full(image.shape[:2], 255, np.uint8)
    cov = cv2.remap(ones, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return lay_on_desk(warped, cov.astype(np.float32) / 255.0, desk_params)
