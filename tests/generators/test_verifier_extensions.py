"""Verifier extensions the new families rely on: `or`-joined solutions and fast solution sets."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from synth.mathparse import MathParseError, parse_math
from synth.verification import _polynomial_key, _solutions, parse_either, parse_step, same_value

x = sympy.Symbol("x")


def test_or_joined_equations_have_the_union_of_their_solutions() -> None:
    assert same_value(parse_step("x = 2 or x = 3"), parse_math("x^2 - 5x + 6 = 0"))
    assert same_value(parse_step("x − 2 = 0 or 2x = 3"), parse_math("(x - 2)(2x - 3) = 0"))
    assert not same_value(parse_step("x = 2 or x = 4"), parse_math("x^2 - 5x + 6 = 0"))


def test_or_needs_equations_in_one_shared_variable() -> None:
    with pytest.raises(MathParseError):
        parse_either("x = 2 or 5")
    with pytest.raises(MathParseError):
        parse_either("x = 2 or y = 3")


def test_text_without_or_parses_as_before() -> None:
    assert parse_step("2x + 1 = 7") == parse_math("2x + 1 = 7")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-9, 9), min_size=1, max_size=3), st.lists(st.integers(-9, 9), min_size=1, max_size=3),
       st.integers(1, 4))
def test_polynomial_key_agrees_with_sympy_solve(roots_a: list[int], roots_b: list[int], lead: int) -> None:
    a = sympy.Eq(sympy.expand(lead * sympy.Mul(*(x - r for r in roots_a))), 0)
    b = sympy.Eq(sympy.expand(sympy.Mul(*(x - r for r in roots_b))), 0)
    assert (_polynomial_key(a) == _polynomial_key(b)) == (_solutions(a) == _solutions(b))


def test_equations_that_are_not_polynomials_still_use_solve() -> None:
    assert _polynomial_key(parse_math("1/x = 2")) is None
    assert same_value(parse_math("1/x = 2"), parse_math("x = 1/2"))


def test_solution_sets_ignore_the_variable_name() -> None:
    # As with sympy.solve before: a renamed unknown states the same solution.
    assert same_value(parse_math("y = 3"), parse_math("2x = 6"))
    assert same_value(parse_step("t = 1 or t = 2"), parse_math("x^2 - 3x + 2 = 0"))
