"""Noise: sensor noise of a small phone camera, brighter pixels noisier (shot noise), faint colour speckle."""

from __future__ import annotations

from functools import cache
from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op
from perturb.photo.fields import psnr
from perturb.photo.worker import in_halves
from synth.records import RenderedPage

# PSNR against the clean page, in dB: 1 visible grain, 2 heavy grain, 3 grain swamps thin strokes.
BINS = {1: (30.0, 40.0), 2: (24.0, 30.0), 3: (15.0, 24.0)}
_TARGET = {1: (31.5, 37.0), 2: (25.3, 28.7), 3: (17.5, 22.5)}
_PAPER = 249.0  # nominal paper level the noise is calibrated on; most pixels of a page are paper


@cache
def _z() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(50_000)


def _paper_psnr(sigma: float) -> float:
    err = np.clip(_PAPER + sigma * _z(), 0, 255) - _PAPER
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


def _grain(image: np.ndarray, scale: np.ndarray, colour: np.ndarray, out: np.ndarray, rows: slice, seed: int,
           luma_share: float) -> None:
    """``rows`` of the noisy image into ``out``: luminance grain of spread ``scale`` plus ``colour``."""
    # OpenCV's generator fills a page four times faster than numpy's; it is per thread, so it is seeded here,
    # from the recorded noise_seed and the band, right before use: the grain depends on the params alone.
    cv2.setRNGSeed((seed + 7919 * (rows.start + 1)) % (2**31 - 1))
    lum = np.empty((rows.stop - rows.start, image.shape[1]), np.float32)
    cv2.randn(lum, 0.0, 1.0)
    # Grain in whole grey levels as int16 (rounding adds 1/12 of a level squared to the variance, under
    # 1% of the faintest grain): half the memory traffic of float32, and one saturating add at the end.
    lum = cv2.multiply(lum, scale[rows], scale=luma_share, dtype=cv2.CV_16S)
    cv2.add(image[rows], cv2.add(colour[rows], cv2.merge([lum, lum, lum])), dst=out[rows], dtype=cv2.CV_8U)


class Noise(Op):
    subtype = "noise"
    family = "camera"
    stage = "camera"
    stage_rank = 3

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        target = float(rng.uniform(*_TARGET[severity]))
        return {"target_psnr_db": round(target, 3), "sigma_paper": round(sigma_for_psnr(target), 4),
                "chroma_frac": round(float(rng.uniform(0.15, 0.4)), 4),
                "noise_seed": int(rng.integers(2**31 - 1))}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        h, w = image.shape[:2]
        sigma, chroma = float(params["sigma_paper"]), float(params["chroma_frac"])
        # Shot noise: variance grows with the signal; read noise keeps dark pixels noisy too. The
        # per-pixel spread comes from the pixel's grey level through a 256-entry table.
        levels = np.arange(256, dtype=np.float32)
        table = (sigma * np.sqrt(0.3 + 0.7 * levels / _PAPER)).astype(np.float32)
        scale = cv2.LUT(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), table)
        # Colour noise is demosaiced and smoothed by the phone's noise reduction, so it comes in blotches
        # a few pixels across: drawn (and scaled) at quarter resolution and upsampled.
        seed = int(params["noise_seed"])
        cv2.setRNGSeed(seed)
        qh, qw = max(1, h // 4), max(1, w // 4)
        col = np.empty((qh, qw, 3), np.float32)
        spread = chroma * 1.52  # bilinear 4x upsampling keeps 1/1.52 of the std
        cv2.randn(col, (0.0, 0.0, 0.0), (spread, spread, spread))
        col *= np.ascontiguousarray(scale[2::4, 2::4][:qh, :qw])[..., None]  # the spread at each blotch's centre
        colour = cv2.resize(np.rint(col).astype(np.int16), (w, h), interpolation=cv2.INTER_LINEAR)
        # The per-pixel grain is OpenCV's serial generator and arithmetic: the top and bottom halves of the
        # page are grained on two threads, each generator seeded from noise_seed and its half.
        out = np.empty_like(image)
        luma_share = float(np.sqrt(1 - chroma**2))
        in_halves(lambda rows: _grain(image, scale, colour, out, rows, seed, luma_share), h)
        return out, page

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
