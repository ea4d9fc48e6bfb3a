"""Quadratic equations solved by factoring: split the middle term, group, then the zero-product rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators._equation import VARS, Term, const, eq_step, side, x_term
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number, latex_number


def _factor(p: int, q: int, var: str) -> list[Term]:
    """The terms of ``px + q``."""
    return [x_term(p, var), const(q)] if q else [x_term(p, var)]


def _bracketed(p: int, q: int, var: str, latex: bool = False) -> str:
    return rf"\left({side(_factor(p, q, var), True)[1]}\right)" if latex else f"({side(_factor(p, q, var))[1]})"


def _either(parts: list[tuple[sympy.Expr, str, str]]) -> tuple[sympy.Basic, str, str]:
    """``A or B`` for one-variable equations: the value is ``(a)(b) = 0``, same solution set."""
    value = sympy.Eq(sympy.Mul(*(p[0] for p in parts), evaluate=False), 0, evaluate=False)
    return value, " or ".join(p[1] for p in parts), r" \text{ or } ".join(p[2] for p in parts)


@dataclass(frozen=True)
class _Level:
    leading: bool  # the x² coefficient is 2, 3 or 5, with a fractional root (else 1)
    rearrange: bool  # a constant stands on the right (x² + bx = k), to be moved first


_LEVELS = {"easy": _Level(leading=False, rearrange=False), "medium": _Level(leading=False, rearrange=True),
           "hard": _Level(leading=True, rearrange=False)}


@register
class QuadraticFactoring(Family):
    """Solve by splitting the middle term, grouping, and the zero-product rule.

    easy: x² + bx + c = 0; medium: x² + bx = k (rearrange first); hard: px² + bx + c = 0.
    The solution is a pair of equations joined by ``or``; its value is ``(x − r₁)(x − r₂) = 0``.
    """

    id = "algebra.quadratic.factoring"
    domain = "algebra"
    subdomain = "quadratic_equations"
    grade_band = "9-10"
    malrules = (
        MalRule("root_keeps_bracket_sign", "invalid_inference",
                "reads each root off its bracket with the sign it has there: (x + 3) = 0 gives x = 3"),
        MalRule("single_root", "invalid_assumption",
                "assumes the equation has one solution and solves only the first bracket"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        var = VARS[int(rng.integers(len(VARS)))]
        while True:
            p = int(rng.choice([2, 3, 5])) if level.leading else 1
            q = int(rng.integers(-9, 10))
            s = int(rng.integers(-9, 10))
            roots = {sympy.Rational(-s), sympy.Rational(-q, p)}
            # distinct, nonzero roots; a non-trivial middle term; hard needs a fractional root
            if len(roots) == 2 and 0 not in roots and p * s + q != 0 and (
                    not level.leading or q % p != 0):
                k = int(rng.choice([-1, 1])) * int(rng.integers(1, 21)) if level.rearrange else 0
                return {"var": var, "p": p, "q": q, "s": s, "k": k}

    def _coefficients(self, params: dict[str, Any]) -> tuple[int, int, int]:
        p, q, s = params["p"], params["q"], params["s"]
        return p, p * s + q, q * s

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        var, p, q, s, k = params["var"], params["p"], params["q"], params["s"], params["k"]
        a, b, c = self._coefficients(params)
        x = sympy.Symbol(var)
        d = Derivation(overrides)
        sq = Term(a * x**2, ("" if a == 1 else str(a)) + f"{var}^2", ("" if a == 1 else str(a)) + f"{var}^2", False)
        if k:  # medium: the question has x² + bx + (c + k) = k; move k across first
            e = c + k
            moved = [sq, x_term(b, var)] + ([const(e)] if e else []) + [const(-k)]
            eq_step(d, "subtract_both_sides" if k > 0 else "add_both_sides", moved, [const(0)])
            c_shown = d.compute(sympy.Integer(c))
            eq_step(d, "simplify", [sq, x_term(b, var), const(c_shown)], [const(0)], c_shown)
        eq_step(d, "split_middle_term", [sq, x_term(p * s, var), x_term(q, var), const(c)], [const(0)])
        group = Term(p * x * (x + s), ("" if p == 1 else str(p)) + f"{var}{_bracketed(1, s, var)}",
                     ("" if p == 1 else str(p)) + f"{var}{_bracketed(1, s, var, True)}", False)
        second = Term(q * (x + s), f"{abs(q)}{_bracketed(1, s, var)}", f"{abs(q)}{_bracketed(1, s, var, True)}", q < 0)
        eq_step(d, "factor_pairs", [group, second], [const(0)])
        both = Term((x + s) * (p * x + q), _bracketed(1, s, var) + _bracketed(p, q, var),
                    _bracketed(1, s, var, True) + _bracketed(p, q, var, True), False)
        eq_step(d, "factor_common_bracket", [both], [const(0)])

        def eq(terms: list[Term], rhs: sympy.Basic) -> tuple[sympy.Expr, str, str]:
            lv, lt = side(terms)
            return lv - rhs, f"{lt} = {format_number(rhs)}", f"{side(terms, True)[1]} = {latex_number(rhs)}"

        def add_either(rule: str, parts: list[tuple[sympy.Expr, str, str]], result: sympy.Basic | None) -> None:
            value, text, latex = _either(parts)
            d.add(StepDraft(rule=rule, value=value, text=text, latex=latex, result=result))

        first_done = eq(_factor(1, s, var), sympy.Integer(0))
        second_open = eq(_factor(p, q, var), sympy.Integer(0))
        add_either("zero_product", [first_done, second_open], None)
        r1 = d.compute(sympy.Integer(-s))
        add_either("solve_linear", [eq([x_term(1, var)], r1), second_open], r1)
        if p != 1:
            rhs = d.compute(sympy.Integer(-q))
            add_either("subtract_both_sides" if q > 0 else "add_both_sides",
                       [eq([x_term(1, var)], r1), eq([x_term(p, var)], rhs)], rhs)
        else:
            rhs = sympy.Integer(-q)
        r2 = d.compute(rhs / p)
        add_either("solve_linear", [eq([x_term(1, var)], r1), eq([x_term(1, var)], r2)], r2)
        return d.steps

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        clean = self.derive(params)
        solve = [i for i, st in enumerate(clean, start=1) if st.rule in ("solve_linear", "subtract_both_sides",
                                                                         "add_both_sides") and i > 2]
        if rule == "root_keeps_bracket_sign":
            p, q, s = params["p"], params["q"], params["s"]
            # Replay with each computed root (or p·x = −q) given the bracket's own sign.
            wrong = {solve[0]: sympy.Integer(s)}
            if p != 1:
                wrong[solve[1]] = sympy.Integer(q)
            else:
                wrong[solve[-1]] = sympy.Integer(q)
            steps = self.derive(params, wrong)
            k = solve[0] - 1
            return [*steps[:k], replace(steps[k], rule="mal:" + rule), *steps[k + 1:]]
        if rule == "single_root":
            var, s = params["var"], params["s"]
            k = next(i for i, st in enumerate(clean) if st.rule == "zero_product")
            first = [x_term(1, var), const(s)] if s else [x_term(1, var)]
            d = Derivation(steps=list(clean[:k]))
            eq_step(d, "mal:single_root", first, [const(0)])
            eq_step(d, "solve_linear", [x_term(1, var)], [const(-s)], sympy.Integer(-s))
            return d.steps
        return None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        a, b, c = self._coefficients(params)
        x = sympy.Symbol(params["var"])
        return sympy.Eq(a * x**2 + b * x + c + params["k"], params["k"], evaluate=False)

    def answer_of(self, value: sympy.Basic) -> sympy.Basic:
        """The solution set, encoded as the monic polynomial whose roots it is (an expression,
        so the pipeline can subtract answers; ``x² + 3x − 10`` stands for ``x = 2 or x = −5``)."""
        if not isinstance(value, sympy.Eq):
            return value
        poly = sympy.Poly(sympy.expand(value.lhs - value.rhs), *sorted(value.free_symbols, key=str))
        return poly.monic().as_expr() if poly.total_degree() > 0 else value.lhs - value.rhs

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Quadratic formula on the question's coefficients, then Vieta: x² − (sum)x + product.
        a, b, c = self._coefficients(params)
        root = sympy.sqrt(sympy.Integer(b * b - 4 * a * c))
        r1, r2 = (-b + root) / (2 * a), (-b - root) / (2 * a)
        x = sympy.Symbol(params["var"])
        return sympy.expand(x**2 - (r1 + r2) * x + r1 * r2)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        var = params["var"]
        roots = [sympy.Integer(-params["s"]), sympy.Rational(-params["q"], params["p"])]
        return (" or ".join(f"{var} = {format_number(r)}" for r in roots),
                r" \text{ or } ".join(f"{var} = {latex_number(r)}" for r in roots))

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        a, b, c = self._coefficients(params)
        var, k = params["var"], params["k"]
        x = sympy.Symbol(var)
        sq = Term(a * x**2, ("" if a == 1 else str(a)) + f"{var}^2", ("" if a == 1 else str(a)) + f"{var}^2", False)
        left = [sq, x_term(b, var)] + ([const(c + k)] if c + k != 0 else [])
        text = f"{side(left)[1]} = {format_number(sympy.Integer(k))}"
        latex = f"{side(left, True)[1]} = {k}"
        return {**params, "equation": text, "latex": latex}
