"""Rotation: the page photographed sideways or upside down (MathReal's 4-way category)."""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.photo import register
from perturb.photo.base import Rubric
from perturb.photo.functional.geometric import Warp, moved_page, page_corners, quarter_turn, quarter_turn_warp
from perturb.photo.fusion import GeometricOp
from perturb.photo.measure import quarter_turn_between
from synth.records import RenderedPage

# MathReal's rotation is a category; severities 1-3 name its three non-upright values.
ROTATION_BY_SEVERITY = {1: "90cw", 2: "90ccw", 3: "180"}


class Rotation(GeometricOp):
    subtype = "rotation"
    family = "perspective"
    rubric = Rubric("rotation", ROTATION_BY_SEVERITY, "turned")
    stage_rank = 4  # how the phone was held: turns the whole frame, last
    after_frame = True

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        return {"rotation": ROTATION_BY_SEVERITY[severity]}

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        return quarter_turn_warp(params, page)

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        # A lone quarter turn is an exact pixel permutation; cv2.rotate is faster than a remap.
        return quarter_turn(image, params["rotation"]), moved_page(page, [self.warp(params, page)])

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        return {"rotation": quarter_turn_between(before, after)}

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        # In a fused chain there is no intermediate image: read the turn off where the top-left corner went.
        tl = warp.forward(page_corners(page)[:1])[0]
        near = {"upright": (0, 0), "90cw": (warp.width, 0), "90ccw": (0, warp.height),
                "180": (warp.width, warp.height)}
        return {"rotation": min(near, key=lambda k: float(np.hypot(*(tl - near[k]))))}


register(Rotation())
