"""Percentages: a percent of a quantity (and successive increases or decreases), percent change."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft

_step = E.add_step
_dec = E.dec

_NICE_PERCENTS = (5, 8, 10, 12, 15, 16, 18, 20, 25, 30, 35, 40, 45, 60, 65, 75, 80)




@register
class PercentOfQuantity(Family):
    """easy: p% of Q; medium: Q increased or decreased by p%; hard: two successive changes."""

    id = "arithmetic.percent.of_quantity"
    domain = "arithmetic"
    subdomain = "percent"
    grade_band = "6-8"
    malrules = (
        MalRule("change_not_new_amount", "misinterpret_question",
                "gives the size of the increase or decrease instead of the new amount"),
        MalRule("successive_percents_add", "invalid_assumption",
                "assumes successive percentage changes can be added into one change"),
        MalRule("percent_as_divisor", "formula_misuse", "finds p% of a quantity by dividing it by p"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        n_changes = {"easy": 1, "medium": 1, "hard": 2}[difficulty]
        top = {"easy": 50, "medium": 100, "hard": 200}[difficulty]
        while True:
            quantity = int(rng.integers(2, top + 1)) * (5 if difficulty != "hard" else 10)
            changes = [[_NICE_PERCENTS[int(rng.integers(len(_NICE_PERCENTS)))],
                        "of" if difficulty == "easy" else ("up", "down")[int(rng.integers(2))]]
                       for _ in range(n_changes)]
            params = {"quantity": quantity, "changes": changes}
            if 100 % int(self.initial(params).q) == 0:  # answers in whole cents
                return params

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        if len(params["changes"]) > 1:
            return self._multipliers(d, params)
        current: sympy.Basic = sympy.Integer(params["quantity"])
        (pct, how), = params["changes"]
        q = _dec(current)

        def around(part: E.Node) -> E.Node:
            return part if how == "of" else ["+" if how == "up" else "-", q, part]

        _step(d, "one_percent", around(["*", ["/", q, 100], pct]))
        one = d.compute(current / 100)
        _step(d, "divide_by_100", around(["*", _dec(one), pct]), one)
        part = d.compute(one * pct)
        _step(d, "multiply_by_percent", around(_dec(part)), part)
        if how != "of":
            current = d.compute(current + part if how == "up" else current - part)
            _step(d, "increase" if how == "up" else "decrease", _dec(current), current)
        return d.steps

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        changes = params["changes"]
        if rule == "change_not_new_amount" and len(changes) == 1 and changes[0][1] != "of":
            steps = self.derive({**params, "changes": [[changes[0][0], "of"]]})
            return [replace(steps[0], rule="mal:" + rule), *steps[1:]]
        if rule == "successive_percents_add" and len(changes) == 2:
            net = sum(pct if how == "up" else -pct for pct, how in changes)
            d = Derivation()
            parts: E.Node = 1
            for pct, how in changes:
                parts = ["+" if how == "up" else "-", parts, ["frac", pct, 100]]
            _step(d, "mal:" + rule, ["*", params["quantity"], ["group", parts]])
            m = 1 + sympy.Rational(net, 100)
            _step(d, "evaluate_multiplier", ["*", params["quantity"], _dec(m)], m)
            r = params["quantity"] * m
            _step(d, "apply_multiplier", _dec(r), r)
            return d.steps
        if rule == "percent_as_divisor" and len(changes) == 1 and changes[0][1] == "of":
            q, pct = params["quantity"], changes[0][0]
            d = Derivation()
            _step(d, "mal:" + rule, ["/", q, pct])
            r = sympy.Rational(q, pct)
            _step(d, "divide", E.leaf(r, decimal=True), r)
            return d.steps
        return None

    @staticmethod
    def _multipliers(d: Derivation, params: dict[str, Any]) -> list[StepDraft]:
        """Successive changes: one multiplier per change, 1 ± p/100, then multiply along."""
        shown: list[E.Node] = [["group", ["+" if how == "up" else "-", 1, ["frac", pct, 100]]]
                               for pct, how in params["changes"]]
        _step(d, "percent_multipliers", E.product_of([params["quantity"], *shown]))
        for j, (pct, how) in enumerate(params["changes"]):
            m = d.compute(1 + sympy.Rational(pct, 100) if how == "up" else 1 - sympy.Rational(pct, 100))
            shown[j] = _dec(m)
            _step(d, "evaluate_multiplier", E.product_of([params["quantity"], *shown]), m)
        current: sympy.Basic = sympy.Integer(params["quantity"])
        for j in range(len(shown)):
            current = d.compute(current * E.sym(shown[j]))
            _step(d, "apply_multiplier", E.product_of([_dec(current), *shown[j + 1:]]), current)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        v = sympy.Integer(params["quantity"])
        for pct, how in params["changes"]:
            part = v * sympy.Rational(pct, 100)
            v = part if how == "of" else (v + part if how == "up" else v - part)
        return v

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Multipliers: an increase of p% is × (1 + p/100); independent of the 1% method.
        v = Fraction(params["quantity"])
        for pct, how in params["changes"]:
            rate = Fraction(pct, 100)
            v *= rate if how == "of" else (1 + rate if how == "up" else 1 - rate)
        return sympy.Rational(v.numerator, v.denominator)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer, decimal=True), E.num_latex(answer, decimal=True)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        (p1, how1), *rest = params["changes"]
        ctx = {**params, "p1": p1, "how1": how1, "p2": rest[0][0] if rest else None,
               "how2": rest[0][1] if rest else None, "n": len(params["changes"])}
        ctx["latex"] = rf"{p1}\% \text{{ of }} {params['quantity']}" if how1 == "of" else str(params["quantity"])
        return ctx


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
        while True:
            if difficulty == "easy":
                old = int(rng.integers(2, 41)) * 10
                pct = Fraction(int(rng.choice([5, 10, 20, 25, 30, 40, 50])))
            elif difficulty == "medium":
                old = int(rng.integers(10, 400))
                pct = Fraction(int(rng.integers(-40, 61)))
            else:
                old = Fraction(int(rng.integers(500, 20000)), 100)
                pct = Fraction(int(rng.integers(-300, 601)), 10)
            new = Fraction(old) * (1 + pct / 100)
            if pct != 0 and new > 0 and new.denominator in (1, 2, 4, 5, 10, 20, 25, 50, 100) and (
                    difficulty == "hard" or new.denominator == 1):
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
