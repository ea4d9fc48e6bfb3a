"""The single source of truth for labels: re-checks every shown step against the problem, given its family.

Core layer: it knows the family only through :class:`SolutionFamily` (what a generator family
offers), so it imports no generator. ``synth.verifier`` is the same API with the family looked up
by the problem's id for callers that have none at hand.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol

import sympy
from sympy.core.relational import Relational

from synth._bounded import call as bounded_call
from synth.equivalence import _clearly_differ
from synth.mathparse import MathParseError, equivalent, parse_math
from synth.polynomials import exact_form, expand_difference, monic_square_free, rational_part, to_sympy, univariate
from synth.presentation import ShownLine, Vocabulary, one_variable_relation, presentation_faults, read_line
from synth.records import Problem, Step


class SolutionFamily(Protocol):
    """What the verifier asks of a problem's family (``synth.generators.base.Family`` provides it all)."""

    def initial(self, params: dict[str, Any]) -> sympy.Basic: ...

    def target(self, params: dict[str, Any]) -> sympy.Basic: ...

    def answer_of(self, value: sympy.Basic) -> sympy.Basic: ...

    def judge_step(self, params: dict[str, Any], value: sympy.Basic, previous: sympy.Basic,
                   earlier: tuple[sympy.Basic, ...]) -> tuple[bool, bool] | None: ...

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None: ...


@dataclass(frozen=True)
class Verdict:
    """What the verifier found, independent of what an injector intended."""

    parses: tuple[bool, ...]        # the displayed text parses back to the step's value
    local_valid: tuple[bool, ...]   # follows from the previous line
    global_correct: tuple[bool, ...]  # consistent with the problem's true solution
    shown_answer: sympy.Basic | None
    answer_correct: bool
    # Per line, "" or the presentation subtype it shows (synth.presentation): right math, wrong words,
    # unit, form, variable name or place in the order.
    presentation: tuple[str, ...] = ()
    # The presentation fault of the line that states the answer (the last working line), "" when none.
    answer_presentation: str = ""
    # Per line, whether it is a reading step (rule ``read``): values read off the figure or the question,
    # judged on their own and outside the chain of computed lines (``propagated`` does not count them).
    reading: tuple[bool, ...] = ()

    @property
    def answer_fully_correct(self) -> bool:
        """The stated answer is right as the question asks for it: the number, its unit and the requested
        form (``180 h`` for 180 min, or ``6/10`` where the simplest fraction is asked for, is not correct).
        ``answer_correct`` is the number alone (``ErrorLabel.answer_changed`` is its negation)."""
        return self.answer_correct and self.answer_presentation not in ANSWER_FORM_FAULTS

    def _misshown(self, i: int) -> bool:
        return i <= len(self.presentation) and bool(self.presentation[i - 1])

    @property
    def first_error_step(self) -> int | None:
        math = next((i for i, ok in enumerate(self.global_correct, start=1) if not ok), None)
        if math is None:
            math = next((i for i, ok in enumerate(self.local_valid, start=1) if not ok), None)
        shown = next((i for i in range(1, len(self.presentation) + 1) if self._misshown(i)), None)
        found = [i for i in (math, shown) if i is not None]
        return min(found) if found else None

    @property
    def error_steps(self) -> tuple[int, ...]:
        """Steps that are locally invalid, globally wrong or wrongly presented (1-based)."""
        return tuple(i for i, (loc, glob) in enumerate(zip(self.local_valid, self.global_correct), start=1)
                     if not (loc and glob) or self._misshown(i))

    @property
    def propagated(self) -> bool:
        """Every computed line from the first wrong one on carries the error forward (stays wrong); reading steps
        are not lines of the chain (a wrong reading starts it, a right one neither breaks nor carries it)."""
        lines = [i for i in range(1, len(self.global_correct) + 1)
                 if not (i <= len(self.reading) and self.reading[i - 1])]
        math = next((i for i in lines if not self.global_correct[i - 1]), None)  # as first_error_step, on the lines
        if math is None:
            math = next((i for i in lines if not self.local_valid[i - 1]), None)
        found = [i for i in (math, next((i for i in lines if self._misshown(i)), None)) if i is not None]
        first = min(found) if found else None
        if first is None:
            return False
        return all(not self.global_correct[i - 1] or self._misshown(i) for i in lines if i >= first)

    @property
    def fully_correct(self) -> bool:
        return (all(self.parses) and all(self.local_valid) and all(self.global_correct) and self.answer_correct
                and not any(self.presentation))


# Presentation faults of the answer line that make the answer itself wrong as asked: its unit, its requested form.
ANSWER_FORM_FAULTS = frozenset({"incorrect_units", "format_ignored"})


def same_value(a: sympy.Basic, b: sympy.Basic) -> bool:
    """Equal numbers or expressions; equations and inequalities are equal when they have the same solution set."""
    if isinstance(a, _ORDER) or isinstance(b, _ORDER):
        return isinstance(a, _ORDER) and isinstance(b, _ORDER) and _same_inequality(a, b)
    if isinstance(a, sympy.Eq) or isinstance(b, sympy.Eq):
        if not (isinstance(a, sympy.Eq) and isinstance(b, sympy.Eq)):
            return False
        if a == b:
            return True
        ka, kb = _polynomial_key(a), _polynomial_key(b)
        if ka is not None and kb is not None:
            return ka == kb
        ma, mb = _multivariate_key(a), _multivariate_key(b)
        if ma is not None and mb is not None:
            return ma == mb
        return _solutions(a) == _solutions(b)
    if a == b:
        return True
    exact = _exact_equal(a, b)
    if exact is not None:
        return exact
    # Each line is compared with the line before and with the question, so expanding each value
    # once (cached) and comparing the expansions settles the usual case, equal values, cheaply.
    # expand(a) == expand(b) implies expand(a - b) == 0; otherwise the original test decides.
    if _expanded(a) == _expanded(b):
        return True
    diff = sympy.expand(a - b)
    return diff == 0


@lru_cache(maxsize=8192)
def _expanded(value: sympy.Basic) -> sympy.Basic:
    return sympy.expand(value)


def _exact_equal(a: sympy.Basic, b: sympy.Basic) -> bool | None:
    """``sympy.expand(a − b) == 0`` by synth.polynomials' exact expansion, or None outside its fragment.

    A chain-rule line such as ``30x(3x^2 + 2)^4`` costs sympy.expand about 5 ms when new and the
    exact route about 0.15 ms (measured on four such lines). Each side's expansion is canonical
    (rational coefficients of i^e·√n, n square-free; π an indeterminate) and cached, so the forms
    are equal exactly when a and b are equal polynomials, which is when sympy.expand(a − b) is 0;
    tests/test_fast_paths.py checks the two against each other. Anything else (division by a
    variable, floats, e, functions, symbols that print alike, degree past 12) gives None and takes
    the sympy route as before.
    """
    if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)):
        return None
    fa = exact_form(a, _MAX_VARIABLES)
    fb = exact_form(b, _MAX_VARIABLES) if fa is not None else None
    return None if fb is None else fa == fb


_ORDER = (sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)


def _same_inequality(a: Relational, b: Relational) -> bool:
    if a == b:
        return True
    ka, kb = _interval_key(a), _interval_key(b)
    if ka is not None and kb is not None:
        return ka == kb
    return equivalent(a, b)


@lru_cache(maxsize=4096)
def _interval_key(rel: Relational) -> tuple[bool, bool, sympy.Basic] | None:
    """The solution set of a linear inequality in one variable: (strict, points right?, boundary).

    `3x − 6 < 6`, `3x < 12` and `4 > x` all give (True, False, 4): dividing by a negative
    number flips the direction, so a step that forgets to flip gets a different key. Like
    `_polynomial_key` it ignores the variable's name. None for anything else.
    """
    free = rel.free_symbols
    if len(free) != 1:
        return None
    (symbol,) = free
    # d > 0 (or d >= 0) says the same as the relation.
    d = sympy.expand(rel.rhs - rel.lhs if isinstance(rel, (sympy.Lt, sympy.Le)) else rel.lhs - rel.rhs)
    if not d.is_polynomial(symbol):
        return None
    poly = sympy.Poly(d, symbol)
    if poly.degree() != 1 or not all(c.is_Rational for c in poly.all_coeffs()):
        return None
    k, m = poly.all_coeffs()
    return isinstance(rel, (sympy.Lt, sympy.Gt)), bool(k > 0), -m / k


@lru_cache(maxsize=4096)
def _polynomial_key(eq: sympy.Eq) -> tuple[sympy.Basic, ...] | None:
    """The solution set of a one-variable polynomial equation, cheaply: its monic square-free part.

    Two such equations have the same roots (over C, as sympy.solve reports them) exactly when
    these agree. None for anything else (constants, several variables, rational functions),
    which then goes through sympy.solve as before. Linear equations skip the square-free step.
    Like the solve route, the key ignores the variable's name (`x = 3` matches `y = 3`), which
    is what lets a renamed variable count as the same solution.
    """
    fast = _exact_polynomial_key(eq)
    return _sympy_polynomial_key(eq) if fast is _UNDECIDED else fast  # type: ignore[return-value]


def _sympy_polynomial_key(eq: sympy.Eq) -> tuple[sympy.Basic, ...] | None:
    """`_polynomial_key` by sympy.expand and sympy.Poly: any polynomial SymPy can write."""
    free = eq.free_symbols
    if len(free) != 1:
        return None
    (symbol,) = free
    diff = sympy.expand(eq.lhs - eq.rhs)
    if not diff.is_polynomial(symbol):
        return None
    poly = sympy.Poly(diff, symbol)
    if poly.degree() < 1:
        return None
    if not all(c.is_Rational for c in poly.all_coeffs()):
        return _surd_key(diff, symbol, poly)
    if poly.degree() == 1:
        c1, c0 = poly.all_coeffs()
        return (sympy.Integer(1), c0 / c1)
    return tuple(poly.sqf_part().monic().all_coeffs())


_UNDECIDED = object()


def _exact_polynomial_key(eq: sympy.Eq) -> tuple[sympy.Basic, ...] | None | object:
    """`_polynomial_key` without sympy.expand and sympy.Poly, or _UNDECIDED outside synth.polynomials' reach.

    The same key, much cheaper: the polynomial is expanded exactly with surd coefficients and its
    monic square-free part taken there. The two routes agree because both keys are the unique
    monic square-free part, written as SymPy numbers in canonical form (what `sympy.expand`
    makes of the extension route's coefficients); tests/test_polynomials.py checks them against
    each other. An equation without a variable is a constant (None), as on the sympy route; one
    with two leaves the fragment.
    """
    expansion = expand_difference(eq.lhs, eq.rhs, discover=1)
    if expansion is None:
        return _UNDECIDED
    coeffs = univariate(expansion)
    if len(coeffs) < 2:
        return None
    monic = monic_square_free(coeffs)
    if monic is None:
        return _UNDECIDED
    return tuple(to_sympy(c) for c in monic)


def _surds_only(value: sympy.Basic) -> bool:
    """A number built from rationals, i and square roots of integers, nothing else."""
    return all(a.is_Rational or a is sympy.I for a in value.atoms()) and \
        all(p.exp == sympy.S.Half and p.base.is_Integer for p in value.atoms(sympy.Pow))


def _surd_key(diff: sympy.Expr, symbol: sympy.Symbol, poly: sympy.Poly) -> tuple[sympy.Basic, ...] | None:
    """`_polynomial_key` for coefficients with square roots (`(x − 2 − √3)(x + 2 + √3) = 0`, a wrong root pair).

    The square-free monic part is computed exactly over the field the roots generate, and its
    coefficients, expanded, are rational combinations of square roots of square-free integers (and
    i): such a combination is written one way only, so equal keys mean equal solution sets and
    different keys different ones, without the sympy.solve this otherwise costs (~10x slower).
    Anything else (nested roots, π) gives None and goes to sympy.solve as before.
    """
    if not all(_surds_only(c) for c in poly.all_coeffs()):
        return None
    try:
        monic = sympy.Poly(diff, symbol, extension=True).sqf_part().monic()
    except (sympy.PolynomialError, sympy.polys.polyerrors.DomainError, NotImplementedError):
        return None
    key = tuple(sympy.expand(c) for c in monic.all_coeffs())
    return key if all(_surds_only(c) for c in key) else None


@lru_cache(maxsize=4096)
def _multivariate_key(eq: sympy.Eq) -> frozenset[tuple[tuple[tuple[str, int], ...], Fraction]] | None:
    """What `_solutions` compares for an equation in several variables (the printed expansion of
    lhs − rhs), as exact terms: {((variable name, power), ...), coefficient}.

    Equal keys exactly when the printed expansions are equal: an expansion with rational
    coefficients is canonical, and printing names a variable by its name alone. None outside
    synth.polynomials' fragment, with square roots, fewer than two variables or variables with
    assumptions; `_solutions` decides those.
    """
    expansion = expand_difference(eq.lhs, eq.rhs, discover=_MAX_VARIABLES)
    if expansion is None or len(expansion.symbols) < 2 or not expansion.rational:
        return None
    if any(s.assumptions0 != _PLAIN for s in expansion.symbols):
        return None
    names = [s.name for s in expansion.symbols]
    return frozenset((tuple(sorted((n, k) for n, k in zip(names, mono) if k)), rational_part(c))
                     for mono, c in expansion.terms.items())


_MAX_VARIABLES = 6
_PLAIN = {"commutative": True}  # a Symbol("x") without assumptions


@lru_cache(maxsize=4096)
def _solutions(eq: sympy.Eq) -> tuple[object, ...]:
    free = sorted(eq.free_symbols, key=lambda s: s.name)
    if not free:
        return ("true",) if bool(sympy.simplify(eq.lhs - eq.rhs) == 0) else ("false",)
    if len(free) == 1:
        sols = sympy.solve(sympy.expand(eq.lhs - eq.rhs), free[0])
        return tuple(sorted(str(s) for s in sols))
    return (str(sympy.expand(eq.lhs - eq.rhs)),)


@lru_cache(maxsize=16384)
def parse_step(text: str) -> sympy.Basic:
    """What a shown step says: parse_math, plus equations joined by `or` (one variable) or `and`.

    A worded prefix (``Sum: ``) and a trailing unit from ``synth.presentation.UNITS`` (``345 cm``)
    are read off first; the presentation checker judges them. Cached like parse_math (the lines of
    one problem are read again for each of its variants); refusals raise and are not cached.
    """
    text = read_line(text).math
    if " or " in text:
        return parse_either(text)
    return parse_both(text) if " and " in text else parse_math(text)


def parse_both(text: str) -> sympy.Basic:
    """`x = 3 and y = 2` as `(x − 3)^2 + (y − 2)^2 = 0`: over the reals, the same solution set.

    The sum of squares is to `and` what `parse_either`'s product is to `or`: one parseable
    equation whose real solutions are exactly the points where every part holds.
    """
    parts = [parse_math(part) for part in text.split(" and ")]
    if not all(isinstance(p, sympy.Eq) for p in parts):
        raise MathParseError("every part joined by 'and' must be an equation")
    squares = sympy.Add(*(sympy.Pow(p.lhs - p.rhs, 2) for p in parts), evaluate=False)
    return sympy.Eq(squares, 0, evaluate=False)


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


ANSWER_TIMEOUT_S = 2.0  # CPU seconds SymPy may spend on one answer in the worker process


def equal_answers(answer: sympy.Basic, truth: sympy.Basic, *, timeout_s: float = ANSWER_TIMEOUT_S) -> bool:
    """simplify(answer - truth) == 0, with exact cheap exits before simplify; False when undecided.

    The answer may be a model's text (eval's verifier models), so only bounded work runs here:
    the exact comparisons, and expanding and probing values small enough for them
    (``_within_inline_reach``). simplify, and the expansion of anything bigger (a reply's
    ``(x + y + z + w)^1000``), run in synth._bounded's worker process, killed after ``timeout_s``
    CPU seconds; an answer not decided by then counts as not equal.
    """
    if isinstance(answer, Relational) or isinstance(truth, Relational):
        return isinstance(answer, Relational) and isinstance(truth, Relational) and same_value(answer, truth)
    # Before building answer − truth: SymPy's subtraction of two expanded polynomials costs more
    # than the exact comparison, which decides (equal or not) every polynomial answer.
    exact = _exact_equal(answer, truth)
    if exact is not None:
        return exact
    diff = answer - truth
    if diff == 0:
        return True
    if diff.is_Rational:
        return False
    if not (_within_inline_reach(answer) and _within_inline_reach(truth)):
        return bounded_call(_equal_by_sympy, answer, truth, True, cpu_s=timeout_s) is True
    if _expanded(answer) == _expanded(truth) or sympy.expand(diff) == 0:
        return True
    # Exact (or 30-digit) values that differ at a probe point prove the answers differ: skip simplify.
    if _clearly_differ(answer, truth):
        return False
    return bounded_call(_equal_by_sympy, answer, truth, False, cpu_s=timeout_s) is True


def _equal_by_sympy(answer: sympy.Expr, truth: sympy.Expr, expand_and_probe: bool) -> bool:
    """equal_answers' SymPy steps, run in the worker process: expand and probe (unless done already), simplify."""
    diff = answer - truth
    if expand_and_probe:
        if sympy.expand(answer) == sympy.expand(truth) or sympy.expand(diff) == 0:
            return True
        if _clearly_differ(answer, truth):
            return False
    return bool(sympy.simplify(diff) == 0)


# What equal_answers expands and probes in the calling process. The work of sympy.expand grows
# with the terms it makes (a power of a sum multiplies out), and _clearly_differ's exact probe
# with the digits of nested powers (x^1000 at x = 7/13 has ~1100). Values past these bounds go
# to the worker; school answers stay far below them.
_INLINE_MAX_NODES = 1000
_INLINE_MAX_TERMS = 200  # terms any part of the value can expand to (an upper bound)
_INLINE_MAX_DEGREE = 10_000  # product of the integer powers nested in any part


def _within_inline_reach(value: sympy.Basic) -> bool:
    """Whether expanding value and probing it at rational points is cheap (see the bounds above)."""
    budget = [_INLINE_MAX_NODES]
    try:
        _terms_and_degree(value, budget, {})
    except (_OutOfReach, RecursionError):
        return False
    return True


class _OutOfReach(Exception):
    pass


def _terms_and_degree(node: sympy.Basic, budget: list[int],
                      seen: dict[sympy.Basic, tuple[int, int]]) -> tuple[int, int]:
    """(terms sympy.expand can make of node, degree of its exact value at a rational point), both upper bounds.

    Raises _OutOfReach past a bound, or for what has no cheap bound: a power with a variable in its
    exponent (2^(10^6·x) is exact at x = 7/13) and a factorial of a variable (k! at k = 10^6).
    """
    if node in seen:
        return seen[node]
    budget[0] -= 1
    if budget[0] < 0:
        raise _OutOfReach
    parts = [_terms_and_degree(arg, budget, seen) for arg in node.args]
    if not parts:
        terms, degree = 1, 1
    elif isinstance(node, sympy.Add):
        terms, degree = sum(t for t, _ in parts), max(d for _, d in parts)
    elif isinstance(node, sympy.Mul):
        terms, degree = math.prod(t for t, _ in parts), sum(d for _, d in parts)
    elif isinstance(node, sympy.Pow):
        (base_terms, base_degree), _ = parts
        exponent = node.exp
        if exponent.is_Rational:
            power = abs(exponent.p) // exponent.q  # (x + 1)^(5/2) expands its square: (x + 1)^2·√(x + 1)
            if base_terms > 1 and power > _INLINE_MAX_TERMS:
                raise _OutOfReach
            terms = math.comb(power + base_terms - 1, base_terms - 1)  # monomials of that degree
            degree = base_degree * max(1, power + (exponent.q > 1))
        elif exponent.is_number:  # x^√2, x^π: nothing to multiply out, not exact at a rational point
            terms, degree = 1, base_degree
        else:
            raise _OutOfReach
    elif isinstance(node, sympy.factorial) and not node.args[0].is_number:
        raise _OutOfReach
    else:  # a function: expand works inside it (log(xy) may split); Abs of an exact value stays exact
        terms, degree = max(1, sum(t for t, _ in parts)), max(d for _, d in parts)
    if terms > _INLINE_MAX_TERMS or degree > _INLINE_MAX_DEGREE:
        raise _OutOfReach
    seen[node] = terms, degree
    return terms, degree


REMARK = "Note: "
# A reading step (synth.chains): "name = value" claims about the problem's givens, joined by "; ", judged against
# the givens' true values (what the figure or the question shows), outside the chain of computed lines.
READING_RULE = "read"
REMARK_RULE = "remark"  # a side remark (a true but irrelevant fact) whose text is worded (``By the way, ...``)
DECLARE_RULE = "declare"  # a line that names the unknown by another letter (``Let q = a``), math ``q = a``


def declared_letter(problem: Problem, claim: str, start: sympy.Basic, renames: dict[str, str]) -> str | None:
    """The new letter a declaration ``q = a`` introduces for the question's unknown ``a``, or None when the line
    declares nothing valid: not two single letters, not the unknown, or a letter the question already uses.

    A declared letter then stands for the unknown on every later line (a rename the solution states is a
    control, ``variable_rename``); a letter changed without a declaration is the error ``variable_misnaming``.
    """
    var = problem.params.get("var")
    parsed = _parse(claim)
    if not isinstance(var, str) or not isinstance(parsed, sympy.Eq):
        return None
    lhs, rhs = parsed.lhs, parsed.rhs
    if not (isinstance(lhs, sympy.Symbol) and isinstance(rhs, sympy.Symbol)) or rhs.name != var:
        return None
    new = lhs.name
    taken = {str(x) for x in getattr(start, "free_symbols", ())}
    if new == var or new in taken or new in renames:
        return None
    return new


def _undeclared_names(problem: Problem, start: sympy.Basic, shown: Sequence[ShownLine | None],
                      faults: tuple[str, ...]) -> tuple[str, ...]:
    """``faults`` plus ``variable_misnaming`` on each right line that calls the unknown by a letter the solution
    never declared (``q = 32.5`` where the question asks for a), from the first line on: a rename is a control
    only when declared (``Let q = a``). Declared letters were read as the unknown already (``_renamed``)."""
    var = problem.params.get("var")
    if not isinstance(var, str) or not one_variable_relation(start, var):
        return faults
    out = list(faults)
    for i, line in enumerate(shown):
        if line is None or out[i] or not line.correct or line.value is None:
            continue
        names = {str(x) for x in line.value.free_symbols}
        if names and names != {var}:
            out[i] = "variable_misnaming"
    return tuple(out)


def _renamed(value: sympy.Basic | None, renames: dict[str, str]) -> sympy.Basic | None:
    """``value`` with each declared letter read as the unknown it stands for."""
    if value is None or not renames:
        return value
    swap = {x: sympy.Symbol(renames[x.name], **x.assumptions0) for x in value.free_symbols
            if isinstance(x, sympy.Symbol) and x.name in renames}
    return value.xreplace(swap) if swap else value


def reading_holds(problem: Problem, claim: str) -> bool:
    """Whether every ``name = value`` part of a reading claim states the problem's true given.

    ``name`` is a given's name (several givens of one name are read as their values in order, joined
    by ", "), or a point ``P`` whose givens are ``Px`` and ``Py``, read as ``(x, y)``:
    ``Ax = 5; B = (−4, −6); mark (Class A) = 47, 49``. A name ``figure.<param>`` (``count(...)``, ``columns(...)``)
    reads a figure parameter the givens do not state (a scale, a grid step, a relation, how many bars): judged
    against the true ``problem.params`` the figure is drawn from (:func:`figure_value`).
    """
    values: dict[str, list[str]] = {}
    for g in problem.givens:
        values.setdefault(g.name, []).append(g.value)
    parts = [p.partition(" = ") for p in claim.split("; ")]
    if not parts or any(not sep for _, sep, _ in parts):
        return False
    for name, _, shown in parts:
        if name in values:
            true = values[name]
        elif f"{name}x" in values and f"{name}y" in values:
            true = [values[f"{name}x"][0], values[f"{name}y"][0]]
            if not (shown.startswith("(") and shown.endswith(")")):
                return False
            shown = shown[1:-1]
        elif (figure := figure_value(problem, name)) is not None:
            true = figure
        else:
            return False
        said = [v.strip() for v in shown.split(",")]
        if len(said) != len(true) or not all(_same_reading(a, b) for a, b in zip(said, true)):
            return False
    return True


FIGURE_PARAM = "figure."  # a reading claim's name for a figure parameter: ``figure.scale = 100``


def figure_value(problem: Problem, name: str) -> list[str] | None:
    """The true value(s) a figure reading ``figure.<param>``, ``count(figure.<param>)`` or ``columns(figure.<param>)``
    states, as strings (a list's items in order; a count, or a table's column count, as one number), or None when
    ``name`` names no such parameter (or a value that is not flat)."""
    how, _, inner = name.partition("(")
    counted = how in ("count", "columns") and inner.endswith(")")
    key = inner[:-1] if counted else name
    if not key.startswith(FIGURE_PARAM) or key[len(FIGURE_PARAM):] not in problem.params:
        return None
    value = problem.params[key[len(FIGURE_PARAM):]]
    if counted and how == "columns":  # a table's rows as lists: how many columns each has
        widths = {len(row) for row in value} if isinstance(value, (list, tuple)) and value and all(
            isinstance(row, (list, tuple)) for row in value) else set()
        return [str(widths.pop())] if len(widths) == 1 else None
    if counted:
        return [str(len(value))] if isinstance(value, (list, tuple)) else None
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items or not all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in items):
        return None
    return [str(v) for v in items]


def _same_reading(shown: str, true: str) -> bool:
    a, b = shown.replace("−", "-").replace(" ", ""), true.replace("−", "-").replace(" ", "")
    if a == b:
        return True
    try:
        return Fraction(a) == Fraction(b)
    except (ValueError, ZeroDivisionError):
        return False


def is_true_statement(rel: sympy.Basic | None) -> bool:
    """A closed relation that holds (`3 + 4 = 7`, `12 > 5`): what a side remark must be."""
    if not isinstance(rel, Relational) or rel.free_symbols:
        return False
    holds = rel.func(rel.lhs, rel.rhs)  # evaluated now: exact numbers compare exactly
    return bool(holds is sympy.true)


@dataclass(frozen=True)
class Worked:
    """What every check of one problem's solutions starts from, derived once from its parameters.

    ``start`` is what the question states (``family.initial``), ``truth`` the answer by the
    independent route (``family.target``), ``vocabulary`` the labels its lines may carry. A caller
    verifying several attempts at one problem (an injector's resampling) derives it once with
    :func:`worked` and passes it to each :func:`verify`; a figure family's ``initial`` works the
    whole clean solution, so that saves one derivation per attempt.
    """

    problem: Problem
    family: SolutionFamily
    start: sympy.Basic
    truth: sympy.Basic
    vocabulary: Vocabulary | None


# The stages verify one base's variants, then write them up and verify the chains again: each would derive the
# same context, so the last few problems' contexts are kept (by identity: a problem is never changed in place).
_WORKED: OrderedDict[int, Worked] = OrderedDict()
_WORKED_KEPT = 16


def worked(problem: Problem, family: SolutionFamily) -> Worked:
    """The :class:`Worked` context of ``problem`` (``family`` is the problem's family), memoised for the most
    recent problems."""
    hit = _WORKED.get(id(problem))
    if hit is not None and hit.problem is problem and type(hit.family) is type(family):
        # a family is stateless and every lookup makes a fresh instance: the context is the same, with this one
        return hit if hit.family is family else replace(hit, family=family)
    params = problem.params
    context = Worked(problem, family, family.initial(params), family.target(params), family.vocabulary(params))
    _WORKED[id(problem)] = context
    while len(_WORKED) > _WORKED_KEPT:
        _WORKED.popitem(last=False)
    return context


def verify(problem: Problem, steps: Sequence[Step], *, family: SolutionFamily,
           context: Worked | None = None) -> Verdict:
    """Label a shown solution from its text alone, against the problem's parameters.

    Each line is judged by what it says: when its text parses to something other than its
    stored value (a notational error: `2 + 3 × 4` written where `(2 + 3) × 4` was meant), the
    text counts, so that line is wrong and the next one, carrying on from the meant value, does
    not follow from it. Lines starting ``Note: `` are side remarks (a true but irrelevant fact):
    they must be true closed statements and are left out of the chain.

    ``context`` is :func:`worked` of this problem and family, when the caller derived it already.
    """
    if context is None:
        context = worked(problem, family)
    elif context.problem is not problem or context.family is not family:
        raise ValueError("verify: context was worked for another problem or family; pass worked(problem, family)")
    start, truth = context.start, context.truth
    parses, local, glob = [], [], []
    shown_lines: list[ShownLine | None] = []
    previous = start
    value = None
    earlier: list[sympy.Basic] = []
    prior_wrong = False  # the previous working line's value is wrong
    renames: dict[str, str] = {}  # letters the solution declared for the question's (``Let q = a``): q -> a
    last_working: int | None = None  # the line that states the answer: the last one in the chain
    for at, step in enumerate(steps):
        claim = step.math or step.text  # a worded step (synth.chains) keeps its mathematical claim in ``math``
        if step.rule == DECLARE_RULE:  # ``Let q = a``: outside the chain; right when it names the unknown anew
            new = declared_letter(problem, claim, start, renames)
            if new is not None:
                renames[new] = str(problem.params["var"])
            parses.append(new is not None)
            local.append(new is not None)
            glob.append(new is not None)
            shown_lines.append(None)
            continue
        if step.rule == REMARK_RULE and not claim.startswith(REMARK):  # a side remark written without ``Note: ``
            claim = REMARK + claim
        if step.rule == READING_RULE:  # values read off the figure or the question: true or not, outside the chain
            true = reading_holds(problem, claim)
            parses.append(True)
            local.append(true)
            glob.append(true)
            shown_lines.append(None)
            continue
        if claim.startswith(REMARK):  # a side remark: judged true or false, outside the chain
            true = is_true_statement(_parse(claim[len(REMARK):]))
            parses.append(true)
            local.append(true)
            glob.append(true)
            shown_lines.append(None)
            continue
        last_working = at
        value = _renamed(_parse(step.value), renames)
        shown = _renamed(_parse(claim), renames)
        parses.append(value is not None and shown is not None and same_value(shown, value))
        if value is None:
            local.append(False)
            glob.append(False)
            shown_lines.append(ShownLine(claim, read_line(claim), None, False))
            prior_wrong = True
            continue
        if shown is not None and not parses[-1]:
            # Judge what is written (notational errors): the line says `shown`, whatever was meant.
            value = shown
        judged = family.judge_step(problem.params, value, previous, tuple(earlier))
        if judged is None:
            local.append(previous is not None and same_value(value, previous))
            glob.append(same_value(value, start))
        else:
            local.append(judged[0])
            glob.append(judged[1])
        if prior_wrong and glob[-1]:
            # One error_steps rule for every family (manifest schema): a right line after a wrong one carries on
            # from the correct value, not from what is written, so it does not follow from the line before it
            # (families whose judge_step accepts any consequence of the question would otherwise pass it).
            local[-1] = False
        prior_wrong = not glob[-1]
        shown_lines.append(ShownLine(claim, read_line(claim), value, local[-1] and glob[-1]))
        previous = value
        earlier.append(value)
    answer = family.answer_of(value) if value is not None else None
    correct = answer is not None and equal_answers(answer, truth)
    faults = presentation_faults(problem, shown_lines, same_value, vocabulary=context.vocabulary, initial=start)
    faults = _undeclared_names(problem, start, shown_lines, faults)
    answer_fault = faults[last_working] if last_working is not None and last_working < len(faults) else ""
    return Verdict(tuple(parses), tuple(local), tuple(glob), answer, bool(correct), faults, answer_fault,
                   tuple(step.rule == READING_RULE for step in steps))
