"""Limits of rational functions at a point where both parts vanish: factor, cancel, substitute."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators import terms as T
from synth.generators._intpoly import (
    VARS,
)
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number
from synth.generators.terms import Piece


@lru_cache(maxsize=4096)
def _limit_at(expr: sympy.Basic, var: str, r: int) -> sympy.Basic | None:
    """The limit at r of a rational function with removable zeros: strip (x − r) from both parts.

    Polynomial division instead of sympy.cancel, which was 80 % of this family's verify time.
    None for a non-expression or a pole.
    """
    if not isinstance(expr, sympy.Expr):
        return None
    if not expr.free_symbols:
        return expr if expr.is_finite else None
    x = sympy.Symbol(var)
    num, den = sympy.fraction(expr)
    if not (num.is_polynomial(x) and den.is_polynomial(x)):
        out = sympy.cancel(expr).subs(x, r)
        return out if out.is_finite else None
    top, bottom, root = sympy.Poly(num, x), sympy.Poly(den, x), sympy.Poly(x - r, x)
    while not top.is_zero and top.eval(r) == 0 and bottom.eval(r) == 0:
        top, bottom = top.quo(root), bottom.quo(root)
    b = bottom.eval(r)
    return None if b == 0 else top.eval(r) / b


@dataclass(frozen=True)
class _Level:
    squares: bool  # k(x² − r²)/(x − r): the numerator a difference of squares
    leading: bool  # the numerator's x² coefficient is 2-4 (else 1)
    square_denominator: bool  # the denominator is x² − r² (else x − r)


_LEVELS = {"easy": _Level(squares=True, leading=False, square_denominator=False),
           "medium": _Level(squares=False, leading=False, square_denominator=False),
           "hard": _Level(squares=False, leading=True, square_denominator=True)}


@register
class RationalLimit(Family):
    """lim x→r of a rational function with a removable discontinuity: factor, cancel, substitute.

    easy: (x² − r²)/(x − r); medium: (x² + bx + c)/(x − r); hard: (px² + bx + c)/(x² − r²).
    Every line is a function with the same limit at r (lines before the substitution equal the
    question's function wherever it is defined), so steps are judged by their limit at r.
    """

    id = "calculus.limit.rational"
    domain = "calculus"
    subdomain = "limits"
    grade_band = "11-12"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("difference_of_squares_as_square", "formula_misuse", "factors x² − a² as (x − a)²"),
        MalRule("substitute_opposite", "invalid_inference",
                "substitutes x = −a after cancelling the factor (x − a), reading the root off with the wrong sign"),
        MalRule("leading_terms_ratio", "theorem_misapplication",
                "keeps only the highest powers, the rule for a limit at infinity, at a finite point"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        var = VARS[int(rng.integers(len(VARS)))]
        while True:
            r = int(rng.choice([-1, 1])) * int(rng.integers(1, 16))
            if level.squares:  # k(x² − r²)/(x − r): the numerator is k(x − r)(x + r)
                k = int(rng.choice([-1, 1])) * int(rng.integers(1, 10))
                return {"var": var, "r": r, "p": k, "s": k * r, "den_other": None}
            s = int(rng.integers(-9, 10))
            p = int(rng.integers(2, 5)) if level.leading else 1
            # the other factor (px + s) must not vanish at r, or there is nothing to cancel into
            if s != 0 and p * r + s != 0 and (not level.square_denominator or s != p * r):
                return {"var": var, "r": r, "p": p, "s": s, "den_other": r if level.square_denominator else None}

    def _factors(self, params: dict[str, Any]) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
        """(x − r), (px + s), and the denominator's other factor (1 if none)."""
        x = sympy.Symbol(params["var"])
        other = params["den_other"]
        return x - params["r"], params["p"] * x + params["s"], (x + other if other is not None else sympy.Integer(1))

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        cancel, keep, other = self._factors(params)
        return sympy.Mul(sympy.expand(cancel * keep), sympy.Pow(sympy.expand(cancel * other), -1), evaluate=False)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # L'Hôpital on the stated quotient (0/0 at r): N′(r)/D′(r), no factoring involved.
        x, r = sympy.Symbol(params["var"]), params["r"]
        cancel, keep, other = self._factors(params)
        num, den = sympy.expand(cancel * keep), sympy.expand(cancel * other)
        return sympy.diff(num, x).subs(x, r) / sympy.diff(den, x).subs(x, r)

    def judge_step(self, params: dict[str, Any], value: sympy.Basic, previous: sympy.Basic,
                   earlier: tuple[sympy.Basic, ...]) -> tuple[bool, bool] | None:
        var, r = params["var"], params["r"]
        v = _limit_at(value, var, r)
        return (v is not None and v == _limit_at(previous, var, r),
                v is not None and v == _limit_at(self.initial(params), var, r))

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        hard = params["den_other"] is not None
        if rule == "difference_of_squares_as_square" and not hard and params["s"] == params["p"] * params["r"]:
            return self._derive(params, {}, rule)
        if rule == "substitute_opposite" and not hard:  # (x + a) would vanish at −a in the hard form
            return self._derive(params, {}, rule)
        if rule == "leading_terms_ratio" and hard:  # equal degrees: the ratio of leading coefficients
            x = sympy.Symbol(params["var"])
            (num_t, num_l), (den_t, den_l) = (self._leading(params, which) for which in ("num", "den"))
            d = Derivation({})
            value = sympy.Integer(params["p"]) * x**2 / x**2
            d.add(StepDraft(rule="keep_leading_terms", value=value, text=f"{num_t}/{den_t}",
                            latex=rf"\frac{{{num_l}}}{{{den_l}}}"))
            E.add_step(d, "cancel_powers", params["p"], sympy.Integer(params["p"]))
            return d.steps
        return None

    def _leading(self, params: dict[str, Any], which: str) -> tuple[str, str]:
        c = params["p"] if which == "num" else 1
        m = T.mono(c, params["var"], 2)
        return m.text, m.latex

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        var, r, p, s, other = (params[k] for k in ("var", "r", "p", "s", "den_other"))
        x = sympy.Symbol(var)
        d = Derivation(overrides)

        def lin(a: int, b: int) -> Piece:
            return T.group([T.mono(a, var), T.num(b)])

        cancel, keep = lin(1, -r), lin(p, s)
        wrong_square = mal == "difference_of_squares_as_square"
        # The numerator of easy is x² − r²; the hard denominator is x² − r²: the misfactored one.
        if wrong_square and other is None:
            keep = lin(p, -p * r)
        den_other = lin(1, other) if other is not None else None
        if wrong_square and den_other is not None:
            den_other = lin(1, -r)
        num_t, num_l = cancel.text + keep.text, cancel.latex + keep.latex
        num_v = cancel.value * keep.value
        if den_other is None:
            den_t, den_l, den_v = cancel.text, cancel.latex, cancel.value
        else:
            den_t, den_l = f"({cancel.text}{den_other.text})", cancel.latex + den_other.latex
            den_v = cancel.value * den_other.value
        d.add(StepDraft(rule="factor" if not wrong_square else "factor_as_square", value=num_v / den_v,
                        text=f"{num_t}/{den_t}", latex=rf"\frac{{{num_l}}}{{{den_l}}}"))
        if den_other is None:
            a, b = sympy.Poly(keep.value, x).all_coeffs()
            _, after_t, after_l = T.line([T.mono(a, var), T.num(b)])
            after_v = keep.value
        else:
            after_t, after_l = f"{keep.text}/{den_other.text}", rf"\frac{{{keep.latex}}}{{{den_other.latex}}}"
            after_v = keep.value / den_other.value
        d.add(StepDraft(rule="cancel_common_factor", value=after_v, text=after_t, latex=after_l))
        at = -r if mal == "substitute_opposite" else r
        sub = {x: sympy.Integer(at)}
        if den_other is None:
            tree: E.Node = self._lin_tree(keep.value, x, at)
        else:
            tree = ["frac", self._lin_tree(keep.value, x, at), self._lin_tree(den_other.value, x, at)]
        E.add_step(d, "substitute" if mal != "substitute_opposite" else "substitute_opposite", tree)
        if den_other is None:
            result = d.compute(keep.value.subs(sub))
            E.add_step(d, "evaluate", E.leaf(result), result)
            return d.steps
        top = d.compute(keep.value.subs(sub))
        bottom = den_other.value.subs(sub)
        if bottom == 0:  # the misfactored denominator can vanish: the student stops at a division by zero
            return d.steps
        E.add_step(d, "evaluate_numerator_and_denominator", ["frac", E.leaf(top), E.leaf(bottom)], top)
        if E.text(["frac", E.leaf(top), E.leaf(bottom)]) != E.num_text(top / bottom):
            result = d.compute(top / bottom)
            E.add_step(d, "simplify_fraction", E.leaf(result), result)
        return d.steps

    @staticmethod
    def _lin_tree(expr: sympy.Expr, x: sympy.Symbol, at: int) -> E.Node:
        """``p × r + s`` with the value substituted, as a pupil writes it."""
        a, b = sympy.Poly(expr, x).all_coeffs()
        term: E.Node = at if a == 1 else ["*", int(a), at]
        return ["+" if b >= 0 else "-", term, abs(int(b))] if b != 0 else term

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer), E.num_latex(answer)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        var, r = params["var"], params["r"]
        cancel, keep, other = self._factors(params)
        x = sympy.Symbol(var)
        num = T.poly({n: c for (n,), c in sympy.Poly(sympy.expand(cancel * keep), x).terms()}, var)
        den = T.poly({n: c for (n,), c in sympy.Poly(sympy.expand(cancel * other), x).terms()}, var)
        _, nt, nl = T.line(num)
        _, dt, dl = T.line(den)
        function = f"({nt})/({dt})"
        return {**params, "function": function, "point": format_number(sympy.Integer(r)),
                "latex": rf"\lim_{{{var} \to {r}}} \frac{{{nl}}}{{{dl}}}"}
