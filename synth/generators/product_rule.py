"""The product rule: d/dx of (polynomial)(polynomial), expanded and collected."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators import terms as T
from synth.generators._intpoly import (
    VARS,
    Poly,
    int_poly,
    poly_derivative,
    poly_times,
    poly_value,
    random_poly,
)
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.generators.terms import Piece
from synth.polynomials import expand_exact, to_sympy


def _product_pieces(p: Poly, q: Poly, var: str) -> list[Piece]:
    """Every term of p × q as it comes out of the brackets, before collecting."""
    return [T.mono(a * b, var, m + n) for m, a in sorted(p.items(), reverse=True)
            for n, b in sorted(q.items(), reverse=True)]


def _bracketed_product(p: Poly, q: Poly, var: str, negative: bool = False) -> Piece:
    gp, gq = T.group(T.poly(p, var)), T.group(T.poly(q, var))
    x = sympy.Symbol(var)
    value = poly_value(p, x) * poly_value(q, x)
    return T.raw(-value if negative else value, gp.text + gq.text, gp.latex + gq.latex, negative)


def collect(d: Derivation, pieces: list[Piece], var: str) -> None:
    """Gather like terms (one line), then collect each power that has several terms (one line each)."""
    x = sympy.Symbol(var)
    by_power: dict[int, list[sympy.Basic]] = {}
    for p in pieces:
        n, c = _degree_coeff(p.value, x)
        by_power.setdefault(n, []).append(c)
    gathered = [(n, c) for n in sorted(by_power, reverse=True) for c in by_power[n]]
    shown = [T.mono(c, var, n) for n, c in gathered]
    if [s.text for s in shown] != [p.text for p in pieces]:
        T.add_line(d, "gather_like_terms", shown)
    done: dict[int, sympy.Basic] = {}
    for n in sorted(by_power, reverse=True):
        if len(by_power[n]) < 2:
            continue
        done[n] = d.compute(sympy.Add(*by_power[n]))
        line = []
        for m in sorted(by_power, reverse=True):
            if m in done:
                if done[m] != 0:
                    line.append(T.mono(done[m], var, m))
            else:
                line.extend(T.mono(c, var, m) for c in by_power[m])
        T.add_line(d, "collect_like_terms", line or [T.num(0)], done[n])


def _degree_coeff(term: sympy.Expr, x: sympy.Symbol) -> tuple[int, sympy.Basic]:
    """(n, c) of a monomial c·xⁿ, as sympy.Poly(term, x).terms() gives it (read off directly: Poly costs ~0.3 ms)."""
    c, rest = term.as_coeff_Mul()
    if c.is_Rational:
        if rest is sympy.S.One:
            return 0, c
        if rest == x:
            return 1, c
        if rest.is_Pow and rest.base == x and rest.exp.is_Integer and rest.exp > 0:
            return int(rest.exp), c
    ((k,), c), = sympy.Poly(term, x).terms()
    return k, c


@dataclass(frozen=True)
class _Level:
    u: int | tuple[int, int]  # the first factor's degree, or the range (lo, hi − 1) it is drawn from
    v: int | tuple[int, int]  # the second factor's (each factor a power of x plus a constant)
    u_linear_term: bool  # the first factor has a linear term too (three terms)
    top: int  # coefficients up to this size


_LEVELS = {"easy": _Level(2, 1, u_linear_term=False, top=6),
           "medium": _Level((2, 4), (1, 4), u_linear_term=False, top=9),
           "hard": _Level((2, 5), (2, 4), u_linear_term=True, top=9)}


def _degree(rng: np.random.Generator, spec: int | tuple[int, int]) -> int:
    return spec if isinstance(spec, int) else int(rng.integers(*spec))


@register
class ProductRule(Family):
    """(uv)′ = u′v + uv′ for two polynomial factors, then multiplied out and collected.

    easy: (ax² + b)(cx + d); medium: degrees up to 3; hard: a three-term factor.
    """

    id = "calculus.derivative.product_rule"
    domain = "calculus"
    subdomain = "derivatives"
    grade_band = "11-12"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("product_of_derivatives", "formula_misuse", "differentiates a product as u′v′"),
        MalRule("minus_instead_of_plus", "formula_misuse", "writes u′v − uv′ (the quotient rule's numerator)"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        var = VARS[int(rng.integers(len(VARS)))]
        m, n = _degree(rng, level.u), _degree(rng, level.v)
        u = random_poly(rng, [m, 1, 0] if level.u_linear_term else [m, 0], level.top)
        v = random_poly(rng, [n, 0], level.top)
        return {"var": var, "u": {str(k): c for k, c in u.items()}, "v": {str(k): c for k, c in v.items()}}

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        u, v = int_poly(params["u"]), int_poly(params["v"])
        x = sympy.Symbol(params["var"])
        return (poly_value(poly_derivative(u), x) * poly_value(v, x)
                + poly_value(u, x) * poly_value(poly_derivative(v), x))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Differentiate the expanded product term by term: no product rule involved.
        product = poly_times(int_poly(params["u"]), int_poly(params["v"]))
        return poly_value(poly_derivative(product), sympy.Symbol(params["var"]))

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        return self._derive(params, {}, rule) if rule in ("product_of_derivatives", "minus_instead_of_plus") else None

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        var, u, v = params["var"], int_poly(params["u"]), int_poly(params["v"])
        du, dv = poly_derivative(u), poly_derivative(v)
        d = Derivation(overrides)
        if mal == "product_of_derivatives":
            T.add_line(d, "multiply_derivatives", [_bracketed_product(du, dv, var)])
            pieces = _product_pieces(du, dv, var)
            T.add_line(d, "multiply_out", pieces)
            collect(d, pieces, var)
            return d.steps
        minus = mal == "minus_instead_of_plus"
        first, second = _bracketed_product(du, v, var), _bracketed_product(u, dv, var, negative=minus)
        T.add_line(d, "product_rule" if not minus else "quotient_rule_numerator", [first, second])
        left = _product_pieces(du, v, var)
        lead = d.compute(left[0].value.as_coeff_Mul()[0])
        left[0] = T.mono(lead, var, _degree_coeff(left[0].value, sympy.Symbol(var))[0])
        T.add_line(d, "multiply_out_first", left + [second], lead)
        right = _product_pieces(u, dv, var)
        if minus:
            x = sympy.Symbol(var)
            right = [T.mono(-p.value.as_coeff_Mul()[0], var, _degree_coeff(p.value, x)[0]) for p in right]
        T.add_line(d, "multiply_out_second", left + right)
        collect(d, left + right, var)
        return d.steps

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return _poly_answer(answer, params["var"])

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        f = _bracketed_product(int_poly(params["u"]), int_poly(params["v"]), params["var"])
        return {**params, "function": f.text, "latex": f.latex}


def _poly_answer(answer: sympy.Basic, var: str) -> tuple[str, str]:
    x = sympy.Symbol(var)
    expansion = expand_exact(answer, (x,))  # exact: sympy.expand and Poly cost about a millisecond
    if expansion is not None and expansion.rational:
        coeffs = {n: to_sympy(c) for (n,), c in expansion.terms.items()}
    else:
        coeffs = {n: c for (n,), c in sympy.Poly(sympy.expand(answer), x).terms()}
    _, text, latex = T.line(T.poly(coeffs, var))
    return text, latex
