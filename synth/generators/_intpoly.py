"""Polynomials with integer coefficients as ``{degree: coefficient}`` dicts, multiplied on Python integers.

What the product-rule, chain-rule and integral families sample and work with; ``VARS`` are the variable names
they write.
"""

from __future__ import annotations

import numpy as np
import sympy

VARS = ("x", "t", "u")
Poly = dict[int, int]


def poly_value(p: Poly, x: sympy.Symbol) -> sympy.Expr:
    return sympy.Add(*(c * x**n for n, c in p.items()))


def int_poly(p: dict[str, int]) -> Poly:
    """JSON keeps dict keys as strings: degrees back to ints."""
    return {int(n): int(c) for n, c in p.items()}


def poly_derivative(p: Poly) -> Poly:
    return {n - 1: c * n for n, c in p.items() if n != 0}


def poly_times(p: Poly, q: Poly) -> Poly:
    """p × q multiplied out and collected, on Python integers (sympy.Poly costs a millisecond a product)."""
    out: Poly = {}
    for m, a in p.items():
        for n, b in q.items():
            out[m + n] = out.get(m + n, 0) + a * b
    return {n: c for n, c in out.items() if c}


def poly_power(p: Poly, n: int) -> Poly:
    out: Poly = {0: 1}
    for _ in range(n):
        out = poly_times(out, p)
    return out


def random_poly(rng: np.random.Generator, degrees: list[int], top: int = 9) -> Poly:
    out = {}
    for n in degrees:
        c = 0
        while c == 0:
            c = int(rng.integers(-top, top + 1))
        out[n] = c
    return out
