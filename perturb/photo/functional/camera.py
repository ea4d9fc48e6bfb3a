"""Camera kernels: the phone's own processing of the photo (lens blur, resolution, sensor noise, JPEG)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import cv2
import numpy as np

from perturb.photo.base import DegradationError
from perturb.photo.measure import every
from perturb.photo.worker import beside, in_halves, worth_halving

# ------------------------------------------------------------------------------ blur

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


def blur(image: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """Gaussian, defocus (disk) or motion (line) blur of the recorded spread."""
    kernel = kernel_for(params)
    if kernel is None:
        sigma = float(params["sigma_px"])
        return cv2.GaussianBlur(image, (0, 0), sigmaX=sigma, sigmaY=sigma)
    return convolve(image, kernel)


# Depth of field (``defocus``): blur levels a Gaussian's sigma apart by this ratio at most, blended linearly
# between the two around each pixel's own sigma (a blend of blurs of sigma s and 1.8 s stands for the blur
# between them). Under IN_FOCUS_PX a pixel is left as it is: a spread of a third of a pixel is lost in the
# resampling's own (bilinear interpolation spreads about 0.4 px), and a photo that stays under it everywhere
# costs nothing.
IN_FOCUS_PX, _DOF_FIRST, _DOF_RATIO, _DOF_MAX = 0.35, 0.5, 1.8, 4.0


def _runs(mask: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """Runs [start, stop) of True in ``mask``, runs fewer than ``gap`` apart joined."""
    idx = np.flatnonzero(mask)
    if not idx.size:
        return []
    cuts = np.flatnonzero(np.diff(idx) > gap)
    return [(int(idx[a]), int(idx[b]) + 1) for a, b in zip(np.r_[0, cuts + 1], np.r_[cuts, idx.size - 1], strict=True)]


def _gaussian(band: np.ndarray, sigma: float) -> np.ndarray:
    """A Gaussian blur; from sigma 1 at half size (a 2 x 2 mean spreads 0.5 px along each axis, the linear
    upsampling a little more), a quarter of the work. An odd side is first padded by one reflected pixel: halving
    an odd size takes OpenCV's general area resampling, ten times the cost of its 2 x 2 mean."""
    if sigma < 1.0:
        return cv2.GaussianBlur(band, (0, 0), sigma)
    h, w = band.shape[:2]
    if h % 2 or w % 2:
        band = cv2.copyMakeBorder(band, 0, h % 2, 0, w % 2, cv2.BORDER_REFLECT_101)
    eh, ew = band.shape[:2]
    small = cv2.resize(band, (ew // 2, eh // 2), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), float(np.sqrt(sigma**2 - 0.25)) / 2)
    return cv2.resize(small, (ew, eh), interpolation=cv2.INTER_LINEAR)[:h, :w]


def defocus(image: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """``image`` blurred by a Gaussian whose sigma varies over it (``sigma``, px, float32, the image's size): a
    lens focused at one distance, with the rest of the scene nearer or farther. Each level is blurred only over
    the rows and columns that need it (a tipped page's near and far edges, not its sharp middle; the blur's reach
    around them read as context), and blended into the result by how far each pixel's sigma has reached between
    the level below and this one; pixels under ``IN_FOCUS_PX`` are left as they are."""
    top = min(float(sigma.max()), _DOF_MAX)
    if top < IN_FOCUS_PX:
        return image
    levels = [min(_DOF_FIRST, top)]
    while levels[-1] < top:
        levels.append(min(levels[-1] * _DOF_RATIO, top))
    out, below = image.copy(), IN_FOCUS_PX
    h, w = image.shape[:2]
    reach = sigma.max(axis=1)
    for level in levels:
        pad = int(np.ceil(3 * level)) + 1
        span = 1.0 / max(level - below, 1e-6)
        for lo, hi in _runs(reach > below, 2 * pad):
            for left, right in _runs(sigma[lo:hi].max(axis=0) > below, 2 * pad):
                r0, r1, c0, c1 = max(0, lo - pad), min(h, hi + pad), max(0, left - pad), min(w, right + pad)
                blurred = _gaussian(image[r0:r1, c0:c1], level)[lo - r0:hi - r0, left - c0:right - c0]
                # (sigma - below) / (level - below), clipped to 0-1, in three passes of OpenCV's.
                reached = sigma[lo:hi, left:right]
                weight = cv2.addWeighted(reached, span, reached, 0.0, -below * span)
                cv2.threshold(weight, 1.0, 1.0, cv2.THRESH_TRUNC, dst=weight)
                cv2.threshold(weight, 0.0, 0.0, cv2.THRESH_TOZERO, dst=weight)
                out[lo:hi, left:right] = cv2.blendLinear(out[lo:hi, left:right], blurred, 1.0 - weight, weight)
        below = level
    return out


# Kernels up to this many taps are convolved directly (OpenCV turns to its DFT for larger ones, whose rounding
# depends on the image's extent): their rows depend only on the rows within the kernel's reach.
DIRECT_TAPS = 121


def convolve(image: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """``cv2.filter2D(image, -1, kernel, borderType=cv2.BORDER_REFLECT)`` for an odd-sized kernel, the same bytes.

    OpenCV's direct 2-D filter runs on one core, and costs about a millisecond per nonzero tap on a page: a small
    kernel's two halves of the image are filtered side by side, each with the rows within the kernel's reach of
    the other half read as context (so every output row sees exactly the rows it would in one pass; the image's
    own top and bottom edges are reflected as before)."""
    h = image.shape[0]
    if kernel.size > DIRECT_TAPS or not worth_halving(h):
        return cv2.filter2D(image, -1, kernel, borderType=cv2.BORDER_REFLECT)
    reach = kernel.shape[0] // 2
    out = np.empty_like(image)

    def rows(r: slice) -> None:
        top, bottom = max(0, r.start - reach), min(h, r.stop + reach)
        band = cv2.filter2D(image[top:bottom], -1, kernel, borderType=cv2.BORDER_REFLECT)
        out[r] = band[r.start - top:r.stop - top]

    in_halves(rows, h)
    return out


# ------------------------------------------------------------------------------ resolution


def small_size(params: dict[str, Any], width: int, height: int) -> tuple[int, int]:
    s = float(params["scale"])
    return max(8, round(width * s)), max(8, round(height * s))


def resample(image: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """Captured at ``scale`` of the page's resolution and scaled back up to its size (the detail stays lost)."""
    h, w = image.shape[:2]
    small = cv2.resize(image, small_size(params, w, h), interpolation=cv2.INTER_AREA)
    up = cv2.INTER_CUBIC if params["upscale"] == "cubic" else cv2.INTER_LINEAR
    return cv2.resize(small, (w, h), interpolation=up)


# ------------------------------------------------------------------------------ noise


NOISE_PAPER = 249.0  # nominal paper level the noise is calibrated on; most pixels of a page are paper


@cache
def _normal_bank() -> np.ndarray:
    """2^22 standard normal draws (16 MB), the same in every process (OpenCV's generator, fixed seed)."""
    cv2.setRNGSeed(20261126)
    bank = np.empty(1 << 22, np.float32)
    cv2.randn(bank, 0.0, 1.0)
    return bank


def _grain(image: np.ndarray, table: np.ndarray, colour: np.ndarray | None, out: np.ndarray, rows: slice, seed: int,
           luma_share: float) -> None:
    """``rows`` of the noisy image into ``out``: luminance grain of spread ``table[grey level]`` plus ``colour``
    (offset by 128)."""
    _add_grain(image, _luma_grain(image, table, rows, seed, luma_share), colour, out, rows)


def _luma_grain(image: np.ndarray, table: np.ndarray, rows: slice, seed: int, luma_share: float) -> np.ndarray:
    """The luminance grain of ``rows``, offset by 128 in bytes, on three channels."""
    # The grain is a slice of a bank of normal draws made once per process, at an offset from the recorded
    # noise_seed and the band: no generator on the pixels' path, and the grain depends on the params alone.
    n, w = rows.stop - rows.start, image.shape[1]
    bank = _normal_bank()
    if n * w <= bank.size // 2:
        offset = (seed * 7919 + (rows.start + 1) * 104729) % (bank.size - n * w)
        lum = bank[offset:offset + n * w].reshape(n, w)
    else:  # a band larger than half the bank (a page over about 4 megapixels): draw it
        cv2.setRNGSeed((seed + 7919 * (rows.start + 1)) % (2**31 - 1))
        lum = np.empty((n, w), np.float32)
        cv2.randn(lum, 0.0, 1.0)
    # Grain in whole grey levels, offset by 128 into one 8-bit plane (grain beyond +-127 levels, under 0.5% of
    # the heaviest grain's draws, is clipped there: a pixel that far off is black or white either way) copied to
    # three channels as bytes; the colour blotches come offset by 128 too. Every full-size pass is on bytes: a
    # third of the traffic of int16 planes.
    scale = cv2.LUT(cv2.cvtColor(image[rows], cv2.COLOR_RGB2GRAY), table)  # the spread at each pixel, per band
    # Rounded and clipped to -128..127 in signed bytes; flipping the top bit of their two's complement adds the 128
    # (one cheap pass, where adding 128 to int16 grain with saturation was a pass twice as heavy).
    grain = cv2.multiply(lum, scale, scale=luma_share, dtype=cv2.CV_8S)
    return cv2.cvtColor(cv2.bitwise_xor(grain.view(np.uint8), 128), cv2.COLOR_GRAY2RGB)


def _add_grain(image: np.ndarray, lum3: np.ndarray, colour: np.ndarray | None, out: np.ndarray, rows: slice) -> None:
    """``rows`` of ``image`` plus their luminance grain ``lum3`` and ``colour`` (both offset by 128) into ``out``."""
    if colour is not None:  # luminance and colour grain, both offset by 128: their sum offset by 128
        cv2.addWeighted(lum3, 1.0, colour[rows], 1.0, -128.0, dst=lum3)
    cv2.addWeighted(image[rows], 1.0, lum3, 1.0, -128.0, dst=out[rows])


def grain_band(params: dict[str, Any], table: np.ndarray) -> Callable[[np.ndarray, slice], None]:
    """``add_noise`` without colour noise (chroma_frac 0) as work on one band of rows of an image, in place: for a
    pass that makes the image band by band (``Light.apply(..., then=)``). The bands must be ``in_halves``'s, as
    ``add_noise``'s are: the grain of a band depends on where it starts, so the bytes are ``add_noise``'s."""
    if float(params["chroma_frac"]) != 0:
        raise DegradationError("grain_band adds luminance grain only; use add_noise for colour noise")
    seed = int(params["noise_seed"])
    return lambda image, rows: _grain(image, table, None, image, rows, seed, 1.0)


def add_noise(image: np.ndarray, params: dict[str, Any], table: np.ndarray | None = None) -> np.ndarray:
    """Shot and read noise of spread ``sigma_paper`` on paper, plus blotchy colour noise, from ``noise_seed``.

    ``table`` (256 float32 spreads, one per grey level) replaces the spread's dependence on the level: an
    exposure's tone curve reshapes it (``lighting.exposure_noise``)."""
    h, w = image.shape[:2]
    chroma = float(params["chroma_frac"])
    if table is None:
        # Shot noise: variance grows with the signal; read noise keeps dark pixels noisy too. The
        # per-pixel spread comes from the pixel's grey level through a 256-entry table.
        levels = np.arange(256, dtype=np.float32)
        table = (float(params["sigma_paper"]) * np.sqrt(0.3 + 0.7 * levels / NOISE_PAPER)).astype(np.float32)
    # Colour noise is demosaiced and smoothed by the phone's noise reduction, so it comes in blotches
    # a few pixels across: drawn (and scaled) at quarter resolution and upsampled.
    seed = int(params["noise_seed"])
    blotches = None  # no colour noise (chroma_frac 0): luminance grain only, two passes fewer
    if chroma > 0:
        qh, qw = max(1, h // 4), max(1, w // 4)
        spread = chroma * 1.52  # bilinear 4x upsampling keeps 1/1.52 of the std
        bank, n = _normal_bank(), qh * qw * 3
        if n <= bank.size // 2:  # draws from the process's bank too, at an offset from the seed (no generator)
            offset = (seed * 104729 + 15485863) % (bank.size - n)
            col, scale = bank[offset:offset + n].reshape(qh, qw, 3), spread
        else:
            cv2.setRNGSeed(seed)
            col, scale = np.empty((qh, qw, 3), np.float32), 1.0
            cv2.randn(col, (0.0, 0.0, 0.0), (spread, spread, spread))
        # The spread at each blotch's centre: the table at the grey level of every fourth pixel of every fourth row.
        centres = cv2.cvtColor(every(image, 4, 2)[:qh, :qw], cv2.COLOR_RGB2GRAY)
        col = cv2.multiply(col, cv2.cvtColor(cv2.LUT(centres, table), cv2.COLOR_GRAY2RGB), scale=scale)
        # Offset by 128 in bytes, rounded half to even and saturated (blotches beyond +-127 levels clip; their spread
        # is a few levels) in OpenCV's one pass, where numpy took four; upsampled below.
        blotches = cv2.add(col, (128.0, 128.0, 128.0, 0.0), dtype=cv2.CV_8U)
    # The per-pixel grain is OpenCV's serial generator and arithmetic: the top and bottom halves of the
    # page are grained on two threads, each generator seeded from noise_seed and its half.
    out = np.empty_like(image)
    luma_share = float(np.sqrt(1 - chroma**2))
    if blotches is None or not worth_halving(h):
        colour = None if blotches is None else _upsample_colour(blotches, w, h)
        in_halves(lambda rows: _grain(image, table, colour, out, rows, seed, luma_share), h)
        return out
    # With colour noise the blotches' upsampling (one core, a fifth of the work) runs on the other thread while
    # this one makes both halves' luminance grain; then each thread adds its half. The bands are ``in_halves``'s,
    # so the bytes are the same as graining band by band in one go.
    pending = beside(_upsample_colour, blotches, w, h)
    top, bottom = slice(0, h // 2), slice(h // 2, h)
    lum_top, lum_bottom = (_luma_grain(image, table, r, seed, luma_share) for r in (top, bottom))
    colour = pending.result()
    first = beside(_add_grain, image, lum_top, colour, out, top)
    _add_grain(image, lum_bottom, colour, out, bottom)
    first.result()
    return out


def _upsample_colour(blotches: np.ndarray, width: int, height: int) -> np.ndarray:
    """The colour blotches (offset by 128) at full size, bilinear and rounded to the nearest level: upsampled as 16-bit
    values (OpenCV's floating-point kernel) and narrowed back to bytes (the values stay between their neighbours'),
    40 % faster than the bit-exact 8-bit kernel and as unbiased (OpenCV's fast 8-bit one rounds down on average,
    about -0.11 levels)."""
    return cv2.resize(blotches.astype(np.uint16), (width, height), interpolation=cv2.INTER_LINEAR).astype(np.uint8)


# ------------------------------------------------------------------------------ jpeg


def encode(image: np.ndarray, quality: int) -> bytes:
    """The JPEG file of an RGB image at ``quality`` (OpenCV's encoder: deterministic)."""
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(image, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise DegradationError(f"jpeg: OpenCV could not encode at quality {quality}")
    return buf.tobytes()


# OpenCV >= 4.11 decodes straight to RGB (libjpeg's own output order, no second pass over the image).
_READ_RGB = getattr(cv2, "IMREAD_COLOR_RGB", None)


def decode(data: bytes) -> np.ndarray:
    buf = np.frombuffer(data, np.uint8)
    if _READ_RGB is not None:
        return cv2.imdecode(buf, _READ_RGB)
    return cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def compress(image: np.ndarray, quality: int) -> np.ndarray:
    return decode(encode(image, quality))
