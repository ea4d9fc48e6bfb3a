"""Display trees with π, roots and trig for the figure families: one tree gives the exact value, the text and the LaTeX.

``show`` extends ``expr``'s trees with the leaf ``"pi"``, ``["sqrt", a]`` and ``["sin" | "cos" | "tan", degrees]``.
"""

from __future__ import annotations

import math
import re

import sympy

from synth.generators import expr as E
from synth.generators.base import Derivation, StepDraft

_PLACEHOLDER = 9_000_000_001  # ints E prints verbatim and no school problem contains
_TRIG = {"sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan}
_COEF_TEXT = re.compile(r"(?<![\d/.^])(\d+) × (π|√)")
_COEF_LATEX = re.compile(r"(?<![\d/.{}^])(\d+) \\times (\\pi|\\sqrt)")


def value_of(node: E.Node) -> sympy.Expr:
    """Exact value of a display tree (SymPy, so π and roots stay exact)."""
    if node == "pi":
        return sympy.pi
    if isinstance(node, (int, str)):
        return E.sym(node)
    op, *args = node
    if op == "sqrt":
        return sympy.sqrt(value_of(args[0]))
    if op in _TRIG:
        return _TRIG[op](sympy.pi * value_of(args[0]) / 180)
    return E.combine(op, [value_of(a) for a in args])


def show(node: E.Node) -> tuple[sympy.Expr, str, str]:
    """(value, text, latex) of a tree; π, √ and trig leaves are written by us, the rest by ``expr``."""
    texts: dict[int, tuple[str, str]] = {}

    def swap(n: E.Node) -> E.Node:
        if n == "pi":
            key = _PLACEHOLDER + len(texts)
            texts[key] = ("π", r"\pi")
            return key
        if isinstance(n, list) and n[0] == "sqrt":
            inner = n[1]
            _, t, lt = show(inner)
            t = t if isinstance(inner, int) else f"({t})"
            key = _PLACEHOLDER + len(texts)
            texts[key] = ("√" + t, rf"\sqrt{{{lt}}}")
            return key
        if isinstance(n, list) and n[0] in _TRIG:
            key = _PLACEHOLDER + len(texts)
            texts[key] = (f"{n[0]} {n[1]}°", rf"\{n[0]} {n[1]}^\circ")
            return key
        if isinstance(n, list):
            return [n[0], *(swap(a) for a in n[1:])]
        return n

    plain = swap(node)
    text, latex = E.text(plain), E.latex(plain)
    for key in sorted(texts, reverse=True):
        text, latex = text.replace(str(key), texts[key][0]), latex.replace(str(key), texts[key][1])
    text = _COEF_TEXT.sub(r"\1\2", text)
    latex = _COEF_LATEX.sub(r"\1\2", latex)
    return value_of(node), text, latex


def step(d: Derivation, rule: str, node: E.Node, result: sympy.Basic | None = None) -> None:
    """Append a step whose value, text and LaTeX all come from one tree."""
    v, text, latex = show(node)
    d.add(StepDraft(rule=rule, value=v, text=text, latex=latex, result=result))


def pi_times(coef: sympy.Basic) -> E.Node:
    """``25π``, ``25π/2`` (a rational multiple of π as pupils write it)."""
    f = E.to_fraction(coef)
    if f.denominator == 1:
        return ["*", int(f), "pi"]
    return ["frac", ["*", f.numerator, "pi"], f.denominator]


def surd(n: sympy.Basic) -> E.Node:
    """√n in simplest form: an integer, ``√k`` or ``c√k`` (n a positive integer)."""
    n = int(n)
    c, k = 1, n
    for f in range(int(math.isqrt(n)), 1, -1):
        if n % (f * f) == 0:
            c, k = f, n // (f * f)
            break
    if k == 1:
        return c
    return ["sqrt", k] if c == 1 else ["*", c, ["sqrt", k]]


def square_factor(n: int) -> int:
    """The largest square dividing n (1 when n is square-free)."""
    for f in range(int(math.isqrt(n)), 1, -1):
        if n % (f * f) == 0:
            return f * f
    return 1


def num(v: sympy.Basic) -> E.Node:
    """A leaf for a computed number: integers plainly, terminating decimals as decimals, else a/b."""
    return E.leaf(v, decimal=True)
