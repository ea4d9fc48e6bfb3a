"""Quadratic equations ax² + bx + c = 0 solved with the formula x = (−b ± √(b² − 4ac)) / 2a."""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators import terms as T
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number
from synth.polynomials import expand_difference, expand_exact, rational_part, univariate

_VARS = ("x", "y", "t", "n")


def _square_part(n: int) -> tuple[int, int]:
    """n = k² × m with m square-free: (k, m)."""
    k, m = 1, n
    f = 2
    while f * f <= m:
        while m % (f * f) == 0:
            m //= f * f
            k *= f
        f += 1
    return k, m


def _root_text(nb: int, k: int, m: int, den: int, sign: str, latex: bool) -> str:
    """``(−5 + 4√3)/2``, ``−1 − √3``, ``(3 + √17)/4`` (den may be 1)."""
    minus = "-" if latex else "−"
    root = "" if k == 0 else ((f"{k}" if k != 1 else "") + (rf"\sqrt{{{m}}}" if latex else f"√{m}"))
    lead = E.leaf(nb, decimal=True)  # a slipped constant (3 → 0.3) is written as a pupil would
    head = E.latex(lead) if latex else E.text(lead)
    body = head if not root else (f"{head} {'+' if sign == '+' else minus} {root}" if nb else
                                  (root if sign == "+" else minus + root))
    if den == 1:
        return body
    den_t = str(den) if den > 0 else f"({minus}{-den})"
    if latex:
        return rf"\frac{{{body}}}{{{den if den > 0 else f'-{-den}'}}}"
    return f"({body})/{den_t}" if (root and nb) or " " in body else f"{body}/{den_t}"


def _pair(d: Derivation, rule: str, var: str, roots: tuple[sympy.Expr, sympy.Expr], texts: tuple[str, str],
          latexes: tuple[str, str], result: sympy.Basic | None = None) -> None:
    x = sympy.Symbol(var)
    value = sympy.Eq(sympy.Mul(x - roots[0], x - roots[1], evaluate=False), 0, evaluate=False)
    d.add(StepDraft(rule=rule, value=value, text=f"{var} = {texts[0]} or {var} = {texts[1]}",
                    latex=rf"{var} = {latexes[0]} \text{{ or }} {var} = {latexes[1]}", result=result))


def _rational_coefficients(expr: sympy.Basic, x: sympy.Symbol) -> list[Fraction] | None:
    """Coefficients of ``expr`` as a polynomial in x, highest first, when they are all rational; else None.

    Exact integer arithmetic (synth.polynomials) instead of sympy.Poly, which costs ~7x more here;
    None (the caller's sympy route) for anything else, including a constant.
    """
    expansion = expand_exact(expr, (x,))
    if expansion is None or not expansion.rational or not expansion.terms:
        return None
    coeffs = [rational_part(c) for c in univariate(expansion)]
    return coeffs if len(coeffs) > 1 else None


def _monic_rational(eq: sympy.Eq) -> sympy.Expr | None:
    """``Poly(expand(lhs − rhs)).monic().as_expr()`` for one variable and rational coefficients, else None."""
    expansion = expand_difference(eq.lhs, eq.rhs, discover=1)
    if expansion is None or len(expansion.symbols) != 1 or not expansion.rational:
        return None
    coeffs = [rational_part(c) for c in univariate(expansion)]
    if len(coeffs) < 2:
        return None
    (x,), lead = expansion.symbols, coeffs[0]
    degree = len(coeffs) - 1
    monic = [c / lead for c in coeffs]
    return sympy.Add(*(sympy.Rational(c.numerator, c.denominator) * x**(degree - k) for k, c in enumerate(monic) if c))


# What each difficulty draws: integer roots with a = 1, one fractional root, or irrational roots whose surd
# simplifies, with terms on both sides to gather first.
_LEVELS = {"easy": "integer_roots", "medium": "fractional_root", "hard": "surd_roots"}


@register
class QuadraticFormula(Family):
    """easy: a = 1 with rational roots; medium: a > 1 with rational roots; hard: irrational roots.

    Every line states both solutions (joined by ``or``), from the substituted formula to the
    simplest form: discriminant, square root (or simplified surd), then the fractions.
    """

    id = "algebra.quadratic.formula"
    domain = "algebra"
    subdomain = "quadratic_equations"
    grade_band = "9-11"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("plus_b", "formula_misuse", "starts the formula with +b instead of −b"),
        MalRule("denominator_a", "formula_misuse", "divides by a instead of 2a"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        kind = _LEVELS[difficulty]
        var = _VARS[int(rng.integers(len(_VARS)))]
        while True:
            if kind == "integer_roots":  # (x − r)(x − s): integer roots, a = 1
                r, t = (int(rng.integers(-15, 16)) for _ in range(2))
                a, b, c, moved = 1, -(r + t), r * t, [0, 0]
            elif kind == "fractional_root":  # (ax − m)(x − n): one fractional root
                a, m, n = int(rng.integers(2, 7)), int(rng.integers(-15, 16)), int(rng.integers(-12, 13))
                b, c, moved = -(a * n + m), m * n, [0, 0]
                if m % a == 0:
                    continue
            else:  # irrational roots, a surd that simplifies, and terms on both sides to gather first
                a, b, c = int(rng.integers(2, 10)), int(rng.integers(-30, 31)), int(rng.integers(-60, 61))
                moved = [int(rng.integers(-9, 10)), int(rng.integers(-20, 21))]
            disc = b * b - 4 * a * c
            if c == 0 or b == 0 or disc <= 0:
                continue
            square = math.isqrt(disc) ** 2 == disc
            if kind == "surd_roots" and (square or _square_part(disc)[0] == 1 or moved == [0, 0]):
                continue
            return {"var": var, "a": a, "b": b, "c": c, "moved": moved}

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        x = sympy.Symbol(params["var"])
        p, q = params["moved"]
        return sympy.Eq(params["a"] * x**2 + (params["b"] + p) * x + params["c"] + q, p * x + q, evaluate=False)

    def _sides(self, params: dict[str, Any]) -> tuple[list[T.Piece], list[T.Piece]]:
        """The question's two sides: ``ax² + (b + p)x + (c + q) = px + q`` (p = q = 0 below hard)."""
        var, (p, q) = params["var"], params["moved"]
        left = T.poly({2: params["a"], 1: params["b"] + p, 0: params["c"] + q}, var)
        right = [t for t in (T.mono(p, var), T.num(q)) if t.value != 0] or [T.num(0)]
        return left, right

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Vieta: the monic polynomial with the same roots, straight from the coefficients.
        x = sympy.Symbol(params["var"])
        a = sympy.Integer(params["a"])
        return x**2 + params["b"] / a * x + params["c"] / a

    def answer_of(self, value: sympy.Basic) -> sympy.Basic:
        """The solution set as the monic polynomial whose roots it is (like algebra.quadratic.factoring)."""
        if not isinstance(value, sympy.Eq):
            return value
        fast = _monic_rational(value)
        if fast is not None:
            return fast
        poly = sympy.Poly(sympy.expand(value.lhs - value.rhs), *sorted(value.free_symbols, key=str))
        return poly.monic().as_expr() if poly.total_degree() > 0 else value.lhs - value.rhs

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, -params["b"], 2 * params["a"], "2a")

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "plus_b":
            return self._derive(params, {}, params["b"], 2 * params["a"], "2a")
        if rule == "denominator_a" and params["a"] != 1:
            return self._derive(params, {}, -params["b"], params["a"], "a")
        return None

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], nb: int, den: int,
                den_form: str) -> list[StepDraft]:
        var, a, b, c = params["var"], params["a"], params["b"], params["c"]
        d = Derivation(overrides)
        p, q = params["moved"]
        if (p, q) != (0, 0):  # gather every term on the left: the formula needs ax² + bx + c = 0
            left, right = self._sides(params)
            undo = [t for t in (T.mono(-p, var), T.num(-q)) if t.value != 0]
            T.add_relation(d, "subtract_both_sides", left + undo, "=", right + undo)
            c_shown = d.compute(sympy.Integer(c))
            T.add_relation(d, "collect_like_terms", T.poly({2: a, 1: b, 0: c_shown}, var), "=", [T.num(0)], c_shown)
            c = int(c_shown)
        disc_tree = ["-", ["pow", b, 2], ["*", ["*", 4, a], c]]
        den_tree: Any = ["*", 2, a] if den_form == "2a" else a
        nb_t = E.text(nb)

        def first(sign: str, latex: bool) -> str:
            if latex:
                sq = rf"\sqrt{{{E.latex(disc_tree)}}}"
                return rf"\frac{{{E.latex(nb)} {'+' if sign == '+' else '-'} {sq}}}{{{E.latex(den_tree)}}}"
            den_t = E.text(den_tree)
            return f"({nb_t} {'+' if sign == '+' else '−'} √({E.text(disc_tree)}))/" + (
                f"({den_t})" if " " in den_t else den_t)

        disc = sympy.Integer(b * b - 4 * a * c)
        s_disc = sympy.sqrt(disc)
        roots = ((nb + s_disc) / den, (nb - s_disc) / den)
        _pair(d, "substitute_into_formula", var, roots, (first("+", False), first("-", False)),
              (first("+", True), first("-", True)))
        four_ac = 4 * a * c
        parts = ["+", b * b, -four_ac] if four_ac < 0 else ["-", b * b, four_ac]

        def sqrt_pair(inner_t: str, inner_l: str) -> tuple[tuple[str, str], tuple[str, str]]:
            texts = tuple(f"({nb_t} {s} √{inner_t})/{den}" for s in ("+", "−"))
            latexes = tuple(rf"\frac{{{E.latex(nb)} {s} \sqrt{{{inner_l}}}}}{{{den}}}" for s in ("+", "-"))
            return texts, latexes  # type: ignore[return-value]

        texts, latexes = sqrt_pair(f"({E.text(parts)})", E.latex(parts))
        _pair(d, "evaluate_powers_and_products", var, roots, texts, latexes)
        disc = d.compute(disc)
        texts, latexes = sqrt_pair(E.text(disc) if disc >= 0 else f"({E.text(disc)})", E.latex(disc))
        s_disc = sympy.sqrt(disc)
        _pair(d, "discriminant", var, ((nb + s_disc) / den, (nb - s_disc) / den), texts, latexes, disc)
        if disc <= 0 or disc.q != 1:  # only reachable through an injected slip
            return d.steps
        k, m = _square_part(int(disc))
        if m == 1:
            root = d.compute(sympy.Integer(k))
            _pair(d, "square_root", var, ((nb + root) / den, (nb - root) / den),
                  tuple(f"({nb_t} {s} {E.text(root)})/{den}" for s in ("+", "−")),  # type: ignore[arg-type]
                  tuple(rf"\frac{{{E.latex(nb)} {s} {E.latex(root)}}}{{{den}}}" for s in ("+", "-")))  # type: ignore[arg-type]
            n1 = d.compute(nb + root)
            n2 = nb - root
            _pair(d, "add_and_subtract", var, (n1 / den, n2 / den),
                  (f"{E.text(n1)}/{den}", f"{E.text(n2)}/{den}"),
                  (rf"\frac{{{E.latex(n1)}}}{{{den}}}", rf"\frac{{{E.latex(n2)}}}{{{den}}}"), n1)
            r1 = d.compute(sympy.Rational(n1, den))
            r2 = sympy.Rational(n2, den)
            _pair(d, "simplify_fractions", var, (r1, r2), (E.num_text(r1), E.num_text(r2)),
                  (E.num_latex(r1), E.num_latex(r2)), r1)
            return d.steps
        if k > 1:
            k = int(d.compute(sympy.Integer(k)))
            _pair(d, "simplify_surd", var, ((nb + k * sympy.sqrt(m)) / den, (nb - k * sympy.sqrt(m)) / den),
                  (_root_text(nb, k, m, den, "+", False), _root_text(nb, k, m, den, "-", False)),
                  (_root_text(nb, k, m, den, "+", True), _root_text(nb, k, m, den, "-", True)), k)
        g = math.gcd(math.gcd(nb, k), den)
        if g > 1:
            k2, den2 = k // g, den // g
            # The cancelled constant term is computed (24 ÷ 8 = 3), so a slip on the final line can land on it.
            nb2 = d.compute(sympy.Integer(nb // g))
            _pair(d, "cancel_common_factor", var,
                  ((nb2 + k2 * sympy.sqrt(m)) / den2, (nb2 - k2 * sympy.sqrt(m)) / den2),
                  (_root_text(nb2, k2, m, den2, "+", False), _root_text(nb2, k2, m, den2, "-", False)),
                  (_root_text(nb2, k2, m, den2, "+", True), _root_text(nb2, k2, m, den2, "-", True)), nb2)
        return d.steps

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        """Both roots in lowest terms, read off the monic polynomial with integer arithmetic."""
        var = params["var"]
        fast = _rational_coefficients(answer, sympy.Symbol(var))
        if fast is not None and len(fast) == 3:
            a2 = fast[0]
            big_b, big_c = (sympy.Rational((c / a2).numerator, (c / a2).denominator) for c in fast[1:])
        else:
            poly = sympy.Poly(answer, sympy.Symbol(var)) if answer.free_symbols else None
            if poly is None or poly.degree() != 2:
                raise ValueError(f"{answer} is not a quadratic in {var}")
            _, big_b, big_c = (sympy.Rational(c) for c in poly.monic().all_coeffs())
        scale = math.lcm(int(big_b.q), int(big_c.q))
        a, b, c = scale, int(big_b * scale), int(big_c * scale)
        disc = b * b - 4 * a * c
        if disc < 0:
            raise ValueError(f"{answer} has no real roots")
        k, m = (0, 1) if disc == 0 else _square_part(disc)
        if m == 1:
            roots = [sympy.Rational(-b + k, 2 * a), sympy.Rational(-b - k, 2 * a)]
            return (" or ".join(f"{var} = {format_number(r)}" for r in roots),
                    r" \text{ or } ".join(f"{var} = {E.num_latex(r)}" for r in roots))
        g = math.gcd(math.gcd(b, k), 2 * a)
        nb, k, den = -b // g, k // g, 2 * a // g
        texts = [_root_text(nb, k, m, den, sign, False) for sign in "+-"]
        latexes = [_root_text(nb, k, m, den, sign, True) for sign in "+-"]
        return (" or ".join(f"{var} = {t}" for t in texts), r" \text{ or } ".join(f"{var} = {t}" for t in latexes))

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        left, right = self._sides(params)
        _, lt, ll = T.line(left)
        _, rt, rl = T.line(right)
        return {**params, "equation": f"{lt} = {rt}", "latex": f"{ll} = {rl}"}
