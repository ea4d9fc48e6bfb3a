"""Algebra families: linear equations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators.base import Family, StepDraft, format_number, latex_number


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


@register
class LinearTwoStep(Family):
    id = "algebra.linear.two_step"
    domain = "algebra"
    subdomain = "linear_equations"
    grade_band = "6-8"
    question_types = ("free",)

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = ("x", "y", "n", "a", "t")[int(rng.integers(5))]
        while True:
            if difficulty == "easy":
                a, x, b = int(rng.integers(2, 10)), sympy.Integer(int(rng.integers(1, 13))), int(rng.integers(1, 20))
            elif difficulty == "medium":
                a = int(rng.choice([-1, 1])) * int(rng.integers(2, 13))
                x = sympy.Integer(int(rng.integers(-15, 16)))
                b = int(rng.choice([-1, 1])) * int(rng.integers(1, 31))
            else:
                a = int(rng.choice([-1, 1])) * int(rng.integers(2, 16))
                x = sympy.Rational(int(rng.integers(-40, 41)), abs(a))
                b = int(rng.choice([-1, 1])) * int(rng.integers(1, 51))
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
            rule=f"{undo}_both_sides", value=sympy.Eq(a * v, c - b),
            text=f"{_term(a, name)} {_signed(b)} {inverse} = {_num(c)} {inverse}",
            latex=(f"{_term(a, name, True)} {_signed(b, True)} {_signed(-b, True)}"
                   f" = {_num(c, True)} {_signed(-b, True)}"),
        ))
        d = overrides.get(2, c - b)
        steps.append(StepDraft(rule="simplify", value=sympy.Eq(a * v, d), result=d,
                               text=f"{_term(a, name)} = {_num(d)}", latex=f"{_term(a, name, True)} = {_num(d, True)}"))
        steps.append(StepDraft(
            rule="divide_both_sides", value=sympy.Eq(v, d / a),
            text=f"{name} = {_num(d)} ÷ {'(' + _num(sympy.Integer(a)) + ')' if a < 0 else a}",
            latex=rf"{name} = \frac{{{_num(d, True)}}}{{{a}}}",
        ))
        s = overrides.get(4, d / sympy.Integer(a))
        steps.append(StepDraft(rule="simplify", value=sympy.Eq(v, s), result=s,
                               text=f"{name} = {_num(s)}", latex=f"{name} = {_num(s, True)}"))
        return steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        v = sympy.Symbol(params["var"])
        return sympy.Eq(params["a"] * v + params["b"], params["c"])

    def target(self, params: dict[str, Any]) -> sympy.Basic:
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
