"""Definite integrals of polynomials: antiderivative, then the limits substituted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators import terms as T
from synth.generators._intpoly import (
    VARS,
    int_poly,
    poly_value,
)
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number


@dataclass(frozen=True)
class _Level:
    degrees: tuple[int, ...]  # the integrand's
    positive: bool  # positive antiderivative coefficients 1-6 (else ±1-4)
    lows: tuple[int, int]  # the lower limit is drawn from lo to hi − 1
    spans: tuple[int, int]  # the upper limit is that plus lo to hi − 1
    zero_low: bool  # the lower limit may be 0


_LEVELS = {"easy": _Level((1, 0), positive=True, lows=(0, 3), spans=(1, 5), zero_low=True),
           "medium": _Level((2, 1, 0), positive=False, lows=(0, 2), spans=(1, 4), zero_low=False),
           "hard": _Level((3, 2, 0), positive=False, lows=(-3, 2), spans=(1, 4), zero_low=False)}


@register
class DefiniteIntegral(Family):
    """∫ₐᵇ of a polynomial: antiderivative F, then F(b) − F(a) evaluated line by line.

    easy: two terms, limits 0..3; medium: three terms; hard: a cubic and a negative lower limit.
    Coefficients are multiples of n + 1, so F has whole-number coefficients.
    """

    id = "calculus.integral.definite"
    domain = "calculus"
    subdomain = "integrals"
    grade_band = "11-12"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("power_not_divided", "formula_misuse", "raises the power but does not divide by the new power"),
        MalRule("lower_limit_ignored", "invalid_assumption", "takes F(a) to be 0 and reports F(b) alone"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = VARS[int(rng.integers(len(VARS)))]
        level = _LEVELS[difficulty]
        while True:
            anti = {n + 1: int(rng.choice([-1, 1])) * int(rng.integers(1, 5)) for n in level.degrees}
            if level.positive:
                anti = {n: int(rng.integers(1, 7)) for n in anti}
            lo = int(rng.integers(*level.lows))
            hi = lo + int(rng.integers(*level.spans))
            poly = {n - 1: c * n for n, c in anti.items()}
            if lo != 0 or level.zero_low:
                return {"var": var, "poly": {str(n): c for n, c in poly.items()}, "lower": lo, "upper": hi}

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        anti = {n + 1: sympy.Rational(c, n + 1) for n, c in int_poly(params["poly"]).items()}
        return sum((c * (sympy.Integer(params["upper"]) ** n - sympy.Integer(params["lower"]) ** n)
                    for n, c in anti.items()), sympy.Integer(0))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # sympy's antiderivative of the integrand, evaluated at the limits.
        x = sympy.Symbol(params["var"])
        anti = sympy.Poly(poly_value(int_poly(params["poly"]), x), x).integrate()
        return anti.eval(params["upper"]) - anti.eval(params["lower"])

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "lower_limit_ignored":
            anti = self._anti(params, None)
            if sum(c * params["lower"] ** n for n, c in anti.items()) == 0:
                return None
            return self._derive(params, {}, rule)
        return self._derive(params, {}, rule) if rule == "power_not_divided" else None

    @staticmethod
    def _anti(params: dict[str, Any], mal: str | None) -> dict[int, sympy.Rational]:
        poly = int_poly(params["poly"])
        return {n + 1: sympy.Rational(c, 1 if mal == "power_not_divided" else n + 1) for n, c in poly.items()}

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        anti = self._anti(params, mal)
        d = Derivation(overrides)
        lo, hi = params["lower"], params["upper"]
        only_upper = mal == "lower_limit_ignored"

        def f_tree(at: int) -> E.Node:
            terms: list[E.Node] = []
            for n, c in sorted(anti.items(), reverse=True):
                power: E.Node = ["pow", at, n] if n > 1 else at
                term = power if abs(c) == 1 else ["*", E.leaf(abs(c)), power]
                if not terms:
                    terms.append(term if c > 0 else ["*", E.leaf(c), power])
                else:
                    terms.append(["+" if c > 0 else "-", terms.pop(), term])
            return terms[0]

        def f_values(at: int) -> E.Node:
            out: E.Node = None
            for n, c in sorted(anti.items(), reverse=True):
                v = c * sympy.Integer(at) ** n
                out = E.leaf(v) if out is None else ["+" if v >= 0 else "-", out, E.leaf(abs(v))]
            return out

        def both(fb: E.Node, fa: E.Node) -> E.Node:
            return ["group", fb] if only_upper else ["-", ["group", fb], ["group", fa]]

        E.add_step(d, "substitute_upper_limit_only" if only_upper else "substitute_limits",
                   both(f_tree(hi), f_tree(lo)))
        E.add_step(d, "evaluate_powers", both(f_values(hi), f_values(lo)))
        fb = d.compute(sum((c * sympy.Integer(hi) ** n for n, c in anti.items()), sympy.Integer(0)))
        fa = sum((c * sympy.Integer(lo) ** n for n, c in anti.items()), sympy.Integer(0))
        if only_upper:
            E.add_step(d, "evaluate_bracket", E.leaf(fb), fb)
            return d.steps
        E.add_step(d, "evaluate_brackets", ["-", E.leaf(fb), E.leaf(fa)], fb)
        total = d.compute(fb - fa)
        E.add_step(d, "subtract", E.leaf(total), total)
        return d.steps

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer), E.num_latex(answer)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        var = params["var"]
        poly = int_poly(params["poly"])
        _, text, latex = T.line(T.poly(poly, var))
        lo, hi = params["lower"], params["upper"]
        return {**params, "integrand": text, "lower_text": format_number(sympy.Integer(lo)),
                "upper_text": format_number(sympy.Integer(hi)),
                "latex": rf"\int_{{{lo}}}^{{{hi}}} \left({latex}\right)\, d{var}"}
