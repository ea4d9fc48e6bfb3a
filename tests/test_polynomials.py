"""The exact fast routes give what their sympy routes give: same keys, same forms, same verdicts."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synth.generators.quadratic_formula import QuadraticFormula
from synth.generators.systems import (
    _rank,
    _rank_by_elimination,
    _sympy_linear_form,
    equation_parts,
    integer_row,
    linear_form,
)
from synth.polynomials import expand_exact, monic_square_free, to_sympy, univariate
from synth.verification import (
    _UNDECIDED,
    _exact_polynomial_key,
    _multivariate_key,
    _solutions,
    _sympy_polynomial_key,
    parse_step,
    same_value,
)

x, y = sympy.symbols("x y")
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

small = st.integers(-9, 9)
rationals = st.builds(sympy.Rational, small, st.integers(1, 6))
# Numbers a quadratic-formula line holds: rationals, square roots (2, 3, 13, 12 = 2√3), i.
surds = st.builds(lambda r, k, n, i: r + k * sympy.sqrt(n) * (sympy.I if i else 1),
                  rationals, st.integers(-3, 3), st.sampled_from([2, 3, 5, 12, 13, 61, -7]), st.booleans())


@st.composite
def one_variable_equations(draw: st.DrawFn) -> sympy.Eq:
    """Products of (x − root) with surd roots, or a quadratic with terms on both sides, or a constant."""
    kind = draw(st.sampled_from(["roots", "sides", "power", "constant"]))
    if kind == "roots":
        roots = draw(st.lists(surds, min_size=1, max_size=3))
        lead = draw(st.sampled_from([1, 2, sympy.Rational(3, 2)]))
        return sympy.Eq(sympy.Mul(lead, *(x - r for r in roots), evaluate=False), 0, evaluate=False)
    if kind == "sides":
        a, b, c, p, q = (draw(small) for _ in range(5))
        return sympy.Eq(a * x**2 + (b + p) * x + c + q, p * x + q, evaluate=False)
    if kind == "power":
        return sympy.Eq((x - draw(surds)) ** draw(st.integers(1, 3)) * (x - draw(rationals)), 0, evaluate=False)
    return sympy.Eq(draw(rationals), draw(rationals), evaluate=False)


@FAST
@given(one_variable_equations())
def test_exact_polynomial_key_is_the_sympy_key(eq: sympy.Eq) -> None:
    fast = _exact_polynomial_key(eq)
    if fast is not _UNDECIDED:  # undecided cases take the sympy route itself
        slow = _sympy_polynomial_key(eq)
        assert fast == slow
        assert [sympy.srepr(c) for c in fast or ()] == [sympy.srepr(c) for c in slow or ()]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_variable_equations(), one_variable_equations())
def test_same_value_of_equations_agrees_with_the_sympy_route(a: sympy.Eq, b: sympy.Eq) -> None:
    ka, kb = _sympy_polynomial_key(a), _sympy_polynomial_key(b)
    if ka is not None and kb is not None:
        assert same_value(a, b) == (ka == kb)


def test_conjugate_complex_roots_and_mixed_surds_are_decided_exactly() -> None:
    """The lines a slipped discriminant writes (√−61, √35·i beside √133) no longer need sympy's extension fields."""
    conjugate = parse_step("x = (3 + √61·sqrt(-1))/7 or x = (3 − √61·sqrt(-1))/7")
    mixed = sympy.Eq((x - sympy.Rational(7, 4) + sympy.sqrt(35) * sympy.I / 4)
                     * (x - sympy.sqrt(133) / 4 - sympy.Rational(7, 4)), 0, evaluate=False)
    for eq in (conjugate, mixed):
        fast = _exact_polynomial_key(eq)
        assert fast is not _UNDECIDED
        assert fast == _sympy_polynomial_key(eq)
    assert _exact_polynomial_key(conjugate) == (1, sympy.Rational(-6, 7), sympy.Rational(10, 7))


def test_same_roots_in_another_form_are_the_same_value() -> None:
    formula = parse_step("x = (−5 + √(5^2 − 4 × 1 × 3))/(2 × 1) or x = (−5 − √(5^2 − 4 × 1 × 3))/(2 × 1)")
    simplified = parse_step("x = (−5 + √13)/2 or x = (−5 − √13)/2")
    wrong = parse_step("x = (−5 + √13)/2 or x = (5 − √13)/2")
    question = parse_step("x^2 + 5x + 3 = 0")
    assert same_value(formula, simplified) and same_value(simplified, question)
    assert not same_value(wrong, question)


def test_outside_the_fragment_is_left_to_sympy() -> None:
    z = sympy.Symbol("z")
    for expr in (x + sympy.Float(0.5), x + z, sympy.sin(x), 1 / (x + 1), x ** sympy.Rational(1, 2), sympy.pi * x,
                 sympy.sqrt(x), x**40):
        assert expand_exact(expr, (x,)) is None
    assert _exact_polynomial_key(sympy.Eq(x * y, 1)) is _UNDECIDED  # two variables: the sympy route says None
    assert _sympy_polynomial_key(sympy.Eq(x * y, 1)) is None


def test_a_quadratic_with_a_double_root_keys_to_the_root_once() -> None:
    coeffs = univariate(expand_exact(2 * x**2 - 12 * x + 18, (x,)))
    assert [to_sympy(c) for c in monic_square_free(coeffs)] == [1, -3]
    assert _exact_polynomial_key(sympy.Eq(2 * x**2 - 12 * x + 18, 0)) == _sympy_polynomial_key(
        sympy.Eq(2 * x**2 - 12 * x + 18, 0))


# -- systems: linear forms, rank, several variables -----------------------------------------

@st.composite
def system_lines(draw: st.DrawFn) -> sympy.Expr:
    """What a systems line's two sides differ by: linear, scaled, a sum of squares, or a stray term."""
    a, b, c = (draw(rationals) for _ in range(3))
    linear = a * x + b * y + c
    kind = draw(st.sampled_from(["linear", "scaled", "squares", "cancelling", "other"]))
    if kind == "scaled":
        return sympy.Mul(draw(rationals), linear, evaluate=False)
    if kind == "squares":
        return sympy.Add((x - a) ** 2, (y - b) ** 2, evaluate=False)
    if kind == "cancelling":  # a product that expands to a linear form (sympy keeps the product until expand)
        return (x + a) * (y + b) - x * y
    if kind == "other":
        return linear + draw(st.sampled_from([sympy.sqrt(2) * x, sympy.Symbol("z"), x * y, sympy.Float(0.5)]))
    return linear


@FAST
@given(system_lines())
def test_linear_form_is_the_sympy_linear_form(expr: sympy.Expr) -> None:
    assert linear_form(expr, x, y) == _sympy_linear_form(expr, x, y)


@FAST
@given(system_lines(), rationals)
def test_equation_parts_of_a_line_is_its_sympy_linear_form(expr: sympy.Expr, rhs: sympy.Rational) -> None:
    line = sympy.Eq(expr, rhs, evaluate=False)
    expected = _sympy_linear_form(expr - rhs, x, y)
    parts = equation_parts(line, x, y)
    if expected is not None:
        assert parts == (expected,)
    elif parts is not None:  # not one linear equation: only a sum of squares of linear parts, equal to 0
        assert rhs == 0 and len(parts) == 2


@FAST
@given(st.lists(st.tuples(rationals, rationals, rationals), min_size=0, max_size=4))
def test_rank_by_minors_is_the_rank_by_elimination(rows: list[tuple[sympy.Rational, ...]]) -> None:
    forms = [tuple(Fraction(int(c.p), int(c.q)) for c in r) for r in rows]
    expected = _rank_by_elimination(forms)
    assert _rank(forms) == expected
    assert _rank([integer_row(f) for f in forms]) == expected


@FAST
@given(system_lines(), system_lines())
def test_multivariate_key_decides_as_solutions_does(a: sympy.Expr, b: sympy.Expr) -> None:
    ea, eb = sympy.Eq(a, 0, evaluate=False), sympy.Eq(b, 0, evaluate=False)
    ka, kb = _multivariate_key(ea), _multivariate_key(eb)
    if ka is not None and kb is not None:
        assert (ka == kb) == (_solutions(ea) == _solutions(eb))


def test_a_stated_point_matches_the_question_in_another_order() -> None:
    answer = parse_step("x = 3 and y = −2")
    reordered = parse_step("y = −2 and x = 3")
    assert same_value(answer, reordered)
    assert not same_value(answer, parse_step("x = 3 and y = 2"))


# -- the quadratic family's answer, read exactly --------------------------------------------

@pytest.mark.parametrize("line", ["x = 3 or x = −1/2", "x = (−5 + √13)/2 or x = (−5 − √13)/2", "2x^2 + 5x = 3",
                                  "(x − 4)(x − 4) = 0"])
def test_quadratic_answer_is_the_monic_polynomial_sympy_writes(line: str) -> None:
    value = parse_step(line)
    poly = sympy.Poly(sympy.expand(value.lhs - value.rhs), x)
    expected = poly.monic().as_expr()
    answer = QuadraticFormula().answer_of(value)
    assert sympy.srepr(answer) == sympy.srepr(expected)


def test_quadratic_answer_text_reads_the_roots_in_lowest_terms() -> None:
    family = QuadraticFormula()
    answer = family.answer_of(parse_step("x = (−5 + √13)/2 or x = (−5 − √13)/2"))
    assert family.answer_text({"var": "x"}, answer)[0] == "x = (−5 + √13)/2 or x = (−5 − √13)/2"
    with pytest.raises(ValueError, match="not a quadratic"):
        family.answer_text({"var": "x"}, x - 3)
