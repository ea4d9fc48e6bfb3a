"""Arithmetic families: order of operations over whole numbers."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators.base import Family, MalRule, StepDraft
from synth.mathparse import parse_math

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


# -- mal-rules ------------------------------------------------------------------------


def _as_written(t: Tree) -> list[Any]:
    """The operands and operators a pupil reads, left to right; bracketed parts stay whole."""
    if _is_leaf(t):
        return [t]
    op, a, b = t
    left = [["group", _left_to_right(a)]] if not _is_leaf(a) and _PREC[a[0]] < _PREC[op] else _as_written(a)
    right = [["group", _left_to_right(b)]] if not _is_leaf(b) and _PREC[b[0]] <= _PREC[op] else _as_written(b)
    return [*left, op, *right]


def _left_to_right(t: Tree) -> Tree:
    """The tree a pupil who works strictly left to right evaluates (a bracket is worked out when reached)."""
    seq = _as_written(t)
    out = seq[0]
    for i in range(1, len(seq), 2):
        out = [seq[i], out, seq[i + 1]]
    return out


def _flat_text(t: Tree, ops: Mapping[str, str], neg: str) -> str:
    """A left-to-right tree written with no brackets but the pupil's own: the line as it looks."""
    if _is_leaf(t):
        return _write(t, ops, neg, True)
    if t[0] == "group":
        inner = t[1]
        return _flat_text(inner, ops, neg) if _is_leaf(inner) else f"({_flat_text(inner, ops, neg)})"
    op, a, b = t
    right = _flat_text(b, ops, neg)
    if _is_leaf(b) and sympy.Rational(b) < 0:
        right = f"({right})"
    return f"{_flat_text(a, ops, neg)} {ops[op]} {right}"


def _reduce_leftmost(t: Tree) -> tuple[Tree, str, Fraction] | None:
    """Evaluate the leftmost operation whose operands are both numbers (brackets unwrap when done)."""
    if _is_leaf(t):
        return None
    if t[0] == "group":
        if _is_leaf(t[1]):
            return None
        inner = _reduce_leftmost(t[1])
        if inner is None:
            return None
        new, op, v = inner
        return (new if _is_leaf(new) else ["group", new]), op, v
    op, a, b = t
    a_num = _is_leaf(a) or (a[0] == "group" and _is_leaf(a[1]))
    b_num = _is_leaf(b) or (b[0] == "group" and _is_leaf(b[1]))
    if not a_num:
        found = _reduce_leftmost(a)
        return None if found is None else ([op, found[0], b], found[1], found[2])
    if not b_num:
        found = _reduce_leftmost(b)
        return None if found is None else ([op, a, found[0]], found[1], found[2])
    x = _value(a[1] if not _is_leaf(a) else a)
    y = _value(b[1] if not _is_leaf(b) else b)
    if op == "/" and y == 0:
        return None
    v = x + y if op == "+" else x - y if op == "-" else x * y if op == "*" else x / y
    return _as_json_number(sympy.Rational(v.numerator, v.denominator)), op, v


def _written_value(t: Tree) -> sympy.Rational:
    """What the flat line says under the usual precedence (its value as written, not as meant)."""
    return sympy.Rational(parse_math(_flat_text(t, _TEXT_OP, "−")))


def _mal_left_to_right(params: dict[str, Any]) -> list[StepDraft] | None:
    tree = _left_to_right(params["expression"])
    true = _value(params["expression"])
    steps: list[StepDraft] = []
    marked = False
    while True:
        found = _reduce_leftmost(tree)
        if found is None:
            break
        tree, op, _ = found
        value = _written_value(tree)
        wrong = not marked and value != sympy.Rational(true.numerator, true.denominator)
        marked = marked or wrong
        steps.append(StepDraft(rule="mal:left_to_right" if wrong else f"evaluate:{op}", value=value,
                               text=_flat_text(tree, _TEXT_OP, "−"),
                               latex=_flat_text(tree, _LATEX_OP, "-").replace("(", r"\left(").replace(")", r"\right)"),
                               result=value if _is_leaf(tree) else None))
    return steps if marked else None



@register
class OrderOfOperations(Family):
    id = "arithmetic.order_of_operations"
    domain = "arithmetic"
    subdomain = "order_of_operations"
    grade_band = "5-7"
    question_types = ("free",)
    malrules = (
        MalRule("left_to_right", "theorem_misapplication",
                "works strictly left to right, doing + and − before the × and ÷ that come later"),
    )

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

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        return _mal_left_to_right(params) if rule == "left_to_right" else None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return _sympy_value(params["expression"])

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        v = _value(params["expression"])  # Fraction route, independent of the step chain
        return sympy.Rational(v.numerator, v.denominator)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"expression": write_text(params["expression"]),
                "latex": write_latex(params["expression"])}

