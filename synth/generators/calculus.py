"""Differentiation of polynomials (hard: negative powers) by the power rule, term by term."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number, latex_number


def _power(var: str, exp: str | sympy.Basic, latex: bool) -> str:
    if not isinstance(exp, str):
        e = sympy.Integer(exp)
        if e == 0:
            return ""
        if e == 1:
            return var
        body = format_number(e) if not latex else str(e)
        return f"{var}^{{{body}}}" if latex else (f"{var}^{body}" if e > 0 else f"{var}^({body})")
    return f"{var}^{{{exp.replace('−', '-')}}}" if latex else f"{var}^({exp})"


class _Term:
    """A signed term: coefficient text, power text, value (sign written by the sum)."""

    def __init__(self, value: sympy.Expr, text: str, latex: str, negative: bool) -> None:
        self.value, self.text, self.latex, self.negative = value, text, latex, negative


def _monomial(coef: sympy.Basic, var: str, exp: sympy.Basic) -> _Term:
    c = sympy.Rational(coef)
    mag = abs(c)
    p_text, p_latex = _power(var, exp, False), _power(var, exp, True)
    if not p_text:
        body, tex = format_number(mag), latex_number(mag)
    elif mag == 1:
        body, tex = p_text, p_latex
    else:
        body = (format_number(mag) if mag.q == 1 else f"({format_number(mag)})") + p_text
        tex = latex_number(mag) + p_latex
    return _Term(c * sympy.Symbol(var) ** exp, body, tex, c < 0)


def _shift_text(n: int, shift: int) -> str | sympy.Basic:
    """The exponent as the pupil writes it: ``3 − 1`` (the rule), ``3 + 1`` or plain ``3`` (mal-rules)."""
    if shift == 0:
        return sympy.Integer(n)
    return f"{format_number(sympy.Integer(n))} {'−' if shift < 0 else '+'} {abs(shift)}"


def _rule_applied(coef: int, var: str, n: int, shift: int = -1) -> _Term:
    """``3 × 5x^(3 − 1)``: the power rule written out before any arithmetic."""
    exp_text = _shift_text(n, shift)
    negative = (coef < 0) != (n < 0)
    mag = abs(coef)
    body = f"{abs(n)} × {'' if mag == 1 else mag}{_power(var, exp_text, False)}"
    tex = rf"{abs(n)} \times {'' if mag == 1 else mag}{_power(var, exp_text, True)}"
    return _Term(sympy.Integer(n * coef) * sympy.Symbol(var) ** (n + shift), body, tex, negative)


def _write(terms: list[_Term], latex: bool) -> str:
    minus = "-" if latex else "−"
    out = ""
    for i, t in enumerate(terms):
        body = t.latex if latex else t.text
        out = (minus if t.negative else "") + body if i == 0 else out + f" {minus if t.negative else '+'} {body}"
    return out or "0"


@register
class PowerRule(Family):
    id = "calculus.derivative.power_rule"
    domain = "calculus"
    subdomain = "derivatives"
    grade_band = "11-12"

    # terms, highest power, a negative power last, the leading coefficient positive
    _LEVELS = {"easy": (2, 5, False, True), "medium": (3, 7, False, False), "hard": (4, 9, True, False)}
    malrules = (
        MalRule("raise_power", "formula_misuse", "adds one to the power instead of taking one away: n·x^(n+1)"),
        MalRule("keep_power", "formula_misuse", "brings the power down but forgets to lower it: n·x^n"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        n_terms, top, negative, positive_lead = self._LEVELS[difficulty]
        var = ("x", "t", "u")[int(rng.integers(3))]
        while True:
            exps = sorted({int(rng.integers(2, top + 1)) for _ in range(n_terms)}, reverse=True)
            if negative:
                exps[-1] = -int(rng.integers(1, 4))
            if len(exps) < n_terms:
                continue
            terms = [[int(rng.choice([-1, 1])) * int(rng.integers(1, 10)), e] for e in exps]
            if positive_lead:
                terms[0][0] = abs(terms[0][0])
            linear = int(rng.integers(-9, 10))
            constant = int(rng.integers(-20, 21))
            return {"var": var, "terms": terms, "linear": linear, "constant": constant}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        shift = {"raise_power": 1, "keep_power": 0}.get(rule)
        return None if shift is None else self._worked(params, {}, shift, "mal:" + rule)

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], shift: int = -1,
                first: str = "power_rule") -> list[StepDraft]:
        var, terms = params["var"], params["terms"]
        d = Derivation(overrides)
        shown: list[_Term] = [_rule_applied(c, var, n, shift) for c, n in terms]
        tail = [_monomial(params["linear"], var, 0)] if params["linear"] else []

        def add(rule: str, result: sympy.Basic | None = None) -> None:
            everything = shown + tail
            d.add(StepDraft(rule=rule, value=sympy.Add(*(t.value for t in everything)),
                            text=_write(everything, False), latex=_write(everything, True), result=result))

        add(first)
        for j, (c, n) in enumerate(terms):
            coef = d.compute(sympy.Integer(c * n))
            if n < 0 and shift:  # negative powers: the coefficient first, then the exponent, as pupils slip on both
                shown[j] = _Term(coef * sympy.Symbol(var) ** (n + shift),
                                 *self._pending_exp(coef, var, n, shift), coef < 0)
                add("multiply_coefficient", coef)
                e = d.compute(sympy.Integer(n + shift))
                shown[j] = _monomial(coef, var, e)
                add("subtract_one_from_exponent" if shift < 0 else "add_one_to_exponent", e)
            else:
                shown[j] = _monomial(coef, var, n + shift)
                add("multiply_coefficient", coef)
        return d.steps

    @staticmethod
    def _pending_exp(coef: sympy.Basic, var: str, n: int, shift: int = -1) -> tuple[str, str]:
        mag = abs(sympy.Rational(coef))
        c = "" if mag == 1 else format_number(mag)
        text = _shift_text(n, shift)
        latex = text.replace("−", "-") if isinstance(text, str) else text
        return (f"{c}{_power(var, text, False)}", f"{'' if mag == 1 else latex_number(mag)}{_power(var, latex, True)}")

    def _function(self, params: dict[str, Any]) -> sympy.Expr:
        x = sympy.Symbol(params["var"])
        return sum((c * x**n for c, n in params["terms"]), sympy.Integer(0)) + params["linear"] * x + params["constant"]

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        """The derivative the question asks for, term by term from the parameters."""
        x = sympy.Symbol(params["var"])
        return sympy.Add(*(c * n * x ** (n - 1) for c, n in params["terms"]), params["linear"])

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # sympy's differentiation of the stated function: independent of the step chain.
        return sympy.diff(self._function(params), sympy.Symbol(params["var"]))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        terms = [_monomial(c * n, params["var"], n - 1) for c, n in params["terms"]]
        if params["linear"]:
            terms.append(_monomial(params["linear"], params["var"], 0))
        return _write(terms, False), _write(terms, True)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        var = params["var"]
        terms = [_monomial(c, var, n) for c, n in params["terms"]]
        if params["linear"]:
            terms.append(_monomial(params["linear"], var, 1))
        if params["constant"]:
            terms.append(_monomial(params["constant"], var, 0))
        return {**params, "function": _write(terms, False), "latex": _write(terms, True)}
