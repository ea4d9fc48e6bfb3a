"""The small helpers the data families share (charts, tables, bags, clocks, number lines, coordinate grids).

``reduce_steps`` evaluates a displayed tree one operation per step, the way a pupil writes it out;
``mal_chain`` sets up a wrong method and works it out correctly; ``sample_role`` decides whether the
text repeats what the figure shows; the misread helpers list plausible wrong readings of a value.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import gcd
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators._figure import neighbour_misreads
from synth.generators.base import Derivation, Family, StepDraft
from synth.records import Figure

_RULES = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "frac": "simplify"}
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "frac": 2}


def sample_role(rng: np.random.Generator, p_required: float = 0.7) -> str:
    """``required``: the needed values are only in the figure; ``useful``: the text repeats them."""
    return "required" if rng.random() < p_required else "useful"


def safe_divisor(n: int) -> bool:
    """A divisor no common slip (off by one, dropped carry) can turn into 0: |n| >= 2, not a power of 10."""
    n = abs(n)
    return n >= 2 and str(n).rstrip("0") != "1"


def _leaf_like(node: E.Node) -> bool:
    if not isinstance(node, list):
        return True
    if node[0] == "frac" and all(isinstance(a, int) for a in node[1:]):
        p, q = node[1], node[2]
        return q > 1 and gcd(p, q) == 1
    return False


Candidate = tuple[tuple[int, int], tuple[int, ...]]  # (bracket depth, precedence), path to the node


def _candidates(node: E.Node, depth: int = 0, path: tuple[int, ...] = ()) -> list[Candidate]:
    if _leaf_like(node):
        return []
    op, *args = node
    if op == "group":
        return _candidates(args[0], depth + 1, path + (1,))
    found: list[Candidate] = []
    leaves = True  # every operand is a number: this node is a candidate itself
    for i, child in enumerate(args, start=1):
        if _leaf_like(child):  # a number has no candidates
            continue
        leaves = False
        wrapped = child[0] != "group" and (
            op == "frac" or _PREC[child[0]] < _PREC[op] or (i == 2 and _PREC[child[0]] == _PREC[op]))
        found += _candidates(child, depth + wrapped, path + (i,))
    if leaves:
        found.append(((depth, _PREC[op]), path))
    return found


def _get(node: E.Node, path: tuple[int, ...]) -> E.Node:
    for i in path:
        node = node[i]
    return node


def _put(node: E.Node, path: tuple[int, ...], new: E.Node) -> E.Node:
    if not path:
        return new
    out = list(node)
    out[path[0]] = _put(node[path[0]], path[1:], new)
    return out


def _unwrap(node: E.Node) -> E.Node:
    """Drop brackets around a single number: ``(12)`` is written ``12`` once its inside is done."""
    if not isinstance(node, list):
        return node
    if node[0] == "group" and _leaf_like(node[1]):
        return node[1]
    return [node[0], *[_unwrap(a) if isinstance(a, list) else a for a in node[1:]]]


def reduce_steps(d: Derivation, tree: E.Node, *, first_rule: str, decimal: bool = False,
                 lhs: str | None = None) -> E.Node:
    """Show ``tree`` as step 1, then do one operation per step (brackets, then × ÷, then + −, left to right).

    Each operation's result goes through ``d.compute`` so an injector can slip it and the later
    steps carry the slip. With ``lhs`` (a variable name) every step is written ``lhs = tree``.
    """
    total = E.sym(tree)
    _show(d, first_rule, tree, None, lhs, total)
    while not _leaf_like(tree):
        _, path = max(_candidates(tree), key=lambda c: c[0])
        node = _get(tree, path)
        exact = E.value(node)
        true = sympy.Rational(exact.numerator, exact.denominator)  # E.sym(node)
        result = d.compute(true)
        # the leaf of the node's own value is built from the Fraction (the same leaf as from its SymPy copy)
        tree = _unwrap(_put(tree, path, E.leaf(exact if result is true else result, decimal=decimal)))
        if result is not true:  # an override: the tree's value changes (else a node became its own value)
            total = E.sym(tree)
        _show(d, _RULES[node[0]], tree, result, lhs, total)
    return tree


def _show(d: Derivation, rule: str, tree: E.Node, result: sympy.Basic | None, lhs: str | None,
          total: sympy.Basic) -> None:
    """Add ``tree`` as a step; ``total`` is ``E.sym(tree)`` (what ``E.add_step`` would compute)."""
    if lhs is None:
        text, latex = E.text_and_latex(tree)
        d.add(StepDraft(rule=rule, value=total, text=text, latex=latex, result=result))
        return
    value = sympy.Eq(sympy.Symbol(lhs), total, evaluate=False)
    d.add(StepDraft(rule=rule, value=value, text=f"{lhs} = {E.text(tree)}", latex=f"{lhs} = {E.latex(tree)}",
                    result=result))


def rational(v: Fraction | int) -> sympy.Rational:
    f = Fraction(v)
    return sympy.Rational(f.numerator, f.denominator)


def sum_node(values: Sequence[E.Node]) -> E.Node:
    return ["group", E.sum_of(list(values))] if len(values) > 1 else values[0]


def num_text(v: Fraction | int) -> str:
    """A JSON-friendly number as pupils write it (decimals where they terminate)."""
    return E.text(E.leaf(Fraction(v), decimal=True))


def replace_at(values: Sequence[Any], i: int, new: Any) -> list[Any]:
    out = list(values)
    out[i] = new
    return out


def mal_chain(family: Family, params: dict[str, Any], tree: E.Node, first_rule: str, *,
              decimal: bool = False, lhs: str | None = None) -> list[StepDraft] | None:
    """A student's solution set up with the wrong method (``tree``) and then worked out correctly."""
    d = Derivation()
    reduce_steps(d, tree, first_rule=first_rule, decimal=decimal, lhs=lhs)
    if sympy.simplify(family.answer_of(d.steps[-1].value) - family.target(params)) == 0:
        return None  # the mistake happens to give the right answer here: not a usable error
    return d.steps


def data_answer(answer: sympy.Basic) -> tuple[str, str]:
    """An answer as the data families state it (a decimal where it terminates); ``answer`` may be a distractor."""
    return E.num_text(answer, decimal=True), E.num_latex(answer, decimal=True)


def axes_elements(y_label: str, x_label: str) -> list[dict[str, Any]]:
    return [{"id": "grid", "type": "gridline"},
            {"id": "axis_x", "type": "axis", "label": x_label},
            {"id": "axis_y", "type": "axis", "label": y_label},
            {"id": "ticks_y", "type": "tick"}]


def misread_list(values: Sequence[int], i: int, deltas: Sequence[int], *, low: int = 0) -> tuple[list[int], ...]:
    """``values`` with entry i moved by each delta (skipping moves below ``low`` or no-ops)."""
    out = []
    for delta in deltas:
        v = values[i] + delta
        if delta != 0 and v >= low:
            out.append(replace_at(values, i, v))
    return tuple(out)


def digit_misreads(values: Sequence[int], i: int) -> tuple[list[int], ...]:
    """``values`` with entry i as a glance misreads its printed digits (3/8, 1/7, swapped digits); sign kept."""
    v = values[i]
    return tuple(replace_at(values, i, m if v >= 0 else -m) for m in neighbour_misreads(abs(v)))


def neighbour_swaps(values: Sequence[int], i: int, positions: Sequence[int]) -> tuple[list[int], ...]:
    """``values`` with entry i replaced by the entry at each neighbouring position (a label read one along)."""
    seen = dict.fromkeys(values[j] for j in positions if 0 <= j < len(values) and values[j] != values[i])
    return tuple(replace_at(values, i, v) for v in seen)


def table_figure(head: Sequence[str], rows: Sequence[Sequence[str]], *, title: str = "") -> Figure:
    all_rows = [list(head), *[list(r) for r in rows]]
    elements = [{"id": f"cell_{r}_{c}", "type": "cell", "row": r, "col": c, "text": text, "header": r == 0 or c == 0
                 and len(head) > 2}
                for r, row in enumerate(all_rows) for c, text in enumerate(row) if text]
    if title:
        elements.append({"id": "title", "type": "text", "text": title})
    height = 0.3 * len(all_rows) + (0.35 if title else 0.1)
    width = min(5.5, 0.5 + sum(max(0.7, 0.2 + 0.085 * max(len(r[c]) for r in all_rows)) for c in range(len(head))))
    return Figure("table", {"size_in": [round(width, 2), round(height, 2)], "rows": all_rows, "title": bool(title),
                            "elements": elements})
