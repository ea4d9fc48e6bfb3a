"""Bleed-through: print from the reverse side showing through thin paper, mirrored and diffused.

The reverse side is a real other page, handed in by reference (``degrade(..., reverse=...)``;
the pipeline renders a different problem for it) and recorded as ``source: reverse_page`` with
its ``reverse_ref``. Without one (a lone page in a notebook or a benchmark) the op falls back to
this page's own print, mirrored and shifted so its lines fall between the front lines, recorded
as ``source: self_mirrored``.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import DegradationError, Op, Rubric
from perturb.photo.functional.ink import show_through
from perturb.photo.measure import luma
from synth.records import RenderedPage

# Darkness of the bleed relative to the front print's contrast:
# 1 slight, no effect; 2 heavy, partly obscures; 3 as dark as the front, which it obscures.
BINS = {1: (0.04, 0.2), 2: (0.2, 0.5), 3: (0.5, 1.0)}
_STRENGTH = {1: (0.07, 0.15), 2: (0.26, 0.42), 3: (0.62, 0.9)}
_DIFFUSION_AT_150 = {1: (1.0, 1.6), 2: (0.8, 1.3), 3: (0.5, 0.9)}  # Gaussian sigma, px at 150 dpi


def _reverse_print(image: np.ndarray, params: dict[str, Any]) -> tuple[np.ndarray, list[float]]:
    """The reverse side's luma as seen through the sheet (mirrored left-right), and its offset."""
    h, w = image.shape[:2]
    if params["source"] == "self_mirrored":
        return cv2.flip(luma(image), 1), params["offset_frac"]
    reverse = params.get("_reverse")
    if reverse is None:
        raise DegradationError("bleed_through params say source=reverse_page; replaying them needs the same"
                               " reverse page: pass degrade(..., reverse=ReversePage(pixels, ref))")
    back = luma(reverse)
    if back.shape != (h, w):
        back = cv2.resize(back, (w, h), interpolation=cv2.INTER_AREA)
    return cv2.flip(back, 1), params["duplex_offset_frac"]


class BleedThrough(Op):
    subtype = "bleed_through"
    family = "interference"
    rubric = Rubric("bleed_contrast", BINS, "reverse print's contrast", "% of the front's")
    stage = "reverse"
    uses_reverse = True

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        return {"source": "self_mirrored", "strength": round(float(rng.uniform(*_STRENGTH[severity])), 4),
                "diffusion_px": round(float(rng.uniform(*_DIFFUSION_AT_150[severity])) * page.dpi / 150, 4),
                # Shifted so mirrored lines land between and across the front lines.
                "offset_frac": [round(float(rng.uniform(-0.3, 0.0)), 4),
                                round(float(rng.uniform(0.006, 0.03) * rng.choice([-1, 1])), 4)],
                # A duplex printer's front-to-back misalignment, a millimetre or two.
                "duplex_offset_frac": np.round(rng.uniform(-0.012, 0.012, 2), 4).tolist(),
                "tint": [1.0, round(float(rng.uniform(0.97, 1.0)), 4), round(float(rng.uniform(0.9, 0.97)), 4)]}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        back, offset = _reverse_print(image, params)
        return show_through(image, back, offset, params), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        b, a = luma(before).astype(np.float32), luma(after).astype(np.float32)
        paper_level = float(np.median(b[b > 200])) if (b > 200).any() else 255.0
        ink_level = float(b.min())  # darkest front print; thin strokes at low dpi are rarely fully dark
        front_paper = b > 200
        darkening = (b - a)[front_paper]
        bleed = float(np.percentile(darkening, 99.9)) if darkening.size else 0.0
        return {"bleed_contrast": round(bleed / max(paper_level - ink_level, 1.0), 4),
                "bleed_area_frac": round(float((darkening > 0.1 * (paper_level - ink_level)).mean()), 4)}


register(BleedThrough())
