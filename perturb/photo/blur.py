"""Blur: out-of-focus or shaken capture, with sigma scaled to the page's DPI."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op
from perturb.photo.fields import pooled_std
from synth.records import RenderedPage

# Gaussian sigma in pixels at 150 dpi per severity; a 150-dpi page is the common phone-scan size.
# Defocus (disk) and motion (line) kernels are graded by the same per-axis spread: a disk of radius
# r spreads r/2, a line of length L spreads L/sqrt(12) along itself.
SIGMA_AT_150 = {1: (0.6, 1.2), 2: (1.2, 2.2), 3: (2.2, 4.0)}
KIND_WEIGHTS = {"gaussian": 0.5, "defocus": 0.25, "motion": 0.25}
_SUPERSAMPLE = 8


def disk_kernel(radius: float) -> np.ndarray:
    """Anti-aliased uniform disk (out-of-focus lens), normalised to sum 1."""
    half = int(np.ceil(radius))
    n = (2 * half + 1) * _SUPERSAMPLE
    c = (np.arange(n) + 0.5) / _SUPERSAMPLE - (half + 0.5)
    inside = (c[None, :] ** 2 + c[:, None] ** 2 <= radius**2).astype(np.float32)
    k = inside.reshape(2 * half + 1, _SUPERSAMPLE, 2 * half + 1, _SUPERSAMPLE).mean(axis=(1, 3))
    return k / k.sum()


def line_kernel(length: float, angle_deg: float) -> np.ndarray:
    """Anti-aliased straight streak (camera shake during exposure), normalised to sum 1."""
    half = int(np.ceil(length / 2)) + 1
    size = 2 * half + 1
    t = np.linspace(-length / 2, length / 2, max(2, int(length * 16)))
    a = np.deg2rad(angle_deg)
    x, y = half + t * np.cos(a), half - t * np.sin(a)
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - x0, y - y0
    k = np.zeros((size + 1, size + 1), np.float64)
    for dx, dy, wgt in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy)):
        np.add.at(k, (y0 + dy, x0 + dx), wgt)
    k = k[:size, :size].astype(np.float32)
    return k / k.sum()


def kernel_for(params: dict[str, Any]) -> np.ndarray | None:
    if params["kind"] == "defocus":
        return disk_kernel(float(params["radius_px"]))
    if params["kind"] == "motion":
        return line_kernel(float(params["length_px"]), float(params["angle_deg"]))
    return None


def kernel_spread(kernel: np.ndarray) -> float:
    """Standard deviation of the kernel along its widest direction, in pixels."""
    ys, xs = np.mgrid[0:kernel.shape[0], 0:kernel.shape[1]].astype(np.float64)
    w = kernel.astype(np.float64)
    mx, my = (w * xs).sum(), (w * ys).sum()
    cov = np.array([[(w * (xs - mx) ** 2).sum(), (w * (xs - mx) * (ys - my)).sum()],
                    [(w * (xs - mx) * (ys - my)).sum(), (w * (ys - my) ** 2).sum()]])
    return float(np.sqrt(np.linalg.eigvalsh(cov).max()))


_BAND = 32  # rows per band of the image the sharpness is measured on (every fourth band)


def _sharpness(image: np.ndarray) -> float:
    """Variance of the luma's 3x3 Laplacian over every fourth band of 32 rows: a quarter of the work, and an
    unbiased sample of the same figure (each band is read with a row of context above and below, so its
    Laplacian is the whole image's there; images under 8 bands tall are measured whole)."""
    h = image.shape[0]
    if h < 8 * _BAND:
        return pooled_std(cv2.Laplacian(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), cv2.CV_16S)) ** 2
    n = total = squares = 0.0
    for top in range(1, h - _BAND, 4 * _BAND):
        # The 3x3 Laplacian of 8-bit pixels fits int16 exactly (|value| <= 1020): the same figure as float32.
        lap = cv2.Laplacian(cv2.cvtColor(image[top - 1:top + _BAND + 1], cv2.COLOR_RGB2GRAY), cv2.CV_16S)[1:-1]
        n += lap.size
        total += cv2.sumElems(lap)[0]
        squares += cv2.norm(lap, cv2.NORM_L2SQR)
    mean = total / n
    return max(squares / n - mean * mean, 0.0)


class Blur(Op):
    subtype = "blur"
    family = "quality"
    stage = "camera"
    stage_rank = 1

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        kind = str(rng.choice(list(KIND_WEIGHTS), p=list(KIND_WEIGHTS.values())))
        lo, hi = SIGMA_AT_150[severity]
        sigma150 = float(rng.uniform(lo, hi))
        sigma = sigma150 * page.dpi / 150
        params: dict[str, Any] = {"kind": kind, "sigma_at_150dpi": round(sigma150, 4), "sigma_px": round(sigma, 4)}
        if kind == "defocus":
            params["radius_px"] = round(2 * sigma, 4)
        elif kind == "motion":
            params["length_px"] = round(sigma * np.sqrt(12), 4)
            params["angle_deg"] = round(float(rng.uniform(0, 180)), 2)
        return params

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        kernel = kernel_for(params)
        if kernel is None:
            sigma = float(params["sigma_px"])
            return cv2.GaussianBlur(image, (0, 0), sigmaX=sigma, sigmaY=sigma), page
        return cv2.filter2D(image, -1, kernel, borderType=cv2.BORDER_REFLECT), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        base = _sharpness(before)
        kernel = kernel_for(params)
        spread = float(params["sigma_px"]) if kernel is None else kernel_spread(kernel)
        return {"kind": params["kind"], "sigma_px": params["sigma_px"], "sigma_at_150dpi": params["sigma_at_150dpi"],
                "kernel_spread_px": round(spread, 4),
                "sharpness_ratio": round(_sharpness(after) / base, 4) if base > 0 else None}


register(Blur())
