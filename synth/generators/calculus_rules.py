"""Calculus beyond the power rule: product rule, chain rule, definite integrals, limits by cancelling."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators import terms as T
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number
from synth.generators.terms import Piece
from synth.polynomials import divmod_polys, expand_exact, rational_part, to_sympy, univariate

_VARS = ("x", "t", "u")
Poly = dict[int, int]


def _poly_value(p: Poly, x: sympy.Symbol) -> sympy.Expr:
    return sympy.Add(*(c * x**n for n, c in p.items()))


def _keys(p: dict[str, int]) -> Poly:
    """JSON keeps dict keys as strings: degrees back to ints."""
    return {int(n): int(c) for n, c in p.items()}


def _derivative(p: Poly) -> Poly:
    return {n - 1: c * n for n, c in p.items() if n != 0}


def _times(p: Poly, q: Poly) -> Poly:
    """p × q multiplied out and collected, on Python integers (sympy.Poly costs a millisecond a product)."""
    out: Poly = {}
    for m, a in p.items():
        for n, b in q.items():
            out[m + n] = out.get(m + n, 0) + a * b
    return {n: c for n, c in out.items() if c}


def _power(p: Poly, n: int) -> Poly:
    out: Poly = {0: 1}
    for _ in range(n):
        out = _times(out, p)
    return out


def _product_pieces(p: Poly, q: Poly, var: str) -> list[Piece]:
    """Every term of p × q as it comes out of the brackets, before collecting."""
    return [T.mono(a * b, var, m + n) for m, a in sorted(p.items(), reverse=True)
            for n, b in sorted(q.items(), reverse=True)]


def _bracketed_product(p: Poly, q: Poly, var: str, negative: bool = False) -> Piece:
    gp, gq = T.group(T.poly(p, var)), T.group(T.poly(q, var))
    x = sympy.Symbol(var)
    value = _poly_value(p, x) * _poly_value(q, x)
    return T.raw(-value if negative else value, gp.text + gq.text, gp.latex + gq.latex, negative)


def collect(d: Derivation, pieces: list[Piece], var: str) -> None:
    """Gather like terms (one line), then collect each power that has several terms (one line each)."""
    x = sympy.Symbol(var)
    by_power: dict[int, list[sympy.Basic]] = {}
    for p in pieces:
        n, c = _degree_coeff(p.value, x)
        by_power.setdefault(n, []).append(c)
    gathered = [(n, c) for n in sorted(by_power, reverse=True) for c in by_power[n]]
    shown = [T.mono(c, var, n) for n, c in gathered]
    if [s.text for s in shown] != [p.text for p in pieces]:
        T.add_line(d, "gather_like_terms", shown)
    done: dict[int, sympy.Basic] = {}
    for n in sorted(by_power, reverse=True):
        if len(by_power[n]) < 2:
            continue
        done[n] = d.compute(sympy.Add(*by_power[n]))
        line = []
        for m in sorted(by_power, reverse=True):
            if m in done:
                if done[m] != 0:
                    line.append(T.mono(done[m], var, m))
            else:
                line.extend(T.mono(c, var, m) for c in by_power[m])
        T.add_line(d, "collect_like_terms", line or [T.num(0)], done[n])


def _degree_coeff(term: sympy.Expr, x: sympy.Symbol) -> tuple[int, sympy.Basic]:
    """(n, c) of a monomial c·xⁿ, as sympy.Poly(term, x).terms() gives it (read off directly: Poly costs ~0.3 ms)."""
    c, rest = term.as_coeff_Mul()
    if c.is_Rational:
        if rest is sympy.S.One:
            return 0, c
        if rest == x:
            return 1, c
        if rest.is_Pow and rest.base == x and rest.exp.is_Integer and rest.exp > 0:
            return int(rest.exp), c
    ((k,), c), = sympy.Poly(term, x).terms()
    return k, c


def _random_poly(rng: np.random.Generator, degrees: list[int], top: int = 9) -> Poly:
    out = {}
    for n in degrees:
        c = 0
        while c == 0:
            c = int(rng.integers(-top, top + 1))
        out[n] = c
    return out


@register
class ProductRule(Family):
    """(uv)′ = u′v + uv′ for two polynomial factors, then multiplied out and collected.

    easy: (ax² + b)(cx + d); medium: degrees up to 3; hard: a three-term factor.
    """

    id = "calculus.derivative.product_rule"
    domain = "calculus"
    subdomain = "derivatives"
    grade_band = "11-12"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("product_of_derivatives", "formula_misuse", "differentiates a product as u′v′"),
        MalRule("minus_instead_of_plus", "formula_misuse", "writes u′v − uv′ (the quotient rule's numerator)"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = _VARS[int(rng.integers(len(_VARS)))]
        if difficulty == "easy":
            u, v = _random_poly(rng, [2, 0], 6), _random_poly(rng, [1, 0], 6)
        elif difficulty == "medium":
            m, n = int(rng.integers(2, 4)), int(rng.integers(1, 4))
            u, v = _random_poly(rng, [m, 0]), _random_poly(rng, [n, 0])
        else:
            m, n = int(rng.integers(2, 5)), int(rng.integers(2, 4))
            u, v = _random_poly(rng, [m, 1, 0]), _random_poly(rng, [n, 0])
        return {"var": var, "u": {str(k): c for k, c in u.items()}, "v": {str(k): c for k, c in v.items()}}

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        u, v = _keys(params["u"]), _keys(params["v"])
        x = sympy.Symbol(params["var"])
        return (_poly_value(_derivative(u), x) * _poly_value(v, x) + _poly_value(u, x) * _poly_value(_derivative(v), x))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Differentiate the expanded product term by term: no product rule involved.
        return _poly_value(_derivative(_times(_keys(params["u"]), _keys(params["v"]))), sympy.Symbol(params["var"]))

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        return self._derive(params, {}, rule) if rule in ("product_of_derivatives", "minus_instead_of_plus") else None

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        var, u, v = params["var"], _keys(params["u"]), _keys(params["v"])
        du, dv = _derivative(u), _derivative(v)
        d = Derivation(overrides)
        if mal == "product_of_derivatives":
            T.add_line(d, "multiply_derivatives", [_bracketed_product(du, dv, var)])
            pieces = _product_pieces(du, dv, var)
            T.add_line(d, "multiply_out", pieces)
            collect(d, pieces, var)
            return d.steps
        minus = mal == "minus_instead_of_plus"
        first, second = _bracketed_product(du, v, var), _bracketed_product(u, dv, var, negative=minus)
        T.add_line(d, "product_rule" if not minus else "quotient_rule_numerator", [first, second])
        left = _product_pieces(du, v, var)
        lead = d.compute(left[0].value.as_coeff_Mul()[0])
        left[0] = T.mono(lead, var, _degree_coeff(left[0].value, sympy.Symbol(var))[0])
        T.add_line(d, "multiply_out_first", left + [second], lead)
        right = _product_pieces(u, dv, var)
        if minus:
            x = sympy.Symbol(var)
            right = [T.mono(-p.value.as_coeff_Mul()[0], var, _degree_coeff(p.value, x)[0]) for p in right]
        T.add_line(d, "multiply_out_second", left + right)
        collect(d, left + right, var)
        return d.steps

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return _poly_answer(answer, params["var"])

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        f = _bracketed_product(_keys(params["u"]), _keys(params["v"]), params["var"])
        return {**params, "function": f.text, "latex": f.latex}


def _poly_answer(answer: sympy.Basic, var: str) -> tuple[str, str]:
    x = sympy.Symbol(var)
    expansion = expand_exact(answer, (x,))  # exact: sympy.expand and Poly cost about a millisecond
    if expansion is not None and expansion.rational:
        coeffs = {n: to_sympy(c) for (n,), c in expansion.terms.items()}
    else:
        coeffs = {n: c for (n,), c in sympy.Poly(sympy.expand(answer), x).terms()}
    _, text, latex = T.line(T.poly(coeffs, var))
    return text, latex


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
        var = _VARS[int(rng.integers(len(_VARS)))]
        n = int(rng.integers(2, 7))
        if difficulty == "easy":
            inner, k = _random_poly(rng, [1, 0], 7), 1
            inner[1] = abs(inner[1]) if inner[1] != 1 else 2
        elif difficulty == "medium":
            inner, k = _random_poly(rng, [2, 0], 7), 1
        else:
            inner, k = _random_poly(rng, [2, 1, 0], 7), int(rng.choice([-1, 1])) * int(rng.integers(2, 6))
        return {"var": var, "k": k, "n": n, "inner": {str(a): b for a, b in inner.items()}}

    def _pieces(self, params: dict[str, Any]) -> tuple[Poly, Piece]:
        inner = _keys(params["inner"])
        return inner, T.group(T.poly(inner, params["var"]))

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        x = sympy.Symbol(params["var"])
        inner = _keys(params["inner"])
        return params["k"] * params["n"] * _poly_value(inner, x) ** (params["n"] - 1) * _poly_value(
            _derivative(inner), x)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # The expanded power differentiated term by term: no chain rule, an independent route.
        whole = _times(_power(_keys(params["inner"]), params["n"]), {0: params["k"]})
        return _poly_value(_derivative(whole), sympy.Symbol(params["var"]))

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "inner_derivative_raised" and params["n"] == 2 and len(params["inner"]) == 2 \
                and _keys(params["inner"]).get(1):
            return None  # (ax + b)²: the raised inner derivative is a constant too; same as forgetting it
        return self._derive(params, {}, rule) if rule in (m.id for m in self.malrules) else None

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        var, k, n = params["var"], params["k"], params["n"]
        inner, bracket = self._pieces(params)
        x = sympy.Symbol(var)
        d = Derivation(overrides)
        dinner = _derivative(inner)
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


@register
class DefiniteIntegral(Family):
    """∫ₐᵇ of a polynomial: antiderivative F, then F(b) − F(a) evaluated line by line.

    easy: two terms, limits 0..3; medium: three terms; hard: a cubic and a negative lower limit.
    Coefficients are multiples of n + 1, so F has whole-number coefficients.
    """

    id = "calculus.integral.definite"
    domain = "calculus"
    subdomain = "integrals"
    grade_band = "11-12"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("power_not_divided", "formula_misuse", "raises the power but does not divide by the new power"),
        MalRule("lower_limit_ignored", "invalid_assumption", "takes F(a) to be 0 and reports F(b) alone"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = _VARS[int(rng.integers(len(_VARS)))]
        degrees = {"easy": [1, 0], "medium": [2, 1, 0], "hard": [3, 2, 0]}[difficulty]
        while True:
            anti = {n + 1: int(rng.choice([-1, 1])) * int(rng.integers(1, 5)) for n in degrees}
            if difficulty == "easy":
                anti = {n: int(rng.integers(1, 7)) for n in anti}
                lo = int(rng.integers(0, 3))
                hi = lo + int(rng.integers(1, 5))
            else:
                lo = int(rng.integers(-3 if difficulty == "hard" else 0, 2))
                hi = lo + int(rng.integers(1, 4))
            poly = {n - 1: c * n for n, c in anti.items()}
            if lo != 0 or difficulty == "easy":
                return {"var": var, "poly": {str(n): c for n, c in poly.items()}, "lower": lo, "upper": hi}

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        anti = {n + 1: sympy.Rational(c, n + 1) for n, c in _keys(params["poly"]).items()}
        return sum((c * (sympy.Integer(params["upper"]) ** n - sympy.Integer(params["lower"]) ** n)
                    for n, c in anti.items()), sympy.Integer(0))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # sympy's antiderivative of the integrand, evaluated at the limits.
        x = sympy.Symbol(params["var"])
        anti = sympy.Poly(_poly_value(_keys(params["poly"]), x), x).integrate()
        return anti.eval(params["upper"]) - anti.eval(params["lower"])

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "lower_limit_ignored":
            anti = self._anti(params, None)
            if sum(c * params["lower"] ** n for n, c in anti.items()) == 0:
                return None
            return self._derive(params, {}, rule)
        return self._derive(params, {}, rule) if rule == "power_not_divided" else None

    @staticmethod
    def _anti(params: dict[str, Any], mal: str | None) -> dict[int, sympy.Rational]:
        poly = _keys(params["poly"])
        return {n + 1: sympy.Rational(c, 1 if mal == "power_not_divided" else n + 1) for n, c in poly.items()}

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        anti = self._anti(params, mal)
        d = Derivation(overrides)
        lo, hi = params["lower"], params["upper"]
        only_upper = mal == "lower_limit_ignored"

        def f_tree(at: int) -> E.Node:
            terms: list[E.Node] = []
            for n, c in sorted(anti.items(), reverse=True):
                power: E.Node = ["pow", at, n] if n > 1 else at
                term = power if abs(c) == 1 else ["*", E.leaf(abs(c)), power]
                if not terms:
                    terms.append(term if c > 0 else ["*", E.leaf(c), power])
                else:
                    terms.append(["+" if c > 0 else "-", terms.pop(), term])
            return terms[0]

        def f_values(at: int) -> E.Node:
            out: E.Node = None
            for n, c in sorted(anti.items(), reverse=True):
                v = c * sympy.Integer(at) ** n
                out = E.leaf(v) if out is None else ["+" if v >= 0 else "-", out, E.leaf(abs(v))]
            return out

        def both(fb: E.Node, fa: E.Node) -> E.Node:
            return ["group", fb] if only_upper else ["-", ["group", fb], ["group", fa]]

        E.add_step(d, "substitute_upper_limit_only" if only_upper else "substitute_limits",
                   both(f_tree(hi), f_tree(lo)))
        E.add_step(d, "evaluate_powers", both(f_values(hi), f_values(lo)))
        fb = d.compute(sum((c * sympy.Integer(hi) ** n for n, c in anti.items()), sympy.Integer(0)))
        fa = sum((c * sympy.Integer(lo) ** n for n, c in anti.items()), sympy.Integer(0))
        if only_upper:
            E.add_step(d, "evaluate_bracket", E.leaf(fb), fb)
            return d.steps
        E.add_step(d, "evaluate_brackets", ["-", E.leaf(fb), E.leaf(fa)], fb)
        total = d.compute(fb - fa)
        E.add_step(d, "subtract", E.leaf(total), total)
        return d.steps

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer), E.num_latex(answer)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        var = params["var"]
        poly = _keys(params["poly"])
        _, text, latex = T.line(T.poly(poly, var))
        lo, hi = params["lower"], params["upper"]
        return {**params, "integrand": text, "lower_text": format_number(sympy.Integer(lo)),
                "upper_text": format_number(sympy.Integer(hi)),
                "latex": rf"\int_{{{lo}}}^{{{hi}}} \left({latex}\right)\, d{var}"}


@lru_cache(maxsize=4096)
def _limit_at(expr: sympy.Basic, var: str, r: int) -> sympy.Basic | None:
    """The limit at r of a rational function with removable zeros: strip (x − r) from both parts.

    Polynomial division instead of sympy.cancel, which was 80 % of this family's verify time.
    None for a non-expression or a pole.
    """
    if not isinstance(expr, sympy.Expr):
        return None
    if not expr.free_symbols:
        return expr if expr.is_finite else None
    x = sympy.Symbol(var)
    num, den = sympy.fraction(expr)
    if not (num.is_polynomial(x) and den.is_polynomial(x)):
        out = sympy.cancel(expr).subs(x, r)
        return out if out.is_finite else None
    top, bottom, root = sympy.Poly(num, x), sympy.Poly(den, x), sympy.Poly(x - r, x)
    while not top.is_zero and top.eval(r) == 0 and bottom.eval(r) == 0:
        top, bottom = top.quo(root), bottom.quo(root)
    b = bottom.eval(r)
    return None if b == 0 else top.eval(r) / b


@register
class RationalLimit(Family):
    """lim x→r of a rational function with a removable discontinuity: factor, cancel, substitute.

    easy: (x² − r²)/(x − r); medium: (x² + bx + c)/(x − r); hard: (px² + bx + c)/(x² − r²).
    Every line is a function with the same limit at r (lines before the substitution equal the
    question's function wherever it is defined), so steps are judged by their limit at r.
    """

    id = "calculus.limit.rational"
    domain = "calculus"
    subdomain = "limits"
    grade_band = "11-12"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("difference_of_squares_as_square", "formula_misuse", "factors x² − a² as (x − a)²"),
        MalRule("substitute_opposite", "invalid_inference",
                "substitutes x = −a after cancelling the factor (x − a), reading the root off with the wrong sign"),
        MalRule("leading_terms_ratio", "theorem_misapplication",
                "keeps only the highest powers, the rule for a limit at infinity, at a finite point"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = _VARS[int(rng.integers(len(_VARS)))]
        while True:
            r = int(rng.choice([-1, 1])) * int(rng.integers(1, 16))
            if difficulty == "easy":  # k(x² − r²)/(x − r): the numerator is k(x − r)(x + r)
                k = int(rng.choice([-1, 1])) * int(rng.integers(1, 10))
                return {"var": var, "r": r, "p": k, "s": k * r, "den_other": None}
            s = int(rng.integers(-9, 10))
            p = 1 if difficulty == "medium" else int(rng.integers(2, 5))
            # the other factor (px + s) must not vanish at r, or there is nothing to cancel into
            if s != 0 and p * r + s != 0 and (difficulty == "medium" or s != p * r):
                return {"var": var, "r": r, "p": p, "s": s, "den_other": r if difficulty == "hard" else None}

    def _factors(self, params: dict[str, Any]) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
        """(x − r), (px + s), and the denominator's other factor (1 if none)."""
        x = sympy.Symbol(params["var"])
        other = params["den_other"]
        return x - params["r"], params["p"] * x + params["s"], (x + other if other is not None else sympy.Integer(1))

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        cancel, keep, other = self._factors(params)
        return sympy.Mul(sympy.expand(cancel * keep), sympy.Pow(sympy.expand(cancel * other), -1), evaluate=False)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # L'Hôpital on the stated quotient (0/0 at r): N′(r)/D′(r), no factoring involved.
        x, r = sympy.Symbol(params["var"]), params["r"]
        cancel, keep, other = self._factors(params)
        num, den = sympy.expand(cancel * keep), sympy.expand(cancel * other)
        return sympy.diff(num, x).subs(x, r) / sympy.diff(den, x).subs(x, r)

    def judge_step(self, params: dict[str, Any], value: sympy.Basic, previous: sympy.Basic,
                   earlier: tuple[sympy.Basic, ...]) -> tuple[bool, bool] | None:
        var, r = params["var"], params["r"]
        v = _limit_at(value, var, r)
        return (v is not None and v == _limit_at(previous, var, r),
                v is not None and v == _limit_at(self.initial(params), var, r))

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._derive(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        hard = params["den_other"] is not None
        if rule == "difference_of_squares_as_square" and not hard and params["s"] == params["p"] * params["r"]:
            return self._derive(params, {}, rule)
        if rule == "substitute_opposite" and not hard:  # (x + a) would vanish at −a in the hard form
            return self._derive(params, {}, rule)
        if rule == "leading_terms_ratio" and hard:  # equal degrees: the ratio of leading coefficients
            x = sympy.Symbol(params["var"])
            (num_t, num_l), (den_t, den_l) = (self._leading(params, which) for which in ("num", "den"))
            d = Derivation({})
            value = sympy.Integer(params["p"]) * x**2 / x**2
            d.add(StepDraft(rule="keep_leading_terms", value=value, text=f"{num_t}/{den_t}",
                            latex=rf"\frac{{{num_l}}}{{{den_l}}}"))
            E.add_step(d, "cancel_powers", params["p"], sympy.Integer(params["p"]))
            return d.steps
        return None

    def _leading(self, params: dict[str, Any], which: str) -> tuple[str, str]:
        c = params["p"] if which == "num" else 1
        m = T.mono(c, params["var"], 2)
        return m.text, m.latex

    def _derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        var, r, p, s, other = (params[k] for k in ("var", "r", "p", "s", "den_other"))
        x = sympy.Symbol(var)
        d = Derivation(overrides)

        def lin(a: int, b: int) -> Piece:
            return T.group([T.mono(a, var), T.num(b)])

        cancel, keep = lin(1, -r), lin(p, s)
        wrong_square = mal == "difference_of_squares_as_square"
        # The numerator of easy is x² − r²; the hard denominator is x² − r²: the misfactored one.
        if wrong_square and other is None:
            keep = lin(p, -p * r)
        den_other = lin(1, other) if other is not None else None
        if wrong_square and den_other is not None:
            den_other = lin(1, -r)
        num_t, num_l = cancel.text + keep.text, cancel.latex + keep.latex
        num_v = cancel.value * keep.value
        if den_other is None:
            den_t, den_l, den_v = cancel.text, cancel.latex, cancel.value
        else:
            den_t, den_l = f"({cancel.text}{den_other.text})", cancel.latex + den_other.latex
            den_v = cancel.value * den_other.value
        d.add(StepDraft(rule="factor" if not wrong_square else "factor_as_square", value=num_v / den_v,
                        text=f"{num_t}/{den_t}", latex=rf"\frac{{{num_l}}}{{{den_l}}}"))
        if den_other is None:
            a, b = sympy.Poly(keep.value, x).all_coeffs()
            _, after_t, after_l = T.line([T.mono(a, var), T.num(b)])
            after_v = keep.value
        else:
            after_t, after_l = f"{keep.text}/{den_other.text}", rf"\frac{{{keep.latex}}}{{{den_other.latex}}}"
            after_v = keep.value / den_other.value
        d.add(StepDraft(rule="cancel_common_factor", value=after_v, text=after_t, latex=after_l))
        at = -r if mal == "substitute_opposite" else r
        sub = {x: sympy.Integer(at)}
        if den_other is None:
            tree: E.Node = self._lin_tree(keep.value, x, at)
        else:
            tree = ["frac", self._lin_tree(keep.value, x, at), self._lin_tree(den_other.value, x, at)]
        E.add_step(d, "substitute" if mal != "substitute_opposite" else "substitute_opposite", tree)
        if den_other is None:
            result = d.compute(keep.value.subs(sub))
            E.add_step(d, "evaluate", E.leaf(result), result)
            return d.steps
        top = d.compute(keep.value.subs(sub))
        bottom = den_other.value.subs(sub)
        if bottom == 0:  # the misfactored denominator can vanish: the student stops at a division by zero
            return d.steps
        E.add_step(d, "evaluate_numerator_and_denominator", ["frac", E.leaf(top), E.leaf(bottom)], top)
        if E.text(["frac", E.leaf(top), E.leaf(bottom)]) != E.num_text(top / bottom):
            result = d.compute(top / bottom)
            E.add_step(d, "simplify_fraction", E.leaf(result), result)
        return d.steps

    @staticmethod
    def _lin_tree(expr: sympy.Expr, x: sympy.Symbol, at: int) -> E.Node:
        """``p × r + s`` with the value substituted, as a pupil writes it."""
        a, b = sympy.Poly(expr, x).all_coeffs()
        term: E.Node = at if a == 1 else ["*", int(a), at]
        return ["+" if b >= 0 else "-", term, abs(int(b))] if b != 0 else term

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer), E.num_latex(answer)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        var, r = params["var"], params["r"]
        cancel, keep, other = self._factors(params)
        x = sympy.Symbol(var)
        num = T.poly({n: c for (n,), c in sympy.Poly(sympy.expand(cancel * keep), x).terms()}, var)
        den = T.poly({n: c for (n,), c in sympy.Poly(sympy.expand(cancel * other), x).terms()}, var)
        _, nt, nl = T.line(num)
        _, dt, dl = T.line(den)
        function = f"({nt})/({dt})"
        return {**params, "function": function, "point": format_number(sympy.Integer(r)),
                "latex": rf"\lim_{{{var} \to {r}}} \frac{{{nl}}}{{{dl}}}"}
