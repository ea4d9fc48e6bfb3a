"""Arithmetic families: order of operations over whole numbers."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators.base import Family, StepDraft

# An expression tree is a nested list: a number, or [op, left, right] with op in + - * /.
Tree = Any
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2}
_TEXT_OP = {"+": "+", "-": "−", "*": "×", "/": "÷"}
_LATEX_OP = {"+": "+", "-": "-", "*": r"\times", "/": r"\div"}
_LEVELS = {  # ops, largest leaf, whether results may go negative
    "easy": (3, 12, False),
    "medium": (5, 20, False),
    "hard": (7, 40, True),
}


def _is_leaf(t: Tree) -> bool:
    return not isinstance(t, list)


def _value(t: Tree) -> Fraction:
    if _is_leaf(t):
        return Fraction(t)
    op, a, b = t
    x, y = _value(a), _value(b)
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    return x * y if op == "*" else x / y


def _sympy_value(t: Tree) -> sympy.Rational:
    v = _value(t)
    return sympy.Rational(v.numerator, v.denominator)


def _write(t: Tree, ops: Mapping[str, str], neg: str, leftmost: bool = True) -> str:
    if _is_leaf(t):
        n = sympy.Rational(t)
        text = str(abs(n)) if n.q == 1 else f"{abs(n.p)}/{n.q}"
        if n < 0:
            return f"{neg}{text}" if leftmost else f"({neg}{text})"
        return text
    op, a, b = t
    left = _write(a, ops, neg, leftmost)
    right = _write(b, ops, neg, False)
    if not _is_leaf(a) and _PREC[a[0]] < _PREC[op]:
        left = f"({_write(a, ops, neg, True)})"
    if not _is_leaf(b) and _PREC[b[0]] <= _PREC[op]:
        right = f"({_write(b, ops, neg, True)})"
    return f"{left} {ops[op]} {right}"


def write_text(t: Tree) -> str:
    return _write(t, _TEXT_OP, "−")


def write_latex(t: Tree) -> str:
    return _write(t, _LATEX_OP, "-").replace("(", r"\left(").replace(")", r"\right)")


Reduction = tuple[tuple[int, int], tuple[int, ...]]  # (priority, path to the node)


def _next_reduction(t: Tree, depth: int = 0, path: tuple[int, ...] = ()) -> list[Reduction]:
    """Reducible nodes with their priority (parenthesis depth, precedence), in reading order."""
    if _is_leaf(t):
        return []
    op, a, b = t
    found: list[Reduction] = []
    for side, child in ((1, a), (2, b)):
        wrapped = not _is_leaf(child) and (
            _PREC[child[0]] < _PREC[op] or (side == 2 and _PREC[child[0]] == _PREC[op]))
        found += _next_reduction(child, depth + wrapped, path + (side,))
    if _is_leaf(a) and _is_leaf(b):
        found.append(((depth, _PREC[op]), path))
    return found


def _replace(t: Tree, path: tuple[int, ...], new: Tree) -> Tree:
    if not path:
        return new
    node = list(t)
    node[path[0]] = _replace(t[path[0]], path[1:], new)
    return node


def _get(t: Tree, path: tuple[int, ...]) -> Tree:
    for p in path:
        t = t[p]
    return t


def _as_json_number(v: sympy.Rational) -> Any:
    return int(v) if v.q == 1 else str(v)


@register
class OrderOfOperations(Family):
    id = "arithmetic.order_of_operations"
    domain = "arithmetic"
    subdomain = "order_of_operations"
    grade_band = "5-7"
    question_types = ("free",)

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        n_ops, top, allow_negative = _LEVELS[difficulty]
        while True:  # rejection keeps every intermediate in a school-sized range
            tree = self._tree(rng, n_ops, top)
            if tree is None:
                continue
            values = self._intermediates(tree)
            if all(abs(v) <= 2000 and v.denominator == 1 for v in values) and (
                    allow_negative or all(v >= 0 for v in values)):
                return {"expression": tree}

    def _tree(self, rng: np.random.Generator, n_ops: int, top: int) -> Tree | None:
        if n_ops == 0:
            return int(rng.integers(1, top + 1))
        op = ("+", "-", "*", "/")[int(rng.integers(4))]
        k = int(rng.integers(0, n_ops))
        left = self._tree(rng, k, top)
        if left is None:
            return None
        if op == "/":
            lv = _value(left)
            divisors = [d for d in range(2, 13) if lv.denominator == 1 and lv != 0 and lv.numerator % d == 0]
            if not divisors or n_ops - 1 - k != 0:
                return None
            return ["/", left, divisors[int(rng.integers(len(divisors)))]]
        right = self._tree(rng, n_ops - 1 - k, top)
        return None if right is None else [op, left, right]

    def _intermediates(self, tree: Tree) -> list[Fraction]:
        out = []
        while not _is_leaf(tree):
            _, path = max(_next_reduction(tree), key=lambda r: r[0])
            node = _get(tree, path)
            v = _value(node)
            out.append(v)
            if v.denominator != 1:
                return out
            tree = _replace(tree, path, int(v))
        return out

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        tree = params["expression"]
        steps: list[StepDraft] = []
        while not _is_leaf(tree):
            # max() keeps the first of equal priorities: reading order, left to right.
            _, path = max(_next_reduction(tree), key=lambda r: r[0])
            node = _get(tree, path)
            result = overrides.get(len(steps) + 1, _sympy_value(node))
            tree = _replace(tree, path, _as_json_number(sympy.Rational(result)))
            steps.append(StepDraft(
                rule=f"evaluate:{node[0]}", value=_sympy_value(tree), text=write_text(tree),
                latex=write_latex(tree), result=result,
            ))
        return steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return _sympy_value(params["expression"])

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        v = _value(params["expression"])  # Fraction route, independent of the step chain
        return sympy.Rational(v.numerator, v.denominator)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"expression": write_text(params["expression"]),
                "latex": write_latex(params["expression"])}
