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
from perturb.photo.fusion import GeometricOp, Warp
from perturb.photo.geometry import homography_map, page_corners, sample_desk
from synth.records import RenderedPage

# |angle| in degrees per severity, inside MathReal's bins <=15 / 15-30 / >30 with a safety margin.
ANGLE_DEG = {1: (2.0, 14.0), 2: (16.5, 29.0), 3: (31.5, 45.0)}
BINS = {1: (0.0, 15.0), 2: (15.0, 30.0), 3: (30.0, 90.0)}


def tilt_matrix(params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, int, int, float]:
    """Homography page -> photo (counter-clockwise for positive angles), the photo size and the print scale."""
    a = np.deg2rad(float(params["angle_deg"]))
    c, s = np.cos(a), np.sin(a)
    rot = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]])  # counter-clockwise on screen (y points down)
    centre = np.array([page.width / 2, page.height / 2])
    corners = (page_corners(page) - centre) @ rot[:2, :2].T
    margin = float(params["margin_frac"]) * page.width
    half = np.abs(corners).max(axis=0) + margin
    # Scale the turned sheet and its margin to the page's pixel count (never enlarge it).
    scale = min(1.0, float(np.sqrt(page.width * page.height / (4 * half[0] * half[1]))))
    width, height = int(np.ceil(2 * half[0] * scale)), int(np.ceil(2 * half[1] * scale))
    to_origin = np.array([[1, 0, -centre[0]], [0, 1, -centre[1]], [0, 0, 1]])
    to_canvas = np.array([[scale, 0, width / 2], [0, scale, height / 2], [0, 0, 1]])
    return to_canvas @ rot @ to_origin, width, height, scale


def corner_angle_deg(corners: np.ndarray) -> float:
    """Counter-clockwise angle of the page's top edge (corners in TL, TR, BR, BL order)."""
    dx, dy = corners[1] - corners[0]
    return float(np.degrees(np.arctan2(-dy, dx)))


class Tilt(GeometricOp):
    subtype = "tilt"
    family = "perspective"
    stage_rank = 2

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        lo, hi = ANGLE_DEG[severity]
        angle = float(rng.uniform(lo, hi)) * (1 if rng.random() < 0.5 else -1)
        return {"angle_deg": round(angle, 3), "margin_frac": round(float(rng.uniform(0.03, 0.08)), 4),
                **sample_desk(rng)}

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        m, w, h, _ = tilt_matrix(params, page)
        return Warp(w, h, homography_map(m), homography_map(np.linalg.inv(m)), matrix=m)

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
