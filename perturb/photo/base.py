"""Degradation contract: sample parameters from (rng, severity, page), then apply them purely."""

from __future__ import annotations

from typing import Any

import numpy as np

from synth.errors import MathstressError
from synth.records import DegradationRecord, RenderedPage


class DegradationError(MathstressError, ValueError):
    """Bad input to a degradation op (severity, image shape, layout)."""


class Op:
    subtype: str
    family: str

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        raise NotImplementedError

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        """Pure: the same image and params always give the same bytes."""
        raise NotImplementedError

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        return {}


def check_image(image: np.ndarray) -> None:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        shape = getattr(image, "shape", None)
        raise DegradationError(f"degradations take H x W x 3 uint8 RGB images, got shape {shape}"
                               f" and dtype {getattr(image, 'dtype', type(image).__name__)}")
    if min(image.shape[:2]) < 16:
        raise DegradationError(f"image is too small to degrade ({image.shape[1]}x{image.shape[0]} px)")


def degrade(image: np.ndarray, page: RenderedPage, subtype: str, severity: int,
            rng: np.random.Generator, *, params: dict[str, Any] | None = None,
            ) -> tuple[np.ndarray, RenderedPage, DegradationRecord]:
    """Apply one op at one severity; pass ``params`` to replay a recorded application."""
    from perturb.photo import REGISTRY

    if subtype not in REGISTRY:
        raise DegradationError(f"unknown degradation {subtype!r}; available: {sorted(REGISTRY)}")
    if not isinstance(severity, int) or not 0 <= severity <= 3:
        raise DegradationError(f"severity must be an integer 0-3, got {severity!r}")
    check_image(image)
    op = REGISTRY[subtype]
    if severity == 0:
        return image, page, DegradationRecord(subtype, op.family, 0, {}, {})
    params = params if params is not None else op.sample_params(rng, severity, page)
    out, new_page = op.apply(image, params, page)
    record = DegradationRecord(subtype, op.family, severity, params, op.measure(image, out, params, page))
    return out, new_page, record
