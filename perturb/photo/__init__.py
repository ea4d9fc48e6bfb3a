"""Photographic degradation ops, one per subtype, looked up by subtype id."""

from __future__ import annotations

from perturb.photo.base import Op, Photo, degrade, degrade_photo

REGISTRY: dict[str, Op] = {}


def register(op: Op) -> Op:
    if op.subtype in REGISTRY:
        raise ValueError(f"degradation {op.subtype!r} registered twice")
    REGISTRY[op.subtype] = op
    return op


from perturb.photo import (  # noqa: E402,F401
    background,
    bleed_through,
    blur,
    exposure,
    figure_marking,
    glare,
    handwritten,
    jpeg,
    keystone,
    noise,
    paper_warp,
    question_marking,
    resolution,
    rotation,
    shadow,
    tilt,
)

__all__ = ["REGISTRY", "Op", "Photo", "degrade", "degrade_photo", "register"]
