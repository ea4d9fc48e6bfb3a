"""Blur: out-of-focus or shaken capture, with sigma scaled to the page's DPI."""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.photo import register
from perturb.photo.base import Op, Rubric
from perturb.photo.functional.camera import blur, kernel_for
from perturb.photo.measure import kernel_spread, sharpness
from synth.records import RenderedPage

# Gaussian sigma in pixels at 150 dpi per severity; a 150-dpi page is the common phone-scan size.
# Defocus (disk) and motion (line) kernels are graded by the same per-axis spread: a disk of radius
# r spreads r/2, a line of length L spreads L/sqrt(12) along itself.
SIGMA_AT_150 = {1: (0.6, 1.2), 2: (1.2, 2.2), 3: (2.2, 4.0)}
KIND_WEIGHTS = {"gaussian": 0.5, "defocus": 0.25, "motion": 0.25}


class Blur(Op):
    subtype = "blur"
    family = "quality"
    rubric = Rubric("sigma_at_150dpi", SIGMA_AT_150, "Gaussian sigma at 150 dpi", "px")
    stage = "camera"
    stage_rank = 1

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        kind = str(rng.choice(list(KIND_WEIGHTS), p=list(KIND_WEIGHTS.values())))
        lo, hi = SIGMA_AT_150[severity]
        sigma150 = float(rng.uniform(lo, hi))
        sigma = sigma150 * page.dpi / 150
        params: dict[str, Any] = {"kind": kind, "sigma_at_150dpi": round(sigma150, 4), "sigma_px": round(sigma, 4)}
        if kind == "defocus":
            params["radius_px"] = round(2 * sigma, 4)
        elif kind == "motion":
            params["length_px"] = round(sigma * np.sqrt(12), 4)
            params["angle_deg"] = round(float(rng.uniform(0, 180)), 2)
        return params

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return blur(image, params), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        base = sharpness(before)
        kernel = kernel_for(params)
        spread = float(params["sigma_px"]) if kernel is None else kernel_spread(kernel)
        return {"kind": params["kind"], "sigma_px": params["sigma_px"], "sigma_at_150dpi": params["sigma_at_150dpi"],
                "kernel_spread_px": round(spread, 4),
                "sharpness_ratio": round(sharpness(after) / base, 4) if base > 0 else None}


register(Blur())
