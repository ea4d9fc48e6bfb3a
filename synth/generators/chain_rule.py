"""The chain rule: d/dx of a power of a polynomial, answered in factored form."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators import terms as T
from synth.generators._intpoly import (
    VARS,
    Poly,
    int_poly,
    poly_derivative,
    poly_power,
    poly_times,
    poly_value,
    random_poly,
)
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number
from synth.generators.terms import Piece
from synth.polynomials import divmod_polys, expand_exact, rational_part, univariate


@dataclass(frozen=True)
class _Level:
    inner: tuple[int, ...]  # the inner polynomial's degrees
    positive_slope: bool  # a linear inner's x coefficient is positive and not 1
    factor: bool  # a coefficient k (±2..5) stands before the bracket


_LEVELS = {"easy": _Level((1, 0), positive_slope=True, factor=False),
           "medium": _Level((2, 0), positive_slope=False, factor=False),
           "hard": _Level((2, 1, 0), positive_slope=False, factor=True)}


@register
class ChainRule(Family):
    """d/dx k(inner)ⁿ = k·n·(inner)ⁿ⁻¹·inner′, kept in factored form.

    easy: (ax + b)ⁿ; medium: (ax² + b)ⁿ; hard: k(ax² + bx + c)ⁿ, whose inner derivative has two terms.
    """

    id = "calculus.derivative.chain_rule"
    domain = "calculus"
    subdomain = "derivatives"
    grade_band = "11-12"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("inner_derivative_forgotten", "theorem_misapplication",
                "applies the power rule to the bracket but never multiplies by the inner derivative"),
        MalRule("inner_derivative_raised", "formula_misuse",
                "differentiates inside the bracket and keeps the power: n(inner′)ⁿ⁻¹"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = VARS[int(rng.integers(len(VARS)))]
        level = _LEVELS[difficulty]
        n = int(rng.integers(2, 7))
        inner = random_poly(rng, list(level.inner), 7)
        k = int(rng.choice([-1, 1])) * int(rng.integers(2, 6)) if level.factor else 1
        if level.positive_slope:
            inner[1] = abs(inner[1]) if inner[1] != 1 else 2
        return {"var": var, "k": k, "n": n, "inner": {str(a): b for a, b in inner.items()}}

    def _pieces(self, params: dict[str, Any]) -> tuple[Poly, Piece]:
        inner = int_poly(params["inner"])
        return inner, T.group(T.poly(inner, params["var"]))

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        x = sympy.Symbol(params["var"])
        inner = int_poly(params["inner"])
        return params["k"] * params["n"] * poly_value(inner, x) ** (params["n"] - 1) * poly_value(
            poly_derivative(inner), x)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # The expanded power differentiated term by term: no chain rule, an independent route.
        whole = poly_times(poly_power(int_poly(params["inner"]), params["n"]), {0: params["k"]})
        return poly_value(poly_derivative(whole), sympy.Symbol(params["var"]))

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "inner_derivative_raised" and params["n"] == 2 and len(params["inner"]) == 2 \
                and int_poly(params["inner"]).get(1):
            return None  # (ax + b)²: the raised inner derivative is a constant too; same as forgetting it
        return self._derive(params, {}, rule) if rule in (m.id for m in self.malrules) else None

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        var, k, n = params["var"], params["k"], params["n"]
        inner, bracket = self._pieces(params)
        x = sympy.Symbol(var)
        d = Derivation(overrides)
        dinner = poly_derivative(inner)
        g = T.group(T.poly(dinner, var))
        k_t = "" if k == 1 else ("−" if k == -1 else f"{format_number(sympy.Integer(k))} × ")
        k_l = "" if k == 1 else ("-" if k == -1 else rf"{k} \times ")
        if mal == "inner_derivative_raised":
            base_t, base_l, base_v = g.text, g.latex, g.value
            tail_t = tail_l = ""
            tail_v = sympy.Integer(1)
        else:
            base_t, base_l, base_v = bracket.text, bracket.latex, bracket.value
            forgot = mal == "inner_derivative_forgotten"
            tail_t, tail_l = ("", "") if forgot else (f" × {g.text}", rf" \times {g.latex}")
            tail_v = sympy.Integer(1) if forgot else g.value
        value = k * n * base_v ** (n - 1) * tail_v
        d.add(StepDraft(rule="chain_rule" if mal is None else mal, value=value,
                        text=f"{k_t}{n}{base_t}^({n} − 1){tail_t}", latex=f"{k_l}{n}{base_l}^{{{n} - 1}}{tail_l}"))
        e = d.compute(sympy.Integer(n - 1))
        value = k * n * base_v**e * tail_v
        power_t = "" if e == 1 else f"^{format_number(e)}"
        power_l = "" if e == 1 else f"^{{{e}}}"
        d.add(StepDraft(rule="subtract_one_from_exponent", value=value, text=f"{k_t}{n}{base_t}{power_t}{tail_t}",
                        latex=f"{k_l}{n}{base_l}{power_l}{tail_l}", result=e))
        if tail_v == 1:
            c = d.compute(sympy.Integer(k * n))
            d.add(StepDraft(rule="multiply_constants", value=c * base_v**e, text=f"{_coef(c)}{base_t}{power_t}",
                            latex=f"{_coef(c, True)}{base_l}{power_l}", result=c))
            return d.steps
        if len(dinner) == 1:  # inner′ = c·x^m: fold every constant into one coefficient
            (m, c0), = dinner.items()
            c = d.compute(sympy.Integer(k * n * c0))
            mono = T.mono(c, var, m)
            d.add(StepDraft(rule="multiply_constants", value=c * x**m * base_v**e,
                            text=("−" if mono.negative else "") + f"{mono.text}{base_t}{power_t}",
                            latex=("-" if mono.negative else "") + f"{mono.latex}{base_l}{power_l}", result=c))
            return d.steps
        c = d.compute(sympy.Integer(k * n))
        d.add(StepDraft(rule="multiply_constants", value=c * g.value * base_v**e,
                        text=f"{_coef(c)}{g.text}{base_t}{power_t}",
                        latex=f"{_coef(c, True)}{g.latex}{base_l}{power_l}", result=c))
        lead = d.compute(c * dinner[max(dinner)])
        dist = {m: (lead if m == max(dinner) else c * a) for m, a in dinner.items()}
        gd = T.group(T.poly(dist, var))
        d.add(StepDraft(rule="distribute_constant", value=gd.value * base_v**e, text=f"{gd.text}{base_t}{power_t}",
                        latex=f"{gd.latex}{base_l}{power_l}", result=lead))
        return d.steps

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        """The answer around the question's own bracket, as the last line writes it: ``32t(4t^2 + 7)^3``."""
        var = params["var"]
        x = sympy.Symbol(var)
        inner, bracket = self._pieces(params)
        if not answer.is_polynomial(x):
            # A slip on the exponent (decimal shift, sign) gives (t − 2)^(1/10): no school derivative reads
            # like that, so it is no distractor; ValueError lets multiple_choice skip it.
            raise ValueError(f"{answer} is not a polynomial in {var}; chain-rule answers are written as "
                             "polynomials times whole powers of the bracket")
        divided = _divide_out(answer, x, inner)
        if divided is None:
            q, inner_poly, e = sympy.Poly(answer, x), sympy.Poly(bracket.value, x), 0
            while not q.is_zero and q.degree() >= inner_poly.degree():
                quo, rem = q.div(inner_poly)
                if not rem.is_zero:
                    break
                q, e = quo, e + 1
            terms = q.terms()
        else:
            terms, e = divided
        if e == 0:
            text = format_number(answer) if answer.is_number else _factored_text(sympy.factor(answer), var)
            return text, text.replace("−", "-")
        power_t, power_l = ("", "") if e == 1 else (f"^{e}", f"^{{{e}}}")
        if len(terms) == 1:
            ((m,), c), = terms
            mono = T.mono(c, var, m)
            sign = "−" if mono.negative else ""
            lead_t = "" if mono.value == 1 else (sign if abs(c) == 1 and m == 0 else sign + mono.text)
            lead_l = lead_t.replace("−", "-") if m == 0 else ("-" if mono.negative else "") + mono.latex
            return f"{lead_t}{bracket.text}{power_t}", f"{lead_l}{bracket.latex}{power_l}"
        g = T.group(T.poly({n: c for (n,), c in terms}, var))
        return f"{g.text}{bracket.text}{power_t}", f"{g.latex}{bracket.latex}{power_l}"

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        _, bracket = self._pieces(params)
        k = params["k"]
        lead = "" if k == 1 else ("−" if k == -1 else format_number(sympy.Integer(k)))
        lead_l = lead.replace("−", "-")
        return {**params, "function": f"{lead}{bracket.text}^{params['n']}",
                "latex": f"{lead_l}{bracket.latex}^{{{params['n']}}}"}


Terms = list[tuple[tuple[int], sympy.Expr]]  # as sympy.Poly.terms() lists them: ((degree,), coefficient)


def _divide_out(answer: sympy.Expr, x: sympy.Symbol, inner: Poly) -> tuple[Terms, int] | None:
    """(quotient terms, e): answer = quotient × inner^e with e as large as divides.

    Long division on Fractions instead of sympy.Poly.div (a millisecond each, and a chain-rule
    answer divides up to six times). None when the answer has other than rational coefficients:
    the caller divides with sympy.Poly as before.
    """
    expansion = expand_exact(answer, (x,))
    if expansion is None or not expansion.rational:
        return None
    q = [rational_part(c) for c in univariate(expansion)]  # highest degree first; [] is 0
    d = [Fraction(inner.get(n, 0)) for n in range(max(inner), -1, -1)]
    e = 0
    while q and len(q) >= len(d):
        quotient, rem = divmod_polys(q, d)
        if any(rem):
            break
        q, e = quotient, e + 1
    top = len(q) - 1
    terms = [((top - i,), sympy.Rational(c.numerator, c.denominator)) for i, c in enumerate(q) if c]
    return terms or [((0,), sympy.Integer(0))], e  # sympy.Poly(0).terms() lists the zero term


def _coef(c: sympy.Basic, latex: bool = False) -> str:
    if c == 1:
        return ""
    if c == -1:
        return "-" if latex else "−"
    return str(c) if latex else format_number(c)


def _factored_text(expr: sympy.Expr, var: str) -> str:
    """A factored answer in school order: number, power of the variable, then brackets."""
    coeff, rest = expr.as_coeff_Mul()
    mono: list[str] = []
    brackets: list[str] = []
    for f in sympy.Mul.make_args(rest):
        base, exp = f.as_base_exp()
        if base.is_Symbol:
            mono.append(var if exp == 1 else f"{var}^{exp}")
        else:
            coeffs = {n: c for (n,), c in sympy.Poly(base, sympy.Symbol(var)).terms()}
            _, t, _ = T.line(T.poly(coeffs, var))
            brackets.append(f"({t})" + ("" if exp == 1 else f"^{exp}"))
    return _coef(coeff) + "".join(mono) + "".join(brackets) if (mono or brackets) else format_number(coeff)
