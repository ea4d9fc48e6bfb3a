"""The gradient of the line through two grid points (and the perpendicular gradient)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import mal_chain, rational, reduce_steps, sample_role
from synth.generators._grid import (
    POINT_LEVELS,
    RUN_OVER_RISE,
    TwoPointFamily,
    gradient_node,
    step_counts,
    two_points,
)
from synth.generators.base import Derivation, MalRule, StepDraft

_ASKS = {"easy": "slope", "medium": "slope", "hard": "perpendicular"}  # the gradient, or the perpendicular one


@register
class SlopeTwoPoints(TwoPointFamily):
    """Gradient of the line through two grid points; hard also asks for the perpendicular gradient."""

    id = "coordinate.slope.two_points"
    domain = "coordinate_geometry"
    subdomain = "lines"
    grade_band = "8-10"
    malrules = (
        RUN_OVER_RISE,
        MalRule("mixed_order_subtraction", "formula_misuse", "subtracts the y values one way and the x values the "
                "other way, flipping the sign"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        lo, hi, scale, integer = POINT_LEVELS[difficulty]
        a, b = two_points(rng, lo, hi, scale, integer_slope=integer)
        role = sample_role(rng)
        # Counting is offered where the working has steps to count into (−1 ÷ rise/run); a bare rise/run is
        # already in lowest terms or one division away.
        ask = _ASKS[difficulty]
        return {"A": a, "B": b, "scale": scale, "ask": ask,
                "image_role": role, **step_counts(rng, a, b, scale, role, offered=ask == "perpendicular")}

    def _tree(self, params: dict[str, Any], **how: bool) -> E.Node:
        slope = gradient_node(params, divide=True, **how)
        return ["/", -1, ["group", slope]] if params["ask"] == "perpendicular" else slope

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="gradient_formula")
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        (x1, y1), (x2, y2) = params["A"], params["B"]
        m = Fraction(y1 - y2, x1 - x2)  # the other order gives the same gradient
        return rational(-1 / m if params["ask"] == "perpendicular" else m)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "run_over_rise":
            return mal_chain(self, params, self._tree(params, flip=True), "gradient_formula")
        if rule == "mixed_order_subtraction" and params.get("rise") is None:  # counted squares: no subtraction
            return mal_chain(self, params, self._tree(params, mixed=True), "gradient_formula")
        return None
