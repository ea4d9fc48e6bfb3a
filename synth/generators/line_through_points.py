"""The equation of the line through two grid points, worked from the gradient."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import rational, sample_role
from synth.generators._grid import (
    POINT_LEVELS,
    RUN_OVER_RISE,
    TwoPointFamily,
    coef_text,
    gradient_node,
    step_counts,
    terms_text,
    two_points,
)
from synth.generators.base import Derivation, MalRule, StepDraft

X, Y = sympy.Symbol("x"), sympy.Symbol("y")


def _linear(m: Fraction, constants: Sequence[Fraction | E.Node], *, latex: bool) -> str:
    return terms_text(f"{coef_text(m, latex=latex)}x" if m != 0 else "", constants, latex=latex)


def _shift(var: str, a: int, *, latex: bool) -> str:
    """``x − 1`` or ``x + 3``: what ``var − a`` looks like once the sign is tidied."""
    return terms_text(var, [Fraction(-a)], latex=latex)


@register
class LineThroughPoints(TwoPointFamily):
    """The equation y = mx + c of the line through two grid points (point-gradient form, then tidy)."""

    id = "coordinate.line.through_points"
    domain = "coordinate_geometry"
    subdomain = "lines"
    grade_band = "8-10"
    malrules = (
        RUN_OVER_RISE,
        MalRule("intercept_is_y1", "invalid_assumption", "takes the y-coordinate of the first point as the "
                "y-intercept"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        lo, hi, scale, integer = POINT_LEVELS[difficulty]
        a, b = two_points(rng, lo, hi, scale, integer_slope=integer)
        role = sample_role(rng)
        return {"A": a, "B": b, "scale": scale, "image_role": role,
                **step_counts(rng, a, b, scale, role, offered=scale == 1)}

    def _slope(self, params: dict[str, Any], flip: bool = False) -> E.Node:
        return gradient_node(params, flip=flip)

    def _point_gradient(self, d: Derivation, params: dict[str, Any], slope: E.Node) -> Fraction:
        """Steps ``y − y1 = m × (x − x1)`` until m is one number; returns m (as computed, slips included)."""
        x1, y1 = params["A"]
        lhs_t, lhs_l = _shift("y", y1, latex=False), _shift("y", y1, latex=True)
        bracket_t, bracket_l = _shift("x", x1, latex=False), _shift("x", x1, latex=True)
        result: sympy.Basic | None = None
        while True:
            m_value = E.value(slope)
            value = sympy.Eq(Y - y1, rational(m_value) * (X - x1), evaluate=False)
            if _is_number(slope):
                text = f"{lhs_t} = {coef_text(m_value, latex=False) or '1'}({bracket_t})"
                latex = rf"{lhs_l} = {coef_text(m_value, latex=True) or '1'}\left({bracket_l}\right)"
            else:
                text = f"{lhs_t} = {E.text(slope)} × ({bracket_t})"
                latex = rf"{lhs_l} = {E.latex(slope)} \times \left({bracket_l}\right)"
            rule = "point_gradient_form" if result is None else "simplify_gradient"
            d.add(StepDraft(rule=rule, value=value, text=text, latex=latex, result=result))
            if _is_number(slope):
                return m_value
            slope, result = _reduce_once(d, slope)

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        m = self._point_gradient(d, params, self._slope(params))
        self._finish(d, params, m)
        return d.steps

    def _finish(self, d: Derivation, params: dict[str, Any], m: Fraction) -> None:
        x1, y1 = params["A"]
        mx1 = E.to_fraction(d.compute(rational(m * x1)))
        self._eq(d, "expand_bracket", Y - y1, m, [-mx1], lhs_text=_shift("y", y1, latex=False),
                 lhs_latex=_shift("y", y1, latex=True), result=mx1)
        self._eq(d, "rearrange", Y, m, [-mx1, Fraction(y1)])
        if mx1.denominator != 1:  # write y1 over the same denominator before adding
            q = mx1.denominator
            self._eq(d, "common_denominator", Y, m, [-mx1, ["frac", y1 * q, q]])
        c = E.to_fraction(d.compute(rational(y1 - mx1)))
        self._eq(d, "collect_constants", Y, m, [c], result=c)

    @staticmethod
    def _eq(d: Derivation, rule: str, lhs: sympy.Expr, m: Fraction, constants: Sequence[Fraction | E.Node], *,
            lhs_text: str = "y", lhs_latex: str = "y", result: Fraction | None = None) -> None:
        total = sum((E.value(c) if isinstance(c, list) else Fraction(c) for c in constants), Fraction(0))
        value = sympy.Eq(lhs, rational(m) * X + rational(total),
                         evaluate=False)
        d.add(StepDraft(rule=rule, value=value, text=f"{lhs_text} = {_linear(m, constants, latex=False)}",
                        latex=f"{lhs_latex} = {_linear(m, constants, latex=True)}",
                        result=None if result is None else rational(result)))

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        m, c = self._m_c(params)
        return sympy.Eq(Y, rational(m) * X + rational(c), evaluate=False)

    @staticmethod
    def _m_c(params: dict[str, Any]) -> tuple[Fraction, Fraction]:
        (x1, y1), (x2, y2) = params["A"], params["B"]
        return Fraction(y2 - y1, x2 - x1), Fraction(x2 * y1 - x1 * y2, x2 - x1)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Cramer's rule on the two conditions m*x + c = y (not the point-gradient chain).
        (x1, y1), (x2, y2) = params["A"], params["B"]
        det = x1 - x2
        m, c = Fraction(y1 - y2, det), Fraction(x1 * y2 - x2 * y1, det)
        return rational(m) * X + rational(c)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        m, c = self._m_c(params)
        return f"y = {_linear(m, [c], latex=False)}", f"y = {_linear(m, [c], latex=True)}"

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        d = Derivation()
        if rule == "run_over_rise":
            m = self._point_gradient(d, params, self._slope(params, flip=True))
            self._finish(d, params, m)
            return d.steps
        if rule == "intercept_is_y1":
            m = self._point_gradient(d, params, self._slope(params))
            self._eq(d, "substitute_intercept", Y, m, [Fraction(params["A"][1])])
            return d.steps
        return None


def _is_number(node: E.Node) -> bool:
    return not isinstance(node, list) or (node[0] == "frac" and all(isinstance(a, int) for a in node[1:])
                                          and node[2] > 1 and Fraction(node[1], node[2]).denominator == node[2])


def _reduce_once(d: Derivation, node: E.Node) -> tuple[E.Node, sympy.Basic]:
    """One operation of the gradient fraction (numerator, then denominator, then simplify) and its result."""
    op, top, bottom = node
    if not _is_number(top):  # a slipped result may itself be a fraction: that counts as done
        result = d.compute(E.sym(top))
        return [op, E.leaf(result), bottom], result
    if not _is_number(bottom):
        result = d.compute(E.sym(bottom))
        return [op, top, E.leaf(result)], result
    result = d.compute(E.sym(node))
    return E.leaf(result), result
