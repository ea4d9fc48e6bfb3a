"""Keystone: the phone held at an angle, so the page is a trapezoid (non-planar capture, planar part)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.fusion import GeometricOp, Warp
from perturb.photo.geometry import homography_map, page_corners, sample_desk
from synth.records import RenderedPage

# Keystone ratio = shorter / longer of the most unequal pair of opposite page edges.
# 1 slight keystone, 2 trapezoidal or irregular, 3 severe (ladder-shaped).
BINS = {1: (0.86, 0.97), 2: (0.70, 0.86), 3: (0.40, 0.70)}
_TARGET = {1: (0.875, 0.955), 2: (0.72, 0.84), 3: (0.48, 0.68)}
_JITTER = {1: 0.004, 2: 0.012, 3: 0.015}  # corner jitter, fraction of width: "irregular" quads
SIDES = ("top", "bottom", "left", "right")


def keystone_ratio(quad: np.ndarray) -> float:
    edges = np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)  # top, right, bottom, left
    return float(min(min(edges[0], edges[2]) / max(edges[0], edges[2]),
                     min(edges[1], edges[3]) / max(edges[1], edges[3])))


def _quad(side: str, ratio: float, margin: float, jitter: np.ndarray, w: float, h: float) -> np.ndarray:
    """Destination corners (TL, TR, BR, BL) of a page whose ``side`` edge is ``ratio`` times its opposite."""
    # Build with the short edge on top of an upright frame, then turn the frame to put it on ``side``.
    long_is_w = side in ("top", "bottom")
    fw, fh = (w, h) if long_is_w else (h, w)
    a = fw / 2 - margin * w
    depth = fh - 2 * margin * w
    # A page tipped away from the camera also looks shorter, and its far half shrinks most (the homography
    # compresses rows towards the short edge): at ratio 0.5 the page is seen at about 40-50 degrees.
    foreshorten = 0.55 + 0.45 * ratio
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


class Keystone(GeometricOp):
    subtype = "keystone"
    family = "perspective"
    stage_rank = 1

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        lo, hi = _TARGET[severity]
        blo, bhi = BINS[severity]
        for _ in range(50):
            params = {"short_side": SIDES[int(rng.choice(4, p=[0.55, 0.25, 0.1, 0.1]))],
                      "ratio": round(float(rng.uniform(lo, hi)), 4),
                      "margin_frac": round(float(rng.uniform(0.02, 0.05)), 4),
                      "corner_jitter": np.round(rng.uniform(-1, 1, (4, 2)) * _JITTER[severity], 4).tolist()}
            if blo + 0.005 <= keystone_ratio(keystone_quad(params, page)) <= bhi - 0.005:
                break
        return {**params, **sample_desk(rng)}

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        m = cv2.getPerspectiveTransform(page_corners(page).astype(np.float32),
                                        keystone_quad(params, page).astype(np.float32))
        return Warp(page.width, page.height, homography_map(m), homography_map(np.linalg.inv(m)), matrix=m)

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        quad = warp.forward(page_corners(page))
        return {"keystone_ratio": round(keystone_ratio(quad), 4),
                "page_area_frac": round(float(cv2.contourArea(quad.astype(np.float32)))
                                        / (warp.width * warp.height), 4),
                "page_corners": np.round(quad, 2).tolist()}


register(Keystone())
