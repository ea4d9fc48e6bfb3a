"""Photographic degradation ops, one per subtype, looked up by subtype id.

Each op is a module of this package that registers itself (``register(Blur())``); the registry finds
them on first use, so adding an op is adding one module. ``REGISTRY`` maps subtype ids to ops in
sorted id order.
"""

from __future__ import annotations

from perturb.photo.base import OPS, Op, Photo, Rubric, degradation_subtypes, register
from perturb.photo.profile import degrade, degrade_photo

REGISTRY = OPS

__all__ = ["OPS", "REGISTRY", "Op", "Photo", "Rubric", "degradation_subtypes", "degrade", "degrade_photo", "register"]
