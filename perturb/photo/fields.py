"""Lighting ops: the ``LightOp`` contract, and how they sample their fields onto the photo's printed content."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from perturb.photo.base import Op
from perturb.photo.functional.lighting import FIELD_STEP, Light, grid
from perturb.photo.measure import content_mask, every, half
from synth.records import RenderedPage

SAMPLE_CELLS = 80  # cells across the page on the grid lighting ops sample their parameters on
SPARSE_FROM = 1000  # photos at least this many pixels wide are measured on every fourth pixel of every fourth row


def sparse(image: np.ndarray) -> np.ndarray:
    """The pixels a lighting op is measured on: every fourth pixel of every fourth row of a photo at least
    ``SPARSE_FROM`` pixels wide (the grid glare's sampler aims on), else every other pixel of every other row
    (``half``). Light varies slowly; on an A4 page at 150 dpi that is still 2x2 pixels per cell of the fields'
    grid and over 130,000 pixels, a quarter of the half-size work."""
    return every(image, 4) if image.shape[1] >= SPARSE_FROM else half(image)


class LightOp(Op):
    """An op that lights the photographed scene pointwise (shadow, glare); ``apply`` is the one-op case of ``light``.

    Light belongs to the scene: its fields live in photo coordinates and are applied after the geometry, on
    desk and sheet alike (``profile``), composed with the camera's base layer into one ``Light`` and one pass.
    ``page`` is the photo's layout (boxes moved with the sheet) and ``sheet`` the sheet's outline in it (page
    units), so an op grades what it does to the visible page and its content. Each op's effect is still
    measured from pixels, on ``sparse`` images: the run's stages are replayed there one by one.
    """

    stage = "lighting"

    def light(self, params: dict[str, Any], page: RenderedPage) -> Light:
        raise NotImplementedError

    samples_on_photo = True  # sampled inside the capture, seeing the photo it lights (``sample_in_scene``)

    def sample_in_scene(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                        sheet: np.ndarray | None, image: np.ndarray | None = None) -> dict[str, Any]:
        """Sample knowing where the sheet is in the photo (``sheet``: its outline, page units) and, when given, the
        photo itself (``image``: to aim at what the measure will see, the text's ink). Recorded params replay
        without either."""
        return self.sample_params(rng, severity, page)

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return self.light(params, page).apply(image), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        return self.measure_half(sparse(before), sparse(after), params, page)

    def measure_half(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                     page: RenderedPage) -> dict[str, Any]:
        """The effect, from the ``sparse`` pixels of the photo before and after the op (``params["_sheet"]``, never
        recorded, is the sheet's outline; the whole frame when absent)."""
        raise NotImplementedError


def sheet_mask(params: dict[str, Any], page: RenderedPage, height: int, width: int) -> np.ndarray:
    """The visible sheet on a (height, width) raster of the photo: inside its outline, clipped to the frame."""
    sheet = params.get("_sheet")
    if sheet is None:
        return np.ones((height, width), bool)
    mask = np.zeros((height, width), np.uint8)
    pts = np.asarray(sheet, np.float64) * [width / page.width, height / page.height]
    cv2.fillPoly(mask, [np.round(pts * 16).astype(np.int32)], 1, cv2.LINE_8, shift=4)
    return mask.astype(bool)


def coarse_grid(page: RenderedPage) -> tuple[np.ndarray, np.ndarray]:
    """A coarse grid (xs, ys) over the page, about 80 cells across (never finer than FIELD_STEP): what a shadow's
    share of the visible page is checked on while it is sampled."""
    return grid(page.height, page.width, max(FIELD_STEP, round(page.width / SAMPLE_CELLS)))


def coarse_content(page: RenderedPage) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``coarse_grid`` and the page's content mask on it (all True if no layout): glare's content area without
    pixels to look at."""
    xs, ys = coarse_grid(page)
    mask = content_mask(page, *xs.shape) if page.layout else np.ones(xs.shape, bool)
    return xs, ys, mask


def content_cells(page: RenderedPage) -> tuple[np.ndarray, np.ndarray]:
    """The centres (xs, ys, 1-D) of the cells a lighting op's measure grades the content on: ``grid``'s FIELD_STEP
    cells under ``content_mask`` (every cell if no layout).

    A shadow aimed on the coarse grid at 150 dpi (16 px cells) missed the content coverage its measure then read by
    up to 0.066, past its bins' margins, where its edge ran along a text line (photo_sweep, seed 4242: 0.603 aimed
    at 0.545; severity 2's bin ends at 0.60). Only the content's cells: bisecting on them costs less than on the
    coarse grid's whole page.
    """
    xs, ys = grid(page.height, page.width)
    mask = content_mask(page, *xs.shape) if page.layout else np.ones(xs.shape, bool)
    return xs[mask], ys[mask]


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
