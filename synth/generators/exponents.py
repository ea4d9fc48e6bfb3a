"""Index laws on monomials: (a·x^m)^q × b·x^n ÷ (c·x^p), one law at a time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number

_VARS = ("x", "y", "a", "b", "m", "p")


def _num(v: sympy.Basic | str, latex: bool = False) -> str:
    if isinstance(v, str):
        return v
    text = format_number(sympy.Rational(v))
    if latex:
        r = sympy.Rational(v)
        text = str(r) if r.q == 1 else rf"\frac{{{r.p}}}{{{r.q}}}"
    return text


def _exp(e: str | sympy.Basic, latex: bool) -> str:
    body = _num(e, latex)
    if latex:
        return "{" + body.replace("×", r"\times").replace("−", "-") + "}"
    simple = body.isdigit()
    return body if simple else f"({body})"


def mono(coef: str | sympy.Basic, var: str, exp: str | sympy.Basic, latex: bool = False) -> str:
    """``6x^8``, ``(6 × 4)x^(3 + 5)``, ``x^2`` (a coefficient of 1 is not written)."""
    c = _num(coef, latex) if not (not isinstance(coef, str) and coef == 1) else ""
    if isinstance(coef, str) and not latex:
        c = f"({coef})"
    elif isinstance(coef, str):
        c = "(" + coef.replace("×", r"\times").replace("÷", r"\div") + ")"
    if not isinstance(coef, str) and sympy.Rational(coef).q != 1 and not latex:
        c = f"({c})"
    return f"{c}{var}^{_exp(exp, latex)}"


@dataclass(frozen=True)
class _Level:
    power: bool  # the first factor is raised to a power 2-3 ((a x^m)^q)
    coefficients: int | None  # coefficients drawn from 1 to this − 1 (the divisor one of the product's); None: all 1


_LEVELS = {"easy": _Level(power=False, coefficients=None), "medium": _Level(power=False, coefficients=10),
           "hard": _Level(power=True, coefficients=7)}


@register
class SimplifyExponents(Family):
    id = "algebra.exponents.simplify"
    domain = "algebra"
    subdomain = "exponents"
    grade_band = "8-9"
    malrules = (
        MalRule("multiply_exponents_for_product", "formula_misuse",
                "multiplies the exponents when multiplying powers of the same base: a^m × a^n = a^(mn)"),
        MalRule("add_exponents_for_power", "formula_misuse",
                "adds the exponents when raising a power to a power: (a^m)^n = a^(m+n)"),
        MalRule("power_skips_coefficient", "theorem_misapplication",
                "raises only the variable to the power, not the number in front: (3x^2)^2 = 3x^4"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        var = _VARS[int(rng.integers(len(_VARS)))]
        while True:
            q = int(rng.integers(2, 4)) if level.power else 1
            coefs = [1, 1, 1] if level.coefficients is None else [int(rng.integers(1, level.coefficients))
                                                                  for _ in range(3)]
            exps = [int(rng.integers(2, 10)) for _ in range(3)]
            top = coefs[0] ** q * coefs[1]
            if level.coefficients is not None:
                divisors = [k for k in range(2, 13) if top % k == 0]
                if not divisors or top == 1:
                    continue
                coefs[2] = divisors[int(rng.integers(len(divisors)))]
            final = exps[0] * q + exps[1] - exps[2]
            if final >= 2:
                return {"var": var, "a": [coefs[0], exps[0]], "q": q, "b": [coefs[1], exps[1]],
                        "c": [coefs[2], exps[2]]}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        q, (ac, ae) = params["q"], params["a"]
        if rule == "multiply_exponents_for_product":
            ok = True
        elif rule == "add_exponents_for_power":
            ok = q > 1 and ae + q != ae * q
        elif rule == "power_skips_coefficient":
            ok = q > 1 and ac != 1
        else:
            return None
        steps = self._worked(params, {}, rule) if ok else None
        return steps if steps is not None and any(st.rule.startswith("mal:") for st in steps) else None

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic],
                mal: str | None = None) -> list[StepDraft]:
        v, q = params["var"], params["q"]
        (ac, ae), (bc, be), (cc, ce) = params["a"], params["b"], params["c"]
        x = sympy.Symbol(v)
        d = Derivation(overrides)
        plain = ac == bc == cc == 1

        def add(rule: str, parts: list[tuple[str, str]], value: sympy.Expr, result: sympy.Basic | None = None) -> None:
            text = " ".join(p[0] for p in parts)
            latex = " ".join(p[1] for p in parts)
            d.add(StepDraft(rule=rule, value=value, text=text, latex=latex, result=result))

        def m(coef: str | sympy.Basic, exp: str | sympy.Basic) -> tuple[str, str]:
            return mono(coef, v, exp, False), mono(coef, v, exp, True)

        tail_b = [("×", r"\times"), m(bc, be)]
        tail_c = [("÷", r"\div"), ("(" + m(cc, ce)[0] + ")", r"\left(" + m(cc, ce)[1] + r"\right)")] if not plain \
            else [("÷", r"\div"), m(1, ce)]
        rest_value = bc * x**be / (cc * x**ce)
        A: sympy.Basic = sympy.Integer(ac)
        E: sympy.Basic = sympy.Integer(ae)
        if q > 1:
            skip = mal == "power_skips_coefficient"
            coef_txt = sympy.Integer(ac) if skip else f"{ac}^{q}" if ac != 1 else sympy.Integer(1)
            to_add = mal == "add_exponents_for_power"
            exp_txt, exp = (f"{ae} + {q}", ae + q) if to_add else (f"{ae} × {q}", ae * q)
            add("mal:" + mal if skip or to_add else "power_of_a_product", [m(coef_txt, exp_txt), *tail_b, *tail_c],
                (ac if skip else ac**q) * x**exp * rest_value)
            if ac != 1 and not skip:
                A = d.compute(sympy.Integer(ac**q))
                add("evaluate_power", [m(A, exp_txt), *tail_b, *tail_c], A * x**exp * rest_value, A)
            E = d.compute(sympy.Integer(exp))
            add("power_of_a_power", [m(A, E), *tail_b, *tail_c], A * x**E * rest_value, E)
        coef_txt = f"{_num(A)} × {bc}" if not plain else sympy.Integer(1)
        times = mal == "multiply_exponents_for_product"
        exp_txt, exp = (f"{_num(E)} × {be}", E * be) if times else (f"{_num(E)} + {be}", E + be)
        add("mal:" + mal if times else "multiply_same_base", [m(coef_txt, exp_txt), *tail_c],
            A * bc * x**exp / (cc * x**ce))
        P: sympy.Basic = A * bc
        if not plain:
            P = d.compute(A * bc)
            add("multiply_coefficients", [m(P, exp_txt), *tail_c], P * x**exp / (cc * x**ce), P)
        S = d.compute(exp)
        add("multiply_exponents" if times else "add_exponents", [m(P, S), *tail_c], P * x**S / (cc * x**ce), S)
        coef_txt = f"{_num(P)} ÷ {cc}" if not plain else sympy.Integer(1)
        add("divide_same_base", [m(coef_txt, f"{_num(S)} − {ce}")], P / cc * x ** (S - ce))
        Q: sympy.Basic = P / cc
        if not plain:
            Q = d.compute(P / cc)
            add("divide_coefficients", [m(Q, f"{_num(S)} − {ce}")], Q * x ** (S - ce), Q)
        R = d.compute(S - ce)
        add("subtract_exponents", [m(Q, R)], Q * x**R, R)
        return d.steps

    def _expression(self, params: dict[str, Any]) -> sympy.Expr:
        x = sympy.Symbol(params["var"])
        (ac, ae), (bc, be), (cc, ce) = params["a"], params["b"], params["c"]
        return (ac * x**ae) ** params["q"] * bc * x**be / (cc * x**ce)

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return self._expression(params)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Exponent arithmetic on integers, independent of the step chain and of sympy's powsimp.
        (ac, ae), (bc, be), (cc, ce) = params["a"], params["b"], params["c"]
        q = params["q"]
        return sympy.Rational(ac**q * bc, cc) * sympy.Symbol(params["var"]) ** (ae * q + be - ce)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        coef, power = answer.as_coeff_Mul()
        exp = power.as_base_exp()[1] if power != 1 else 0
        return mono(coef, params["var"], exp), mono(coef, params["var"], exp, True)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        v, q = params["var"], params["q"]
        (ac, ae), (bc, be), (cc, ce) = params["a"], params["b"], params["c"]
        first = mono(ac, v, ae)
        first_l = mono(ac, v, ae, True)
        if q > 1:
            first, first_l = f"({first})^{q}", rf"\left({first_l}\right)^{{{q}}}"
        div = mono(cc, v, ce) if cc == 1 else f"({mono(cc, v, ce)})"
        expression = f"{first} × {mono(bc, v, be)} ÷ {div}"
        latex = rf"\frac{{{first_l} \times {mono(bc, v, be, True)}}}{{{mono(cc, v, ce, True)}}}"
        return {**params, "expression": expression, "latex": latex}
