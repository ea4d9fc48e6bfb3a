"""The single source of truth for labels: re-checks every shown step against the problem."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import sympy

from synth.generators import get_family
from synth.generators.base import Family
from synth.mathparse import MathParseError, parse_math
from synth.records import Problem, Step


@dataclass(frozen=True)
class Verdict:
    """What the verifier found, independent of what an injector intended."""

    parses: tuple[bool, ...]        # the displayed text parses back to the step's value
    local_valid: tuple[bool, ...]   # follows from the previous line
    global_correct: tuple[bool, ...]  # consistent with the problem's true solution
    shown_answer: sympy.Basic | None
    answer_correct: bool

    @property
    def first_error_step(self) -> int | None:
        for i, ok in enumerate(self.global_correct, start=1):
            if not ok:
                return i
        for i, ok in enumerate(self.local_valid, start=1):
            if not ok:
                return i
        return None

    @property
    def error_steps(self) -> tuple[int, ...]:
        """Steps that are locally invalid or globally wrong (1-based)."""
        return tuple(i for i, (loc, glob) in enumerate(zip(self.local_valid, self.global_correct), start=1)
                     if not (loc and glob))

    @property
    def propagated(self) -> bool:
        """Every step after the first wrong one carries the error forward (stays globally wrong)."""
        first = self.first_error_step
        if first is None:
            return False
        return all(not ok for ok in self.global_correct[first - 1:])

    @property
    def fully_correct(self) -> bool:
        return all(self.parses) and all(self.local_valid) and all(self.global_correct) and self.answer_correct


def same_value(a: sympy.Basic, b: sympy.Basic) -> bool:
    """Equal numbers or expressions; equations are equal when they have the same solution set."""
    if isinstance(a, sympy.Eq) or isinstance(b, sympy.Eq):
        if not (isinstance(a, sympy.Eq) and isinstance(b, sympy.Eq)):
            return False
        if a == b:
            return True
        ka, kb = _polynomial_key(a), _polynomial_key(b)
        if ka is not None and kb is not None:
            return ka == kb
        return _solutions(a) == _solutions(b)
    if a == b:
        return True
    diff = sympy.expand(a - b)
    return diff == 0


@lru_cache(maxsize=4096)
def _polynomial_key(eq: sympy.Eq) -> tuple[sympy.Basic, ...] | None:
    """The solution set of a one-variable polynomial equation, cheaply: its monic square-free part.

    Two such equations have the same roots (over C, as sympy.solve reports them) exactly when
    these agree. None for anything else (constants, several variables, rational functions),
    which then goes through sympy.solve as before. Linear equations skip the square-free step.
    Like the solve route, the key ignores the variable's name (`x = 3` matches `y = 3`), which
    is what lets a renamed variable count as the same solution.
    """
    free = eq.free_symbols
    if len(free) != 1:
        return None
    (symbol,) = free
    diff = sympy.expand(eq.lhs - eq.rhs)
    if not diff.is_polynomial(symbol):
        return None
    poly = sympy.Poly(diff, symbol)
    if poly.degree() < 1 or not all(c.is_Rational for c in poly.all_coeffs()):
        return None
    if poly.degree() == 1:
        c1, c0 = poly.all_coeffs()
        return (sympy.Integer(1), c0 / c1)
    return tuple(poly.sqf_part().monic().all_coeffs())


def _solutions(eq: sympy.Eq) -> tuple[object, ...]:
    free = sorted(eq.free_symbols, key=lambda s: s.name)
    if not free:
        return ("true",) if bool(sympy.simplify(eq.lhs - eq.rhs) == 0) else ("false",)
    if len(free) == 1:
        sols = sympy.solve(sympy.expand(eq.lhs - eq.rhs), free[0])
        return tuple(sorted(str(s) for s in sols))
    return (str(sympy.expand(eq.lhs - eq.rhs)),)


def parse_step(text: str) -> sympy.Basic:
    """What a shown step says: parse_math, plus equations in one variable joined by `or`."""
    return parse_either(text) if " or " in text else parse_math(text)


def _parse(text: str) -> sympy.Basic | None:
    try:
        return parse_step(text)
    except MathParseError:
        return None


def parse_either(text: str) -> sympy.Basic:
    """`x = 2 or x + 5 = 0` as `(x - 2)(x + 5) = 0`: the equation with the same solution set.

    Each part goes through the safe parser on its own; every part must be an equation, and all
    must share one variable (a product of differences has exactly the union of their roots).
    """
    parts = [parse_math(part) for part in text.split(" or ")]
    if not all(isinstance(p, sympy.Eq) for p in parts):
        raise MathParseError("every part joined by 'or' must be an equation")
    symbols = set().union(*(p.free_symbols for p in parts))
    if len(symbols) != 1:
        raise MathParseError("equations joined by 'or' must share exactly one variable")
    product = sympy.Mul(*(p.lhs - p.rhs for p in parts), evaluate=False)
    return sympy.Eq(product, 0, evaluate=False)


def _equal_answers(answer: sympy.Basic, truth: sympy.Basic) -> bool:
    """simplify(answer - truth) == 0, with exact cheap exits before simplify."""
    diff = answer - truth
    if diff == 0:
        return True
    if diff.is_Rational:
        return False
    if sympy.expand(diff) == 0:
        return True
    return bool(sympy.simplify(diff) == 0)


def verify(problem: Problem, steps: Sequence[Step], *, family: Family | None = None) -> Verdict:
    """Label a shown solution from its text alone, against the problem's parameters."""
    family = family or get_family(problem.family)
    start = family.initial(problem.params)
    truth = family.target(problem.params)
    parses, local, glob = [], [], []
    previous = start
    value = None
    for step in steps:
        value = _parse(step.value)
        shown = _parse(step.text)
        parses.append(value is not None and shown is not None and same_value(shown, value))
        if value is None:
            local.append(False)
            glob.append(False)
            continue
        local.append(previous is not None and same_value(value, previous))
        glob.append(same_value(value, start))
        previous = value
    answer = family.answer_of(value) if value is not None else None
    correct = answer is not None and _equal_answers(answer, truth)
    return Verdict(tuple(parses), tuple(local), tuple(glob), answer, bool(correct))
