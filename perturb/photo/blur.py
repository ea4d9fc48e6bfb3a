"""Blur: out-of-focus or shaken capture, with sigma scaled to the page's DPI."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op
from synth.records import RenderedPage

# Gaussian sigma in pixels at 150 dpi per severity; a 150-dpi page is the common phone-scan size.
SIGMA_AT_150 = {1: (0.6, 1.2), 2: (1.2, 2.2), 3: (2.2, 4.0)}


def _sharpness(image: np.ndarray) -> float:
    gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    return float(cv2.Laplacian(gray, cv2.CV_32F).var())


class Blur(Op):
    subtype = "blur"
    family = "quality"

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        lo, hi = SIGMA_AT_150[severity]
        sigma150 = float(rng.uniform(lo, hi))
        return {"kind": "gaussian", "sigma_at_150dpi": round(sigma150, 4),
                "sigma_px": round(sigma150 * page.dpi / 150, 4)}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        sigma = float(params["sigma_px"])
        return cv2.GaussianBlur(image, (0, 0), sigmaX=sigma, sigmaY=sigma), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        base = _sharpness(before)
        return {"sigma_px": params["sigma_px"], "sigma_at_150dpi": params["sigma_at_150dpi"],
                "sharpness_ratio": round(_sharpness(after) / base, 4) if base > 0 else None}


register(Blur())
