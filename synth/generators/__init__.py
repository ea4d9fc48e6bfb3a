"""Problem families, looked up by id (``algebra.linear.two_step``)."""

from __future__ import annotations

from synth.generators.base import Family

REGISTRY: dict[str, type[Family]] = {}


def register(cls: type[Family]) -> type[Family]:
    if cls.id in REGISTRY:
        raise ValueError(f"family id {cls.id!r} registered twice")
    REGISTRY[cls.id] = cls
    return cls


def get_family(family_id: str) -> Family:
    try:
        return REGISTRY[family_id]()
    except KeyError:
        raise KeyError(f"unknown family {family_id!r}; known: {sorted(REGISTRY)}") from None


# Importing the domain modules registers their families.
from synth.generators import (  # noqa: E402,F401
    algebra,
    arithmetic,
    calculus,
    calculus_rules,
    column,
    commonsense,
    coordinate,
    decimals,
    equations,
    exponents,
    fraction_ops,
    geometry,
    inequalities,
    one_step,
    percent,
    polynomials,
    probability,
    proportion,
    quadratic_formula,
    solids,
    statistics,
    systems,
    trig,
    trig_identity,
    trig_right,
)
