"""Exposure: the camera metering for a dark room or a bright lamp, crushing the print's contrast."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op, Rubric
from perturb.photo.functional.lighting import expose
from perturb.photo.measure import content_mask, median_u8, sparse_luma
from synth.records import RenderedPage

# Share of the ink-on-paper contrast left: 1 mildly dark or bright, content visible;
# 2 severe, partly hides content; 3 nearly fully black or white.
BINS = {1: (0.5, 0.85), 2: (0.18, 0.5), 3: (0.0, 0.12)}
_TARGET = {1: (0.58, 0.78), 2: (0.25, 0.42), 3: (0.03, 0.08)}
# Nominal print luminances (render.page's paper and ink) used to aim the curve before seeing pixels.
_PAPER, _INK = 249.0 / 255, 25.0 / 255


def _curve_contrast(kind: str, k: float, gamma: float) -> float:
    if kind == "under":
        return k * (_PAPER**gamma - _INK**gamma) / (_PAPER - _INK)
    return k * ((1 - _INK) ** gamma - (1 - _PAPER) ** gamma) / (_PAPER - _INK)


class Exposure(Op):
    subtype = "exposure"
    family = "quality"
    rubric = Rubric("contrast_retained", BINS, "print contrast left, under or over", "%")
    stage = "camera"
    stage_rank = 0

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        kind = "under" if rng.random() < 0.5 else "over"
        gamma = float(rng.uniform(1.0, 1.6))
        target = float(rng.uniform(*_TARGET[severity]))
        return {"kind": kind, "gamma": round(gamma, 4), "target_contrast": round(target, 4),
                "k": round(target / _curve_contrast(kind, 1.0, gamma), 5),
                "hotspot_frac": [round(float(rng.uniform(0.3, 0.7)), 4), round(float(rng.uniform(0.2, 0.6)), 4)],
                "falloff": round(float(rng.uniform(0.02, 0.08)), 4)}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return expose(image, params, page.width, page.height), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        # Medians over every fourth pixel of every fourth row (over 130,000 pixels of an A4 page at 150 dpi):
        # the same medians to a grey level or so, a sixteenth of the work. Histograms under uint8 masks: no
        # boolean gathers of the page.
        b, a = sparse_luma(before, 4), sparse_luma(after, 4)
        paper = cv2.compare(b, 200, cv2.CMP_GT)
        ink = cv2.compare(b, 100, cv2.CMP_LT)
        if page.layout:
            ink = cv2.bitwise_and(ink, content_mask(page, *b.shape).view(np.uint8))
        paper_after = median_u8(a, paper)
        if not cv2.countNonZero(ink):
            return {"contrast_retained": None, "paper_luma": round(paper_after, 2)}
        ink_after = median_u8(a, ink)
        c0 = median_u8(b, paper) - median_u8(b, ink)
        c1 = paper_after - ink_after
        return {"contrast_retained": round(abs(c1) / max(c0, 1.0), 4), "paper_luma": round(paper_after, 2),
                "ink_luma": round(ink_after, 2), "kind": params["kind"]}


register(Exposure())
