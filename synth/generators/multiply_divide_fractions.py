"""Multiplying and dividing fractions (and mixed numbers)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import gcd
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._fraction_steps import lowest_terms_steps, reduce_fraction_steps
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.presentation import Vocabulary, form_request, label_last

_step = E.add_step


# largest denominator, division allowed (else multiplication only), mixed numbers
_LEVELS = {"easy": (9, False, False), "medium": (12, True, False), "hard": (12, True, True)}


@register
class MultiplyDivideFractions(Family):
    id = "arithmetic.fractions.multiply_divide"
    domain = "arithmetic"
    subdomain = "fractions"
    grade_band = "5-7"
    malrules = (
        MalRule("divide_without_reciprocal", "formula_misuse",
                "divides fractions by multiplying straight across, without the reciprocal"),
        MalRule("reciprocal_of_first", "theorem_misapplication",
                "turns the first fraction upside down instead of the divisor"),
        MalRule("mixed_whole_plus_numerator", "incorrect_fact",
                "takes a mixed number such as 2 1/3 to mean (2 + 1)/3"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        top, divide, mixed = _LEVELS[difficulty]
        while True:
            op = ("*", "/")[int(rng.integers(2))] if divide else "*"
            a = [int(rng.integers(1, top)), int(rng.integers(2, top + 1))]
            b = [int(rng.integers(1, top)), int(rng.integers(2, top + 1))]
            whole = [int(rng.integers(1, 4)) if mixed else 0 for _ in range(2)]
            if gcd(*a) != 1 or gcd(*b) != 1 or a[0] >= a[1] or b[0] >= b[1]:
                continue
            fa, fb = self._improper(a, whole[0]), self._improper(b, whole[1])
            num, den = (fa.numerator * fb.numerator, fa.denominator * fb.denominator) if op == "*" else (
                fa.numerator * fb.denominator, fa.denominator * fb.numerator)
            if gcd(num, den) > 1 and num < 400 and den < 400:
                return {"a": a, "b": b, "whole": whole, "op": op, "answer_form": "fraction"}

    @staticmethod
    def _improper(f: list[int], whole: int) -> Fraction:
        return Fraction(whole * f[1] + f[0], f[1])

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        (an, ad), (bn, bd), whole, op = params["a"], params["b"], params["whole"], params["op"]
        d = Derivation(overrides)
        left: E.Node = ["frac", an, ad]
        right: E.Node = ["frac", bn, bd]
        if any(whole):  # mixed numbers become improper fractions first
            left = ["frac", ["+", ["*", whole[0], ad], an], ad] if whole[0] else left
            right = ["frac", ["+", ["*", whole[1], bd], bn], bd] if whole[1] else right
            _step(d, "mixed_to_improper", [op, left, right])
            if whole[0]:
                top = d.compute(sympy.Integer(whole[0] * ad + an))
                left = ["frac", E.leaf(top), ad]
                _step(d, "evaluate_numerator", [op, left, right], top)
            if whole[1]:
                top = d.compute(sympy.Integer(whole[1] * bd + bn))
                right = ["frac", E.leaf(top), bd]
                _step(d, "evaluate_numerator", [op, left, right], top)
        if op == "/":
            right = ["frac", right[2], right[1]]
            _step(d, "multiply_by_reciprocal", ["*", left, right])
        _step(d, "multiply_across", ["frac", ["*", left[1], right[1]], ["*", left[2], right[2]]])
        num = d.compute(E.sym(["*", left[1], right[1]]))
        den = int(E.value(["*", left[2], right[2]]))
        _step(d, "multiply_numerators", ["frac", E.leaf(num), den], num)
        lowest_terms_steps(d, num, den, self.initial(params))
        return label_last(d.steps, self._term(params))

    @staticmethod
    def _term(params: dict[str, Any]) -> str:
        return "Product" if params["op"] == "*" else "Quotient"

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        return Vocabulary({self._term(params): self.initial(params)})

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        (an, ad), (bn, bd), whole, op = params["a"], params["b"], params["whole"], params["op"]
        if rule == "mixed_whole_plus_numerator" and not any(whole):
            return None
        if rule in ("divide_without_reciprocal", "reciprocal_of_first") and op != "/":
            return None
        if rule not in {r.id for r in self.malrules}:
            return None
        d = Derivation()
        left: E.Node = ["frac", an, ad]
        right: E.Node = ["frac", bn, bd]
        if any(whole):
            glue = rule == "mixed_whole_plus_numerator"

            def improper(w: int, n: int, den: int) -> E.Node:
                return ["frac", ["+", w, n] if glue else ["+", ["*", w, den], n], den] if w else ["frac", n, den]

            left, right = improper(whole[0], an, ad), improper(whole[1], bn, bd)
            _step(d, "mal:" + rule if glue else "mixed_to_improper", [op, left, right])
            for side in (0, 1):
                if whole[side]:
                    top = int(E.value((left, right)[side][1]))
                    node = ["frac", top, (ad, bd)[side]]
                    left, right = (node, right) if side == 0 else (left, node)
                    _step(d, "evaluate_numerator", [op, left, right], sympy.Integer(top))
        across = rule == "divide_without_reciprocal"
        if op == "/" and not across:
            if rule == "reciprocal_of_first":
                left = ["frac", left[2], left[1]]
            else:
                right = ["frac", right[2], right[1]]
            _step(d, "mal:" + rule if rule == "reciprocal_of_first" else "multiply_by_reciprocal",
                  ["*", left, right])
        _step(d, "mal:" + rule if across else "multiply_across",
              ["frac", ["*", left[1], right[1]], ["*", left[2], right[2]]])
        num, den = int(E.value(["*", left[1], right[1]])), int(E.value(["*", left[2], right[2]]))
        _step(d, "multiply_numerators", ["frac", num, den], sympy.Integer(num))
        reduce_fraction_steps(d, num, den)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        fa = self._improper(params["a"], params["whole"][0])
        fb = self._improper(params["b"], params["whole"][1])
        v = fa * fb if params["op"] == "*" else fa / fb
        return sympy.Rational(v.numerator, v.denominator)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        (an, ad), (bn, bd), (wa, wb) = params["a"], params["b"], params["whole"]
        a = sympy.Integer(wa) + sympy.Rational(an, ad)
        b = sympy.Integer(wb) + sympy.Rational(bn, bd)
        return a * b if params["op"] == "*" else a * b**-1

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        def word(f: list[int], whole: int) -> str:
            return f"{whole} {f[0]}/{f[1]}" if whole else f"{f[0]}/{f[1]}"

        def tex(f: list[int], whole: int) -> str:
            return (f"{whole}" if whole else "") + rf"\frac{{{f[0]}}}{{{f[1]}}}"

        a, b = word(params["a"], params["whole"][0]), word(params["b"], params["whole"][1])
        sign, tsign = ("×", r"\times") if params["op"] == "*" else ("÷", r"\div")
        return {**params, "left": a, "right": b, "multiply": params["op"] == "*",
                "form_request": form_request(params["answer_form"]),
                "expression": f"{a} {sign} {b}",
                "latex": f"{tex(params['a'], params['whole'][0])} {tsign} {tex(params['b'], params['whole'][1])}"}
