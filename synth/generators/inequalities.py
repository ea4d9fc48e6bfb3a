"""Linear inequalities in one unknown, solved like equations except that dividing by a negative flips the sign."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators import terms as T
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number
from synth.generators.terms import FLIP

_VARS = ("x", "y", "n", "t", "k")
_RELS = ("<", "≤", ">", "≥")
_WORDS = {"<": "less than", "≤": "at most", ">": "greater than", "≥": "at least"}


@dataclass(frozen=True)
class _Level:
    unknown: str  # "positive": ax + b with a > 0; "negative": a < 0 (the sign flips); "both_sides": ax + b ? cx + d
    bounds: tuple[int, int]  # the boundary value is drawn from lo to hi − 1
    constants: tuple[int, int]  # the left constant is drawn from lo to hi − 1


_LEVELS = {"easy": _Level("positive", (1, 13), (1, 25)), "medium": _Level("negative", (-12, 13), (-30, 31)),
           "hard": _Level("both_sides", (-12, 13), (-30, 31))}


@register
class LinearInequality(Family):
    """easy: ax + b < c with a > 0; medium: a < 0 (the sign flips); hard: ax + b < cx + d.

    The answer is the inequality ``x < 4`` itself; the verifier compares solution sets, so a
    forgotten flip is a different answer even though the boundary number is right.
    """

    id = "algebra.inequalities.linear"
    domain = "algebra"
    subdomain = "inequalities"
    grade_band = "7-9"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("no_flip_negative_divisor", "theorem_misapplication",
                "divides both sides by a negative number without reversing the inequality sign"),
        MalRule("flip_on_subtraction", "invalid_inference",
                "reverses the inequality sign when subtracting a number from both sides"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = _VARS[int(rng.integers(len(_VARS)))]
        rel = _RELS[int(rng.integers(len(_RELS)))]
        level = _LEVELS[difficulty]
        while True:
            a = int(rng.integers(2, 10))
            c = 0
            if level.unknown == "negative":
                a = -a
            elif level.unknown == "both_sides":
                c = int(rng.choice([-1, 1])) * int(rng.integers(1, 10))
                a = c + int(rng.choice([-1, 1])) * int(rng.integers(2, 8))
            bound = int(rng.integers(*level.bounds))
            b = int(rng.integers(*level.constants))
            d = (a - c) * bound + b
            if a != 0 and c != a and b != 0 and d != 0 and (level.unknown != "both_sides" or c != 0):
                return {"var": var, "rel": rel, "a": a, "b": b, "c": c, "d": d}

    def _sides(self, params: dict[str, Any]) -> tuple[list[T.Piece], list[T.Piece]]:
        var = params["var"]
        left = [T.mono(params["a"], var), T.num(params["b"])]
        right = ([T.mono(params["c"], var)] if params["c"] else []) + [T.num(params["d"])]
        return left, right

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        left, right = self._sides(params)
        return T.relation(params["rel"], T.line(left)[0], T.line(right)[0])

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Read the stated relation as k·x + m (rel) 0 and divide by k, flipping when k < 0: the
        # coefficients of the question, not the step chain.
        stated = self.initial(params)
        x = sympy.Symbol(params["var"])
        k, m = sympy.Poly(stated.lhs - stated.rhs, x).all_coeffs()
        rel = FLIP[params["rel"]] if k < 0 else params["rel"]
        return T.relation(rel, x, -m / k)

    def answer_of(self, value: sympy.Basic) -> sympy.Basic:
        return value

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "no_flip_negative_divisor" and params["a"] - params["c"] < 0:
            return self._derive(params, {}, rule)
        if rule == "flip_on_subtraction" and params["b"] > 0:
            return self._derive(params, {}, rule)
        return None

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        var, rel, a, b, c, dd = (params[k] for k in ("var", "rel", "a", "b", "c", "d"))
        d = Derivation(overrides)
        if c:  # gather the unknown on the left first
            T.add_relation(d, "subtract_both_sides" if c > 0 else "add_both_sides",
                           [T.mono(a, var), T.mono(-c, var), T.num(b)], rel, [T.num(dd)])
            k = d.compute(sympy.Integer(a - c))
            T.add_relation(d, "collect_like_terms", [T.mono(k, var), T.num(b)], rel, [T.num(dd)], k)
        else:
            k = sympy.Integer(a)
        flip_now = mal == "flip_on_subtraction"
        rel1 = FLIP[rel] if flip_now else rel
        T.add_relation(d, ("subtract_both_sides" if b > 0 else "add_both_sides") + ("_flipping" if flip_now else ""),
                       [T.mono(k, var), T.num(b), T.num(-b)], rel1, [T.num(dd), T.num(-b)])
        r = d.compute(sympy.Integer(dd - b))
        T.add_relation(d, "simplify", [T.mono(k, var)], rel1, [T.num(r)], r)
        if k == 0:  # only reachable through an injected slip
            return d.steps
        flip = k < 0 and mal != "no_flip_negative_divisor"
        rel2 = FLIP[rel1] if flip else rel1
        k_text = str(k) if k > 0 else f"({format_number(k)})"
        k_latex = str(k) if k > 0 else rf"\left({k}\right)"
        x = sympy.Symbol(var)
        _, r_text, r_latex = T.line([T.num(r)])
        d.add(StepDraft(rule="divide_both_sides" + ("_flip_sign" if flip else ""),
                        value=T.relation(rel2, x, r / k),
                        text=f"{var} {rel2} {r_text} ÷ {k_text}",
                        latex=rf"{var} {_latex(rel2)} \frac{{{r_latex}}}{{{k_latex}}}"))
        s = d.compute(r / k)
        T.add_relation(d, "simplify", [T.mono(1, var)], rel2, [T.num(s)], s)
        return d.steps

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        rel = {sympy.Lt: "<", sympy.Le: "≤", sympy.Gt: ">", sympy.Ge: "≥"}[type(answer)]
        _, text, latex = T.line([T.num(answer.rhs)])
        return f"{params['var']} {rel} {text}", f"{params['var']} {_latex(rel)} {latex}"

    def fill_stem(self, params: dict[str, Any]) -> str:
        return f"{params['var']} ____ ____ (write the inequality sign and the number)"

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        left, right = self._sides(params)
        _, lt, ll = T.line(left)
        _, rt, rl = T.line(right)
        rel = params["rel"]
        return {**params, "inequality": f"{lt} {rel} {rt}", "latex": f"{ll} {_latex(rel)} {rl}",
                "left": lt, "right": rt, "relation_words": _WORDS[rel]}


def _latex(rel: str) -> str:
    return {"<": "<", "≤": r"\le", ">": ">", "≥": r"\ge"}[rel]
