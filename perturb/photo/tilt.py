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
from perturb.photo.base import Rubric, quantile
from perturb.photo.functional.geometric import Warp, page_corners, tilt_matrix, tilt_warp
from perturb.photo.fusion import GeometricOp, sample_desk
from perturb.photo.measure import corner_angle_deg, weighted_median, weighted_quantile
from synth.records import RenderedPage

# |angle| in degrees per severity, inside MathReal's bins <=15 / 15-30 / >30 with a safety margin.
ANGLE_DEG = {1: (2.0, 14.0), 2: (16.5, 29.0), 3: (31.5, 45.0)}
BINS = {1: (0.0, 15.0), 2: (15.0, 30.0), 3: (30.0, 90.0)}
# On a sheet an earlier op bent or tipped, how far inside its severity's bin every piece of the writing is kept.
LEAN_MARGIN_DEG = 0.5


def aim_past_lean(angle: float, severity: int, lean: tuple[np.ndarray, np.ndarray]) -> float:
    """The turn that makes a bent or tipped sheet's writing lean by ``angle`` (as drawn for a flat sheet) and
    keeps the writing inside the severity's bin.

    ``lean`` is how the writing leans before the turn (``measure.text_lean``); a turn adds to every piece's
    angle. A sheet bent in an S leans its lines near the bend by several degrees more than the sheet: turned
    by the drawn angle, the writing there left the bin (severity-1 photos with lines at 20-29 degrees). The
    writing's median angle is put at ``angle``'s quantile of the range that keeps every piece in the bin
    (``LEAN_MARGIN_DEG`` inside it), the same draw at every page. A severely curled sheet's writing can spread
    wider than a bin: then the range that keeps its middle 90 % (by length) in the bin, else that middle centred.
    """
    values, weights = lean
    sign = 1.0 if angle >= 0 else -1.0
    median = weighted_median(values, weights)
    spread = sign * (values - median)  # each piece's angle is sign * (m + spread) once the median is at sign * m
    lo, hi = ANGLE_DEG[severity]
    b_lo, b_hi = BINS[severity]
    top = b_hi - LEAN_MARGIN_DEG
    floor = -top if severity == 1 else b_lo + LEAN_MARGIN_DEG  # severity 1's bin is open below: any |angle| <= top
    u = min(max((abs(angle) - lo) / (hi - lo), 0.0), 1.0)
    middle = (weighted_quantile(spread, weights, 0.05), weighted_quantile(spread, weights, 0.95))
    for low, high in ((float(spread.min()), float(spread.max())), middle):
        room = (floor - low, top - high)  # at severity 1 the median may cross to the other side of upright
        if room[0] <= room[1]:  # the drawn range where it meets the room, else the room
            drawn = (max(lo, room[0]), min(hi, room[1]))
            return sign * quantile(drawn if drawn[0] <= drawn[1] else room, u) - median
        if room[1] - room[0] >= -2 * LEAN_MARGIN_DEG:  # it fits the bin, not inside its margin: centred
            break
    else:
        low, high = middle
    return sign * (floor - low + top - high) / 2 - median


class Tilt(GeometricOp):
    subtype = "tilt"
    family = "perspective"
    rubric = Rubric("abs_angle_deg", BINS, "in-plane angle", "degrees", open_low=True)
    stage_rank = 2
    reads_lean = True  # after a bent or tipped sheet, graded on how its writing leans (``aim_past_lean``)

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        lo, hi = ANGLE_DEG[severity]
        angle = float(rng.uniform(lo, hi)) * (1 if rng.random() < 0.5 else -1)
        return {"angle_deg": round(angle, 3), "margin_frac": round(float(rng.uniform(0.03, 0.08)), 4),
                **sample_desk(rng)}

    def sample_in_chain(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                        outline: np.ndarray, area: float | None = None,
                        lean: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
        params = self.sample_params(rng, severity, page)
        if lean is not None:
            params["angle_deg"] = round(aim_past_lean(params["angle_deg"], severity, lean), 3)
        return params

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        return tilt_warp(params, page)

    def measure_in_chain(self, params: dict[str, Any], page: RenderedPage, warp: Warp, outline: np.ndarray,
                         lean: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
        """After an op that bent or tipped the sheet, the tilt is the writing's: its median angle (what a reader or a
        deskewer straightens), with the range of its pieces' angles; the sheet's own turn as ``sheet_angle_deg``."""
        measured = self.measure_warp(params, page, warp, outline)
        if lean is None:
            return measured
        values, weights = lean
        turned = values + float(params["angle_deg"])
        angle = weighted_median(turned, weights)
        return {**measured, "angle_deg": round(angle, 3), "abs_angle_deg": round(abs(angle), 3),
                "sheet_angle_deg": measured["angle_deg"],
                "text_angle_range_deg": [round(float(np.abs(turned).min()), 3), round(float(np.abs(turned).max()), 3)]}

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
