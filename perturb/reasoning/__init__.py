"""Reasoning-error injectors, one per taxonomy subtype, looked up by subtype id."""

from __future__ import annotations

from perturb.reasoning.base import Injector, inject

REGISTRY: dict[str, Injector] = {}


def register(injector: Injector) -> Injector:
    if injector.subtype in REGISTRY:
        raise ValueError(f"subtype {injector.subtype!r} registered twice")
    REGISTRY[injector.subtype] = injector
    return injector


from perturb.reasoning import computational, conceptual, notational, presentation, superficial, visual  # noqa: E402,F401

__all__ = ["REGISTRY", "Injector", "inject", "register"]
