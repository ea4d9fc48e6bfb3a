"""Percent change between an old and a new value."""

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


# What each difficulty draws: round old values and friendly percents, any whole values, or decimal amounts
# (answers to the hundredth).
_LEVELS = {"easy": "round", "medium": "whole", "hard": "decimal"}


@register
class PercentChange(Family):
    """Percentage increase or decrease from an old to a new value (hard: decimal amounts)."""

    id = "arithmetic.percent.percent_change"
    domain = "arithmetic"
    subdomain = "percent"
    grade_band = "7-9"
    malrules = (
        MalRule("over_new_value", "formula_misuse", "divides the change by the new value instead of the original"),
        MalRule("change_not_percent", "misinterpret_question",
                "gives the change in amount instead of the percentage change"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        while True:
            if level == "round":
                old = int(rng.integers(2, 41)) * 10
                pct = Fraction(int(rng.choice([5, 10, 20, 25, 30, 40, 50])))
            elif level == "whole":
                old = int(rng.integers(10, 400))
                pct = Fraction(int(rng.integers(-40, 61)))
            else:
                old = Fraction(int(rng.integers(500, 20000)), 100)
                pct = Fraction(int(rng.integers(-300, 601)), 10)
            new = Fraction(old) * (1 + pct / 100)
            if pct != 0 and new > 0 and new.denominator in (1, 2, 4, 5, 10, 20, 25, 50, 100) and (
                    level == "decimal" or new.denominator == 1):
                return {"old": E.decimal_text(Fraction(old)), "new": E.decimal_text(new)}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        old, new = params["old"], params["new"]
        d = Derivation(overrides)
        _step(d, "percent_change_formula", ["*", ["/", ["group", ["-", new, old]], old], 100])
        change = d.compute(E.sym(["-", new, old]))
        _step(d, "subtract", ["*", ["/", _dec(change), old], 100], change)
        ratio = d.compute(change / E.sym(old))
        _step(d, "divide", ["*", _dec(ratio), 100], ratio)
        pct = d.compute(ratio * 100)
        _step(d, "multiply_by_100", _dec(pct), pct)
        return d.steps

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        old, new = params["old"], params["new"]
        d = Derivation()
        if rule == "over_new_value":
            _step(d, "mal:" + rule, ["*", ["/", ["group", ["-", new, old]], new], 100])
            change = E.sym(["-", new, old])
            _step(d, "subtract", ["*", ["/", _dec(change), new], 100], change)
            ratio = change / E.sym(new)
            _step(d, "divide", ["*", E.leaf(ratio, decimal=True), 100], ratio)
            pct = ratio * 100
            _step(d, "multiply_by_100", E.leaf(pct, decimal=True), pct)
            return d.steps
        if rule == "change_not_percent":
            _step(d, "mal:" + rule, ["-", new, old])
            change = E.sym(["-", new, old])
            _step(d, "subtract", _dec(change), change)
            return d.steps
        return None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return (E.sym(params["new"]) / E.sym(params["old"]) - 1) * 100

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        old, new = Fraction(params["old"]), Fraction(params["new"])
        v = 100 * new / old - 100
        return sympy.Rational(v.numerator, v.denominator)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer, decimal=True) + "%", E.num_latex(answer, decimal=True) + r"\%"

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "latex": rf"{params['old']} \to {params['new']}"}
