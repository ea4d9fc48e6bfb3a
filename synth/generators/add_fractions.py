"""Adding and subtracting unlike fractions over a common denominator."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import lcm
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._fraction_steps import lowest_terms_steps, reduce_fraction_steps
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.presentation import Vocabulary, form_request, label_last

_step = E.add_step


def _signed_chain(first: E.Node, rest: list[tuple[str, E.Node]]) -> E.Node:
    out = first
    for sign, node in rest:
        out = [sign, out, node]
    return out


# fractions, largest denominator, subtraction allowed, a common denominator smaller than the product required
_LEVELS = {"easy": (2, 10, False, False), "medium": (2, 12, True, True), "hard": (3, 12, True, True)}


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
        count, top, subtract, smaller_lcd = _LEVELS[difficulty]
        while True:
            dens = [int(rng.integers(2, top + 1)) for _ in range(count)]
            nums = [int(rng.integers(1, d)) for d in dens]
            signs = ["+" if not subtract or rng.random() < 0.5 else "-" for _ in range(count - 1)]
            fracs = [Fraction(n, d) for n, d in zip(nums, dens)]
            if len(set(dens)) < count or any(f.denominator != d for f, d in zip(fracs, dens)):
                continue  # unlike denominators, each fraction written in lowest terms
            total = fracs[0] + sum((f if s == "+" else -f) for s, f in zip(signs, fracs[1:]))
            lcd = lcm(*dens)
            if total <= 0 or lcd > 120 or (smaller_lcd and lcd == int(np.prod(dens))):
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
        lowest_terms_steps(d, top, lcd, self.initial(params))
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
            reduce_fraction_steps(d, sum(nums), sum(dens))
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
            reduce_fraction_steps(d, top, lcd)
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
