"""Realistic computational slips on a number: what a student's pencil actually does.

Core layer: families take their MCQ distractors from these, and the computational injectors their errors.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy

Slip = Callable[[sympy.Rational, np.random.Generator], sympy.Rational | None]


def digit_transposition(n: sympy.Rational, rng: np.random.Generator) -> sympy.Rational | None:
    if n.q != 1:
        return None
    digits = list(str(abs(int(n))))
    pairs = [i for i in range(len(digits) - 1) if digits[i] != digits[i + 1]]
    if not pairs:
        return None
    i = pairs[int(rng.integers(len(pairs)))]
    digits[i], digits[i + 1] = digits[i + 1], digits[i]
    if digits[0] == "0":
        return None
    return sympy.Integer(int("".join(digits))) * (1 if n >= 0 else -1)


def dropped_carry(n: sympy.Rational, rng: np.random.Generator) -> sympy.Rational | None:
    if n.q != 1 or abs(n) < 10:
        return None
    places = len(str(abs(int(n)))) - 1
    power = 10 ** int(rng.integers(1, places + 1))
    return n - power if n > 0 else n + power


def off_by_one(n: sympy.Rational, rng: np.random.Generator) -> sympy.Rational | None:
    if n.q != 1:
        return None
    return n + int(rng.choice([-1, 1]))


def sign_slip(n: sympy.Rational, rng: np.random.Generator) -> sympy.Rational | None:
    return -n if n != 0 else None


def decimal_shift(n: sympy.Rational, rng: np.random.Generator) -> sympy.Rational | None:
    if n == 0:
        return None
    return n * 10 if rng.random() < 0.5 else n / 10


SLIPS: dict[str, Slip] = {
    "digit_transposition": digit_transposition,
    "dropped_carry": dropped_carry,
    "off_by_one": off_by_one,
    "sign_slip": sign_slip,
    "decimal_shift": decimal_shift,
}
# Weights follow how often each slip shows in student work: small slips dominate.
COMMON_SLIPS = ("off_by_one", "digit_transposition", "dropped_carry", "off_by_one", "decimal_shift")


def apply_slip(n: sympy.Rational, rng: np.random.Generator,
               kinds: tuple[str, ...] = COMMON_SLIPS) -> tuple[str, sympy.Rational] | None:
    """A wrong value for ``n`` and the slip's name; None when no slip of these kinds fits."""
    order = [kinds[i] for i in rng.permutation(len(kinds))]
    for kind in order:
        wrong = SLIPS[kind](n, rng)
        if wrong is not None and wrong != n:
            return kind, wrong
    return None
