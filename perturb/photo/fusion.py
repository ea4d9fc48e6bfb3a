"""Geometric ops: the ``GeometricOp`` contract, fused by type into one remap per run (``profile``).

A geometric op samples its params (knowing where earlier ops in the chain left the sheet:
``sample_in_chain``), describes them as a ``Warp`` (``functional.geometric``) and measures the warp
itself, so a fused chain needs no intermediate image to measure from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from perturb.photo.base import Op
from perturb.photo.functional.geometric import Warp, moved_page, page_outline, remap_chain
from synth.records import RenderedPage

# Desk and table tops seen around a photographed page: light wood, dark wood, grey laminate, cloth.
DESK_RGB = ((168, 128, 88), (98, 68, 46), (122, 121, 116), (64, 70, 82), (140, 112, 84))


def sample_desk(rng: np.random.Generator) -> dict[str, Any]:
    base = np.array(DESK_RGB[int(rng.integers(len(DESK_RGB)))], float)
    rgb = np.clip(base * rng.uniform(0.85, 1.1), 0, 255).round().astype(int).tolist()
    return {"desk_rgb": rgb, "desk_seed": int(rng.integers(2**31 - 1)),
            "desk_grain_angle_deg": round(float(rng.uniform(-20, 20)), 2)}


class GeometricOp(Op):
    """An op that moves pixels; ``apply`` is the one-op case of a fused chain (``remap_chain``)."""

    stage = "geometry"

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        raise NotImplementedError

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        raise NotImplementedError

    def sample_in_chain(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                        outline: np.ndarray) -> dict[str, Any]:
        """Sample knowing where the sheet is in the current frame (after earlier geometric ops)."""
        return self.sample_params(rng, severity, page)

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        warp = self.warp(params, page)
        return remap_chain(image, page, [warp], desk_of([params])), moved_page(page, [warp])

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        return self.measure_warp(params, page, self.warp(params, page), page_outline(page))


def desk_of(params_list: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The desk the sheet lies on: the first op in the chain that sampled one."""
    return next((p for p in params_list if "desk_rgb" in p), None)
