"""Equations written the way a pupil writes them: signed terms, sides, one equation per line."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from synth.generators.base import Derivation, StepDraft, format_number, latex_number

VARS = ("x", "y", "n", "a", "t", "m")


@dataclass(frozen=True)
class Term:
    """One signed term of a side as a pupil writes it: ``6x``, ``3 × 2x``, ``15``, ``3 × 5``."""

    value: sympy.Expr
    text: str  # magnitude only; the sign is written by the side
    latex: str
    negative: bool


def x_term(coef: sympy.Basic, var: str) -> Term:
    c = sympy.Rational(coef)
    mag = abs(c)
    body = var if mag == 1 else f"{format_number(mag)}{var}" if mag.q == 1 else f"({format_number(mag)}){var}"
    tex = var if mag == 1 else f"{latex_number(mag)}{var}"
    return Term(c * sympy.Symbol(var), body, tex, c < 0)


def const(c: sympy.Basic) -> Term:
    c = sympy.Rational(c)
    return Term(c, format_number(abs(c)), latex_number(abs(c)), c < 0)


def product(factor: int, inner: Term) -> Term:
    """``factor × inner`` as written while distributing: ``3 × 2x`` (sign folded into the term)."""
    negative = (factor < 0) != inner.negative
    return Term(factor * inner.value, f"{abs(factor)} × {inner.text}", rf"{abs(factor)} \times {inner.latex}", negative)


def side(terms: list[Term], latex: bool = False) -> tuple[sympy.Expr, str]:
    minus = "-" if latex else "−"
    out = ""
    for i, t in enumerate(terms):
        body = t.latex if latex else t.text
        if i == 0:
            out = (minus if t.negative else "") + body
        else:
            out += f" {minus if t.negative else '+'} {body}"
    return sympy.Add(*(t.value for t in terms)), out


def eq_step(d: Derivation, rule: str, left: list[Term], right: list[Term],
             result: sympy.Basic | None = None) -> None:
    lv, lt = side(left)
    rv, rt = side(right)
    _, ll = side(left, True)
    _, rl = side(right, True)
    # evaluate=False: a slipped coefficient of 0 must stay a (false) equation, not become False.
    d.add(StepDraft(rule=rule, value=sympy.Eq(lv, rv, evaluate=False), text=f"{lt} = {rt}",
                    latex=f"{ll} = {rl}", result=result))
