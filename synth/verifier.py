"""The single source of truth for labels: re-checks every shown step against the problem."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
        return _solutions(a) == _solutions(b)
    diff = sympy.expand(a - b)
    return diff == 0


def _solutions(eq: sympy.Eq) -> tuple[object, ...]:
    free = sorted(eq.free_symbols, key=lambda s: s.name)
    if not free:
        return ("true",) if bool(sympy.simplify(eq.lhs - eq.rhs) == 0) else ("false",)
    if len(free) == 1:
        sols = sympy.solve(sympy.expand(eq.lhs - eq.rhs), free[0])
        return tuple(sorted(str(s) for s in sols))
    return (str(sympy.expand(eq.lhs - eq.rhs)),)


def _parse(text: str) -> sympy.Basic | None:
    try:
        return parse_math(text)
    except MathParseError:
        return None


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
    correct = answer is not None and sympy.simplify(answer - truth) == 0
    return Verdict(tuple(parses), tuple(local), tuple(glob), answer, bool(correct))
