"""Signed terms of a line as a pupil writes them (``3x^2 − 5x + 1``), with value, text and LaTeX.

A line is a list of :class:`Piece`; each piece knows its signed value and how its magnitude is
written, and :func:`line` joins them with real minus signs. SymPy's printer never sees a shown
line: it would reorder terms and undo the very step being displayed.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from synth.generators import expr as E
from synth.generators.base import Derivation, StepDraft, format_number, latex_number


@dataclass(frozen=True)
class Piece:
    """One signed term: ``value`` carries the sign, ``text``/``latex`` show the magnitude only."""

    value: sympy.Expr
    text: str
    latex: str
    negative: bool = False


def num(v: sympy.Basic | int, *, decimal: bool = False) -> Piece:
    r = sympy.Rational(v)
    return Piece(r, E.num_text(abs(r), decimal=decimal), E.num_latex(abs(r), decimal=decimal), r < 0)


def power(var: str, n: int) -> tuple[str, str]:
    """``x^3`` / ``x^{3}``; ``x`` for 1 and nothing for 0."""
    if n == 0:
        return "", ""
    if n == 1:
        return var, var
    return f"{var}^{n}" if n > 0 else f"{var}^({format_number(sympy.Integer(n))})", f"{var}^{{{n}}}"


def mono(coef: sympy.Basic | int, var: str, n: int = 1) -> Piece:
    """``coef × var^n`` written plainly: ``3x^2``, ``x``, ``(3/2)x``, ``5``."""
    c = sympy.Rational(coef)
    mag = abs(c)
    p_text, p_latex = power(var, n)
    if not p_text:
        body, tex = format_number(mag), latex_number(mag)
    elif mag == 1:
        body, tex = p_text, p_latex
    else:
        body = (format_number(mag) if mag.q == 1 else f"({format_number(mag)})") + p_text
        tex = latex_number(mag) + p_latex
    return Piece(c * sympy.Symbol(var) ** n, body, tex, c < 0)


def poly(coeffs: dict[int, sympy.Basic | int], var: str) -> list[Piece]:
    """The non-zero terms of ``Σ coeffs[n] var^n``, highest power first (``[0]`` if all vanish)."""
    pieces = [mono(c, var, n) for n, c in sorted(coeffs.items(), reverse=True) if c != 0]
    return pieces or [num(0)]


def raw(value: sympy.Expr, text: str, latex: str, negative: bool = False) -> Piece:
    """Anything already written (``2 × 3 × x``); the caller vouches that text reads as value."""
    return Piece(value, text, latex, negative)


def group(pieces: list[Piece], negative: bool = False) -> Piece:
    """``(…)`` around a line; ``negative`` writes a minus in front of the bracket."""
    v, t, tex = line(pieces)
    return Piece(-v if negative else v, f"({t})", rf"\left({tex}\right)", negative)


def line(pieces: list[Piece]) -> tuple[sympy.Expr, str, str]:
    """(value, text, LaTeX) of ``p1 ± p2 ± …``; a leading negative term gets a bare minus."""
    text = latex = ""
    for i, p in enumerate(pieces):
        if i == 0:
            text = ("−" if p.negative else "") + p.text
            latex = ("-" if p.negative else "") + p.latex
        else:
            text += f" {'−' if p.negative else '+'} {p.text}"
            latex += f" {'-' if p.negative else '+'} {p.latex}"
    return sympy.Add(*(p.value for p in pieces)), text, latex


def add_line(d: Derivation, rule: str, pieces: list[Piece], result: sympy.Basic | None = None) -> None:
    """Append an expression step written as ``pieces``."""
    v, t, tex = line(pieces)
    d.add(StepDraft(rule=rule, value=v, text=t, latex=tex, result=result))


def add_relation(d: Derivation, rule: str, left: list[Piece], rel: str, right: list[Piece],
                 result: sympy.Basic | None = None) -> None:
    """Append ``left rel right`` (rel one of = < ≤ > ≥), kept unevaluated so a slip stays visible."""
    lv, lt, ll = line(left)
    rv, rt, rl = line(right)
    op, op_latex = _RELATIONS[rel]
    d.add(StepDraft(rule=rule, value=op(lv, rv, evaluate=False), text=f"{lt} {rel} {rt}",
                    latex=f"{ll} {op_latex} {rl}", result=result))


_RELATIONS = {"=": (sympy.Eq, "="), "<": (sympy.Lt, "<"), "≤": (sympy.Le, r"\le"),
              ">": (sympy.Gt, ">"), "≥": (sympy.Ge, r"\ge")}
FLIP = {"<": ">", ">": "<", "≤": "≥", "≥": "≤", "=": "="}


def relation(rel: str, lhs: sympy.Expr, rhs: sympy.Expr) -> sympy.Basic:
    return _RELATIONS[rel][0](lhs, rhs, evaluate=False)
