"""Simplifying trigonometric expressions with the Pythagorean identities (sin²θ + cos²θ = 1, …)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators import terms as T
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number, latex_number

# Angle names: (symbol name, text, LaTeX).
_ANGLES = {"theta": ("θ", r"\theta"), "x": ("x", "x"), "alpha": ("α", r"\alpha"), "beta": ("β", r"\beta")}
_FUNCS = {"sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "sec": sympy.sec, "csc": sympy.csc, "cot": sympy.cot}
# A pair (first, second, sign): first² + sign·second² = 1.
_PAIRS = {"sin_cos": ("sin", "cos", 1), "sec_tan": ("sec", "tan", -1), "csc_cot": ("csc", "cot", -1)}
# Hard problems hide one term behind a definition: (pair, which term) -> how it is written.
#   ("prod", f, g): f²·g², ("over", f): 1/f², ("ratio", f, g): f²/g².
_DISGUISES: dict[tuple[str, int], tuple[Any, ...]] = {
    ("sin_cos", 0): ("prod", "tan", "cos"),   # tan²θ cos²θ = sin²θ
    ("sin_cos", 1): ("over", "sec"),          # 1/sec²θ = cos²θ
    ("sec_tan", 0): ("over", "cos"),          # 1/cos²θ = sec²θ
    ("sec_tan", 1): ("ratio", "sin", "cos"),  # sin²θ/cos²θ = tan²θ
    ("csc_cot", 0): ("over", "sin"),          # 1/sin²θ = csc²θ
    ("csc_cot", 1): ("ratio", "cos", "sin"),  # cos²θ/sin²θ = cot²θ
}  # fmt: skip
# Pythagorean points (sin, cos) on the unit circle: exact values to evaluate at.
_POINTS = ((Fraction(3, 5), Fraction(4, 5)), (Fraction(5, 13), Fraction(12, 13)), (Fraction(-8, 17), Fraction(15, 17)))


# -- exact identity test (the verifier's hook) -------------------------------------------------

# Each function as powers (of sin θ, of cos θ): tan = sin¹·cos⁻¹, sec = cos⁻¹, …
_EXPONENTS = {"sin": (1, 0), "cos": (0, 1), "tan": (1, -1), "sec": (0, -1), "csc": (-1, 0), "cot": (-1, 1)}
Laurent = dict[tuple[int, int], Fraction]


def _at(terms: Laurent, s: Fraction, c: Fraction) -> Fraction:
    return sum((coef * s**p * c**q for (p, q), coef in terms.items()), Fraction(0))


def laurent(expr: sympy.Basic) -> Laurent | None:
    """expr as Σ coef·sin^p θ·cos^q θ (p, q any integers), or None if it is not such a sum of one angle.

    Every line this family writes is one (sympy multiplies the brackets out), so the exact
    identity test below is plain rational arithmetic instead of sympy's together and Poly.
    """
    out: Laurent = {}
    angle = None
    for term in sympy.Add.make_args(expr):
        coef, rest = term.as_coeff_Mul()
        if not isinstance(coef, sympy.Rational):
            return None
        p = q = 0
        for factor in sympy.Mul.make_args(rest):
            if factor == 1:
                continue
            base, exp = factor.as_base_exp()
            name = type(base).__name__
            if name not in _EXPONENTS or not exp.is_Integer or (angle is not None and base.args[0] != angle):
                return None
            angle = base.args[0]
            dp, dq = _EXPONENTS[name]
            p, q = p + int(exp) * dp, q + int(exp) * dq
        out[(p, q)] = out.get((p, q), Fraction(0)) + Fraction(int(coef.p), int(coef.q))
    return {k: v for k, v in out.items() if v != 0}


def _vanishes_on_circle(terms: Laurent) -> bool:
    """Σ coef·s^p·c^q = 0 whenever s² + c² = 1 (s, c ≠ 0): clear the negative powers, then use c² = 1 − s².

    What is left is A(s) + c·B(s); it vanishes on the whole circle exactly when A and B are zero.
    """
    if not terms:
        return True
    lo_p = min(p for p, _ in terms)
    lo_q = min(q for _, q in terms)
    even: dict[int, Fraction] = {}
    odd: dict[int, Fraction] = {}
    for (p, q), coef in terms.items():
        p, q = p - lo_p, q - lo_q
        target = odd if q % 2 else even
        # (1 − s²)^(q//2) by the binomial theorem.
        n = q // 2
        binom = 1
        for j in range(n + 1):
            power = p + 2 * j
            target[power] = target.get(power, Fraction(0)) + coef * binom * (-1) ** j
            binom = binom * (n - j) // (j + 1)
    return not any(even.values()) and not any(odd.values())


@lru_cache(maxsize=4096)
def identical(a: sympy.Basic, b: sympy.Basic) -> bool:
    """Whether a and b are equal for every angle where both are defined, decided exactly.

    Both are written as sums of sin^p θ·cos^q θ; their difference must vanish on the unit circle
    (see ``_vanishes_on_circle``). Anything else goes through ``sympy.simplify``.
    """
    if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)):
        return False
    if a == b:
        return True
    la, lb = laurent(a), laurent(b)
    if la is None or lb is None or _one_angle(a, b) is None:
        return bool(sympy.simplify(a - b) == 0)
    diff = dict(la)
    for k, v in lb.items():
        diff[k] = diff.get(k, Fraction(0)) - v
    return _vanishes_on_circle({k: v for k, v in diff.items() if v != 0})


def _one_angle(a: sympy.Expr, b: sympy.Expr) -> sympy.Basic | None:
    args = {f.args[0] for e in (a, b) for f in e.atoms(sympy.Function)}
    return next(iter(args)) if len(args) == 1 else (sympy.Integer(0) if not args else None)


# -- writing ----------------------------------------------------------------------------------

def _fn(func: str, power: int, angle: str) -> tuple[sympy.Expr, str, str]:
    text, latex = _ANGLES[angle]
    value = _FUNCS[func](sympy.Symbol(angle)) ** power
    head, lhead = (f"{func}^{power}", rf"\{func}^{{{power}}}") if power != 1 else (func, rf"\{func}")
    return value, f"{head} {text}", rf"{lhead} {latex}"


def _coef(c: sympy.Rational) -> tuple[str, str]:
    mag = abs(c)
    if mag == 1:
        return "", ""
    return (format_number(mag) if mag.q == 1 else f"({format_number(mag)})"), latex_number(mag)


def trig_term(c: sympy.Basic, func: str, angle: str, power: int = 2) -> T.Piece:
    """``3sin^2 θ``."""
    c = sympy.Rational(c)
    value, text, latex = _fn(func, power, angle)
    ct, cl = _coef(c)
    return T.raw(c * value, ct + text, cl + latex, negative=c < 0)


def group_term(c: sympy.Basic, pair: str, angle: str) -> T.Piece:
    """``3(sin^2 θ + cos^2 θ)`` or ``3(sec^2 θ − tan^2 θ)``: the identity's left side, factored."""
    first, second, sign = _PAIRS[pair]
    inner = [trig_term(1, first, angle), trig_term(sign, second, angle)]
    return _factored(sympy.Rational(c), inner)


def _factored(c: sympy.Rational, inner: list[T.Piece]) -> T.Piece:
    v, text, latex = T.line(inner)
    ct, cl = (format_number(abs(c)), latex_number(abs(c))) if abs(c) != 1 else ("", "")
    return T.raw(c * v, f"{ct}({text})", rf"{cl}\left({latex}\right)", negative=c < 0)


def times_term(c: sympy.Basic, factor: int) -> T.Piece:
    """``3 × 1`` or ``3 × (−1)``: the identity used, the multiplication not yet done."""
    c = sympy.Rational(c)
    ft, fl = ("1", "1") if factor == 1 else ("(−1)", r"\left(-1\right)")
    return T.raw(c * factor, f"{format_number(abs(c))} × {ft}", rf"{latex_number(abs(c))} \times {fl}", negative=c < 0)


def disguised_term(c: sympy.Basic, disguise: tuple[Any, ...], angle: str) -> T.Piece:
    c = sympy.Rational(c)
    ct, cl = _coef(c)
    kind = disguise[0]
    if kind == "prod":
        (v1, t1, l1), (v2, t2, l2) = _fn(disguise[1], 2, angle), _fn(disguise[2], 2, angle)
        return T.raw(c * v1 * v2, f"{ct}{t1} {t2}", rf"{cl}{l1} {l2}", negative=c < 0)
    if kind == "over":
        v, t, tex = _fn(disguise[1], 2, angle)
        return T.raw(c / v, f"{format_number(abs(c))}/{t}", rf"\frac{{{latex_number(abs(c))}}}{{{tex}}}",
                     negative=c < 0)
    (v1, t1, l1), (v2, t2, l2) = _fn(disguise[1], 2, angle), _fn(disguise[2], 2, angle)
    return T.raw(c * v1 / v2, f"{ct}{t1}/{t2}", rf"\frac{{{cl}{l1}}}{{{l2}}}", negative=c < 0)


def expression_text(expr: sympy.Basic, angle: str) -> tuple[str, str]:
    """An answer ``c0 + Σ c·f^n θ`` written constant first, or ValueError for anything else."""
    expr = sympy.expand(expr)
    x = sympy.Symbol(angle)
    const = sympy.Integer(0)
    pieces = []
    for term, c in sorted(expr.as_coefficients_dict().items(), key=lambda kv: sympy.default_sort_key(kv[0])):
        if not isinstance(c, sympy.Rational):
            raise ValueError(f"cannot write {expr} as a school answer")
        if term == 1:
            const = c
            continue
        base, power = term.as_base_exp()
        if not (isinstance(base, sympy.Function) and type(base).__name__ in _FUNCS and base.args == (x,)
                and power.is_Integer and power > 0):
            raise ValueError(f"cannot write {expr} as a school answer")
        pieces.append(trig_term(c, type(base).__name__, angle, int(power)))
    if const != 0 or not pieces:
        pieces.insert(0, T.num(const))
    _, text, latex = T.line(pieces)
    return text, latex


_MAL = (
    MalRule("factor_unequal_coefficients", "theorem_misapplication",
            "factors the larger coefficient out of both squared terms as if they were equal, then uses the identity"),
    MalRule("identity_drops_coefficient", "formula_misuse",
            "replaces the whole bracket k(sin²θ + cos²θ) by 1 instead of k × 1"),
    MalRule("pythagorean_sign", "incorrect_fact",
            "takes sec²θ − tan²θ (or csc²θ − cot²θ) to be −1, misremembering 1 + tan²θ = sec²θ"),
)


@dataclass(frozen=True)
class _Level:
    top: int  # coefficients 2 to top
    equal: bool  # a sin² + a cos² + k: one coefficient (k nonzero); else two different ones
    constant_share: float | None  # share of problems with a constant k (None: all, k may be 0)
    disguise: bool  # one term written in disguise


_LEVELS = {"easy": _Level(12, equal=True, constant_share=None, disguise=False),
           "medium": _Level(12, equal=False, constant_share=0.5, disguise=False),
           "hard": _Level(15, equal=False, constant_share=None, disguise=True)}


@register
class IdentitySimplify(Family):
    """Simplify ``a·f² ± b·g² + k`` where f² ± g² = 1: split off the common part, use the identity, collect.

    easy: equal coefficients (the answer is a number); medium: unequal, the answer keeps one
    squared term; hard: one term is first written through a definition (tan²θ cos²θ, 1/cos²θ).
    Lines are expressions in the angle, so ``judge_step`` compares them as identities (exactly,
    in sin and cos) instead of by expanding.
    """

    id = "trig.identity.simplify"
    domain = "trigonometry"
    subdomain = "identities"
    grade_band = "10-12"
    question_types = ("free", "mcq", "fill")
    malrules = _MAL

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        angle = sorted(_ANGLES)[int(rng.integers(len(_ANGLES)))]
        pair = sorted(_PAIRS)[int(rng.integers(len(_PAIRS)))]
        level = _LEVELS[difficulty]
        top = level.top
        while True:
            a = int(rng.integers(2, top + 1))
            b = a if level.equal else int(rng.integers(2, top + 1))
            k = int(rng.integers(-9, 10)) if level.constant_share is None or rng.random() < level.constant_share else 0
            if (level.equal and k == 0) or (not level.equal and a == b):
                continue
            hidden = int(rng.integers(2)) if level.disguise else None
            return {"angle": angle, "pair": pair, "a": a, "b": b, "k": k, "disguise": hidden}

    # -- the problem -------------------------------------------------------------------------

    def _question_pieces(self, params: dict[str, Any]) -> list[T.Piece]:
        angle, pair, a, b, k = (params[n] for n in ("angle", "pair", "a", "b", "k"))
        first, second, sign = _PAIRS[pair]
        pieces = [trig_term(a, first, angle), trig_term(sign * b, second, angle)]
        hidden = params["disguise"]
        if hidden is not None:
            c = pieces[hidden].value.as_coeff_Mul()[0]
            pieces[hidden] = disguised_term(c, _DISGUISES[(pair, hidden)], angle)
        return pieces + ([T.num(k)] if k else [])

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return T.line(self._question_pieces(params))[0]

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        """c0 + d·D from exact values of the question at two points of the unit circle, checked at a third.

        D is the squared term whose coefficient is larger (none when they are equal); no step of
        the working is replayed.
        """
        first, second, sign = _PAIRS[params["pair"]]
        a, b = params["a"], params["b"]
        x = sympy.Symbol(params["angle"])
        term = _FUNCS[first](x) ** 2 if a > b else sign * _FUNCS[second](x) ** 2
        stated, shape = laurent(self.initial(params)), laurent(term) if a != b else {}
        if stated is None or shape is None:
            raise ValueError(f"{self.id}: {params} does not give a sum of sin and cos powers")
        (v1, t1), (v2, t2), (v3, t3) = ((_at(stated, s, c), _at(shape, s, c)) for s, c in _POINTS)
        d = (v1 - v2) / (t1 - t2) if a != b else Fraction(0)
        c0 = v1 - d * t1
        if c0 + d * t3 != v3:
            raise ValueError(f"{self.id}: {params} is not of the form c + d·{term}")
        c0, d = sympy.Rational(c0.numerator, c0.denominator), sympy.Rational(d.numerator, d.denominator)
        return c0 + d * term

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return expression_text(answer, params["angle"])

    def judge_step(self, params: dict[str, Any], value: sympy.Basic, previous: sympy.Basic,
                   earlier: tuple[sympy.Basic, ...]) -> tuple[bool, bool] | None:
        return identical(value, previous), identical(value, self.initial(params))

    # -- working -----------------------------------------------------------------------------

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides, None)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        applies = {"factor_unequal_coefficients": params["a"] != params["b"],
                   "identity_drops_coefficient": min(params["a"], params["b"]) != 1,
                   "pythagorean_sign": params["pair"] != "sin_cos"}
        if not applies.get(rule, False):
            return None
        return self._worked(params, {}, rule)

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic], mal: str | None) -> list[StepDraft]:
        angle, pair, a, b, k = (params[n] for n in ("angle", "pair", "a", "b", "k"))
        first, second, sign = _PAIRS[pair]
        d = Derivation(overrides)
        tail = [T.num(k)] if k else []

        def add(rule: str, pieces: Sequence[T.Piece], result: sympy.Basic | None = None) -> None:
            T.add_line(d, rule, list(pieces), result)

        if params["disguise"] is not None:
            add("rewrite_with_definitions", [trig_term(a, first, angle), trig_term(sign * b, second, angle), *tail])
        m = min(a, b)
        big = first if a > b else second
        big_sign = 1 if a > b else sign
        rest: list[T.Piece] = []
        if mal == "factor_unequal_coefficients":
            m = max(a, b)
            add("mal:factor_unequal_coefficients", [group_term(m, pair, angle), *tail])
        elif a != b:
            r = d.compute(sympy.Integer(abs(a - b)))
            # The larger coefficient split as m + r: the common part m first.
            split = [trig_term(m, first, angle), trig_term(sign * m, second, angle),
                     trig_term(big_sign * r, big, angle)]
            add("split_coefficient", [*split, *tail], r)
            rest = [trig_term(big_sign * r, big, angle)]
            add("factor", [group_term(m, pair, angle), *rest, *tail])
        else:
            add("factor", [group_term(m, pair, angle), *tail])
        one = -1 if mal == "pythagorean_sign" else 1
        if mal == "identity_drops_coefficient":
            value = d.compute(sympy.Integer(1))
            add("mal:identity_drops_coefficient", [T.num(value), *rest, *tail], value)
        else:
            add("mal:pythagorean_sign" if one == -1 else "pythagorean_identity", [times_term(m, one), *rest, *tail])
            value = d.compute(sympy.Integer(m * one))
            add("multiply", [T.num(value), *rest, *tail], value)
        if k:
            total = d.compute(value + k)
            add("collect_constants", [T.num(total), *rest], total)
        return d.steps

    # -- question ----------------------------------------------------------------------------

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        _, text, latex = T.line(self._question_pieces(params))
        first, second, sign = _PAIRS[params["pair"]]
        identity = f"{first}²{_ANGLES[params['angle']][0]} {'+' if sign > 0 else '−'} {second}²" \
                   f"{_ANGLES[params['angle']][0]} = 1"
        return {**params, "expression": text, "latex": latex, "angle_text": _ANGLES[params["angle"]][0],
                "identity": identity}
