"""Specification of synth.mathparse: the whitelist math parser, its writer and equivalence."""

import ast
import builtins
import gc
import importlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sympy
import sympy.parsing.sympy_parser
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from synth import _bounded, equivalence, mathlexer, mathparse, mathwriter
from synth.mathparse import (
    MathParseError,
    equivalent,
    parse_math,
    parse_number,
    to_text,
    try_parse,
)
from tests._procs import running

x, y, n = sympy.symbols("x y n")
R = sympy.Rational


def rejects(text: str, **limits) -> str:
    """Parse text expecting MathParseError; return its message."""
    with pytest.raises(MathParseError) as caught:
        parse_math(text, **limits)
    return str(caught.value)


# -- numbers --------------------------------------------------------------------------------
def test_decimals_parse_to_exact_rationals():
    assert parse_math("3.25") == R(13, 4)
    assert parse_math(".5") == R(1, 2)
    assert parse_math("0.1") == R(1, 10)
    assert isinstance(parse_math("0.1"), sympy.Rational)


def test_thousands_separator_in_groups_of_three():
    assert parse_math("1,234") == 1234
    assert parse_math("1,234,567.5") == R(2469135, 2)


def test_ambiguous_comma_is_rejected():
    for text in ("1,23", "1,2345", "1234,567", "1, 234", "(1,2)"):
        assert "comma" in rejects(text) or "','" in rejects(text)


def test_percent_is_hundredths():
    assert parse_math("25%") == R(25, 100)
    assert parse_math(r"12.5\%") == R(1, 8)


def test_scientific_notation():
    assert parse_math("1.2e3") == 1200
    assert parse_math("1.2E-3") == R(3, 2500)
    assert parse_math("2e") == 2 * sympy.E  # no digits after e: Euler's number


def test_long_number_literal_rejected():
    assert "max_digits" in rejects("1" * 61)
    assert parse_math("1" * 61, max_digits=61) == int("1" * 61)


def test_scientific_exponent_is_bounded():
    assert "exponent exceeds the limit" in rejects("1e5000")


# -- operators and implicit multiplication --------------------------------------------------
def test_implicit_multiplication():
    assert parse_math("2x") == 2 * x
    assert parse_math("3(x+1)") == 3 * (x + 1)
    assert parse_math("(x+1)(x-1)") == (x + 1) * (x - 1)
    assert parse_math("2pi") == 2 * sympy.pi
    assert parse_math("x^2y") == x**2 * y
    assert parse_math("xy") == x * y


def test_implicit_multiplication_binds_like_explicit():
    assert parse_math("1/2x") == x / 2


def test_two_numbers_in_a_row_are_rejected():
    assert "missing operator" in rejects("2 3")
    assert "missing operator" in rejects("x 2")


def test_unicode_minus_and_times():
    assert parse_math("2 × 3 − 1") == 5
    assert parse_math("6 ÷ 4") == R(3, 2)
    assert parse_math("a·b") == sympy.Symbol("a") * sympy.Symbol("b")
    assert parse_math("5 – 2") == 3  # en dash


def test_powers_are_right_associative_and_bind_tighter_than_minus():
    assert parse_math("2^3^2") == 2**9
    assert parse_math("-2^2") == -4
    assert parse_math("2**-3") == R(1, 8)


def test_unicode_superscripts_are_powers():
    assert parse_math("x²") == x**2
    assert parse_math("x⁻¹") == 1 / x


def test_brackets_of_all_kinds_group():
    assert parse_math("[x+1]{2}") == 2 * x + 2
    assert "to match" in rejects("(x+1]")


# -- names ------------------------------------------------------------------------------------
def test_greek_names_and_constants():
    assert parse_math("pi") == sympy.pi
    assert parse_math("π") == sympy.pi
    assert parse_math("θ") == sympy.Symbol("theta")
    assert parse_math("theta + alpha") == sympy.Symbol("theta") + sympy.Symbol("alpha")
    assert parse_math(r"\lambda") == parse_math("λ") == sympy.Symbol("lambda")
    assert parse_math("e") == sympy.E


def test_subscripts_make_symbols():
    assert parse_math("x_1 + x_{12}") == sympy.Symbol("x_1") + sympy.Symbol("x_12")
    assert parse_math(r"\theta_n") == sympy.Symbol("theta_n")


def test_unknown_words_are_rejected():
    for text in ("import", "abcd", "answer", "sine", "x and y"):
        assert "word" in rejects(text)


def test_unsupported_functions_and_units_are_named():
    assert "cosh" in rejects("cosh x")
    assert "unit" in rejects("5 cm")
    assert "not supported" in rejects(r"5\text{ cm}")


def test_dunder_import_text_is_rejected():
    for text in ("__import__('os').system('ls')", "eval(1)", "exec('x')", "lambda", "x.__class__", "lambda: 1"):
        rejects(text)


# -- functions --------------------------------------------------------------------------------
def test_whitelisted_functions():
    assert parse_math("sqrt(2)") == sympy.sqrt(2)
    assert parse_math("cbrt(-8)") == -2
    assert parse_math("sin(pi/6)") == R(1, 2)
    assert parse_math("ln(e^2)") == 2
    assert parse_math("log(x)") == sympy.log(x)
    assert parse_math("atan(1)") == sympy.pi / 4
    assert parse_math("abs(-3)") == 3
    assert parse_math("exp(x)") == sympy.exp(x)


def test_log_base_forms():
    assert parse_math("log_10(1000)") == 3
    assert parse_math(r"\log_{2} 8") == 3
    assert parse_math("log2(32)") == 5


def test_absolute_value_bars():
    assert parse_math("|x-1|") == sympy.Abs(x - 1)
    assert parse_math("||x|-1|") == sympy.Abs(sympy.Abs(x) - 1)
    assert parse_math("2|x|y") == 2 * sympy.Abs(x) * y
    assert parse_math(r"\lvert x \rvert + \left| y \right|") == sympy.Abs(x) + sympy.Abs(y)


def test_factorial():
    assert parse_math("5!") == 120
    assert parse_math("n!") == sympy.factorial(n)


def test_function_without_parentheses_takes_following_product():
    assert parse_math("sin 2x + 1") == sympy.sin(2 * x) + 1
    assert parse_math("2sin x cos x") == 2 * sympy.sin(x) * sympy.cos(x)
    assert parse_math(r"\sin\theta") == sympy.sin(sympy.Symbol("theta"))
    assert parse_math("√2x") == sympy.sqrt(2) * x


def test_function_powers_and_inverse_notation():
    assert parse_math("sin^2 x + cos^2 x") == sympy.sin(x) ** 2 + sympy.cos(x) ** 2
    assert parse_math(r"\sin^{-1}(x)") == sympy.asin(x)


# -- LaTeX -------------------------------------------------------------------------------------
def test_fraction_latex_parses_to_rational():
    assert parse_math(r"\frac{3}{4}") == R(3, 4)
    assert parse_math(r"\dfrac{1}{2} + \tfrac{1}{4}") == R(3, 4)
    assert parse_math(r"\frac12") == R(1, 2)
    assert parse_math(r"\frac{x+1}{2}") == (x + 1) / 2


def test_latex_roots_and_operators():
    assert parse_math(r"\sqrt{16}") == 4
    assert parse_math(r"\sqrt[3]{27}") == 3
    assert parse_math(r"2 \cdot 3 \times 4 \div 6") == 4


def test_latex_wrappers_and_spacing_are_ignored():
    assert parse_math(r"\boxed{x = 5}") == sympy.Eq(x, 5)
    assert parse_math(r"\left( x+1 \right)^{2}") == (x + 1) ** 2
    assert parse_math(r"$2\,x\;+\!1$") == 2 * x + 1
    assert parse_math("x = 5.") == sympy.Eq(x, 5)


def test_degree_sign_is_dropped():
    assert parse_math("30°") == 30
    assert parse_math(r"x = 45^\circ") == sympy.Eq(x, 45)
    assert parse_math(r"45^{\circ}") == 45


def test_degrees_inside_trig_become_radians():
    assert parse_math("sin 30°") == R(1, 2)
    assert parse_math(r"\cos(60^\circ)") == R(1, 2)


# -- relations ---------------------------------------------------------------------------------
def test_answer_equation_parses_to_eq():
    assert parse_math("x = 5") == sympy.Eq(x, 5)
    assert parse_math("x == 5") == sympy.Eq(x, 5)


def test_inequalities_in_all_spellings():
    assert parse_math("x <= 5") == parse_math("x ≤ 5") == parse_math(r"x \le 5") == sympy.Le(x, 5)
    assert parse_math(r"x \geq 2") == sympy.Ge(x, 2)
    assert parse_math("x ≠ 3") == parse_math("x != 3") == sympy.Ne(x, 3)
    assert parse_math("x > -1") == sympy.Gt(x, -1)


def test_false_relation_stays_a_relation():
    assert parse_math("2+2=5") == sympy.Eq(4, 5, evaluate=False)


def test_chained_relation_rejected():
    assert "chained" in rejects("x = y = 3")
    assert "chained" in rejects("0 < x < 5")


# -- limits --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["9^9^9", "10^10^10", "2**99999", "(10^60 x)^1000", "exp(1000000 ln 3)"])
def test_huge_power_is_rejected_not_computed(text):
    start = time.monotonic()
    rejects(text)
    assert time.monotonic() - start < 0.5


def test_huge_product_is_rejected_before_multiplying():
    start = time.monotonic()
    assert "digits" in rejects("*".join(["1000!"] * 200))
    assert time.monotonic() - start < 0.5


def test_large_factorial_rejected():
    assert "factorial" in rejects("1001!")
    assert "factorial" in rejects("(1000!)!")


def test_deep_nesting_rejected():
    assert "max_depth" in rejects("(" * 100 + "x" + ")" * 100)
    assert "max_depth" in rejects("(" * 5000, max_length=10_000)
    assert "max_depth" in rejects("-" * 100 + "x")


def test_megabyte_input_rejected_quickly():
    start = time.monotonic()
    assert "max_length" in rejects("1+" * 500_000)
    assert time.monotonic() - start < 0.05


def test_time_limit_is_enforced():
    assert "time limit" in rejects("x + 1", timeout_s=1e-9)


def test_a_long_garbage_collection_during_a_parse_does_not_count_against_its_time_limit():
    # Round 18's flaky slow test: after 10,000 hostile parses a full collection took 0.9 CPU s (2.7 s wall under
    # load) and landed inside an ordinary step's parse, which the 1 s bound then refused, so a clean solution did not
    # verify. The collector's time is the process's, not the input's: here one collection burns twice the bound.
    burned = []

    def slow_collection(phase: str, info: dict) -> None:
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_name != "_parse_within":
            frame = frame.f_back
        if phase == "start" and frame is not None and not burned:
            burned.append(True)
            end = time.thread_time() + 0.2
            while time.thread_time() < end:
                pass

    threshold = gc.get_threshold()
    gc.callbacks.append(slow_collection)
    gc.set_threshold(1)
    try:
        value = parse_math("(5 × 9)m^(7 + 2) ÷ (9m^4) + 7103", timeout_s=0.1)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(slow_collection)
    assert burned, "no collection ran inside the parse: the test proves nothing"
    m = sympy.Symbol("m")
    assert sympy.simplify(value - (5 * m**5 + 7103)) == 0
    assert "time limit" in rejects("x + 2", timeout_s=1e-9)  # the parse's own time still counts


def test_division_by_zero_rejected():
    for text in ("1/0", "0^-1", "tan(pi/2)", "log(0)"):
        assert "undefined" in rejects(text)


def test_error_message_names_position():
    with pytest.raises(MathParseError) as caught:
        parse_math("2 + * 3")
    assert caught.value.position == 4
    assert "position 4" in str(caught.value)


# -- parse_number and try_parse ----------------------------------------------------------------
def test_parse_number_accepts_exact_numbers():
    assert parse_number("3/4") == R(3, 4)
    assert parse_number("75%") == R(3, 4)
    assert parse_number(r"2\sqrt{2}") == 2 * sympy.sqrt(2)


def test_parse_number_rejects_symbols_and_relations():
    with pytest.raises(MathParseError, match="variables x"):
        parse_number("2x")
    with pytest.raises(MathParseError, match="relation"):
        parse_number("x = 5")


def test_try_parse_returns_none_instead_of_raising():
    assert try_parse("x +") is None
    assert try_parse("x + 1") == x + 1
    assert try_parse("1" * 100, max_digits=10) is None


# -- to_text ---------------------------------------------------------------------------------------
def test_to_text_writes_plain_operators():
    assert to_text(x**2 * y) == "x^2*y"
    assert to_text(sympy.Eq(x, R(3, 4))) == "x = 3/4"
    assert to_text(sympy.Le(x, -2)) == "x <= -2"
    assert to_text(sympy.E * x) == "e*x"
    assert to_text(sympy.Abs(x)) == "abs(x)"
    assert to_text(sympy.factorial(n)) == "n!"


def test_to_text_refuses_values_it_cannot_write():
    for value in (sympy.Function("f")(x), sympy.oo, sympy.Symbol("speed"), sympy.Symbol("e")):
        with pytest.raises(ValueError, match="cannot"):
            to_text(value)


@pytest.mark.parametrize(
    "value",
    [
        sympy.Eq(x, R(3, 4)),
        sympy.Lt(x + 1, 2 * y),
        sympy.Ge(x**2, 0),
        sympy.Ne(x, -1),
        sympy.sin(x) ** 2 + sympy.cos(2 * x),
        sympy.sqrt(x + 1) / 3,
        sympy.exp(-x) + sympy.log(x),
        sympy.Abs(x - 1),
        sympy.factorial(n + 1),
        2 * sympy.I * x,
        sympy.pi * x ** R(3, 2),
        sympy.Symbol("x_1") + sympy.Symbol("theta") + sympy.Symbol("lambda"),
        sympy.Symbol("x_ab") * sympy.Symbol("Delta"),
        sympy.asin(x) - sympy.atan(y),
        (-2) ** x,
        R(1, 2) ** x,
    ],
)
def test_round_trip_relations_and_functions(value):
    assert parse_math(to_text(value)) == value


def _expressions() -> st.SearchStrategy[sympy.Expr]:
    leaves = st.one_of(
        st.integers(-12, 12).map(sympy.Integer),
        st.builds(R, st.integers(-9, 9), st.integers(1, 9)),
        st.sampled_from([x, y]),
    )

    def combine(children: st.SearchStrategy[sympy.Expr]) -> st.SearchStrategy[sympy.Expr]:
        pairs = st.tuples(children, children)
        return st.one_of(
            pairs.map(lambda p: p[0] + p[1]),
            pairs.map(lambda p: p[0] - p[1]),
            pairs.map(lambda p: p[0] * p[1]),
            pairs.map(lambda p: p[0] / p[1]),
            st.tuples(children, st.integers(-3, 4)).map(lambda p: p[0] ** p[1]),
        )

    return st.recursive(leaves, combine, max_leaves=8).filter(
        lambda e: not e.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo)
    )


@settings(max_examples=150, deadline=None)
@given(_expressions())
def test_round_trip_to_text(value):
    parsed = parse_math(to_text(value))
    assert parsed == value or equivalent(parsed, value)


# -- robustness ----------------------------------------------------------------------------------
def _parses_or_raises_quickly(text: str) -> None:
    start = time.monotonic()
    try:
        parse_math(text, timeout_s=0.5)
    except MathParseError:
        pass
    assert time.monotonic() - start < 1.0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80))
def test_arbitrary_text_parses_or_raises_math_parse_error(text):
    _parses_or_raises_quickly(text)


_GRAMMAR_PIECES = [
    "x", "y", "2", "9", "99", "3.5", ".5", "1,234", "e", "pi", "π", "θ", "^", "**", "*", "/",
    "+", "-", "−", "×", "÷", "(", ")", "[", "]", "{", "}", "|", "!", "%", "°", "²", "⁻", "=",
    "<=", "≠", "!=", r"\frac", r"\sqrt", r"\sqrt[3]", r"\cdot", r"\left(", r"\right)", r"\boxed",
    r"\pi", r"\theta", "_", "_1", "_{2}", "sin", "cos", "log", "log_", "ln", "sqrt", "exp", "abs",
    " ", "1e9", "e3", "E-2", "0", r"\le", r"^\circ", "xy", r"\,", "$", ".", "10^", "1000",
]  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_GRAMMAR_PIECES), max_size=30).map("".join))
def test_grammar_shaped_text_parses_or_raises_math_parse_error(text):
    _parses_or_raises_quickly(text)


# Inputs hypothesis found now and then (each turned CI red at random), pinned so they always run.
# SymPy rewrites these into functions to_text cannot write (|e^x| is exp(re(x)), sin(ix) is i*sinh(x)):
_REWRITTEN_BY_SYMPY = ["absexpx", "abs(2^x)", "sin(sqrt(-9)x)", "cos(sqrt(-9)x)", "asin(sqrt(-9)x)",
                       "atan(sqrt(-9)x)"]
# SymPy leaves these in a form that reads back as another tree of the same value (3*Abs(Abs(x)), -(x + 2)/sin(9)):
_NOT_CANONICAL_IN_SYMPY = ["abs(2abs(x))", "(x+2)/sin(-9)"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_GRAMMAR_PIECES), max_size=30).map("".join))
@example("absexpx")  # the first one found: it parsed to exp(re(x)), which to_text refused
@example("abs(2^x)")
@example("sin(sqrt(-9)x)")
@example("asin(sqrt(-9)x)")
@example("abs(2abs(x))")
@example("(x+2)/sin(-9)")
def test_every_parsed_value_round_trips_through_to_text(text):
    value = try_parse(text)
    if value is not None:
        # sympy may combine parts past the default limits (x^1000*x^2 is x^1002).
        back = parse_math(to_text(value), max_digits=5000, max_exponent=10**6, max_length=10**6)
        # The same tree, or (where SymPy keeps a value in a form it does not rebuild) the same value.
        assert back == value or equivalent(back, value, timeout_s=30)


@pytest.mark.parametrize(("text", "function"), [
    *zip(_REWRITTEN_BY_SYMPY, ["re", "re", "sinh", "cosh", "asinh", "atanh"]),
    ("|e^x|", "re"), ("abs(e^(sqrt(-1)x))", "im"), ("tan(sqrt(-1)x)", "tanh"), ("cot(sqrt(-1)x)", "coth"),
    ("sec(sqrt(-1)x)", "cosh"), ("csc(sqrt(-1)x)", "sinh"), ("acos(sqrt(-1)x)", "asinh"), ("acot(sqrt(-1)x)", "acoth"),
])  # fmt: skip
def test_values_sympy_rewrites_into_functions_we_do_not_read_are_refused(text, function):
    assert f"{function}() is not accepted at position 0" in rejects(text)


def test_refusing_a_rewritten_value_names_where_it_was_written():
    assert rejects("2 + |e^x|").endswith("SymPy turns this into exp(re(x)); re() is not accepted at position 4")


def test_values_sympy_rewrites_into_functions_we_read_still_parse():
    assert parse_math("sin(pi/6)") == R(1, 2)
    assert parse_math("e^(sqrt(-1) pi)") == -1
    assert parse_math("|sqrt(-9)x|") == 3 * sympy.Abs(x)
    assert parse_math("cos(asin x)") == sympy.sqrt(1 - x**2)


def test_parser_never_calls_sympify_or_parse_expr(monkeypatch):
    # `sympy.core.sympify` names the function, so fetch the module itself.
    sympify_module = importlib.import_module("sympy.core.sympify")
    original = sympify_module.sympify

    def no_strings(a, *args, **kwargs):
        if isinstance(a, str):
            raise AssertionError(f"sympify saw text {a!r}")
        return original(a, *args, **kwargs)

    def forbidden(*args, **kwargs):
        raise AssertionError("string evaluation was called")

    monkeypatch.setattr(sympy, "sympify", no_strings)
    monkeypatch.setattr(sympify_module, "sympify", no_strings)
    monkeypatch.setattr(sympy.parsing.sympy_parser, "parse_expr", forbidden)
    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    for text in (r"x = \frac{3}{4}", "2(x+1)^2 - sin(pi/6)", "|x| <= 5!", "log_2 8 + √2", "θ² + 1.5e3"):
        value = parse_math(text)
        assert parse_math(to_text(value)) == value


@pytest.mark.parametrize("module", [mathparse, mathlexer, mathwriter, equivalence], ids=lambda m: m.__name__)
def test_module_source_calls_no_string_evaluators(module):
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    calls = [node.func for node in ast.walk(tree) if isinstance(node, ast.Call)]
    builtins_called = {func.id for func in calls if isinstance(func, ast.Name)}
    anything_called = builtins_called | {func.attr for func in calls if isinstance(func, ast.Attribute)}
    assert not builtins_called & {"eval", "exec", "compile", "__import__"}
    assert not anything_called & {"sympify", "parse_expr", "parse_latex", "S"}


# -- equivalent ------------------------------------------------------------------------------------
def test_equivalent_decimal_and_fraction():
    assert equivalent(parse_math("0.5"), parse_math("1/2"))
    assert equivalent(parse_math("0.5"), parse_math(r"\frac12"))


def test_equivalent_factored_and_expanded():
    assert equivalent(parse_math("2(x+1)"), parse_math("2x+2"))
    assert equivalent(parse_math("(x-1)(x+1)"), parse_math("x^2-1"))
    assert equivalent(parse_math("sin^2 x + cos^2 x"), sympy.Integer(1))


def test_equivalent_rejects_different_values():
    assert not equivalent(parse_math("1/2"), parse_math("0.51"))
    assert not equivalent(parse_math("x+1"), parse_math("x+2"))
    assert not equivalent(parse_math("sin x"), parse_math("cos x"))
    assert not equivalent(parse_math("x = 5"), parse_math("5"))


def test_equivalent_equation_with_sides_swapped():
    assert equivalent(sympy.Eq(x, 5), sympy.Eq(5, x))
    assert equivalent(parse_math("x = 5"), parse_math("5 = x"))


def test_equivalent_equations_with_same_solutions():
    assert equivalent(parse_math("2x = 10"), parse_math("x = 5"))
    assert equivalent(parse_math("(x-2)^2 = 0"), parse_math("x = 2"))
    assert not equivalent(parse_math("x^2 = 4"), parse_math("x = 2"))


def test_equivalent_inequality_flipped_or_scaled():
    assert equivalent(parse_math("x < 5"), parse_math("5 > x"))
    assert equivalent(parse_math("2x < 10"), parse_math("x < 5"))
    assert not equivalent(parse_math("-x < -5"), parse_math("x < 5"))
    assert not equivalent(parse_math("x < 5"), parse_math("x <= 5"))


def test_equivalent_with_relative_tolerance():
    assert equivalent(parse_math("0.333"), parse_math("1/3"), tol=1e-2)
    assert not equivalent(parse_math("0.333"), parse_math("1/3"), tol=1e-4)
    assert equivalent(parse_math("1.41421"), parse_math("sqrt(2)"), tol=1e-5)


def test_equivalent_matches_symbols_that_carry_assumptions():
    positive_x = sympy.Symbol("x", positive=True)
    assert equivalent(parse_math("x + 1"), positive_x + 1)


# tan(5x + 3y) against its expansion: simplify needs over 10 s to prove the identity.
HARD = sympy.tan(5 * x + 3 * y)
HARD_EXPANDED = sympy.expand_trig(HARD)


def warm_worker() -> int:
    """Start the worker before timing: its start-up (importing SymPy) is not part of the bound."""
    assert equivalent(parse_math("sin^2 x + cos^2 x"), sympy.Integer(1))
    pid = _bounded.worker_pid()
    assert pid is not None
    return pid


def running_children() -> list[int]:
    """Pids of this process's children that can still run."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            children.append(int(stat.parent.name))
    return children


def test_equivalent_gives_up_with_false_after_time_limit():
    warm_worker()
    start = time.monotonic()
    assert not equivalent(HARD_EXPANDED, HARD, timeout_s=0.2)
    assert time.monotonic() - start < 3.0  # wall clock: generous for a loaded CI machine


def test_equivalent_time_limit_leaves_no_alarm_behind():
    previous = signal.getsignal(signal.SIGALRM)
    equivalent(HARD_EXPANDED, HARD, timeout_s=0.05)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is previous


def in_thread(fn):
    box = []
    worker = threading.Thread(target=lambda: box.append(fn()))
    worker.start()
    worker.join()
    return box[0]


def under_busy_gc_callback(fn):
    # The outside tester's trick: an alarm landing inside a gc callback had its exception swallowed.
    def busy(phase, info):
        sum(range(20_000))

    gc.callbacks.append(busy)
    try:
        return fn()
    finally:
        gc.callbacks.remove(busy)


@pytest.mark.parametrize("call", [lambda fn: fn(), in_thread, under_busy_gc_callback],
                         ids=["main thread", "other thread", "gc callback"])
def test_equivalent_returns_on_time_and_stops_the_work(call):
    worker = warm_worker()
    start = time.monotonic()
    assert call(lambda: equivalent(HARD_EXPANDED, HARD, timeout_s=0.5)) is False
    assert time.monotonic() - start < 5.0
    assert not running(worker)


def test_no_process_keeps_burning_cpu_after_a_timeout():
    worker = warm_worker()
    # Children that other tests in this process started (a pool's forkserver, a resource tracker) are not ours.
    others = set(running_children()) - {worker}
    assert not equivalent(HARD_EXPANDED, HARD, timeout_s=0.2)
    assert not running(worker)
    assert _bounded.worker_pid() is None
    assert set(running_children()) <= others


def test_equivalence_is_decided_again_after_a_timeout():
    worker = warm_worker()
    assert not equivalent(HARD_EXPANDED, HARD, timeout_s=0.05)
    assert equivalent(parse_math("(x-1)(x+1)"), parse_math("x^2-1"))
    assert not equivalent(parse_math("sin x"), parse_math("cos x"))
    assert _bounded.worker_pid() not in (None, worker)


def test_worker_started_by_a_short_lived_thread_outlives_it():
    equivalent(HARD_EXPANDED, HARD, timeout_s=0.05)  # no worker now: the thread below starts one
    assert in_thread(lambda: equivalent(parse_math("sin^2 x + cos^2 x"), sympy.Integer(1)))
    worker = _bounded.worker_pid()
    time.sleep(0.2)
    assert equivalent(parse_math("(x-1)(x+1)"), parse_math("x^2-1"))
    assert _bounded.worker_pid() == worker


def test_worker_stops_when_its_parent_is_killed_mid_comparison():
    script = (
        "import sympy, sys\n"
        "from synth import _bounded\n"
        "from synth.mathparse import equivalent\n"
        "x, y = sympy.symbols('x y')\n"
        "assert equivalent(sympy.sin(x)**2 + sympy.cos(x)**2, sympy.Integer(1))\n"
        "print(_bounded.worker_pid(), flush=True)\n"
        "hard = sympy.tan(5*x + 3*y)\n"
        "equivalent(sympy.expand_trig(hard), hard, timeout_s=600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(parent.stdout.readline())
        time.sleep(0.3)  # the worker is simplifying now, with 600 s of budget left
        assert running(worker)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while running(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(worker)


def test_cheap_comparisons_are_decided_without_the_worker(monkeypatch):
    def no_worker(*args, **kwargs):
        raise AssertionError("sent to the worker process")

    monkeypatch.setattr(equivalence, "_bounded_call", no_worker)
    assert equivalent(parse_math("0.5"), parse_math("1/2"))
    assert not equivalent(parse_math("x + 1"), parse_math("x + 2"))
    assert equivalent(parse_math("0.333"), parse_math("1/3"), tol=1e-2)
    assert not equivalent(parse_math("x < 5"), parse_math("x <= 5"))
    assert not equivalent(parse_math("x = 5"), parse_math("5"))
