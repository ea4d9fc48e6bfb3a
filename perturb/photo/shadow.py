"""Shadow: a hand or phone blocking the light, a soft-edged dark region over part of the page."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op
from perturb.photo.fields import apply_gain, bisect_coverage, coarse_content, content_mask, grid, luma, smoothstep
from synth.records import RenderedPage

# MathReal bins on the share of the content (text boxes) in shadow: 1-30 / 30-60 / >60 %.
BINS = {1: (0.01, 0.30), 2: (0.30, 0.60), 3: (0.60, 1.0)}
_TARGET = {1: (0.06, 0.26), 2: (0.35, 0.55), 3: (0.66, 0.95)}
# A pixel counts as shadowed where its light drops by more than half the shadow's depth.
_HALF = 0.5


def shadow_strength(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int, height: int) -> np.ndarray:
    """0 (lit) .. 1 (full shadow) at page pixel coordinates."""
    a = np.deg2rad(float(params["direction_deg"]))
    u, v = xs / width - 0.5, ys / width - 0.5 * height / width  # width-relative coordinates
    along = u * np.cos(a) + v * np.sin(a)
    across = -u * np.sin(a) + v * np.cos(a)
    edge = sum(amp * np.sin(freq * across + phase) for amp, freq, phase in params["edge_waves"])
    # Light leaking round the occluder makes the shadow uneven, lighter in broad low-frequency patches.
    leak = 1.0 - float(params["unevenness"]) * (0.5 + 0.5 * np.sin(7.0 * across + 3.0 * along))
    return smoothstep((along + edge - float(params["offset"])) / float(params["softness"]) + 0.5) * leak


def shadow_gain(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int, height: int) -> np.ndarray:
    s = shadow_strength(params, xs, ys, width, height)
    tint = np.asarray(params["tint"], np.float32)  # shadows in room light are slightly cool
    return (1.0 - float(params["depth"]) * s[..., None] * tint).astype(np.float32)


class Shadow(Op):
    subtype = "shadow"
    family = "quality"
    stage = "lighting"

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        xs, ys, mask = coarse_content(page)
        target = float(rng.uniform(*_TARGET[severity]))
        params: dict[str, Any] = {
            "direction_deg": round(float(rng.uniform(0, 360)), 2),
            "edge_waves": [[round(float(rng.uniform(0.01, 0.04)) / k, 4), round(float(rng.uniform(2, 5)) * k, 3),
                            round(float(rng.uniform(0, 2 * np.pi)), 3)] for k in (1, 2)],
            "softness": round(float(rng.uniform(0.03, 0.09)), 4),
            "depth": round(float(rng.uniform(0.3, 0.5)), 4),
            "unevenness": round(float(rng.uniform(0.0, 0.2)), 4),
            "tint": [round(float(rng.uniform(1.0, 1.06)), 4), 1.0, round(float(rng.uniform(0.9, 0.97)), 4)],
        }
        # Slide the shadow edge until it covers the target share of the content (coverage grows with offset down).
        offset = bisect_coverage(
            lambda o: shadow_strength({**params, "offset": o}, xs, ys, page.width, page.height),
            mask, target, -1.5, 1.5, grows=False)
        params["offset"] = round(offset, 5)
        params["target_content_coverage"] = round(target, 4)
        return params

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        xs, ys = grid(page.height, page.width)
        return apply_gain(image, shadow_gain(params, xs, ys, page.width, page.height)), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        # Light ratio after/before on a coarse grid; shadowed where it fell by more than half the depth.
        gh, gw = grid(page.height, page.width)[0].shape
        b = cv2.resize(luma(before), (gw, gh), interpolation=cv2.INTER_AREA).astype(np.float32)
        a = cv2.resize(luma(after), (gw, gh), interpolation=cv2.INTER_AREA).astype(np.float32)
        shadowed = a / np.maximum(b, 1.0) < 1.0 - _HALF * float(params["depth"])
        mask = content_mask(page, gh, gw)
        return {"page_coverage": round(float(shadowed.mean()), 4),
                "content_coverage": round(float(shadowed[mask].mean()), 4) if mask.any() else None}


register(Shadow())
