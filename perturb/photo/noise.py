"""Noise: sensor noise of a small phone camera, brighter pixels noisier (shot noise), faint colour speckle."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op, Rubric
from perturb.photo.functional.camera import NOISE_PAPER, add_noise
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


@cache
def _clip_loss() -> tuple[np.ndarray, np.ndarray]:
    """L(t) = E[(Z^2 - t^2) 1{Z > t}] for a standard normal Z at t = 0..9: the share of a unit variance a clip at t
    spreads away (a pixel t spreads below white keeps 1 - L(t) of its noise's variance there)."""
    t = np.linspace(0.0, 9.0, 1801)
    tail = 0.5 * np.array([math.erfc(float(v) / math.sqrt(2.0)) for v in t])
    return t, tail * (1.0 - t * t) + t * np.exp(-0.5 * t * t) / math.sqrt(2.0 * math.pi)


def sigma_on_photo(image: np.ndarray, target_db: float) -> float:
    """The noise spread (``sigma_paper``) that gives ``target_db`` PSNR on this photo, as the measure reads it.

    A pixel of grey level l gets grain of spread sigma f(l) (shot noise: f(l)^2 = 0.3 + 0.7 l / NOISE_PAPER), clipped
    at 0 and 255, so the expected squared error is a sum over the photo's levels (on every fourth row, as the measure
    reads them) and rises with sigma. On a page at the base layer's light this is ``sigma_for_psnr``; under a
    shadow (darker levels, less shot noise) or on paper lit to white (half of each grain clipped away) the same
    sigma read up to 3 dB cleaner (a dim shot's severity 2 at 30.1-30.3 dB, past its bin's 30)."""
    grey = cv2.cvtColor(image[::4], cv2.COLOR_RGB2GRAY)  # the rows the measure reads (OpenCV takes the strided view)
    counts = cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel().astype(np.float64)
    levels = np.flatnonzero(counts).astype(np.float64)
    share = counts[levels.astype(int)] / counts.sum()
    f = np.sqrt(0.3 + 0.7 * levels / NOISE_PAPER)
    t, loss = _clip_loss()
    want = 255.0**2 / 10 ** (target_db / 10)

    def mse(sigma: float) -> float:
        spread = sigma * f
        keep = 1.0 - np.interp((255.0 - levels) / spread, t, loss) - np.interp(levels / spread, t, loss)
        return float(np.sum(share * spread * spread * keep))

    # Unclipped, the error grows as sigma squared; clipping only bends that, so scaling sigma by the square root of
    # the ratio to the wanted error converges in a few steps (to 0.01 % of sigma: 0.001 dB).
    sigma = math.sqrt(want / float(np.sum(share * f * f)))
    for _ in range(20):
        step = math.sqrt(want / max(mse(sigma), 1e-12))
        sigma = min(max(sigma * step, 0.05), 200.0)
        if abs(step - 1.0) < 1e-4:
            break
    return sigma


class Noise(Op):
    subtype = "noise"
    family = "camera"
    rubric = Rubric("psnr_db", BINS, "PSNR", "dB")
    stage = "camera"
    stage_rank = 3
    adds_sensor_noise = True
    samples_on_photo = True  # aims its spread at the photo's own levels (sample_in_photo)

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        target = float(rng.uniform(*_TARGET[severity]))
        return {"target_psnr_db": round(target, 3), "sigma_paper": round(sigma_for_psnr(target), 4),
                "chroma_frac": round(float(rng.uniform(0.15, 0.4)), 4),
                "noise_seed": int(rng.integers(2**31 - 1))}

    def sample_in_photo(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                        image: np.ndarray) -> dict[str, Any]:
        """``sample_params``, with the spread aimed at the photo the noise lands on (``sigma_on_photo``)."""
        params = self.sample_params(rng, severity, page)
        return {**params, "sigma_paper": round(sigma_on_photo(image, params["target_psnr_db"]), 4)}

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
