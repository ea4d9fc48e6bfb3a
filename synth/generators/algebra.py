"""Algebra families: linear equations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators.base import Family, MalRule, StepDraft, format_number, latex_number


def _term(coef: int, var: str, latex: bool = False) -> str:
    if coef == 1:
        return var
    if coef == -1:
        return ("-" if latex else "−") + var
    return f"{format_number(sympy.Integer(coef)) if not latex else coef}{var}"


def _signed(value: sympy.Basic, latex: bool = False) -> str:
    """`+ 6` or `− 6` to follow a term."""
    minus = "-" if latex else "−"
    body = latex_number(abs(value)) if latex else format_number(abs(value))
    return f"{minus if value < 0 else '+'} {body}"


def _num(value: sympy.Basic, latex: bool = False) -> str:
    return latex_number(value) if latex else format_number(value)


def _unknown_term(e: sympy.Basic) -> bool:
    """``x`` or ``n*x``: a symbol without assumptions (any complex number), times a nonzero integer."""
    if e.is_Mul and len(e.args) == 2 and e.args[0].is_Integer and e.args[0] != 0:
        e = e.args[1]
    return bool(e.is_Symbol) and e.assumptions0 == {"commutative": True}


def _eq(lhs: sympy.Basic, rhs: sympy.Basic) -> sympy.Basic:
    """``sympy.Eq(lhs, rhs)``. SymPy first tries to decide an equation; for ``n*x`` or ``n*x + k`` (integers,
    n nonzero, x without assumptions) against a rational it cannot (x could be anything), and returns the
    equation unevaluated: such an equation is built unevaluated straight away (the same object, without the slow
    attempt). Anything else goes through SymPy."""
    args = lhs.args
    linear = _unknown_term(lhs) or (lhs.is_Add and len(args) == 2 and (
        (args[0].is_Integer and _unknown_term(args[1])) or (args[1].is_Integer and _unknown_term(args[0]))))
    if linear and isinstance(rhs, sympy.Rational):
        return sympy.Eq(lhs, rhs, evaluate=False)
    return sympy.Eq(lhs, rhs)


@dataclass(frozen=True)
class _Level:
    a_top: int  # the coefficient is 2 to a_top − 1
    signed: bool  # coefficient and constant of either sign
    xs: tuple[int, int] | None  # the whole solution drawn from lo to hi − 1; None: a fraction over the coefficient
    b_top: int  # the constant is 1 to b_top − 1


_LEVELS = {"easy": _Level(10, signed=False, xs=(1, 13), b_top=20),
           "medium": _Level(13, signed=True, xs=(-15, 16), b_top=31),
           "hard": _Level(16, signed=True, xs=None, b_top=51)}


@register
class LinearTwoStep(Family):
    id = "algebra.linear.two_step"
    domain = "algebra"
    subdomain = "linear_equations"
    grade_band = "6-8"
    question_types = ("free",)
    malrules = (
        MalRule("move_term_keep_sign", "invalid_inference",
                "moves the constant to the other side of = without changing its sign"),
        MalRule("divide_one_term", "invalid_inference",
                "divides only the unknown's term and the other side by the coefficient, not the constant"),
        MalRule("subtract_coefficient", "formula_misuse",
                "undoes the multiplication by subtracting the coefficient instead of dividing"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = ("x", "y", "n", "a", "t")[int(rng.integers(5))]
        level = _LEVELS[difficulty]
        while True:
            a = (int(rng.choice([-1, 1])) if level.signed else 1) * int(rng.integers(2, level.a_top))
            if level.xs is None:
                x = sympy.Rational(int(rng.integers(-40, 41)), abs(a))
            else:
                x = sympy.Integer(int(rng.integers(*level.xs)))
            b = (int(rng.choice([-1, 1])) if level.signed else 1) * int(rng.integers(1, level.b_top))
            c = a * x + b
            if c.q == 1 and x != 0 and c != 0:
                return {"var": var, "a": a, "b": b, "c": int(c)}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        v, a, b, c = sympy.Symbol(params["var"]), params["a"], sympy.Integer(params["b"]), sympy.Integer(params["c"])
        name = params["var"]
        steps: list[StepDraft] = []
        undo = "subtract" if b > 0 else "add"
        inverse = _signed(-b)
        steps.append(StepDraft(
            rule=f"{undo}_both_sides", value=_eq(a * v, c - b),
            text=f"{_term(a, name)} {_signed(b)} {inverse} = {_num(c)} {inverse}",
            latex=(f"{_term(a, name, True)} {_signed(b, True)} {_signed(-b, True)}"
                   f" = {_num(c, True)} {_signed(-b, True)}"),
        ))
        d = overrides.get(2, c - b)
        steps.append(StepDraft(rule="simplify", value=_eq(a * v, d), result=d,
                               text=f"{_term(a, name)} = {_num(d)}", latex=f"{_term(a, name, True)} = {_num(d, True)}"))
        steps.append(StepDraft(
            rule="divide_both_sides", value=_eq(v, d / a),
            text=f"{name} = {_num(d)} ÷ {'(' + _num(sympy.Integer(a)) + ')' if a < 0 else a}",
            latex=rf"{name} = \frac{{{_num(d, True)}}}{{{a}}}",
        ))
        s = overrides.get(4, d / sympy.Integer(a))
        steps.append(StepDraft(rule="simplify", value=_eq(v, s), result=s,
                               text=f"{name} = {_num(s)}", latex=f"{name} = {_num(s, True)}"))
        return steps

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        name, a, b, c = params["var"], params["a"], sympy.Integer(params["b"]), sympy.Integer(params["c"])
        v = sympy.Symbol(name)
        a_text = f"({_num(sympy.Integer(a))})" if a < 0 else str(a)

        def line(rule_id: str, left: tuple[sympy.Basic, str, str], right: tuple[sympy.Basic, str, str],
                 result: sympy.Basic | None = None) -> StepDraft:
            return StepDraft(rule=rule_id, value=_eq(left[0], right[0]), text=f"{left[1]} = {right[1]}",
                             latex=f"{left[2]} = {right[2]}", result=result)

        def num(value: sympy.Basic) -> tuple[sympy.Basic, str, str]:
            return value, _num(value), _num(value, True)

        ax = (a * v, _term(a, name), _term(a, name, True))
        if rule == "move_term_keep_sign":
            d = c + b
            moved = (d, f"{_num(c)} {_signed(b)}", f"{_num(c, True)} {_signed(b, True)}")
            return [line("mal:move_term_keep_sign", ax, moved),
                    line("simplify", ax, num(d), d), *self.derive({**params, "b": 0, "c": int(d)})[2:]]
        if rule == "subtract_coefficient" and a > 0:
            s = c - b - a
            x = (v, name, name)
            return [*self.derive(params)[:2],
                    line("mal:subtract_coefficient", x, (s, f"{_num(c - b)} − {a}", f"{_num(c - b, True)} - {a}")),
                    line("simplify", x, num(s), s)]
        if rule == "divide_one_term" and a != 1:
            k = c / a
            xb = (v + b, f"{name} {_signed(b)}", f"{name} {_signed(b, True)}")
            x = (v, name, name)
            return [line("mal:divide_one_term", xb, (k, f"{_num(c)} ÷ {a_text}", rf"\frac{{{_num(c, True)}}}{{{a}}}")),
                    line("simplify", xb, num(k), k),
                    line("subtract_both_sides" if b > 0 else "add_both_sides", x,
                         (k - b, f"{_num(k)} {_signed(-b)}", f"{_num(k, True)} {_signed(-b, True)}")),
                    line("simplify", x, num(k - b), k - b)]
        return None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        v = sympy.Symbol(params["var"])
        if type(params["c"]) is int:  # Eq sympifies c to this Integer
            return _eq(params["a"] * v + params["b"], sympy.Integer(params["c"]))
        return sympy.Eq(params["a"] * v + params["b"], params["c"])

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        a, b, c = params["a"], params["b"], params["c"]
        if type(a) is int and type(b) is int and type(c) is int and a != 0:
            return sympy.Rational(c - b, a)  # the one root, exactly as sympy.solve gives it
        v = sympy.Symbol(params["var"])
        (solution,) = sympy.solve(sympy.Eq(params["a"] * v + params["b"], params["c"]), v)
        return solution

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return f"{params['var']} = {format_number(answer)}", f"{params['var']} = {latex_number(answer)}"

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        b, c = sympy.Integer(params["b"]), sympy.Integer(params["c"])
        eq = f"{_term(params['a'], params['var'])} {_signed(b)} = {_num(c)}"
        latex = (f"{_term(params['a'], params['var'], True)} {_signed(sympy.Integer(params['b']), True)}"
                 f" = {_num(sympy.Integer(params['c']), True)}")
        return {**params, "equation": eq, "latex": latex}
