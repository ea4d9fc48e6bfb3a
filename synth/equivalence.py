"""Whether two parsed math values say the same thing: exact checks here, SymPy's simplification in a bounded worker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy
from sympy.core.relational import Relational

from synth._bounded import call as _bounded_call

# Comparisons that cannot blow up run here; SymPy's simplify, solvers and evalf run in
# synth._bounded's worker process, which is killed when its budget is spent (issue 16).
# Values with more nodes than this skip the in-process checks: building a - b stays cheap.
_INLINE_MAX_NODES = 400


def _bounded(fn: Callable[..., bool], *args: Any, seconds: float) -> bool:
    """fn(*args) in the worker process; False when it raises or does not finish within its budget."""
    return _bounded_call(fn, *args, cpu_s=seconds) is True


def _small(*values: sympy.Basic, limit: int = _INLINE_MAX_NODES) -> bool:
    """Whether the values have at most limit nodes together (stops counting at the limit)."""
    seen = 0
    for value in values:
        for _ in sympy.preorder_traversal(value):
            seen += 1
            if seen > limit:
                return False
    return True


# Awkward rationals for probing: unlikely roots or poles of school expressions.
_PROBE_TOLERANCE = sympy.Rational(1, 10**12)
_PROBES = [sympy.Rational(p, q) for p, q in ((7, 13), (-11, 17), (19, 23), (-5, 29), (31, 37), (3, 41))]


def _clearly_differ(a: sympy.Expr, b: sympy.Expr) -> bool:
    """True when a and b differ at some probe point: a cheap exit before simplify."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    for shift in range(2):
        point = {s: _PROBES[(i + 3 * shift) % len(_PROBES)] for i, s in enumerate(symbols)}
        try:
            av, bv = a.xreplace(point), b.xreplace(point)
            if av.is_Rational and bv.is_Rational:
                if av != bv:
                    return True
                continue
            fa, fb = av.evalf(30), bv.evalf(30)
            if not (fa.is_number and fb.is_number and fa.is_finite and fb.is_finite):
                continue
            if bool(abs(fa - fb) > _PROBE_TOLERANCE * (1 + abs(fa) + abs(fb))):
                return True
        except (TypeError, ValueError, ArithmeticError):
            continue  # a pole or an unevaluable point proves nothing
    return False


def _equal(a: sympy.Expr, b: sympy.Expr) -> bool:
    difference = a - b
    if difference == 0:
        return True
    if difference.is_Rational or _clearly_differ(a, b):
        return False
    return sympy.simplify(difference) == 0


def _ratio_is_constant(a: sympy.Expr, b: sympy.Expr, positive: bool) -> bool:
    if b == 0:
        return False
    ratio = sympy.simplify(a / b)
    if ratio.free_symbols or not ratio.is_number or ratio.is_zero is not False or not ratio.is_finite:
        return False
    return bool(ratio.is_positive) if positive else True


def _same_roots(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Two polynomial equations in one variable with the same solution set (over C)."""
    symbols = a.free_symbols | b.free_symbols
    if len(symbols) != 1:
        return False
    (symbol,) = symbols
    if not (a.is_polynomial(symbol) and b.is_polynomial(symbol)):
        return False
    pa, pb = sympy.Poly(a, symbol), sympy.Poly(b, symbol)
    if not (1 <= pa.degree() <= 100 and 1 <= pb.degree() <= 100):
        return False
    # Equal root sets <=> equal square-free parts, up to a constant factor.
    return bool(pa.sqf_part().monic() == pb.sqf_part().monic())


def _relation_kind(rel: Relational) -> str:
    """`=`, `!=`, `<` or `<=`: what the relation says of its difference (see _relation_form)."""
    if isinstance(rel, sympy.Eq):
        return "="
    if isinstance(rel, sympy.Ne):
        return "!="
    return "<" if isinstance(rel, (sympy.Lt, sympy.Gt)) else "<="


def _relation_form(rel: Relational) -> tuple[str, sympy.Expr]:
    """(kind, d) with the relation meaning `d = 0`, `d != 0`, `d > 0` or `d >= 0`."""
    kind, lhs, rhs = _relation_kind(rel), rel.lhs, rel.rhs
    if kind in ("=", "!=") or isinstance(rel, (sympy.Gt, sympy.Ge)):
        return kind, lhs - rhs
    return kind, rhs - lhs


def _relations_equivalent(a: Relational, b: Relational) -> bool:
    kind_a, da = _relation_form(a)
    kind_b, db = _relation_form(b)
    if kind_a != kind_b:
        return False
    if _equal(da, db):
        return True
    if kind_a in ("=", "!="):
        return _equal(da, -db) or _ratio_is_constant(da, db, positive=False) or _same_roots(da, db)
    return _ratio_is_constant(da, db, positive=True)


def _numbers_close(a: sympy.Expr, b: sympy.Expr, tol: float) -> bool:
    fa, fb = a.evalf(30), b.evalf(30)
    if not (fa.is_finite and fb.is_finite):
        return False
    gap = abs(fa - fb)
    return bool(gap <= tol * abs(fa) or gap <= tol * abs(fb))


def _unify_symbols(a: sympy.Basic, b: sympy.Basic) -> tuple[sympy.Basic, sympy.Basic]:
    """Let parsed plain symbols match same-named symbols that carry assumptions."""
    in_a = {s.name: s for s in a.free_symbols if isinstance(s, sympy.Symbol)}
    in_b = {s.name: s for s in b.free_symbols if isinstance(s, sympy.Symbol)}
    to_a: dict[sympy.Basic, sympy.Basic] = {}
    to_b: dict[sympy.Basic, sympy.Basic] = {}
    for name in in_a.keys() & in_b.keys():
        sa, sb = in_a[name], in_b[name]
        if sa == sb:
            continue
        if sa == sympy.Symbol(name):
            to_a[sa] = sb
        elif sb == sympy.Symbol(name):
            to_b[sb] = sa
    return a.xreplace(to_a), b.xreplace(to_b)


def equivalent(a: sympy.Basic, b: sympy.Basic, *, tol: float = 0, timeout_s: float = 2.0) -> bool:
    """Whether two parsed values say the same thing; False when undecided within timeout_s.

    Expressions are equal when their difference simplifies to 0. Relations of the same kind
    are equal when their sides' differences agree up to sign (or a constant factor, positive
    for inequalities), or, for one-variable polynomial equations, when the solution sets
    agree. With tol > 0, numbers compare by relative tolerance.

    Cheap exact checks run in the calling process; SymPy's simplification runs in a worker
    process (``synth._bounded``) that is killed once it has used ``timeout_s`` CPU seconds, or
    ``2 * timeout_s + 0.5`` wall seconds on a starved machine, so nothing keeps running after
    the answer. The first call in a process starts the worker (about 0.5 s, not counted in
    timeout_s); a call after a timeout starts a fresh one.

    >>> x = sympy.Symbol("x")
    >>> equivalent(2 * (x + 1), 2 * x + 2)
    True
    """
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    if not (isinstance(a, sympy.Basic) and isinstance(b, sympy.Basic)):
        raise TypeError("equivalent compares sympy values; parse text with parse_math first")
    a, b = _unify_symbols(a, b)
    if a == b:
        return True
    if isinstance(a, Relational) or isinstance(b, Relational):
        if not (isinstance(a, Relational) and isinstance(b, Relational)):
            return False
        if _relation_kind(a) != _relation_kind(b):
            return False
        return _bounded(_relations_equivalent, a, b, seconds=timeout_s)
    if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)):
        return False
    if tol > 0 and a.is_number and b.is_number:
        if a.is_Rational and b.is_Rational:  # exact: evalf is one division each
            return _numbers_close(a, b, tol)
        return _bounded(_numbers_close, a, b, tol, seconds=timeout_s)
    if _small(a, b):  # _equal's first two exits, which need no simplification
        difference = a - b
        if difference == 0:
            return True
        if difference.is_Rational:
            return False
    return _bounded(_equal, a, b, seconds=timeout_s)
