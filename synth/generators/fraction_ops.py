"""Fraction families: adding unlike fractions, multiplying and dividing fractions."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import gcd, lcm
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.presentation import Vocabulary, form_request, label_last

_step = E.add_step



def _signed_chain(first: E.Node, rest: list[tuple[str, E.Node]]) -> E.Node:
    out = first
    for sign, node in rest:
        out = [sign, out, node]
    return out


def _lowest_terms_steps(d: Derivation, num: sympy.Basic, den: int, answer: sympy.Rational) -> None:
    """``num/den`` reduced by the common factor the clean solution has (none: nothing to show).

    The factor comes from the true answer, not from ``num``, so an injected slip never changes
    which steps exist; dividing a slipped numerator by it is still exact arithmetic.
    """
    g = den // int(answer.q) if answer != 0 else 1
    if g <= 1:
        return
    node = ["frac", ["/", E.leaf(num), g], ["/", den, g]]
    _step(d, "divide_by_common_factor", node)
    reduced = d.compute(E.sym(node))
    _step(d, "simplify_fraction", E.leaf(reduced), reduced)


def _reduce_steps(d: Derivation, num: int, den: int) -> None:
    """``num/den`` in lowest terms, shown the way the clean solutions show it."""
    g = gcd(num, den)
    if g > 1 and den != 0:
        _step(d, "divide_by_common_factor", ["frac", ["/", num, g], ["/", den, g]])
        _step(d, "simplify_fraction", E.leaf(Fraction(num, den)), sympy.Rational(num, den))


@register
class AddUnlikeFractions(Family):
    id = "arithmetic.fractions.add_unlike"
    domain = "arithmetic"
    subdomain = "fractions"
    grade_band = "4-6"
    malrules = (
        MalRule("add_across", "formula_misuse", "adds the numerators and adds the denominators"),
        MalRule("scale_denominator_only", "invalid_inference",
                "rewrites each fraction over the common denominator without scaling its numerator"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        count, top, subtract = {"easy": (2, 10, False), "medium": (2, 12, True), "hard": (3, 12, True)}[difficulty]
        while True:
            dens = [int(rng.integers(2, top + 1)) for _ in range(count)]
            nums = [int(rng.integers(1, d)) for d in dens]
            signs = ["+" if not subtract or rng.random() < 0.5 else "-" for _ in range(count - 1)]
            fracs = [Fraction(n, d) for n, d in zip(nums, dens)]
            if len(set(dens)) < count or any(f.denominator != d for f, d in zip(fracs, dens)):
                continue  # unlike denominators, each fraction written in lowest terms
            total = fracs[0] + sum((f if s == "+" else -f) for s, f in zip(signs, fracs[1:]))
            lcd = lcm(*dens)
            if total <= 0 or lcd > 120 or (difficulty != "easy" and lcd == int(np.prod(dens))):
                continue  # medium and hard need a common denominator smaller than the product
            return {"fractions": [[n, d] for n, d in zip(nums, dens)], "signs": signs, "answer_form": "fraction"}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        fracs, signs = params["fractions"], params["signs"]
        lcd = lcm(*(d for _, d in fracs))
        d = Derivation(overrides)
        shown: list[E.Node] = [
            ["frac", n, den] if den == lcd else ["frac", ["*", n, lcd // den], ["*", den, lcd // den]]
            for n, den in fracs]

        def whole() -> E.Node:
            return _signed_chain(shown[0], list(zip(signs, shown[1:])))

        _step(d, "common_denominator", whole())
        numerators: list[E.Node] = []
        for j, (n, den) in enumerate(fracs):
            if den != lcd:
                new = d.compute(sympy.Integer(n * (lcd // den)))
                shown[j] = ["frac", E.leaf(new), lcd]
                _step(d, "scale_numerator", whole(), new)
            numerators.append(shown[j][1])
        combined = _signed_chain(numerators[0], list(zip(signs, numerators[1:])))
        _step(d, "combine_numerators", ["frac", combined, lcd])
        top = d.compute(E.sym(combined))
        _step(d, "evaluate_numerator", ["frac", E.leaf(top), lcd], top)
        _lowest_terms_steps(d, top, lcd, self.initial(params))
        return label_last(d.steps, "Sum") if all(s == "+" for s in signs) else d.steps

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        return Vocabulary({"sum": self.initial(params)}) if all(s == "+" for s in params["signs"]) else None

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        fracs, signs = params["fractions"], params["signs"]
        d = Derivation()
        if rule == "add_across" and all(sg == "+" for sg in signs):
            nums, dens = [n for n, _ in fracs], [den for _, den in fracs]
            _step(d, "mal:add_across", ["frac", E.sum_of(nums), E.sum_of(dens)])
            _step(d, "evaluate", ["frac", sum(nums), sum(dens)])
            _reduce_steps(d, sum(nums), sum(dens))
            return d.steps
        if rule == "scale_denominator_only":
            lcd = lcm(*(den for _, den in fracs))
            shown = [["frac", n, den if den == lcd else ["*", den, lcd // den]] for n, den in fracs]
            _step(d, "mal:scale_denominator_only", _signed_chain(shown[0], list(zip(signs, shown[1:]))))
            plain = [["frac", n, lcd] for n, _ in fracs]
            _step(d, "multiply_denominators", _signed_chain(plain[0], list(zip(signs, plain[1:]))))
            combined = _signed_chain(fracs[0][0], [(sg, n) for sg, (n, _) in zip(signs, fracs[1:])])
            _step(d, "combine_numerators", ["frac", combined, lcd])
            top = int(E.value(combined))
            _step(d, "evaluate_numerator", ["frac", top, lcd], sympy.Integer(top))
            _reduce_steps(d, top, lcd)
            return d.steps
        return None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        total = sympy.Rational(*params["fractions"][0])
        for s, (n, den) in zip(params["signs"], params["fractions"][1:]):
            total += sympy.Rational(n, den) if s == "+" else -sympy.Rational(n, den)
        return total

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Cross-multiplication with the product of denominators (not the LCD route).
        num, den = params["fractions"][0]
        for s, (n, d) in zip(params["signs"], params["fractions"][1:]):
            num, den = num * d + (n * den if s == "+" else -n * den), den * d
        return sympy.Rational(num, den)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        node = _signed_chain(["frac", *params["fractions"][0]],
                             [(s, ["frac", *f]) for s, f in zip(params["signs"], params["fractions"][1:])])
        words = [f"{n}/{d}" for n, d in params["fractions"]]
        return {**params, "expression": E.text(node), "latex": E.latex(node), "words": words,
                "all_add": all(s == "+" for s in params["signs"]), "n": len(words),
                "form_request": form_request(params["answer_form"])}


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
        top = {"easy": 9, "medium": 12, "hard": 12}[difficulty]
        while True:
            op = "*" if difficulty == "easy" else ("*", "/")[int(rng.integers(2))]
            a = [int(rng.integers(1, top)), int(rng.integers(2, top + 1))]
            b = [int(rng.integers(1, top)), int(rng.integers(2, top + 1))]
            whole = [int(rng.integers(1, 4)) if difficulty == "hard" else 0 for _ in range(2)]
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
        _lowest_terms_steps(d, num, den, self.initial(params))
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
        _reduce_steps(d, num, den)
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
