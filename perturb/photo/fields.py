"""Smooth lighting fields at low resolution, content masks and image statistics shared by ops."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from perturb.photo.base import Op
from perturb.photo.worker import in_halves
from synth.records import RenderedPage

# Lighting varies slowly across a page, so fields are built on a grid this many times coarser.
FIELD_STEP = 8
SAMPLE_CELLS = 80  # cells across the page on the grid lighting ops sample their parameters on
# Boxes that hold printed content; question tokens are covered by their lines.
CONTENT_KINDS = frozenset({"header", "question_line", "choice", "step", "answer_area"})


def grid(height: int, width: int, step: int = FIELD_STEP) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates (x, y) of a coarse grid covering the image, cell centres included."""
    gh, gw = max(2, -(-height // step)), max(2, -(-width // step))
    ys = (np.arange(gh, dtype=np.float32) + 0.5) * (height / gh) - 0.5
    xs = (np.arange(gw, dtype=np.float32) + 0.5) * (width / gw) - 0.5
    return np.meshgrid(xs, ys)


def upsample(field: np.ndarray, height: int, width: int) -> np.ndarray:
    return cv2.resize(field.astype(np.float32), (width, height), interpolation=cv2.INTER_LINEAR)


def gain_u8(gain: np.ndarray) -> tuple[np.ndarray, float]:
    """A gain field as 8-bit fixed point and the scale that turns it back into gains.

    8-bit gains make the full-size multiply (and upsampling) several times cheaper than float32
    ones. The largest gain maps to 255 (gains up to 1 map 1 to 255): steps of 1/255 of the largest
    gain, about one grey level on white paper for the gains the ops use (at most 1.03, a sheet
    turned to the light; a gain of 2 would step by two levels).
    """
    unit = float(int(255.0 / max(1.0, float(gain.max()))))  # whole, so a plane of gain 1 is exactly `unit`
    return np.clip(gain * unit + 0.5, 0, 255).astype(np.uint8), 1.0 / unit


@dataclass(frozen=True)
class Light:
    """Pointwise lighting as one affine map per pixel and channel: ``y = gain * x + 255 * lift``.

    Both fields live on a coarse grid of the page (``grid``), as (gh, gw) or (gh, gw, 3) arrays; None
    means gain 1 or lift 0. A lamp's shadow scales the light (``times``); glare and over-exposure wash
    the print out towards white, scaling each pixel's darkness 255 - v (``wash``). Consecutive lighting
    composes into one such map (``then``), so a shadow, a glare and a bent sheet's shading cost one
    upsampled multiply and one add on the page, however many there are.
    """

    gain: np.ndarray | None = None
    lift: np.ndarray | None = None

    def then(self, after: Light) -> Light:
        """This lighting, then ``after``: g2 (g1 x + 255 l1) + 255 l2."""
        gain = _product(self.gain, after.gain)
        lift = self.lift if after.gain is None or self.lift is None else _product(self.lift, after.gain)
        lift = after.lift if lift is None else lift if after.lift is None else _sum(lift, after.lift)
        return Light(gain, lift)

    def times(self, gain: np.ndarray) -> Light:
        return self.then(Light(np.asarray(gain, np.float32)))

    def wash(self, gain: np.ndarray) -> Light:
        """Scale the darkness (255 - v) by ``gain``: v -> gain v + 255 (1 - gain)."""
        g = np.asarray(gain, np.float32)
        return self.then(Light(g, 1.0 - g))

    def apply(self, image: np.ndarray, curve: np.ndarray | None = None) -> np.ndarray:
        """The lit image: the fields upsampled to it in 8-bit (see ``gain_u8``), one multiply and one add.

        ``curve`` (256 uint8 levels) is a tone curve looked up after the lighting (exposure's).
        """
        h, w = image.shape[:2]
        if self.gain is None and self.lift is None:
            return image if curve is None else cv2.LUT(image, curve)
        gain, scale = (None, 1.0) if self.gain is None else gain_u8(self.gain)
        gain = None if gain is None else _full(gain, h, w)
        lift = None if self.lift is None else _full(np.clip(self.lift * 255.0 + 0.5, 0, 255).astype(np.uint8), h, w)
        out = np.empty_like(image)

        def rows(r: slice) -> None:  # the per-pixel arithmetic is serial in OpenCV: two halves side by side
            if gain is None:
                cv2.add(image[r], lift[r], dst=out[r])
            elif lift is None:
                cv2.multiply(image[r], gain[r], dst=out[r], scale=scale)
            else:
                cv2.add(cv2.multiply(image[r], gain[r], scale=scale), lift[r], dst=out[r])
            if curve is not None:
                cv2.LUT(out[r], curve, dst=out[r])

        in_halves(rows, h)
        return out


def _product(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None or b is None:
        return b if a is None else a
    a, b = (a[..., None], b) if a.ndim < b.ndim else (a, b[..., None]) if b.ndim < a.ndim else (a, b)
    return (a * b).astype(np.float32)


def _sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = (a[..., None], b) if a.ndim < b.ndim else (a, b[..., None]) if b.ndim < a.ndim else (a, b)
    return (a + b).astype(np.float32)


def _full(small: np.ndarray, height: int, width: int) -> np.ndarray:
    """An 8-bit field upsampled to three full-size planes; a grey field is upsampled as one plane and
    then copied into three (a third of the interpolation)."""
    if small.ndim == 3:
        return cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    return cv2.cvtColor(cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR), cv2.COLOR_GRAY2RGB)


class LightOp(Op):
    """An op that lights the flat sheet pointwise (shadow, glare); ``apply`` is the one-op case of ``light``.

    A capture composes a run of them into one ``Light`` and applies it once, with a bent sheet's shading
    when geometry follows (``fusion.remap_chain``). Each op's effect is still measured from pixels, on
    ``half`` images: the run's stages are replayed there one by one (a quarter of the pixels), which is
    exactly what the measures sample anyway.
    """

    stage = "lighting"

    def light(self, params: dict[str, Any], page: RenderedPage) -> Light:
        raise NotImplementedError

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return self.light(params, page).apply(image), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        return self.measure_half(half(before), half(after), params, page)

    def measure_half(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                     page: RenderedPage) -> dict[str, Any]:
        """The effect, from every other pixel of every other row of the page before and after the op."""
        raise NotImplementedError


def half(image: np.ndarray) -> np.ndarray:
    """Every other pixel of every other row, contiguous: what measures sample (``image[::2, ::2]`` of an
    even-sized image; an odd last row or column is left out).

    OpenCV's nearest-neighbour halving picks exactly those pixels, several times faster than numpy's
    strided copy; the even crop is a view, not a copy.
    """
    h, w = image.shape[:2]
    even = image[:h - h % 2, :w - w % 2]
    return cv2.resize(even, (max(1, w // 2), max(1, h // 2)), interpolation=cv2.INTER_NEAREST)


def sparse_luma(image: np.ndarray, step: int = 2) -> np.ndarray:
    """The luma of every ``step``-th pixel of every ``step``-th row (``luma(half(image))`` for step 2): the
    rows' luma from a strided view (no copy), then every ``step``-th column by nearest-neighbour resizing."""
    h, w = image.shape[:2]
    rows = cv2.cvtColor(image[:h - h % step:step, :w - w % step], cv2.COLOR_RGB2GRAY)
    return cv2.resize(rows, (max(1, w // step), rows.shape[0]), interpolation=cv2.INTER_NEAREST)


def block_means(gray: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Mean of a 2-D ``gray`` over a (rows x cols) grid of equal square blocks, as float32.

    The image is padded (edge pixels repeated) to whole blocks first: OpenCV's area resize takes a
    fast path for an integer factor and a slow general one otherwise (5-10 ms on an A4 page).
    """
    h, w = gray.shape[:2]
    step = max(-(-h // rows), -(-w // cols), 1)
    padded = cv2.copyMakeBorder(gray, 0, rows * step - h, 0, cols * step - w, cv2.BORDER_REPLICATE)
    return cv2.resize(padded, (cols, rows), interpolation=cv2.INTER_AREA).astype(np.float32)


def smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3 - 2 * x)


def luma(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)


def content_mask(page: RenderedPage, height: int, width: int, kinds: frozenset[str] = CONTENT_KINDS) -> np.ndarray:
    """Boolean mask of printed-content boxes, drawn on a (height, width) raster of the page."""
    sx, sy = width / page.width, height / page.height
    mask = np.zeros((height, width), bool)
    for b in page.layout:
        if b.kind in kinds:
            x0, x1 = int(np.floor(b.x0 * sx)), int(np.ceil(b.x1 * sx))
            y0, y1 = int(np.floor(b.y0 * sy)), int(np.ceil(b.y1 * sy))
            mask[max(0, y0):max(0, y1), max(0, x0):max(0, x1)] = True
    return mask


def psnr(before: np.ndarray, after: np.ndarray) -> float:
    return round(float(cv2.PSNR(before, after)), 3)


def pooled_std(values: np.ndarray) -> float:
    """Standard deviation over every element of a (h, w) or (h, w, c) array.

    From OpenCV's sum of squares (cv2.norm) and sum: exact for integer arrays, and ~15x faster than
    cv2.meanStdDev on an int16 page.
    """
    n = values.size
    if n == 0:
        return 0.0
    mean = sum(cv2.sumElems(values)) / n
    return float(np.sqrt(max(cv2.norm(values, cv2.NORM_L2SQR) / n - mean * mean, 0.0)))


def median_u8(values: np.ndarray, mask: np.ndarray | None = None) -> float:
    """Median of uint8 values from their histogram (the lower median for an even count), without sorting.

    ``mask`` (uint8, nonzero = counted) picks the values in place: OpenCV's masked histogram, no gather.
    The caller checks that the mask selects something.
    """
    if mask is None:
        counts = np.bincount(values.ravel(), minlength=256)
    else:
        counts = cv2.calcHist([np.ascontiguousarray(values)], [0], mask, [256], [0, 256]).ravel()
    return float(np.searchsorted(np.cumsum(counts), (int(counts.sum()) + 1) // 2))


def coarse_content(page: RenderedPage) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid (xs, ys) lighting ops sample on, and the page's content mask on it (all True if no layout).

    About 80 cells across the page (never finer than FIELD_STEP): coverage targets sit well inside their
    rubric bins, and bisecting on a quarter of the cells of an A4 page at 150 dpi costs a quarter as much.
    """
    xs, ys = grid(page.height, page.width, max(FIELD_STEP, round(page.width / SAMPLE_CELLS)))
    mask = content_mask(page, *xs.shape) if page.layout else np.ones(xs.shape, bool)
    return xs, ys, mask


def masked_fraction(field: np.ndarray, mask: np.ndarray, threshold: float = 0.5) -> float:
    """Share of the masked cells where ``field`` exceeds ``threshold``."""
    return float((field[mask] > threshold).mean()) if mask.any() else 0.0


def bisect_coverage(field_at: Callable[[float], np.ndarray], mask: np.ndarray, target: float,
                    lo: float, hi: float, *, grows: bool, steps: int = 20, tolerance: float = 0.004) -> float:
    """The parameter value in [lo, hi] whose field covers ``target`` of the masked cells.

    ``grows`` says whether coverage increases with the parameter. Lighting ops use it to hit a
    rubric bin by construction instead of hoping a sampled size lands in it. It stops as soon as the
    coverage is within ``tolerance`` of the target (the ops draw targets at least 0.02 inside their bins),
    or after ``steps`` halvings: 20 halvings of a range up to 3 wide (2.9e-6) are finer than the 5
    decimals the ops record.
    """
    for _ in range(steps):
        mid = (lo + hi) / 2
        covered = masked_fraction(field_at(mid), mask)
        if abs(covered - target) <= tolerance:
            return mid
        too_much = covered > target
        if grows:
            lo, hi = (lo, mid) if too_much else (mid, hi)
        else:
            lo, hi = (mid, hi) if too_much else (lo, mid)
    return (lo + hi) / 2
