"""Noise: sensor noise of a small phone camera, brighter pixels noisier (shot noise), faint colour speckle."""

from __future__ import annotations

from functools import cache
from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op, Rubric
from perturb.photo.functional.camera import add_noise
from perturb.photo.measure import psnr
from synth.records import RenderedPage

# PSNR against the clean page, in dB: 1 visible grain, 2 heavy grain, 3 grain swamps thin strokes.
BINS = {1: (30.0, 40.0), 2: (24.0, 30.0), 3: (15.0, 24.0)}
_TARGET = {1: (31.5, 37.0), 2: (25.3, 28.7), 3: (17.5, 22.5)}


@cache
def _z() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(50_000)


# Paper as the camera sees it: the base layer's room light leaves white paper at about 215-245 (NOISE_PAPER is
# the printed page's level the grain's shot noise is scaled on).
PAPER_IN_PHOTO = 232.0


def _paper_psnr(sigma: float) -> float:
    err = np.clip(PAPER_IN_PHOTO + sigma * _z(), 0, 255) - PAPER_IN_PHOTO
    return float(20 * np.log10(255 / np.sqrt(np.mean(err**2))))


@cache
def _psnr_table() -> tuple[np.ndarray, np.ndarray]:
    """PSNR of paper plus noise at 400 log-spaced spreads, once per process (PSNR falls as sigma grows)."""
    sigmas = np.geomspace(0.1, 150.0, 400)
    return sigmas, np.array([_paper_psnr(float(s)) for s in sigmas])


def sigma_for_psnr(target_db: float) -> float:
    """The noise spread that gives ``target_db`` PSNR on paper, interpolated in the table (error < 0.01 dB)."""
    sigmas, db = _psnr_table()
    return float(np.interp(-target_db, -db, sigmas))


class Noise(Op):
    subtype = "noise"
    family = "camera"
    rubric = Rubric("psnr_db", BINS, "PSNR", "dB")
    stage = "camera"
    stage_rank = 3
    adds_sensor_noise = True

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        target = float(rng.uniform(*_TARGET[severity]))
        return {"target_psnr_db": round(target, 3), "sigma_paper": round(sigma_for_psnr(target), 4),
                "chroma_frac": round(float(rng.uniform(0.15, 0.4)), 4),
                "noise_seed": int(rng.integers(2**31 - 1))}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return add_noise(image, params), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        # Every fourth row (over half a million pixels of an A4 page at 150 dpi): the same figures to well
        # within the rubric's margins, a quarter of the work.
        b, a = before[::4], after[::4]
        # PSNR and the noise's spread from one difference: its mean square and its mean.
        diff = cv2.subtract(a, b, dtype=cv2.CV_16S)
        n = max(diff.size, 1)
        mse = cv2.norm(diff, cv2.NORM_L2SQR) / n
        mean = sum(cv2.sumElems(diff)) / n
        return {"psnr_db": round(10 * float(np.log10(255.0**2 / mse)), 3) if mse > 0 else psnr(b, a),
                "noise_std": round(float(np.sqrt(max(mse - mean * mean, 0.0))), 3)}


register(Noise())
