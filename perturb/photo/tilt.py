"""Tilt: in-plane rotation of the whole page on a desk, framed as a phone frames it.

The photo keeps the page's pixel count: its shape is the turned sheet's bounding box (plus a desk
margin) and the sheet is scaled to fit, as a phone held a little further back fits the whole turned
sheet on the same sensor. Nothing is cropped; a steeper turn leaves fewer pixels for the print
(``print_scale``), as it does in a real photo, and every later op works on a page-sized image.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.photo import register
from perturb.photo.base import Rubric
from perturb.photo.functional.geometric import Warp, page_corners, tilt_matrix, tilt_warp
from perturb.photo.fusion import GeometricOp, sample_desk
from perturb.photo.measure import corner_angle_deg
from synth.records import RenderedPage

# |angle| in degrees per severity, inside MathReal's bins <=15 / 15-30 / >30 with a safety margin.
ANGLE_DEG = {1: (2.0, 14.0), 2: (16.5, 29.0), 3: (31.5, 45.0)}
BINS = {1: (0.0, 15.0), 2: (15.0, 30.0), 3: (30.0, 90.0)}


class Tilt(GeometricOp):
    subtype = "tilt"
    family = "perspective"
    rubric = Rubric("abs_angle_deg", BINS, "in-plane angle", "degrees", open_low=True)
    stage_rank = 2

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        lo, hi = ANGLE_DEG[severity]
        angle = float(rng.uniform(lo, hi)) * (1 if rng.random() < 0.5 else -1)
        return {"angle_deg": round(angle, 3), "margin_frac": round(float(rng.uniform(0.03, 0.08)), 4),
                **sample_desk(rng)}

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        return tilt_warp(params, page)

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        corners = warp.forward(page_corners(page))
        angle = corner_angle_deg(corners)
        scale = tilt_matrix(params, page)[3]
        return {"angle_deg": round(angle, 3), "abs_angle_deg": round(abs(angle), 3),
                "canvas_growth": round(warp.width * warp.height / (page.width * page.height), 4),
                "print_scale": round(scale, 4), "effective_dpi": round(page.dpi * scale, 1),
                "page_corners": np.round(corners, 2).tolist()}


register(Tilt())
