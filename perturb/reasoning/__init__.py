"""Reasoning-error injectors, one per taxonomy subtype, looked up by subtype id.

Each injector module of this package registers its injectors (``register(SignError())``); the registry
finds them on first use, so adding an injector is adding one module. ``REGISTRY`` maps subtype ids to
injectors in sorted id order.
"""

from __future__ import annotations

from perturb.reasoning.base import INJECTORS, Injector, inject, register

REGISTRY = INJECTORS

__all__ = ["INJECTORS", "REGISTRY", "Injector", "inject", "register"]
