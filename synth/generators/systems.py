"""Two linear equations in two unknowns, solved by elimination or by substitution."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators import terms as T
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number, latex_number
from synth.polynomials import Expansion, expand_difference, expand_exact, rational_part

_VARS = (("x", "y"), ("a", "b"), ("m", "n"), ("p", "q"), ("s", "t"))
# A linear form a·u + b·v + c as exact numbers: what an equation line says once moved to one side.
Form = tuple[Fraction, Fraction, Fraction]


# -- reading lines as linear forms (the verifier's hook) -------------------------------------

def _frac(v: sympy.Basic) -> Fraction | None:
    return Fraction(int(v.p), int(v.q)) if isinstance(v, sympy.Rational) else None


def linear_form(expr: sympy.Basic, u: sympy.Symbol, v: sympy.Symbol) -> Form | None:
    """(a, b, c) with ``expr == a·u + b·v + c``, or None when expr is not linear in u and v."""
    # SymPy already distributes number × sum, so most lines need no expand; try without first.
    form = _collect(expr.as_coefficients_dict(), u, v)
    if form is not None:
        return form
    # Then exact integer arithmetic (a sum of squares, `3(x + 2y)`): ~12x cheaper than sympy.expand, measured.
    expansion = expand_exact(expr, (u, v))
    return _sympy_linear_form(expr, u, v) if expansion is None else _linear_part(expansion)


def _sympy_linear_form(expr: sympy.Basic, u: sympy.Symbol, v: sympy.Symbol) -> Form | None:
    """``linear_form`` through sympy.expand: any expression, also outside synth.polynomials' fragment."""
    return _collect(sympy.expand(expr).as_coefficients_dict(), u, v)


def _linear_part(expansion: Expansion) -> Form | None:
    """The (a, b, c) of an exact expansion in (u, v), or None when a square root or a higher power is left."""
    if not expansion.rational or any(sum(mono) > 1 for mono in expansion.terms):
        return None
    return tuple(rational_part(expansion.terms.get(mono, {})) for mono in ((1, 0), (0, 1), (0, 0)))  # type: ignore[return-value]


def _collect(coeffs: Mapping[sympy.Basic, sympy.Basic], u: sympy.Symbol, v: sympy.Symbol) -> Form | None:
    out = {u: Fraction(0), v: Fraction(0), sympy.Integer(1): Fraction(0)}
    for term, c in coeffs.items():
        f = _frac(c)
        if term not in out or f is None:
            return None
        out[term] = f
    return out[u], out[v], out[sympy.Integer(1)]


@lru_cache(maxsize=4096)
def equation_parts(value: sympy.Basic, u: sympy.Symbol, v: sympy.Symbol) -> tuple[Form, ...] | None:
    """The linear equations a line states: one for ``3x + 2y = 12``, each part of ``x = 3 and y = 2``.

    ``synth.verification.parse_both`` writes an `and` line as a sum of squares equal to 0; its
    squared bases are the parts. None for anything else (an expression, a nonlinear equation).
    """
    if not isinstance(value, sympy.Eq):
        return None
    # lhs − rhs expanded exactly without building it in sympy; the sympy route outside the fragment.
    expansion = expand_difference(value.lhs, value.rhs, (u, v))
    form = linear_form(value.lhs - value.rhs, u, v) if expansion is None else _linear_part(expansion)
    if form is not None:
        return (form,)
    if value.rhs != 0 or not isinstance(value.lhs, sympy.Add):
        return None
    parts = []
    for term in value.lhs.args:
        if not (isinstance(term, sympy.Pow) and term.exp == 2):
            return None
        form = linear_form(term.base, u, v)
        if form is None:
            return None
        parts.append(form)
    return tuple(parts)


Row = tuple[int, int, int]  # a Form scaled to whole numbers: the same line, so the same span


def integer_row(form: Form) -> Row:
    """``form`` times the lcm of its denominators: the same span, and rank tests in whole numbers are cheaper."""
    k = math.lcm(*(c.denominator for c in form))
    return tuple(int(c * k) for c in form)  # type: ignore[return-value]


def _rank(rows: Sequence[Form] | Sequence[Row]) -> int:
    """Rank of 3-vectors over the rationals: minors for up to three rows, elimination beyond (exact)."""
    rows = [r for r in rows if any(r)]
    if len(rows) > 3:
        return _rank_by_elimination([tuple(Fraction(c) for c in r) for r in rows])
    if not rows:
        return 0
    if not any(_minor(r, q, i, j) for k, r in enumerate(rows) for q in rows[k + 1:] for i, j in _COLUMN_PAIRS):
        return 1
    if len(rows) < 3:
        return 2
    (a, b, c), (d, e, f), (g, h, i) = rows
    return 3 if a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) else 2


_COLUMN_PAIRS = ((0, 1), (0, 2), (1, 2))


def _minor(r: Sequence, q: Sequence, i: int, j: int) -> bool:
    return r[i] * q[j] != r[j] * q[i]


def _rank_by_elimination(rows: Sequence[Form]) -> int:
    """Rank of any number of 3-vectors over the rationals (Gaussian elimination, exact)."""
    m = [list(r) for r in rows]
    rank, col = 0, 0
    while rank < len(m) and col < 3:
        pivot = next((i for i in range(rank, len(m)) if m[i][col] != 0), None)
        if pivot is None:
            col += 1
            continue
        m[rank], m[pivot] = m[pivot], m[rank]
        for i in range(len(m)):
            if i != rank and m[i][col] != 0:
                k = m[i][col] / m[rank][col]
                m[i] = [a - k * b for a, b in zip(m[i], m[rank])]
        rank += 1
        col += 1
    return rank


def in_span(form: Form | Row, basis: Sequence[Form] | Sequence[Row]) -> bool:
    return _rank([*basis, form]) == _rank(basis)


@lru_cache(maxsize=16384)
def follows(form: Row, previous: tuple[Row, ...], pool: tuple[Row, ...]) -> bool:
    """A linear combination of one previous part and at most one other line (or question equation).

    Cached: the variants of one problem repeat the clean lines, so the same questions recur.
    """
    for p in previous:
        if in_span(form, [p]):
            return True
        if any(in_span(form, [p, o]) for o in pool):
            return True
    return False


# -- writing ---------------------------------------------------------------------------------

def _side(coefs: Sequence[int], names: Sequence[str]) -> list[T.Piece]:
    pieces = [T.mono(c, n) for c, n in zip(coefs, names) if c != 0]
    return pieces or [T.num(0)]


def _neg_num(c: sympy.Basic) -> T.Piece:
    """``− c`` as written after a minus: ``− 9`` or ``− (−9)``."""
    c = sympy.Rational(c)
    if c >= 0:
        return T.num(-c)
    return T.raw(-c, f"({format_number(c)})", rf"\left({latex_number(c)}\right)", negative=True)


def _times(k: sympy.Basic, v: sympy.Basic) -> T.Piece:
    """``k × v`` as a pupil writes a substitution: ``2 × 3``, ``2 × (−3)``, ``(−2) × 3`` keeps the sign outside."""
    k, v = sympy.Rational(k), sympy.Rational(v)
    if abs(k) == 1:
        return T.num(k * v)
    vt = format_number(v) if v >= 0 else f"({format_number(v)})"
    vl = latex_number(v) if v >= 0 else rf"\left({latex_number(v)}\right)"
    return T.raw(k * v, f"{format_number(abs(k))} × {vt}", rf"{latex_number(abs(k))} \times {vl}", negative=k < 0)


def both(names: Sequence[str], values: Sequence[sympy.Basic]) -> sympy.Basic:
    """``u = p and v = q`` as ``synth.verification.parse_both`` reads it: one equation, the same point."""
    squares = [sympy.Pow(sympy.Symbol(n) - val, 2) for n, val in zip(names, values)]
    return sympy.Eq(sympy.Add(*squares, evaluate=False), 0, evaluate=False)


def _both_step(d: Derivation, rule: str, names: Sequence[str], values: Sequence[sympy.Basic],
               result: sympy.Basic | None) -> None:
    text = " and ".join(f"{n} = {format_number(v)}" for n, v in zip(names, values))
    latex = r" \text{ and } ".join(f"{n} = {latex_number(v)}" for n, v in zip(names, values))
    d.add(StepDraft(rule=rule, value=both(names, values), text=text, latex=latex, result=result))


def _eq(d: Derivation, rule: str, left: list[T.Piece], right: list[T.Piece], result: sympy.Basic | None = None) -> None:
    T.add_relation(d, rule, left, "=", right, result)


_MAL = (
    MalRule("combine_right_side_wrongly", "invalid_inference",
            "combines the left sides of the two equations correctly but the right-hand numbers with the opposite "
            "operation"),
    MalRule("distribute_first_term_only", "formula_misuse",
            "substitutes the expression but multiplies only its first term by the coefficient"),
    MalRule("scale_left_side_only", "formula_misuse",
            "multiplies the left side of an equation to match coefficients but leaves the right side unchanged"),
)


# Per difficulty: how the system is built and solved (matched: one coefficient the same or opposite, so adding
# or subtracting eliminates; substitution: the second equation gives v; scaled: elimination after multiplying)
# and the largest solution value.
_LEVELS = {"easy": ("matched", 6), "medium": ("substitution", 8), "hard": ("scaled", 10)}


@register
class TwoEquations(Family):
    """easy: elimination, one pair of coefficients already equal or opposite; medium: substitution into
    ``v = mu + k``; hard: elimination after scaling both equations.

    A line here is a separate equation that holds at the solution, not a restatement of one value,
    so ``judge_step`` checks linear forms: a line follows when it is a combination of the line
    before and at most one other line or question equation, and it is correct when it holds at
    the solution. The last line states both values (``x = 3 and y = 2``).
    """

    id = "algebra.systems.two_equations"
    domain = "algebra"
    subdomain = "systems_of_equations"
    grade_band = "8-10"
    question_types = ("free", "mcq", "fill")
    malrules = _MAL

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        names = list(_VARS[int(rng.integers(len(_VARS)))])
        kind, span = _LEVELS[difficulty]
        while True:
            sol = [int(rng.integers(-span, span + 1)) for _ in range(2)]
            if 0 in sol:
                continue
            if kind == "matched":
                a1, a2 = (int(rng.integers(1, 7)) for _ in range(2))
                b1 = int(rng.integers(1, 7))
                b2 = b1 * int(rng.choice([-1, 1]))
                if a1 == a2 and b1 == b2:
                    continue
                if rng.random() < 0.5:
                    b1, b2 = -b1, -b2
            elif kind == "substitution":  # v = m·u + k is the second equation
                a1, b1 = int(rng.integers(1, 8)), int(rng.integers(2, 7)) * int(rng.choice([-1, 1]))
                m, k = int(rng.integers(-4, 5)), int(rng.integers(-9, 10))
                sol[1] = m * sol[0] + k
                if m == 0 or k == 0 or sol[1] == 0 or a1 + b1 * m == 0:
                    continue
                a2, b2 = -m, 1
            else:
                a1, a2 = (int(rng.integers(2, 10)) * int(rng.choice([-1, 1])) for _ in range(2))
                b1, b2 = int(rng.integers(2, 10)), int(rng.integers(2, 10)) * int(rng.choice([-1, 1]))
                if abs(b1) == abs(b2) or abs(a1) == abs(a2) or a1 * b2 == a2 * b1:
                    continue
            if a1 * b2 == a2 * b1:
                continue
            c1, c2 = a1 * sol[0] + b1 * sol[1], a2 * sol[0] + b2 * sol[1]
            method = "substitution" if kind == "substitution" else "elimination"
            return {"vars": names, "method": method, "eq1": [a1, b1, c1], "eq2": [a2, b2, c2]}

    # -- the problem and its answer --------------------------------------------------------

    def _symbols(self, params: dict[str, Any]) -> tuple[sympy.Symbol, sympy.Symbol]:
        u, v = params["vars"]
        return sympy.Symbol(u), sympy.Symbol(v)

    def _forms(self, params: dict[str, Any]) -> tuple[Form, Form]:
        return tuple((Fraction(a), Fraction(b), Fraction(-c)) for a, b, c in (params["eq1"], params["eq2"]))  # type: ignore[return-value]

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        u, v = self._symbols(params)
        squares = [sympy.Pow(a * u + b * v - c, 2) for a, b, c in (params["eq1"], params["eq2"])]
        return sympy.Eq(sympy.Add(*squares, evaluate=False), 0, evaluate=False)

    def solution(self, params: dict[str, Any]) -> tuple[sympy.Rational, sympy.Rational]:
        """Cramer's rule on the question's coefficients: no elimination, no substitution."""
        (a1, b1, c1), (a2, b2, c2) = params["eq1"], params["eq2"]
        det = a1 * b2 - a2 * b1
        return sympy.Rational(c1 * b2 - c2 * b1, det), sympy.Rational(a1 * c2 - a2 * c1, det)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        return both(params["vars"], self.solution(params))

    def answer_of(self, value: sympy.Basic) -> sympy.Basic:
        return value  # the whole `u = p and v = q` line is the answer

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        u, v = self._symbols(params)
        parts = equation_parts(answer, u, v)
        point = _point(parts) if parts else None
        if point is None:
            raise ValueError(f"{self.id}: {answer} does not state one value for each of {params['vars']}")
        names = params["vars"]
        return (" and ".join(f"{n} = {format_number(p)}" for n, p in zip(names, point)),
                r" \text{ and } ".join(f"{n} = {latex_number(p)}" for n, p in zip(names, point)))

    def judge_step(self, params: dict[str, Any], value: sympy.Basic, previous: sympy.Basic,
                   earlier: tuple[sympy.Basic, ...]) -> tuple[bool, bool] | None:
        u, v = self._symbols(params)
        parts = equation_parts(value, u, v)
        if parts is None:
            return False, False
        question = list(self._forms(params))
        before = tuple(map(integer_row, equation_parts(previous, u, v) or ()))
        pool = tuple(map(integer_row, question + [f for e in earlier for f in (equation_parts(e, u, v) or ())]))
        rows = [integer_row(p) for p in parts]
        if len(parts) == 1:
            local = follows(rows[0], before, pool)
        else:  # each stated value comes from lines already written
            local = all(follows(r, pool, pool) for r in rows)
        x0, y0 = (Fraction(int(s.p), int(s.q)) for s in self.solution(params))
        holds = all(a * x0 + b * y0 + c == 0 for a, b, c in parts)
        # An `and` line is the answer: it must pin down the point, not just hold there.
        pinned = len(parts) == 1 or _rank([(a, b, Fraction(0)) for a, b, _ in parts]) == 2
        return local, holds and pinned

    # -- working ---------------------------------------------------------------------------

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        method, hard = params["method"], _needs_scaling(params)
        applies = {"combine_right_side_wrongly": method == "elimination",
                   "distribute_first_term_only": method == "substitution" and abs(params["eq1"][1]) != 1,
                   "scale_left_side_only": method == "elimination" and hard}
        if not applies.get(rule, False):
            return None
        steps = self._worked(params, {}, rule)
        return steps if any(s.rule.startswith("mal:") for s in steps) else None

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        d = Derivation(overrides)
        if params["method"] == "substitution":
            u_value = self._substitute(d, params, mal)
        else:
            u_value = self._eliminate(d, params, mal)
        if u_value is None:
            return d.steps
        self._back_substitute(d, params, u_value)
        return d.steps

    def _eliminate(self, d: Derivation, params: dict[str, Any], mal: str | None) -> sympy.Basic | None:
        """Make the second unknown's coefficients equal in size, combine the equations, solve for the first."""
        names = params["vars"]
        (a1, b1, c1), (a2, b2, c2) = params["eq1"], params["eq2"]
        p, q = 1, 1
        if _needs_scaling(params):
            g = int(sympy.igcd(b1, b2))
            p, q = abs(b2) // g, abs(b1) // g
            # The mal-rule acts on the last equation rewritten, so every line after it carries the error.
            last = 2 if q != 1 else 1
            for which, (f, (a, b, c)) in enumerate(((p, (a1, b1, c1)), (q, (a2, b2, c2))), start=1):
                if f == 1:
                    continue
                scaled = d.compute(sympy.Integer(f * c))
                wrong = mal == "scale_left_side_only" and which == last
                _eq(d, "mal:scale_left_side_only" if wrong else "multiply_equation", _side([f * a, f * b], names),
                    [T.num(c if wrong else scaled)], scaled)
                if which == 1:
                    c1 = c if wrong else scaled
                else:
                    c2 = c if wrong else scaled
            a1, b1, a2, b2 = p * a1, p * b1, q * a2, q * b2
        add = b1 == -b2
        wrong = mal == "combine_right_side_wrongly"
        if add:
            left = _side([a1, b1], names) + _side([a2, b2], names)
            right = [T.num(c1), _neg_num(c2) if wrong else T.num(c2)]
        else:
            left = _side([a1, b1], names) + [T.group(_side([a2, b2], names), negative=True)]
            right = [T.num(c1), T.num(c2) if wrong else _neg_num(c2)]
        _eq(d, "mal:combine_right_side_wrongly" if wrong else ("add_equations" if add else "subtract_equations"),
            left, right)
        k = a1 + a2 if add else a1 - a2
        r = d.compute(sympy.Integer(c1 + c2 if add != wrong else c1 - c2))
        _eq(d, "simplify", _side([k], names[:1]), [T.num(r)], r)
        return _divide(d, names[0], sympy.Integer(k), r)

    def _substitute(self, d: Derivation, params: dict[str, Any], mal: str | None) -> sympy.Basic | None:
        """Put ``v = m·u + k`` into the first equation, expand, collect and solve for u."""
        u, v = params["vars"]
        a1, b1, c1 = params["eq1"]
        m, k = -params["eq2"][0], params["eq2"][2]
        inner = T.group(_side([m], [u]) + [T.num(k)])
        lead = str(abs(b1)) if abs(b1) != 1 else ""  # the coefficient written in front of the bracket
        bracket = T.raw(b1 * inner.value, lead + inner.text, lead + inner.latex, negative=b1 < 0)
        _eq(d, "substitute", [T.mono(a1, u), bracket], [T.num(c1)])
        first_only = mal == "distribute_first_term_only"
        bk = sympy.Integer(k if first_only else b1 * k)
        bk = d.compute(bk)
        _eq(d, "mal:distribute_first_term_only" if first_only else "expand_bracket",
            [T.mono(a1, u), T.mono(b1 * m, u), T.num(bk)], [T.num(c1)], bk)
        coef = d.compute(sympy.Integer(a1 + b1 * m))
        _eq(d, "collect_like_terms", _side([coef], [u]) + [T.num(bk)], [T.num(c1)], coef)
        _eq(d, "subtract_both_sides" if bk > 0 else "add_both_sides", _side([coef], [u]), [T.num(c1), T.num(-bk)])
        r = d.compute(sympy.Integer(c1) - bk)
        _eq(d, "simplify", _side([coef], [u]), [T.num(r)], r)
        return _divide(d, u, coef, r)

    def _back_substitute(self, d: Derivation, params: dict[str, Any], u_value: sympy.Basic) -> None:
        """Put the first value into an equation and solve for the second; state both."""
        u, v = params["vars"]
        if params["method"] == "substitution":
            m, k = -params["eq2"][0], params["eq2"][2]
            _eq(d, "substitute", [T.mono(1, v)], [_times(m, u_value), T.num(k)])
            v_value = d.compute(m * u_value + k)
            _both_step(d, "state_solution", (u, v), (u_value, v_value), v_value)
            return
        a1, b1, c1 = params["eq1"]
        _eq(d, "substitute", [_times(a1, u_value), T.mono(b1, v)], [T.num(c1)])
        moved = d.compute(a1 * u_value)
        _eq(d, "subtract_both_sides" if moved > 0 else "add_both_sides", [T.mono(b1, v)], [T.num(c1), T.num(-moved)],
            moved)
        r = d.compute(c1 - moved)
        _eq(d, "simplify", [T.mono(b1, v)], [T.num(r)], r)
        v_value = d.compute(r / b1)
        _both_step(d, "divide_and_state_solution", (u, v), (u_value, v_value), v_value)

    # -- question --------------------------------------------------------------------------

    def equations_text(self, params: dict[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
        names = params["vars"]
        out = []
        for which in ("eq1", "eq2"):
            a, b, c = params[which]
            if params["method"] == "substitution" and which == "eq2":  # v = m·u + k
                _, t, tex = T.line(_side([-a], names[:1]) + [T.num(c)])
                out.append((f"{names[1]} = {t}", f"{names[1]} = {tex}"))
                continue
            _, t, tex = T.line(_side([a, b], names))
            out.append((f"{t} = {format_number(sympy.Integer(c))}", f"{tex} = {latex_number(sympy.Integer(c))}"))
        return out[0], out[1]

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        (t1, l1), (t2, l2) = self.equations_text(params)
        u, v = params["vars"]
        return {**params, "first": t1, "second": t2, "u": u, "v": v,
                "latex": rf"\begin{{cases}} {l1} \\ {l2} \end{{cases}}"}


def _needs_scaling(params: dict[str, Any]) -> bool:
    b1, b2 = params["eq1"][1], params["eq2"][1]
    return params["method"] == "elimination" and abs(b1) != abs(b2)


def _divide(d: Derivation, name: str, k: sympy.Basic, r: sympy.Basic) -> sympy.Basic | None:
    """``k·u = r`` to ``u = r ÷ k`` to ``u = value``; None when k is 0 (only after an injected slip)."""
    if k == 0:
        return None
    if k == 1:
        return r
    k_text = format_number(k) if k > 0 else f"({format_number(k)})"
    # Unevaluated: `u = number` cannot evaluate to True or False, and asking sympy to try costs ~2 ms (cold).
    quotient = sympy.Eq(sympy.Symbol(name), r / k, evaluate=False)
    d.add(StepDraft(rule="divide_both_sides", value=quotient, text=f"{name} = {format_number(r)} ÷ {k_text}",
                    latex=rf"{name} = \frac{{{latex_number(r)}}}{{{latex_number(k)}}}"))
    value = d.compute(r / k)
    _eq(d, "simplify", [T.mono(1, name)], [T.num(value)], value)
    return value


def _point(parts: Sequence[Form]) -> tuple[sympy.Rational, sympy.Rational] | None:
    """The one point where every part holds, or None (no point, or a whole line of them)."""
    if len(parts) < 2 or _rank([(a, b, Fraction(0)) for a, b, _ in parts]) != 2:
        return None
    (a1, b1, c1), (a2, b2, c2) = parts[0], parts[1]
    det = a1 * b2 - a2 * b1
    if det == 0:
        return None
    x, y = (-c1 * b2 + c2 * b1) / det, (-a1 * c2 + a2 * c1) / det
    if any(a * x + b * y + c != 0 for a, b, c in parts):
        return None
    return sympy.Rational(x.numerator, x.denominator), sympy.Rational(y.numerator, y.denominator)
