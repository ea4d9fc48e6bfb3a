"""The exact fast paths give what the SymPy routes they replace gave: same verdicts, same values, same texts."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synth.generators import get_family
from synth.generators._solid import integral as _integral
from synth.generators.chain_rule import _divide_out
from synth.polynomials import definite_integral, exact_form
from synth.verification import _exact_equal, equal_answers, parse_step, same_value

x, y, t = sympy.symbols("x y t")
FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

small = st.integers(-6, 6)
rationals = st.builds(sympy.Rational, small, st.integers(1, 4))
# Coefficients a verifier meets: rationals, square roots (12 = 2√3) and i; π as a factor (circles, solids).
numbers = st.builds(lambda r, k, n, unit: r + k * sympy.sqrt(n) * unit,
                    rationals, st.integers(-2, 2), st.sampled_from([2, 3, 7, 12]), st.sampled_from([1, sympy.I]))
factors = st.one_of(numbers, st.builds(lambda a: a * sympy.pi, numbers))


@st.composite
def polynomials(draw: st.DrawFn) -> sympy.Expr:
    """Chain-rule and product-rule shapes: k·(bracket)^n·(bracket′), products of brackets, sums of terms.

    Total degree at most 12 (π counted), so every one is inside synth.polynomials' fragment.
    """
    bracket = draw(numbers) * x**2 + draw(numbers) * x + draw(numbers)
    kind = draw(st.sampled_from(["power", "product", "sum", "two_variables"]))
    if kind == "power":
        return draw(factors) * bracket ** draw(st.integers(1, 5)) * (draw(small) * x + draw(small))
    if kind == "product":
        return draw(factors) * (draw(small) * x + draw(numbers)) * bracket
    if kind == "two_variables":
        return draw(factors) * (draw(numbers) * x + draw(small) * y) ** draw(st.integers(1, 3))
    return sympy.Add(*(draw(factors) * x**k for k in range(draw(st.integers(1, 6)))))


@FAST
@given(polynomials(), polynomials())
def test_exact_equality_is_sympy_expand_of_the_difference(a: sympy.Expr, b: sympy.Expr) -> None:
    decided = _exact_equal(a, b)
    assert decided is not None
    assert decided == (sympy.expand(a - b) == 0)


@FAST
@given(polynomials())
def test_an_expression_equals_its_expansion_and_not_a_nudged_one(a: sympy.Expr) -> None:
    expanded = sympy.expand(a)
    assert _exact_equal(a, expanded) is True
    assert same_value(a, expanded)
    assert _exact_equal(a, expanded + sympy.Rational(1, 7)) is False
    assert not same_value(a, expanded + x**3)


def test_a_chain_rule_line_and_its_multiplied_out_form_are_the_same_value() -> None:
    line = parse_step("30x(3x^2 + 2)^4")
    assert _exact_equal(line, sympy.expand(line)) is True  # decided exactly, no sympy.expand of the difference
    assert same_value(line, sympy.expand(line))
    assert not same_value(line, parse_step("30x(3x^2 + 2)^5"))
    assert not same_value(line, parse_step("5(3x^2 + 2)^4"))  # the inner derivative forgotten


def test_answers_in_pi_are_compared_exactly() -> None:
    assert equal_answers(12 * sympy.pi, parse_step("12π"))
    assert equal_answers(3 * sympy.sqrt(7) * sympy.pi, sympy.sqrt(63) * sympy.pi)
    assert not equal_answers(12 * sympy.pi, 13 * sympy.pi)
    assert not equal_answers(12 * sympy.pi, sympy.Integer(12))
    assert not equal_answers(sympy.Rational(81, 8) * sympy.pi, sympy.Rational(81, 4) * sympy.pi)


def test_outside_the_fragment_the_sympy_route_decides() -> None:
    for value in (sympy.sin(x), 1 / (x + 1), x + sympy.Float(0.5), sympy.E * x, sympy.sqrt(x)):
        assert exact_form(value) is None
        assert _exact_equal(value, value + 1) is None
    assert same_value(sympy.sin(x) * (x + 1), x * sympy.sin(x) + sympy.sin(x))  # the sympy route, as before
    # Two symbols that print alike cannot share one canonical form; a plain and a positive x differ.
    positive = sympy.Symbol("x", positive=True)
    assert exact_form(x + positive) is None
    assert _exact_equal(x, positive) is False and not same_value(x, positive)


# -- definite integrals (the solids' disc stacks, the circle's rings) --------------------------------

@FAST
@given(rationals, st.integers(1, 12), st.integers(2, 40), st.integers(1, 20))
def test_exact_integral_is_the_sympy_integral(r: sympy.Rational, h: int, slant: int, lo: int) -> None:
    z = sympy.Symbol("z")
    height = sympy.sqrt(slant**2 + h)  # a cone's height from its slant edge: often a surd
    cases = [((r * (1 - z / height)) ** 2, 0, height), (r**2 + 0 * z, 0, h), (r**2 - z**2, -r, r),
             (2 * r + 0 * z, 0, sympy.Rational(h, 10)), (3 * z**2 - z + r, -lo, h)]
    for integrand, a, b in cases:
        fast = definite_integral(integrand, z, a, b)
        assert fast is not None
        assert sympy.srepr(fast) == sympy.srepr(_integral(integrand, z, a, b))


def test_an_integrand_outside_the_fragment_gives_none() -> None:
    z = sympy.Symbol("z")
    assert definite_integral(sympy.sin(z), z, 0, 1) is None
    assert definite_integral(z, z, 0, sympy.pi) is None


# -- the families' independent routes --------------------------------------------------------------

def _samples(family_id: str, n: int) -> list[dict]:
    family, rng = get_family(family_id), np.random.default_rng(7)
    return [family.sample(rng, ("easy", "medium", "hard")[i % 3]) for i in range(n)]


def test_circle_area_target_is_the_integral_of_rings() -> None:
    family = get_family("geometry.circle.area")
    rho = sympy.Symbol("rho", positive=True)
    for params in _samples("geometry.circle.area", 12):
        if params["shape"] == "annulus":
            expected = sympy.integrate(2 * sympy.pi * rho, (rho, params["r"], params["R"]))
        else:
            r = params["r"] if params.get("given") == "radius" else sympy.Rational(params["d"], 2)
            expected = sympy.integrate(2 * sympy.pi * rho, (rho, 0, r)) / (2 if params["shape"] == "semicircle" else 1)
        assert sympy.srepr(family.target(params)) == sympy.srepr(expected)


@pytest.mark.parametrize("family_id", ["calculus.derivative.chain_rule", "calculus.derivative.product_rule"])
def test_derivative_targets_are_sympys_polynomial_derivative(family_id: str) -> None:
    family = get_family(family_id)
    for params in _samples(family_id, 30):
        var = sympy.Symbol(params["var"])
        if family_id.endswith("chain_rule"):
            inner = sum(c * var ** int(n) for n, c in params["inner"].items())
            expected = (sympy.Poly(inner, var) ** params["n"] * params["k"]).diff(var).as_expr()
        else:
            u = sum(c * var ** int(n) for n, c in params["u"].items())
            v = sum(c * var ** int(n) for n, c in params["v"].items())
            expected = sympy.Poly(u * v, var).diff(var).as_expr()
        assert sympy.srepr(family.target(params)) == sympy.srepr(expected)


def _sympy_divide_out(answer: sympy.Expr, inner: sympy.Expr) -> tuple[list, int]:
    """The chain rule's answer_text division as it was: sympy.Poly.div while the bracket divides."""
    q, d, e = sympy.Poly(answer, x), sympy.Poly(inner, x), 0
    while not q.is_zero and q.degree() >= d.degree():
        quo, rem = q.div(d)
        if not rem.is_zero:
            break
        q, e = quo, e + 1
    return q.terms(), e


@FAST
@given(st.integers(1, 6), st.integers(-5, 5), st.integers(-7, 7), st.integers(0, 5), rationals,
       st.sampled_from(["bracket", "slipped", "zero"]))
def test_dividing_out_the_bracket_is_sympys_division(a: int, b: int, c: int, n: int, k: sympy.Rational,
                                                     kind: str) -> None:
    inner = {2: a, 1: b, 0: c} if b else {2: a, 0: c}
    bracket = sum(coef * x**m for m, coef in inner.items())
    answers = {"bracket": k * (2 * a * x + b) * bracket**n, "slipped": k * bracket**n + 1, "zero": sympy.Integer(0)}
    answer = answers[kind]
    terms, e = _divide_out(answer, x, inner)
    expected_terms, expected_e = _sympy_divide_out(answer, bracket)
    assert e == expected_e
    assert [(m, sympy.srepr(v)) for m, v in terms] == [(m, sympy.srepr(v)) for m, v in expected_terms]


def test_a_bracket_with_a_surd_coefficient_is_left_to_sympy() -> None:
    assert _divide_out(sympy.sqrt(2) * (x + 1) ** 2, x, {1: 1, 0: 1}) is None


@FAST
@given(st.one_of(st.integers(-9, 9), rationals), st.integers(0, 7), st.sampled_from(["x", "t"]))
def test_a_monomials_degree_and_coefficient_are_sympy_polys(c: sympy.Rational, n: int, var: str) -> None:
    from synth.generators.product_rule import _degree_coeff
    from synth.generators.terms import mono

    symbol = sympy.Symbol(var)
    term = mono(c, var, n).value
    ((k,), coeff), = sympy.Poly(term, symbol).terms()
    assert _degree_coeff(term, symbol) == (k, coeff)


@FAST
@given(st.lists(st.one_of(st.integers(-9, 9), rationals), min_size=1, max_size=6))
def test_product_rule_answer_text_is_written_from_sympys_coefficients(coeffs: list) -> None:
    from synth.generators.product_rule import _poly_answer
    from synth.generators.terms import line, poly

    answer = sympy.Mul(sympy.Add(*(c * t**k for k, c in enumerate(coeffs))), 1, evaluate=False)
    expected = {n: c for (n,), c in sympy.Poly(sympy.expand(answer), t).terms()}
    _, text, latex = line(poly(expected, "t"))
    assert _poly_answer(answer, "t") == (text, latex)


def test_a_problems_computed_steps_are_derived_once_and_are_the_clean_derivations() -> None:
    from perturb.reasoning.computational import _computed_steps

    family = get_family("calculus.derivative.product_rule")
    problem = family.build(np.random.default_rng(3), difficulty="medium", question_type="free", problem_id="p")
    first = _computed_steps(family, problem)
    assert _computed_steps(family, problem) is first  # the second ask is remembered
    fresh = [(i, d.result) for i, d in enumerate(family.derive(problem.params), start=1) if d.result is not None]
    assert list(first) == fresh
    other = family.build(np.random.default_rng(4), difficulty="medium", question_type="free", problem_id="q")
    assert _computed_steps(family, other) != first  # another problem is derived afresh


def test_a_worked_context_carries_the_question_value_and_answer_each_verify_of_the_problem_reuses() -> None:
    from synth.verification import verify, worked

    family = get_family("solid.cone.volume")
    problem = family.build(np.random.default_rng(5), difficulty="hard", question_type="free", problem_id="c")
    context = worked(problem, family)
    assert (context.start, context.truth) == (family.initial(problem.params), family.target(problem.params))
    assert verify(problem, problem.steps, family=family, context=context).fully_correct
    last = problem.steps[-1]
    wrong = problem.steps[:-1] + (replace(last, text=last.text.replace(last.text.split("π")[0], "999", 1)),)
    assert not verify(problem, wrong, family=family, context=context).answer_correct
    assert verify(problem, wrong, family=family) == verify(problem, wrong, family=family, context=context)
    other = family.build(np.random.default_rng(6), difficulty="hard", question_type="free", problem_id="d")
    with pytest.raises(ValueError, match="another problem"):
        verify(other, other.steps, family=family, context=context)
