"""A fraction brought to lowest terms the way the fraction families' clean solutions show it."""

from __future__ import annotations

from fractions import Fraction
from math import gcd

import sympy

from synth.generators import expr as E
from synth.generators.base import Derivation

_step = E.add_step


def lowest_terms_steps(d: Derivation, num: sympy.Basic, den: int, answer: sympy.Rational) -> None:
    """``num/den`` reduced by the common factor the clean solution has (none: nothing to show).

    The factor comes from the true answer, not from ``num``, so an injected slip never changes
    which steps exist; dividing a slipped numerator by it is still exact arithmetic.
    """
    g = den // int(answer.q) if answer != 0 else 1
    if g <= 1:
        return
    node = ["frac", ["/", E.leaf(num), g], ["/", den, g]]
    _step(d, "divide_by_common_factor", node)
    reduced = d.compute(E.sym(node))
    _step(d, "simplify_fraction", E.leaf(reduced), reduced)


def reduce_fraction_steps(d: Derivation, num: int, den: int) -> None:
    """``num/den`` in lowest terms, shown the way the clean solutions show it."""
    g = gcd(num, den)
    if g > 1 and den != 0:
        _step(d, "divide_by_common_factor", ["frac", ["/", num, g], ["/", den, g]])
        _step(d, "simplify_fraction", E.leaf(Fraction(num, den)), sympy.Rational(num, den))
