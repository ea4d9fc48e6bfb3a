"""One-step linear equations (x + a = b, x − a = b, ax = b, x/a = b) solved by the inverse operation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number, latex_number
from synth.generators.expr import Node

_VARS = ("x", "y", "n", "a", "m", "k")
_OPS = ("add", "sub", "mul", "div")
# The inverse operation undoes the question's operation: (tree operator, rule name).
_INVERSE = {"add": ("-", "subtract_both_sides"), "sub": ("+", "add_both_sides"),
            "mul": ("/", "divide_both_sides"), "div": ("*", "multiply_both_sides")}
_SAME = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_OP_TEXT = {"+": "+", "-": "−", "*": "×", "/": "÷"}
_OP_LATEX = {"+": "+", "-": "-", "*": r"\times", "/": r"\div"}
_APPLY = {"+": lambda u, v: u + v, "-": lambda u, v: u - v, "*": lambda u, v: u * v, "/": lambda u, v: u / v}


def _q(v: str | int) -> sympy.Rational:
    return E.sym(v)


def _lhs(op: str, var: str, a: Node, latex: bool) -> str:
    """The question's left side: ``x + 5``, ``x − 2.5``, ``−3x``, ``x/4``."""
    a_t = E.latex(a) if latex else E.text(a)
    minus = "-" if latex else "−"
    if op == "add":
        return f"{var} + {a_t}"
    if op == "sub":
        return f"{var} {minus} {a_t}"
    if op == "mul":
        if _q(a) == -1:
            return f"{minus}{var}"
        return f"{a_t}{var}"
    return rf"\frac{{{var}}}{{{a_t}}}" if latex else f"{var}/{a_t}"


def _lhs_value(op: str, x: sympy.Symbol, a: sympy.Rational) -> sympy.Expr:
    return {"add": x + a, "sub": x - a, "mul": a * x, "div": x / a}[op]


@dataclass(frozen=True)
class _Level:
    decimal: bool  # x in quarters or tenths and a in tenths or halves; else whole numbers from the ranges below
    xs: tuple[int, int] = (0, 0)  # x drawn from lo to hi − 1
    factors: tuple[int, int] = (0, 0)  # a drawn from lo to hi − 1
    negative_factor: bool = False  # a multiplier may be negative (on half of the problems)
    positive_right: bool = False  # the right side is a positive whole number


_LEVELS = {"easy": _Level(False, (1, 21), (2, 13), positive_right=True),
           "medium": _Level(False, (-40, 41), (2, 26), negative_factor=True),
           "hard": _Level(True, negative_factor=True)}


@register
class LinearOneStep(Family):
    """easy: whole numbers with a positive answer; medium: negatives; hard: decimals.

    The solution writes the inverse operation on both sides, simplifies the left side, then
    computes the right side: three lines, the way the operation is taught.
    """

    id = "algebra.linear.one_step"
    domain = "algebra"
    subdomain = "linear_equations"
    grade_band = "5-7"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("same_operation", "theorem_misapplication",
                "applies the question's own operation to the other side instead of its inverse"),
        MalRule("operands_reversed", "invalid_inference",
                "undoes the operation with the numbers in the wrong order (a − b for b − a, a ÷ b for b ÷ a)"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = _VARS[int(rng.integers(len(_VARS)))]
        op = _OPS[int(rng.integers(len(_OPS)))]
        level = _LEVELS[difficulty]
        while True:
            if level.decimal:
                x = sympy.Rational(int(rng.integers(-400, 401)), 4 if rng.random() < 0.5 else 10)
                a = sympy.Rational(int(rng.integers(11, 100)), 10 if op in ("add", "sub") else 2)
            else:
                x = sympy.Integer(int(rng.integers(*level.xs)))
                a = sympy.Integer(int(rng.integers(*level.factors)))
            if level.negative_factor and op == "mul" and rng.random() < 0.5:
                a = -a
            b = _lhs_value(op, sympy.Symbol(var), a).subs(sympy.Symbol(var), x)
            if x == 0 or a == 1 or (op in ("sub", "add") and b == 0) or not E.is_decimal(E.to_fraction(b)):
                continue
            if (level.positive_right and b <= 0) or (not level.decimal and b.q != 1):
                continue  # whole-number levels need a whole-number right side (x/a = b: x a multiple of a)
            decimal = level.decimal
            return {"var": var, "op": op, "a": E.dec(a) if decimal else int(a), "b": E.dec(b) if decimal else int(b)}

    def _parts(self, params: dict[str, Any]) -> tuple[str, str, Node, Node]:
        return params["var"], params["op"], params["a"], params["b"]

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        var, op, a, b = self._parts(params)
        return sympy.Eq(_lhs_value(op, sympy.Symbol(var), _q(a)), _q(b), evaluate=False)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Solve the stated equation as a polynomial: the root of lhs − rhs, not the step chain.
        eq = self.initial(params)
        c1, c0 = sympy.Poly(eq.lhs - eq.rhs, sympy.Symbol(params["var"])).all_coeffs()
        return -c0 / c1

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        var, op, a, b = self._parts(params)
        tree_op, rule = _INVERSE[op]
        return self._solution(params, [tree_op, b, a], rule, overrides, both_sides=True)

    def _solution(self, params: dict[str, Any], right: Node, rule: str, overrides: Mapping[int, sympy.Basic],
                  both_sides: bool) -> list[StepDraft]:
        """Both sides undone (clean), or ``x = right`` written straight away (the mal-rules), then computed."""
        var, op, a, b = self._parts(params)
        x = sympy.Symbol(var)
        d = Derivation(overrides)
        if both_sides:
            tree_op = right[0]
            a_t, a_l = E.text(a), E.latex(a)
            if _q(a) < 0:
                a_t, a_l = f"({a_t})", rf"\left({a_l}\right)"
            left_value = _APPLY[tree_op](_lhs_value(op, x, _q(a)), _q(a))
            d.add(StepDraft(rule=rule, value=sympy.Eq(left_value, E.sym(right), evaluate=False),
                            text=f"{_lhs(op, var, a, False)} {_OP_TEXT[tree_op]} {a_t} = {E.text(right)}",
                            latex=f"{_lhs(op, var, a, True)} {_OP_LATEX[tree_op]} {a_l} = {E.latex(right)}"))
            rule = "simplify_left"
        d.add(StepDraft(rule=rule, value=sympy.Eq(x, E.sym(right), evaluate=False),
                        text=f"{var} = {E.text(right)}", latex=f"{var} = {E.latex(right)}"))
        r = d.compute(E.sym(right))
        shown = E.leaf(r, decimal=isinstance(a, str) or isinstance(b, str))
        d.add(StepDraft(rule="compute", value=sympy.Eq(x, r, evaluate=False), text=f"{var} = {E.text(shown)}",
                        latex=f"{var} = {E.latex(shown)}", result=r))
        return d.steps

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        steps = self._mal(params, rule)
        # A mistake that lands on the right number (x/1, 2 + 2 = 2 × 2) is no mistake to show.
        if steps is None or steps[-1].result == self.target(params):
            return None
        return steps

    def _mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        var, op, a, b = self._parts(params)
        if rule == "same_operation":  # the term "moves across" keeping its operation: x + 5 = 12 -> x = 12 + 5
            return self._solution(params, [_SAME[op], b, a], "move_term_keep_operation", {}, both_sides=False)
        if rule == "operands_reversed" and op != "sub":  # x + 5 = 12 -> x = 5 − 12; 3x = 12 -> x = 3 ÷ 12
            tree_op = "/" if op == "div" else _INVERSE[op][0]  # x/4 = 6 -> x = 4 ÷ 6
            return self._solution(params, [tree_op, a, b], "undo_operands_reversed", {}, both_sides=False)
        return None

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        decimal = any(isinstance(params[k], str) for k in ("a", "b"))
        leaf = E.leaf(answer, decimal=decimal) if answer.is_Rational else None
        if leaf is None:
            return f"{params['var']} = {format_number(answer)}", f"{params['var']} = {latex_number(answer)}"
        return f"{params['var']} = {E.text(leaf)}", f"{params['var']} = {E.latex(leaf)}"

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        var, op, a, b = self._parts(params)
        text = f"{_lhs(op, var, a, False)} = {E.text(b)}"
        latex = f"{_lhs(op, var, a, True)} = {E.latex(b)}"
        return {**params, "equation": text, "latex": latex}
