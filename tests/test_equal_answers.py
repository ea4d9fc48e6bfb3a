"""Specification of synth.verification.equal_answers on untrusted answers: cheap ones decided here, the rest bounded."""

import time

import pytest
import sympy

from synth import _bounded, verification
from synth.mathparse import parse_math
from synth.verification import equal_answers

x, y = sympy.symbols("x y")


def test_school_answers_are_decided_without_the_worker(monkeypatch):
    def no_worker(*args, **kwargs):
        raise AssertionError("sent to the worker process")

    monkeypatch.setattr(verification, "bounded_call", no_worker)
    assert equal_answers(parse_math("0.75"), sympy.Rational(3, 4))
    assert not equal_answers(parse_math("2/3"), sympy.Rational(3, 4))
    assert equal_answers(parse_math("(x + 1)^2"), x**2 + 2 * x + 1)
    assert equal_answers(parse_math("12π"), 12 * sympy.pi)
    assert equal_answers(parse_math("(x + 1)^2 + sin(x)"), x**2 + 2 * x + 1 + sympy.sin(x))  # by expansion
    assert not equal_answers(parse_math("3/(2x + 1) + ln(x)"), 3 / (2 * x + 1) + sympy.log(2 * x))  # by probing
    assert not equal_answers(parse_math("sin(x) + 1"), sympy.cos(x))


@pytest.mark.parametrize("text", ["(x + y + z + w)^1000", "(√2 + √3 + √5 + √7)^100"])
def test_an_answer_too_big_to_expand_here_is_undecided_within_its_budget(text):
    answer = parse_math(text)  # sympy.expand of either runs for minutes
    start = time.monotonic()
    assert not equal_answers(answer, sympy.Integer(5), timeout_s=0.5)
    assert time.monotonic() - start < 10.0  # 0.5 CPU s, 1.5 s wall at worst, plus starting a worker


def test_a_slow_simplification_gives_up_with_false_and_stops_the_work():
    assert equal_answers(parse_math("sin^2 x + cos^2 x"), sympy.Integer(1))  # the worker is running now
    hard = sympy.tan(5 * x + 3 * y)  # simplify needs over 7 CPU s to prove this identity
    start = time.monotonic()
    assert not equal_answers(sympy.expand_trig(hard), hard, timeout_s=0.2)
    assert time.monotonic() - start < 5.0
    assert _bounded.worker_pid() is None  # killed, not left computing


def test_answers_beyond_the_inline_checks_are_still_decided_right():
    assert equal_answers(parse_math("2^x * 2^x"), 4**x)  # a variable exponent
    big = (x + 1) ** 250  # expands to more terms than the in-process check makes
    assert equal_answers(big, sympy.expand(big))
    assert not equal_answers(big, sympy.expand(big) + 1)
