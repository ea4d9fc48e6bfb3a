"""Keystone: the phone held at an angle, so the page is a trapezoid (non-planar capture, planar part)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Rubric, quantile
from perturb.photo.functional.geometric import Warp, keystone_quad, keystone_warp, page_corners
from perturb.photo.fusion import GeometricOp, sample_desk
from perturb.photo.measure import keystone_ratio
from synth.records import RenderedPage

# Keystone ratio = shorter / longer of the most unequal pair of opposite page edges.
# 1 slight keystone, 2 trapezoidal or irregular, 3 severe (ladder-shaped).
BINS = {1: (0.86, 0.97), 2: (0.70, 0.86), 3: (0.40, 0.70)}
# Where each severity draws inside its bin: 1 and 2 well apart, so a page's severity 2 never reads like its 1 (with
# 0.875-0.955 and 0.72-0.84 both readers read severity 1 worse than 2 on 4-6 of 24 pages: results_cer.md).
_TARGET = {1: (0.9, 0.96), 2: (0.71, 0.78), 3: (0.48, 0.68)}
_JITTER = {1: 0.004, 2: 0.012, 3: 0.015}  # corner jitter, fraction of width: "irregular" quads
SIDES = ("top", "bottom", "left", "right")


class Keystone(GeometricOp):
    subtype = "keystone"
    family = "perspective"
    rubric = Rubric("keystone_ratio", BINS, "edge ratio (short to long)")
    stage_rank = 1

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        # Common random numbers across severities: the same draws in the same order at every severity (which edge
        # is nearer, the ratio's quantile, the margin, the corners' jitter), so a page's severities are one camera
        # pose tipped further. A quad whose jitter pushes the ratio out of its bin keeps its shape with the jitter
        # halved (never redrawn, which would change the pose with the severity).
        blo, bhi = BINS[severity]
        # The far edge: a worksheet on a desk is shot from its foot (the top furthest) or a side; from beyond its top
        # edge the photo would come out upside down.
        side = SIDES[int(rng.choice(4, p=[0.7, 0.06, 0.12, 0.12]))]
        ratio = quantile(_TARGET[severity], float(rng.random()))
        margin = float(rng.uniform(0.02, 0.05))
        jitter = rng.uniform(-1, 1, (4, 2)) * _JITTER[severity]
        for _ in range(8):
            params = {"short_side": side, "ratio": round(ratio, 4), "margin_frac": round(margin, 4),
                      "corner_jitter": np.round(jitter, 4).tolist()}
            if blo + 0.005 <= keystone_ratio(keystone_quad(params, page)) <= bhi - 0.005:
                break
            jitter = jitter / 2
        return {**params, **sample_desk(rng)}

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        return keystone_warp(params, page)

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        quad = warp.forward(page_corners(page))
        return {"keystone_ratio": round(keystone_ratio(quad), 4),
                "page_area_frac": round(float(cv2.contourArea(quad.astype(np.float32)))
                                        / (warp.width * warp.height), 4),
                "page_corners": np.round(quad, 2).tolist()}


register(Keystone())
