"""Exact trigonometric values at special angles, combined step by step (sin 30° + cos² 45° …)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number, latex_number
from synth.mathparse import parse_math

# (function, angle, power) whose value is rational, with the exact value as a pupil writes it.
_EXACT = {
    ("sin", 30): ("1/2", r"\frac{1}{2}"), ("cos", 60): ("1/2", r"\frac{1}{2}"),
    ("sin", 90): ("1", "1"), ("cos", 0): ("1", "1"), ("tan", 45): ("1", "1"),
    ("cos", 180): ("−1", "-1"), ("sin", 45): ("√2/2", r"\frac{\sqrt{2}}{2}"),
    ("cos", 45): ("√2/2", r"\frac{\sqrt{2}}{2}"), ("sin", 60): ("√3/2", r"\frac{\sqrt{3}}{2}"),
    ("cos", 30): ("√3/2", r"\frac{\sqrt{3}}{2}"), ("tan", 60): ("√3", r"\sqrt{3}"),
    ("tan", 30): ("√3/3", r"\frac{\sqrt{3}}{3}"),
}  # fmt: skip
_FUNCS = {"sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan}


def _exact(func: str, angle: int) -> sympy.Expr:
    return _FUNCS[func](sympy.pi * angle / 180)


def _rational_choices() -> list[tuple[str, int, int]]:
    """(func, angle, power) with a rational value: irrational ones only appear squared."""
    out = []
    for (func, angle), (text, _) in sorted(_EXACT.items()):
        out.append((func, angle, 2 if "√" in text else 1))
        if "√" not in text and text not in ("1", "−1"):
            out.append((func, angle, 2))
    return out


_CHOICES = _rational_choices()


class _Piece:
    def __init__(self, value: sympy.Expr, text: str, latex: str) -> None:
        self.value, self.text, self.latex = value, text, latex


def _trig_piece(coef: int, func: str, angle: int, power: int) -> _Piece:
    name = f"{func}^{power}" if power > 1 else func
    lname = rf"\{func}^{{{power}}}" if power > 1 else rf"\{func}"
    c = "" if coef == 1 else f"{coef} × "
    lc = "" if coef == 1 else rf"{coef} \times "
    return _Piece(coef * _exact(func, angle) ** power, f"{c}{name} {angle}°", rf"{lc}{lname} {angle}^\circ")


_R2, _R3 = sympy.sqrt(2), sympy.sqrt(3)
# False facts pupils use, as (text, latex, value) in place of the true exact value.
_FALSE_FACTS: dict[str, dict[tuple[str, int], tuple[str, str, sympy.Expr]]] = {
    "swap_sin_cos": {
        ("sin", 30): ("√3/2", r"\frac{\sqrt{3}}{2}", _R3 / 2),
        ("cos", 30): ("1/2", r"\frac{1}{2}", sympy.Rational(1, 2)),
        ("sin", 60): ("1/2", r"\frac{1}{2}", sympy.Rational(1, 2)),
        ("cos", 60): ("√3/2", r"\frac{\sqrt{3}}{2}", _R3 / 2),
    },
    "tan_inverted": {("tan", 30): ("√3", r"\sqrt{3}", _R3), ("tan", 60): ("√3/3", r"\frac{\sqrt{3}}{3}", _R3 / 3)},
    "special_value_zero": {("sin", 90): ("0", "0", sympy.Integer(0)), ("cos", 0): ("0", "0", sympy.Integer(0))},
}  # fmt: skip


def _value_piece(coef: int, func: str, angle: int, power: int, fact: tuple[str, str] | None = None) -> _Piece:
    text, latex = fact or _EXACT[(func, angle)]
    value = parse_math(text) if fact else _exact(func, angle)
    if power > 1 or "/" in text or text.startswith("−"):
        text, latex = f"({text})", rf"\left({latex}\right)"
    if power > 1:
        text, latex = f"{text}^{power}", f"{latex}^{{{power}}}"
    c = "" if coef == 1 else f"{coef} × "
    lc = "" if coef == 1 else rf"{coef} \times "
    return _Piece(coef * value**power, c + text, lc + latex)


def _number_piece(coef: int, v: sympy.Basic) -> _Piece:
    c = "" if coef == 1 else f"{coef} × "
    lc = "" if coef == 1 else rf"{coef} \times "
    node = E.leaf(v)
    text, latex = E.text(node), E.latex(node)
    if coef != 1 and (v < 0 or sympy.Rational(v).q != 1):
        text, latex = f"({text})", rf"\left({latex}\right)"
    return _Piece(coef * v, c + text, lc + latex)


def _join(pieces: list[_Piece], signs: list[str], latex: bool) -> str:
    out = pieces[0].latex if latex else pieces[0].text
    for s, p in zip(signs, pieces[1:]):
        body = p.latex if latex else p.text
        if body.startswith(("−", "-")):  # a negative number after an operator is bracketed
            body = rf"\left({body}\right)" if latex else f"({body})"
        out += f" {'+' if s == '+' else ('-' if latex else '−')} {body}"
    return out


@register
class ExactValues(Family):
    id = "trig.exact_values"
    domain = "trigonometry"
    subdomain = "exact_values"
    grade_band = "10-11"

    # terms, coefficients other than 1 (on a share), squared values (sin²45° and the like)
    _LEVELS = {"easy": (2, False, False), "medium": (3, True, True), "hard": (4, True, True)}
    malrules = (
        MalRule("swap_sin_cos", "incorrect_fact", "swaps the sine and cosine values: sin 30° = √3/2"),
        MalRule("tan_inverted", "incorrect_fact", "takes tan as cos ÷ sin: tan 60° = √3/3"),
        MalRule("special_value_zero", "incorrect_fact", "takes sin 90° or cos 0° to be 0"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        n, coefs, squares = self._LEVELS[difficulty]
        pool = _CHOICES if squares else [c for c in _CHOICES if c[2] == 1]
        while True:
            picks = [pool[int(rng.integers(len(pool)))] for _ in range(n)]
            terms = [[int(rng.integers(2, 7)) if coefs and rng.random() < 0.6 else 1, f, a, p] for f, a, p in picks]
            signs = ["+" if rng.random() < 0.6 else "-" for _ in range(n - 1)]
            if len({(f, a) for _, f, a, _ in terms}) == n:
                return {"terms": terms, "signs": signs}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        table = _FALSE_FACTS.get(rule, {})
        for j, (_, func, angle, power) in enumerate(params["terms"]):
            fact = table.get((func, angle))
            if fact is not None and (power > 1 or fact[2].is_Rational):  # power 1 terms stay rational
                return self._worked(params, {}, (j, fact, "mal:" + rule))
        return None

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic],
                misread: tuple[int, tuple[str, str, sympy.Expr], str] | None = None) -> list[StepDraft]:
        terms, signs = params["terms"], params["signs"]
        d = Derivation(overrides)
        pieces = [_trig_piece(*t) for t in terms]

        def add(rule: str, result: sympy.Basic | None = None, shown: list[_Piece] | None = None,
                shown_signs: list[str] | None = None) -> None:
            ps, ss = shown or pieces, shown_signs if shown_signs is not None else signs
            total = ps[0].value + sum((p.value if s == "+" else -p.value) for s, p in zip(ss, ps[1:]))
            d.add(StepDraft(rule=rule, value=total, text=_join(ps, ss, False), latex=_join(ps, ss, True),
                            result=result))

        for j, (coef, func, angle, power) in enumerate(terms):
            fact = misread[1] if misread and misread[0] == j else None
            exact = fact[2] if fact else _exact(func, angle)
            rule = misread[2] if fact and misread else f"exact_value:{func}"
            if power == 1 and exact.is_Rational:
                v = d.compute(exact)
                pieces[j] = _number_piece(coef, v)
                add(rule, v)
            else:
                pieces[j] = _value_piece(coef, func, angle, power, fact[:2] if fact else None)
                add(rule)
                v = d.compute(exact**power)
                pieces[j] = _number_piece(coef, v)
                add("evaluate_power", v)
        values = [p.value for p in pieces]
        for j, (coef, *_rest) in enumerate(terms):
            if coef != 1:
                values[j] = d.compute(values[j])
                pieces[j] = _number_piece(1, values[j])
                add("multiply", values[j])
        running = pieces[0].value
        for j in range(1, len(pieces)):
            running = d.compute(running + values[j] if signs[j - 1] == "+" else running - values[j])
            add("add" if signs[j - 1] == "+" else "subtract", running,
                [_number_piece(1, running), *pieces[j + 1:]], signs[j:])
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        total = sympy.Integer(0)
        for i, (coef, func, angle, power) in enumerate(params["terms"]):
            term = coef * _exact(func, angle) ** power
            total += term if i == 0 or params["signs"][i - 1] == "+" else -term
        return total

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Unit-circle coordinates from a right triangle, independent of sympy's trig tables.
        half, r2, r3 = sympy.Rational(1, 2), sympy.sqrt(2) / 2, sympy.sqrt(3) / 2
        point = {0: (1, 0), 30: (r3, half), 45: (r2, r2), 60: (half, r3), 90: (0, 1), 180: (-1, 0)}
        total = sympy.Integer(0)
        for i, (coef, func, angle, power) in enumerate(params["terms"]):
            cx, sy = point[angle]
            v = {"sin": sy, "cos": cx, "tan": sympy.Mul(sy, sympy.Pow(cx, -1))}[func]
            term = coef * sympy.expand(v**power)
            total += term if i == 0 or params["signs"][i - 1] == "+" else -term
        return sympy.nsimplify(total)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return format_number(answer), latex_number(answer)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        pieces = [_trig_piece(*t) for t in params["terms"]]
        return {**params, "expression": _join(pieces, params["signs"], False),
                "latex": _join(pieces, params["signs"], True)}
