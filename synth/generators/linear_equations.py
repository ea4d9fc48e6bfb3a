"""Linear equations with brackets or with the unknown on both sides: expand, collect, undo, divide."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators._equation import VARS, Term, const, eq_step, product, side, x_term
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number, latex_number


def _finish(d: Derivation, var: str, k: sympy.Basic, b: sympy.Basic, r: sympy.Basic, *,
            mal: str | None = None) -> None:
    """From ``kx + b = r`` (b may be 0) to ``x = …``: undo b, then divide by k.

    ``mal`` is a mal-rule a pupil applies here: ``move_constant_keep_sign`` (b crosses the =
    unchanged) or ``subtract_coefficient`` (x = r − k instead of r ÷ k).
    """
    if b != 0 and mal == "move_constant_keep_sign":
        eq_step(d, "mal:move_constant_keep_sign", [x_term(k, var)], [const(r), const(b)])
        r = r + b
        eq_step(d, "simplify", [x_term(k, var)], [const(r)], r)
    elif b != 0:
        eq_step(d, "subtract_both_sides" if b > 0 else "add_both_sides",
                 [x_term(k, var), const(b), const(-b)], [const(r), const(-b)])
        r = d.compute(r - b)
        eq_step(d, "simplify", [x_term(k, var)], [const(r)], r)
    if mal == "subtract_coefficient" and k not in (0, 1):
        eq_step(d, "mal:subtract_coefficient", [x_term(1, var)], [const(r), const(-k)])
        eq_step(d, "simplify", [x_term(1, var)], [const(r - k)], r - k)
        return
    if k == 0:  # only reachable through an injected slip: nothing left to divide by
        return
    if k != 1:
        sym_x = sympy.Symbol(var)
        k_text = format_number(k) if k > 0 else f"({format_number(k)})"
        d.add(StepDraft(rule="divide_both_sides", value=sympy.Eq(sym_x, r / k),
                        text=f"{var} = {format_number(r)} ÷ {k_text}",
                        latex=rf"{var} = \frac{{{latex_number(r)}}}{{{latex_number(k)}}}"))
        s = d.compute(r / k)
        eq_step(d, "simplify", [x_term(1, var)], [const(s)], s)


def _marked(steps: list[StepDraft]) -> list[StepDraft] | None:
    """The steps if the mal-rule found a place to act (a ``mal:`` step), else None."""
    return steps if any(s.rule.startswith("mal:") for s in steps) else None


_FINISH_RULES = (
    MalRule("move_constant_keep_sign", "invalid_inference",
            "moves the constant to the other side of = without changing its sign"),
    MalRule("subtract_coefficient", "formula_misuse",
            "undoes the multiplication by subtracting the coefficient instead of dividing"),
)


class _Linear(Family):
    domain = "algebra"
    subdomain = "linear_equations"
    grade_band = "7-9"

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Read the coefficients of the question's equation and divide: -c0 / c1, no step chain.
        eq = self.initial(params)
        c1, c0 = sympy.Poly(eq.lhs - eq.rhs, sympy.Symbol(params["var"])).all_coeffs()
        return -c0 / c1

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return f"{params['var']} = {format_number(answer)}", f"{params['var']} = {latex_number(answer)}"

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        text, latex = self.equation_text(params)
        return {**params, "equation": text, "latex": latex}

    def equation_text(self, params: dict[str, Any]) -> tuple[str, str]:
        raise NotImplementedError


def _bracket(factor: int, b: int, c: int, var: str, latex: bool = False) -> str:
    inner_terms = [x_term(b, var), const(c)]
    _, inner = side(inner_terms, latex)
    if factor == 1:
        lead = ""
    elif factor == -1:
        lead = "-" if latex else "−"
    else:
        lead = str(factor) if latex else format_number(sympy.Integer(factor))
    return f"{lead}({inner})"


@dataclass(frozen=True)
class _BracketsLevel:
    brackets: int  # one bracket, or two added
    signed: bool  # factors and constants of either sign, and inner coefficients other than 1
    lowest_x: int  # the solution is a whole number from lowest_x to 12


_BRACKETS_LEVELS = {"easy": _BracketsLevel(1, signed=False, lowest_x=1),
                    "medium": _BracketsLevel(1, signed=True, lowest_x=-12),
                    "hard": _BracketsLevel(2, signed=True, lowest_x=-12)}


@register
class LinearBrackets(_Linear):
    """easy/medium: a(bx + c) = d; hard: a(bx + c) + e(fx + g) = h. Distribute first."""

    id = "algebra.linear.brackets"
    malrules = (
        MalRule("distribute_first_term_only", "theorem_misapplication",
                "multiplies only the first term inside the bracket by the factor outside"),
        MalRule("negative_times_negative", "incorrect_fact",
                "takes a negative times a negative to be negative when expanding the bracket"),
        *_FINISH_RULES,
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _BRACKETS_LEVELS[difficulty]
        var = VARS[int(rng.integers(len(VARS)))]
        while True:
            brackets = []
            for _ in range(level.brackets):
                a = int(rng.integers(2, 10))
                if level.signed:
                    a *= int(rng.choice([-1, 1]))
                b = int(rng.integers(1, 7)) if level.signed else 1
                c = int(rng.integers(1, 12)) * (int(rng.choice([-1, 1])) if level.signed else 1)
                brackets.append([a, b, c])
            x = sympy.Integer(int(rng.integers(level.lowest_x, 13)))
            k = sum(a * b for a, b, _ in brackets)
            rhs = sum(a * (b * x + c) for a, b, c in brackets)
            if k != 0 and x != 0 and rhs != 0:
                return {"var": var, "brackets": brackets, "rhs": int(rhs)}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        brackets = params["brackets"]
        if rule == "negative_times_negative" and not any(a < 0 and c < 0 for a, _, c in brackets):
            return None
        if rule in ("distribute_first_term_only", "negative_times_negative", *(r.id for r in _FINISH_RULES)):
            return _marked(self._worked(params, {}, rule))
        return None

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic],
                mal: str | None = None) -> list[StepDraft]:
        var, brackets, rhs = params["var"], params["brackets"], sympy.Integer(params["rhs"])
        d = Derivation(overrides)
        first_only = mal == "distribute_first_term_only"
        shown: list[list[Term]] = [[product(a, x_term(b, var)), const(c) if first_only else product(a, const(c))]
                                   for a, b, c in brackets]
        eq_step(d, "mal:" + mal if first_only else "distribute", [t for pair in shown for t in pair], [const(rhs)])
        flipped = False
        for j, (a, b, c) in enumerate(brackets):
            ac = d.compute(sympy.Integer(c if first_only else a * c))
            flip = mal == "negative_times_negative" and a < 0 and c < 0
            ac = -ac if flip else ac
            shown[j] = [x_term(a * b, var), const(ac)]
            eq_step(d, "mal:" + mal if flip and not flipped else "multiply_out", [t for pair in shown for t in pair],
                     [const(rhs)], ac)
            flipped = flipped or flip
        k = sum(a * b for a, b, _ in brackets)
        consts = [pair[1].value for pair in shown]
        if len(brackets) > 1:
            total = d.compute(sympy.Add(*consts))
            eq_step(d, "collect_like_terms", [x_term(k, var), const(total)] if total != 0 else [x_term(k, var)],
                     [const(rhs)], total)
        else:
            total = consts[0]
        _finish(d, var, sympy.Integer(k), total, rhs, mal=mal)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        v = sympy.Symbol(params["var"])
        return sympy.Eq(sum(a * (b * v + c) for a, b, c in params["brackets"]), params["rhs"], evaluate=False)

    def equation_text(self, params: dict[str, Any]) -> tuple[str, str]:
        parts, tex = [], []
        for i, (a, b, c) in enumerate(params["brackets"]):
            text = _bracket(abs(a), b, c, params["var"])
            ltx = _bracket(abs(a), b, c, params["var"], True)
            sign = ("−" if a < 0 else "") if i == 0 else (" − " if a < 0 else " + ")
            parts.append(sign + text)
            tex.append(sign.replace("−", "-") + ltx)
        return f"{''.join(parts)} = {format_number(sympy.Integer(params['rhs']))}", f"{''.join(tex)} = {params['rhs']}"


@dataclass(frozen=True)
class _BothSidesLevel:
    top: int  # the coefficients' size
    signed: bool  # coefficients of either sign (else the left one is the larger, both positive)
    fraction: bool  # the solution is a fraction (else a whole number from lowest_x to 12)
    lowest_x: int
    constants: tuple[int, int]  # the left constant is drawn from lo to hi − 1


_BOTH_SIDES_LEVELS = {"easy": _BothSidesLevel(9, signed=False, fraction=False, lowest_x=1, constants=(1, 30)),
                      "medium": _BothSidesLevel(15, signed=True, fraction=False, lowest_x=-10, constants=(-30, 31)),
                      "hard": _BothSidesLevel(25, signed=True, fraction=True, lowest_x=1, constants=(-30, 31))}


@register
class LinearBothSides(_Linear):
    """ax + b = cx + d: gather the unknown on one side, then undo the constant and divide."""

    id = "algebra.linear.both_sides"
    malrules = (
        MalRule("move_term_keep_sign", "invalid_inference",
                "moves the unknown's term to the other side of = without changing its sign"),
        *_FINISH_RULES,
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _BOTH_SIDES_LEVELS[difficulty]
        var = VARS[int(rng.integers(len(VARS)))]
        top = level.top
        while True:
            a, c = int(rng.integers(1, top + 1)), int(rng.integers(1, top + 1))
            if level.signed:
                a *= int(rng.choice([-1, 1]))
                c *= int(rng.choice([-1, 1]))
            elif a <= c:
                continue
            if level.fraction:
                x = sympy.Rational(int(rng.integers(-30, 31)), int(rng.integers(1, 5)))
            else:
                x = sympy.Integer(int(rng.integers(level.lowest_x, 13)))
            b = int(rng.integers(*level.constants))
            dd = (a - c) * x + b
            if a != c and c != 0 and x != 0 and b != 0 and dd.q == 1 and dd != 0:
                return {"var": var, "a": a, "b": b, "c": c, "d": int(dd)}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "move_term_keep_sign" and params["a"] + params["c"] == 0:
            return None  # the unknown would vanish: not a solution a pupil could finish
        if rule in ("move_term_keep_sign", *(r.id for r in _FINISH_RULES)):
            return _marked(self._worked(params, {}, rule))
        return None

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic],
                mal: str | None = None) -> list[StepDraft]:
        var, a, b, c, dd = params["var"], params["a"], params["b"], params["c"], params["d"]
        b_, d_ = sympy.Integer(b), sympy.Integer(dd)
        d = Derivation(overrides)
        keep = mal == "move_term_keep_sign"
        eq_step(d, "mal:" + mal if keep else "subtract_both_sides" if c > 0 else "add_both_sides",
                 [x_term(a, var), x_term(c if keep else -c, var), const(b_)], [const(d_)])
        k = d.compute(sympy.Integer(a + c if keep else a - c))
        eq_step(d, "collect_like_terms", [x_term(k, var), const(b_)], [const(d_)], k)
        _finish(d, var, k, b_, d_, mal=mal)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        v = sympy.Symbol(params["var"])
        return sympy.Eq(params["a"] * v + params["b"], params["c"] * v + params["d"], evaluate=False)

    def equation_text(self, params: dict[str, Any]) -> tuple[str, str]:
        var = params["var"]
        left = [x_term(params["a"], var), const(params["b"])]
        right = [x_term(params["c"], var), const(params["d"])]
        return (f"{side(left)[1]} = {side(right)[1]}", f"{side(left, True)[1]} = {side(right, True)[1]}")
