"""Unit rates: the rate for one, then scaled to the amount asked."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft

_step = E.add_step
_dec = E.dec


# What each difficulty asks: a whole rate, a decimal rate (money or a measure), or a printer's rate over a time
# given in hours and minutes.
_LEVELS = {"easy": "whole", "medium": "decimal", "hard": "timed"}


@register
class UnitRate(Family):
    """Unitary method: find the rate for one, then scale (hard: time given in hours and minutes)."""

    id = "arithmetic.rate.unit_rate"
    domain = "arithmetic"
    subdomain = "rates"
    grade_band = "6-7"

    _CONTEXTS = ("cost", "speed", "printer", "recipe")
    malrules = (
        MalRule("rate_inverted", "formula_misuse",
                "finds the rate for one by dividing the count by the amount (the unit rate upside down)"),
        MalRule("hour_as_100_minutes", "unit_conversion", "converts hours to minutes with 100 minutes in an hour"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        context = self._CONTEXTS[int(rng.integers(len(self._CONTEXTS)))]
        while True:
            n1 = int(rng.integers(2, 13))
            if level == "whole":
                rate = Fraction(int(rng.integers(2, 20)))
                n2 = int(rng.integers(2, 20))
                hours, minutes = 0, 0
            elif level == "decimal":
                rate = Fraction(int(rng.integers(105, 2000)), 100 if context == "cost" else 10)
                n2 = int(rng.integers(2, 40))
                hours, minutes = 0, 0
            else:
                rate = Fraction(int(rng.integers(2, 30)))
                hours, minutes = int(rng.integers(1, 4)), int(rng.choice([10, 15, 20, 30, 40, 45, 50]))
                n2 = hours * 60 + minutes
            if n2 != n1:
                return {"context": "printer" if level == "timed" else context, "n1": n1,
                        "amount1": E.decimal_text(rate * n1), "n2": n2, "hours": hours, "minutes": minutes}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "rate_inverted" or (rule == "hour_as_100_minutes" and params["hours"]):
            return self._worked(params, {}, rule)
        return None

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic],
                mal: str | None = None) -> list[StepDraft]:
        d = Derivation(overrides)
        n1, amount = params["n1"], params["amount1"]
        hours, minutes = params["hours"], params["minutes"]
        per_hour = 100 if mal == "hour_as_100_minutes" else 60
        count: E.Node = ["group", ["+", ["*", hours, per_hour], minutes]] if hours else params["n2"]
        inverted = mal == "rate_inverted"
        _step(d, "mal:" + mal if mal else "unitary_method", ["*", ["/", n1, amount] if inverted else ["/", amount, n1],
                                                              count])
        rate = d.compute(n1 / E.sym(amount) if inverted else E.sym(amount) / n1)
        _step(d, "rate_for_one", ["*", _dec(rate), count], rate)
        if hours:
            h = d.compute(sympy.Integer(hours * per_hour))
            _step(d, "hours_to_minutes", ["*", _dec(rate), ["group", ["+", E.leaf(h), minutes]]], h)
            m = d.compute(h + minutes)
            count = E.leaf(m)
            _step(d, "total_minutes", ["*", _dec(rate), count], m)
        answer = d.compute(rate * E.sym(count))
        _step(d, "scale_up", _dec(answer), answer)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(params["amount1"]) * params["n2"] / params["n1"]

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Scale factor route: amount × (n2 / n1), without a rate for one.
        v = Fraction(params["amount1"]) * Fraction(params["n2"], params["n1"])
        return sympy.Rational(v.numerator, v.denominator)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer, decimal=True), E.num_latex(answer, decimal=True)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "latex": f"{params['amount1']} / {params['n1']} \\times {params['n2']}"}
