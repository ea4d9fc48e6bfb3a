"""A percent of a quantity, and successive percent increases or decreases."""

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


# Per difficulty: how many changes, the quantity's size (a multiple of `step` up to `top` steps), and whether
# the percent is taken "of" the quantity (easy) or as an increase or decrease.
_LEVELS = {"easy": {"changes": 1, "top": 50, "step": 5, "of": True},
           "medium": {"changes": 1, "top": 100, "step": 5, "of": False},
           "hard": {"changes": 2, "top": 200, "step": 10, "of": False}}


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
        level = _LEVELS[difficulty]
        while True:
            quantity = int(rng.integers(2, level["top"] + 1)) * level["step"]
            changes = [[_NICE_PERCENTS[int(rng.integers(len(_NICE_PERCENTS)))],
                        "of" if level["of"] else ("up", "down")[int(rng.integers(2))]]
                       for _ in range(level["changes"])]
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
