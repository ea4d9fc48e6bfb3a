"""Linear equations in x written and solved the school way (angle problems with algebraic labels)."""

from __future__ import annotations

import sympy

from synth.generators import expr as E
from synth.generators.base import Derivation, StepDraft

X = sympy.Symbol("x")


def lin_text(p: int, q: int, latex: bool = False) -> str:
    """``3x + 10``, ``x − 5``, ``2x``, ``40``."""
    minus = "-" if latex else "−"
    if p == 0:
        return str(q).replace("-", minus)
    head = "x" if p == 1 else f"{p}x"
    if q == 0:
        return head
    return f"{head} + {q}" if q > 0 else f"{head} {minus} {-q}"


def lin_sum(forms: list[tuple[int, int]], latex: bool = False) -> str:
    """Forms added up, each with a constant bracketed after the first: ``2x + (x + 20) + 65``."""
    parts = []
    for i, (p, q) in enumerate(forms):
        t = lin_text(p, q, latex)
        if i and p and q:
            t = rf"\left({t}\right)" if latex else f"({t})"
        parts.append(t)
    return " + ".join(parts)


def eq_step(d: Derivation, rule: str, lhs: str, lhs_latex: str, lhs_value: sympy.Expr, rhs: str, rhs_latex: str,
            rhs_value: sympy.Expr, result: sympy.Basic | None = None) -> None:
    d.add(StepDraft(rule=rule, value=sympy.Eq(lhs_value, rhs_value, evaluate=False), text=f"{lhs} = {rhs}",
                    latex=f"{lhs_latex} = {rhs_latex}", result=result))


def solve_linear(d: Derivation, left: list[tuple[int, int]], right: list[tuple[int, int]], first_rule: str) -> None:
    """Write and solve ``sum(left) = sum(right)`` the school way: collect, move, divide.

    Step 1 shows the equation as set up from the figure; x ends on the left with a positive
    coefficient (sides are swapped in the set-up if needed).
    """
    def total(forms: list[tuple[int, int]]) -> sympy.Expr:
        return sum((p * X + q for p, q in forms), sympy.Integer(0))

    eq_step(d, first_rule, lin_sum(left), lin_sum(left, True), total(left),
            lin_sum(right), lin_sum(right, True), total(right))
    p_l, q_l = sum(f[0] for f in left), sum(f[1] for f in left)
    p_r, q_r = sum(f[0] for f in right), sum(f[1] for f in right)
    if lin_sum(left) != lin_text(p_l, q_l) or len(right) > 1:
        q_l = int(d.compute(sympy.Integer(q_l)))
        eq_step(d, "collect_like_terms", lin_text(p_l, q_l), lin_text(p_l, q_l, True), p_l * X + q_l,
                lin_text(p_r, q_r), lin_text(p_r, q_r, True), p_r * X + q_r, sympy.Integer(q_l))
    if p_r:  # x on both sides: move the x terms left and the numbers right
        e_l, e_r = f"{lin_text(p_l, 0)} − {lin_text(p_r, 0)}", rf"{lin_text(p_l, 0)} - {lin_text(p_r, 0)}"
        n_t = f"{q_r} − {q_l}" if q_l >= 0 else f"{q_r} + {-q_l}"
        n_l = f"{q_r} - {q_l}" if q_l >= 0 else f"{q_r} + {-q_l}"
        eq_step(d, "move_terms", e_l, e_r, (p_l - p_r) * X, n_t, n_l, sympy.Integer(q_r - q_l))
        p = int(d.compute(sympy.Integer(p_l - p_r)))
        rhs = d.compute(sympy.Integer(q_r - q_l))
        eq_step(d, "simplify", lin_text(p, 0), lin_text(p, 0, True), p * X, E.num_text(rhs), E.num_latex(rhs),
                rhs, rhs)
    else:
        p = p_l
        if q_l:
            n_t = f"{q_r} − {q_l}" if q_l > 0 else f"{q_r} + {-q_l}"
            n_l = f"{q_r} - {q_l}" if q_l > 0 else f"{q_r} + {-q_l}"
            eq_step(d, "subtract_from_both_sides", lin_text(p, 0), lin_text(p, 0, True), p * X, n_t, n_l,
                    sympy.Integer(q_r - q_l))
        rhs = d.compute(sympy.Integer(q_r - q_l))
        if q_l:
            eq_step(d, "simplify", lin_text(p, 0), lin_text(p, 0, True), p * X, E.num_text(rhs), E.num_latex(rhs),
                    rhs, rhs)
    if p != 1:
        eq_step(d, "divide_both_sides", "x", "x", X, f"{E.num_text(rhs)} ÷ {p}", rf"{E.num_latex(rhs)} \div {p}",
                rhs / p)
        x = d.compute(rhs / p)
        eq_step(d, "divide", "x", "x", X, E.num_text(x), E.num_latex(x), x, x)
