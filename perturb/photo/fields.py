"""Lighting ops: the ``LightOp`` contract, and how they sample their fields onto the page's printed content."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from perturb.photo.base import Op
from perturb.photo.functional.lighting import FIELD_STEP, Light, grid
from perturb.photo.measure import content_mask, half
from synth.records import RenderedPage

SAMPLE_CELLS = 80  # cells across the page on the grid lighting ops sample their parameters on


class LightOp(Op):
    """An op that lights the flat sheet pointwise (shadow, glare); ``apply`` is the one-op case of ``light``.

    A capture composes a run of them into one ``Light`` and applies it once, with a bent sheet's shading
    when geometry follows (``functional.geometric.remap_chain``). Each op's effect is still measured from pixels, on
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
