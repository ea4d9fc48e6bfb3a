"""Expand and collect: k(px + q), k(px + q)², k(px + q)(rx + t) summed, simplified to a polynomial."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators import terms as T
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.generators.terms import Piece

_VARS = ("x", "y", "a", "n", "t")
Coeffs = dict[int, sympy.Integer]


def _part_value(part: list[Any], x: sympy.Symbol) -> sympy.Expr:
    kind, k, p, q, *rest = part
    if kind == "lin":
        return k * (p * x + q)
    if kind == "sq":
        return k * (p * x + q) ** 2
    r, t = rest
    return k * (p * x + q) * (r * x + t)


def _factor_text(p: int, q: int, var: str) -> tuple[str, str]:
    _, text, latex = T.line([T.mono(p, var), T.num(q)])
    return f"({text})", rf"\left({latex}\right)"


def _unexpanded(part: list[Any], var: str) -> Piece:
    """The part as the question writes it: ``3(x + 4)``, ``(2x − 1)^2``, ``(x + 1)(x − 3)``."""
    kind, k, p, q, *rest = part
    text, latex = _factor_text(p, q, var)
    if kind == "sq":
        text, latex = f"{text}^2", f"{latex}^{{2}}"
    elif kind == "prod":
        t2, l2 = _factor_text(rest[0], rest[1], var)
        text, latex = text + t2, latex + l2
    lead = "" if abs(k) == 1 else str(abs(k))
    return T.raw(_part_value(part, sympy.Symbol(var)), lead + text, lead + latex, k < 0)


def _bracket(k: int, pieces: list[Piece]) -> list[Piece]:
    """``k(…)`` around expanded pieces, or the pieces themselves when k is 1."""
    if k == 1:
        return pieces
    inner = T.group(pieces)
    lead = "" if abs(k) == 1 else str(abs(k))
    return [T.raw(k * inner.value, lead + inner.text, lead + inner.latex, k < 0)]


def _nonzero(rng: np.random.Generator, lo: int, hi: int) -> int:
    v = 0
    while v == 0:
        v = int(rng.integers(lo, hi + 1))
    return v


def _two_linear(rng: np.random.Generator) -> list[list[Any]]:
    """a(x + p) − b(x + q)."""
    return [["lin", int(rng.integers(2, 10)), 1, _nonzero(rng, -9, 9)],
            ["lin", -int(rng.integers(2, 10)), 1, _nonzero(rng, -9, 9)]]


def _square_and_linear(rng: np.random.Generator) -> list[list[Any]]:
    """(x + p)² − b(cx + q)."""
    return [["sq", 1, 1, _nonzero(rng, -9, 9)],
            ["lin", -int(rng.integers(2, 10)), int(rng.integers(1, 4)), _nonzero(rng, -9, 9)]]


def _product_and_square(rng: np.random.Generator) -> list[list[Any]]:
    """(ax + p)(cx + q) − k(dx + r)²."""
    return [["prod", 1, int(rng.integers(1, 4)), _nonzero(rng, -9, 9), int(rng.integers(1, 4)), _nonzero(rng, -9, 9)],
            ["sq", -int(rng.integers(1, 4)), int(rng.integers(1, 4)), _nonzero(rng, -9, 9)]]


_LEVELS = {"easy": _two_linear, "medium": _square_and_linear, "hard": _product_and_square}  # the parts drawn


@register
class PolynomialSimplify(Family):
    """easy: 3(x + 4) − 2(x − 1); medium: (x + 3)² − 2(x − 1); hard: (2x + 1)(x − 3) − (x − 2)².

    Each bracket is expanded on its own line (squares through (a + b)² = a² + 2ab + b²), a
    negative multiplier is distributed, like terms are gathered, then collected one power at
    a time.
    """

    id = "algebra.polynomial.simplify"
    domain = "algebra"
    subdomain = "polynomials"
    grade_band = "8-10"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("square_of_sum", "formula_misuse", "squares a sum term by term: (a + b)² = a² + b²"),
        MalRule("negative_first_term_only", "theorem_misapplication",
                "multiplies only the first term of a bracket by the negative factor in front of it"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = _VARS[int(rng.integers(len(_VARS)))]
        return {"var": var, "parts": _LEVELS[difficulty](rng)}

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        x = sympy.Symbol(params["var"])
        return sympy.Add(*(_part_value(p, x) for p in params["parts"]))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Multiply the brackets out symbolically: sympy's expansion, not the shown identities.
        return sympy.expand(self.initial(params))

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        kinds = [(p[0], p[1]) for p in params["parts"]]
        if rule == "square_of_sum" and not any(kind == "sq" for kind, _ in kinds):
            return None
        if rule == "negative_first_term_only" and not any(k < 0 for _, k in kinds):
            return None
        if rule not in ("square_of_sum", "negative_first_term_only"):
            return None
        return self._derive(params, {}, rule)

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        var, parts = params["var"], params["parts"]
        x = sympy.Symbol(var)
        d = Derivation(overrides)
        blocks: list[list[Piece]] = [[_unexpanded(p, var)] for p in parts]
        coeffs: list[Coeffs] = []
        mal_used = False

        def show(rule: str, result: sympy.Basic | None = None) -> None:
            T.add_line(d, rule, [p for b in blocks for p in b], result)

        for j, part in enumerate(parts):
            kind, k, p, q, *rest = part
            if kind == "lin":
                wrong = mal == "negative_first_term_only" and k < 0 and not mal_used
                c0 = d.compute(sympy.Integer(-k * q if wrong else k * q)) if not wrong else sympy.Integer(-k * q)
                mal_used |= wrong
                blocks[j] = [T.mono(k * p, var), T.num(c0)]
                coeffs.append({1: sympy.Integer(k * p), 0: sympy.Integer(c0)})
                show("multiply_out_bracket" if not wrong else "multiply_first_term_only", c0)
                continue
            if kind == "sq":
                freshman = mal == "square_of_sum" and not mal_used
                mal_used |= freshman
                a_t = f"{var}" if p == 1 else f"({p}{var})"
                a_l = f"{var}" if p == 1 else rf"\left({p}{var}\right)"
                pieces = [T.raw(p**2 * x**2, f"{a_t}^2", f"{a_t if p == 1 else a_l}^{{2}}")]
                if not freshman:
                    p_t = var if p == 1 else f"{p}{var}"
                    pieces.append(T.raw(2 * p * q * x, f"2 × {p_t} × {abs(q)}", rf"2 \times {p_t} \times {abs(q)}",
                                        q < 0))
                pieces.append(T.raw(sympy.Integer(q**2), f"{abs(q)}^2", f"{abs(q)}^{{2}}"))
                blocks[j] = _bracket(k, pieces)
                show("square_of_sum_identity" if not freshman else "square_each_term")
                middle = sympy.Integer(0) if freshman else d.compute(sympy.Integer(2 * p * q))
                inner: Coeffs = {2: sympy.Integer(p * p), 1: middle, 0: sympy.Integer(q * q)}
                blocks[j] = _bracket(k, T.poly(inner, var))
                show("evaluate_squares", None if freshman else middle)
            else:
                r, t = rest
                const = d.compute(sympy.Integer(q * t))
                inner_pieces = [T.mono(p * r, var, 2), T.mono(p * t, var), T.mono(q * r, var), T.num(const)]
                blocks[j] = _bracket(k, inner_pieces)
                show("multiply_brackets", const)
                inner = {2: sympy.Integer(p * r), 1: sympy.Integer(p * t + q * r), 0: const}
                if k == 1:  # FOIL leaves two x terms; they are collected with the rest below
                    coeffs.append({2: inner[2], 1: sympy.Integer(p * t), 0: const, -1: sympy.Integer(q * r)})
                    continue
            if k == 1:
                coeffs.append(inner)
                continue
            wrong = mal == "negative_first_term_only" and k < 0 and not mal_used
            mal_used |= wrong
            lead = d.compute(k * inner[2]) if not wrong else k * inner[2]
            out: Coeffs = {2: lead, 1: inner[1] if wrong else k * inner[1], 0: inner[0] if wrong else k * inner[0]}
            blocks[j] = T.poly(out, var)
            show("distribute_negative" if k < 0 and not wrong else "multiply_first_term_only" if wrong
                 else "distribute", lead if not wrong else None)
            coeffs.append(out)
        # -1 marks FOIL's second x term: it sits next to the first one when the line is gathered.
        gathered = [(n if n >= 0 else 1, c) for cs in coeffs for n, c in cs.items() if c != 0]
        gathered.sort(key=lambda nc: -nc[0])
        pieces = [T.mono(c, var, n) for n, c in gathered]
        if [p.text for p in pieces] != [p.text for b in blocks for p in b]:
            blocks = [pieces]
            show("gather_like_terms")
        totals: dict[int, sympy.Basic] = {}
        for n in (2, 1, 0):
            same = [c for m, c in gathered if m == n]
            if not same:
                continue
            if len(same) > 1:
                totals[n] = d.compute(sympy.Add(*same))
                pieces = [T.mono(totals.get(m, c), var, m) for m, c in self._collapse(gathered, totals)]
                pieces = [p for p in pieces if p.value != 0] or [T.num(0)]
                blocks = [pieces]
                show(f"collect_{['constants', 'x_terms', 'squares'][n]}", totals[n])
            else:
                totals[n] = same[0]
        return d.steps

    @staticmethod
    def _collapse(gathered: list[tuple[int, sympy.Basic]], totals: dict[int, sympy.Basic]) -> list[tuple[int, Any]]:
        """Gathered terms with every already-collected power written once."""
        out: list[tuple[int, Any]] = []
        seen: set[int] = set()
        for n, c in gathered:
            if n in totals:
                if n not in seen:
                    out.append((n, totals[n]))
                    seen.add(n)
            else:
                out.append((n, c))
        return out

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        x = sympy.Symbol(params["var"])
        coeffs = sympy.Poly(answer, x).as_dict()
        _, text, latex = T.line(T.poly({n: c for (n,), c in coeffs.items()}, params["var"]))
        return text, latex

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        _, text, latex = T.line([_unexpanded(p, params["var"]) for p in params["parts"]])
        return {**params, "expression": text, "latex": latex}
