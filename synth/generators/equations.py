"""Linear equations with brackets or unknowns on both sides, and quadratics solved by factoring."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft, format_number, latex_number

_VARS = ("x", "y", "n", "a", "t", "m")


@dataclass(frozen=True)
class Term:
    """One signed term of a side as a pupil writes it: ``6x``, ``3 × 2x``, ``15``, ``3 × 5``."""

    value: sympy.Expr
    text: str  # magnitude only; the sign is written by the side
    latex: str
    negative: bool


def x_term(coef: sympy.Basic, var: str) -> Term:
    c = sympy.Rational(coef)
    mag = abs(c)
    body = var if mag == 1 else f"{format_number(mag)}{var}" if mag.q == 1 else f"({format_number(mag)}){var}"
    tex = var if mag == 1 else f"{latex_number(mag)}{var}"
    return Term(c * sympy.Symbol(var), body, tex, c < 0)


def const(c: sympy.Basic) -> Term:
    c = sympy.Rational(c)
    return Term(c, format_number(abs(c)), latex_number(abs(c)), c < 0)


def product(factor: int, inner: Term) -> Term:
    """``factor × inner`` as written while distributing: ``3 × 2x`` (sign folded into the term)."""
    negative = (factor < 0) != inner.negative
    return Term(factor * inner.value, f"{abs(factor)} × {inner.text}", rf"{abs(factor)} \times {inner.latex}", negative)


def side(terms: list[Term], latex: bool = False) -> tuple[sympy.Expr, str]:
    minus = "-" if latex else "−"
    out = ""
    for i, t in enumerate(terms):
        body = t.latex if latex else t.text
        if i == 0:
            out = (minus if t.negative else "") + body
        else:
            out += f" {minus if t.negative else '+'} {body}"
    return sympy.Add(*(t.value for t in terms)), out


def _eq_step(d: Derivation, rule: str, left: list[Term], right: list[Term],
             result: sympy.Basic | None = None) -> None:
    lv, lt = side(left)
    rv, rt = side(right)
    _, ll = side(left, True)
    _, rl = side(right, True)
    # evaluate=False: a slipped coefficient of 0 must stay a (false) equation, not become False.
    d.add(StepDraft(rule=rule, value=sympy.Eq(lv, rv, evaluate=False), text=f"{lt} = {rt}",
                    latex=f"{ll} = {rl}", result=result))


def _finish(d: Derivation, var: str, k: sympy.Basic, b: sympy.Basic, r: sympy.Basic, *,
            mal: str | None = None) -> None:
    """From ``kx + b = r`` (b may be 0) to ``x = …``: undo b, then divide by k.

    ``mal`` is a mal-rule a pupil applies here: ``move_constant_keep_sign`` (b crosses the =
    unchanged) or ``subtract_coefficient`` (x = r − k instead of r ÷ k).
    """
    if b != 0 and mal == "move_constant_keep_sign":
        _eq_step(d, "mal:move_constant_keep_sign", [x_term(k, var)], [const(r), const(b)])
        r = r + b
        _eq_step(d, "simplify", [x_term(k, var)], [const(r)], r)
    elif b != 0:
        _eq_step(d, "subtract_both_sides" if b > 0 else "add_both_sides",
                 [x_term(k, var), const(b), const(-b)], [const(r), const(-b)])
        r = d.compute(r - b)
        _eq_step(d, "simplify", [x_term(k, var)], [const(r)], r)
    if mal == "subtract_coefficient" and k not in (0, 1):
        _eq_step(d, "mal:subtract_coefficient", [x_term(1, var)], [const(r), const(-k)])
        _eq_step(d, "simplify", [x_term(1, var)], [const(r - k)], r - k)
        return
    if k == 0:  # only reachable through an injected slip: nothing left to divide by
        return
    if k != 1:
        sym_x = sympy.Symbol(var)
        k_text = format_number(k) if k > 0 else f"({format_number(k)})"
        d.add(StepDraft(rule="divide_both_sides", value=sympy.Eq(sym_x, r / k),
                        text=f"{var} = {format_number(r)} ÷ {k_text}",
                        latex=rf"{var} = \frac{{{latex_number(r)}}}{{{latex_number(k)}}}"))
        s = d.compute(r / k)
        _eq_step(d, "simplify", [x_term(1, var)], [const(s)], s)


def _marked(steps: list[StepDraft]) -> list[StepDraft] | None:
    """The steps if the mal-rule found a place to act (a ``mal:`` step), else None."""
    return steps if any(s.rule.startswith("mal:") for s in steps) else None


_FINISH_RULES = (
    MalRule("move_constant_keep_sign", "invalid_inference",
            "moves the constant to the other side of = without changing its sign"),
    MalRule("subtract_coefficient", "formula_misuse",
            "undoes the multiplication by subtracting the coefficient instead of dividing"),
)


class _Linear(Family):
    domain = "algebra"
    subdomain = "linear_equations"
    grade_band = "7-9"

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Read the coefficients of the question's equation and divide: -c0 / c1, no step chain.
        eq = self.initial(params)
        c1, c0 = sympy.Poly(eq.lhs - eq.rhs, sympy.Symbol(params["var"])).all_coeffs()
        return -c0 / c1

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return f"{params['var']} = {format_number(answer)}", f"{params['var']} = {latex_number(answer)}"

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        text, latex = self.equation_text(params)
        return {**params, "equation": text, "latex": latex}

    def equation_text(self, params: dict[str, Any]) -> tuple[str, str]:
        raise NotImplementedError


def _bracket(factor: int, b: int, c: int, var: str, latex: bool = False) -> str:
    inner_terms = [x_term(b, var), const(c)]
    _, inner = side(inner_terms, latex)
    if factor == 1:
        lead = ""
    elif factor == -1:
        lead = "-" if latex else "−"
    else:
        lead = str(factor) if latex else format_number(sympy.Integer(factor))
    return f"{lead}({inner})"


@register
class LinearBrackets(_Linear):
    """easy/medium: a(bx + c) = d; hard: a(bx + c) + e(fx + g) = h. Distribute first."""

    id = "algebra.linear.brackets"
    malrules = (
        MalRule("distribute_first_term_only", "theorem_misapplication",
                "multiplies only the first term inside the bracket by the factor outside"),
        MalRule("negative_times_negative", "incorrect_fact",
                "takes a negative times a negative to be negative when expanding the bracket"),
        *_FINISH_RULES,
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = _VARS[int(rng.integers(len(_VARS)))]
        n_brackets = 2 if difficulty == "hard" else 1
        while True:
            brackets = []
            for _ in range(n_brackets):
                a = int(rng.integers(2, 10))
                if difficulty != "easy":
                    a *= int(rng.choice([-1, 1]))
                b = 1 if difficulty == "easy" else int(rng.integers(1, 7))
                c = int(rng.integers(1, 12)) * (1 if difficulty == "easy" else int(rng.choice([-1, 1])))
                brackets.append([a, b, c])
            x = sympy.Integer(int(rng.integers(-12 if difficulty != "easy" else 1, 13)))
            k = sum(a * b for a, b, _ in brackets)
            rhs = sum(a * (b * x + c) for a, b, c in brackets)
            if k != 0 and x != 0 and rhs != 0:
                return {"var": var, "brackets": brackets, "rhs": int(rhs)}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        brackets = params["brackets"]
        if rule == "negative_times_negative" and not any(a < 0 and c < 0 for a, _, c in brackets):
            return None
        if rule in ("distribute_first_term_only", "negative_times_negative", *(r.id for r in _FINISH_RULES)):
            return _marked(self._worked(params, {}, rule))
        return None

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic],
                mal: str | None = None) -> list[StepDraft]:
        var, brackets, rhs = params["var"], params["brackets"], sympy.Integer(params["rhs"])
        d = Derivation(overrides)
        first_only = mal == "distribute_first_term_only"
        shown: list[list[Term]] = [[product(a, x_term(b, var)), const(c) if first_only else product(a, const(c))]
                                   for a, b, c in brackets]
        _eq_step(d, "mal:" + mal if first_only else "distribute", [t for pair in shown for t in pair], [const(rhs)])
        flipped = False
        for j, (a, b, c) in enumerate(brackets):
            ac = d.compute(sympy.Integer(c if first_only else a * c))
            flip = mal == "negative_times_negative" and a < 0 and c < 0
            ac = -ac if flip else ac
            shown[j] = [x_term(a * b, var), const(ac)]
            _eq_step(d, "mal:" + mal if flip and not flipped else "multiply_out", [t for pair in shown for t in pair],
                     [const(rhs)], ac)
            flipped = flipped or flip
        k = sum(a * b for a, b, _ in brackets)
        consts = [pair[1].value for pair in shown]
        if len(brackets) > 1:
            total = d.compute(sympy.Add(*consts))
            _eq_step(d, "collect_like_terms", [x_term(k, var), const(total)] if total != 0 else [x_term(k, var)],
                     [const(rhs)], total)
        else:
            total = consts[0]
        _finish(d, var, sympy.Integer(k), total, rhs, mal=mal)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        v = sympy.Symbol(params["var"])
        return sympy.Eq(sum(a * (b * v + c) for a, b, c in params["brackets"]), params["rhs"], evaluate=False)

    def equation_text(self, params: dict[str, Any]) -> tuple[str, str]:
        parts, tex = [], []
        for i, (a, b, c) in enumerate(params["brackets"]):
            text = _bracket(abs(a), b, c, params["var"])
            ltx = _bracket(abs(a), b, c, params["var"], True)
            sign = ("−" if a < 0 else "") if i == 0 else (" − " if a < 0 else " + ")
            parts.append(sign + text)
            tex.append(sign.replace("−", "-") + ltx)
        return f"{''.join(parts)} = {format_number(sympy.Integer(params['rhs']))}", f"{''.join(tex)} = {params['rhs']}"


@register
class LinearBothSides(_Linear):
    """ax + b = cx + d: gather the unknown on one side, then undo the constant and divide."""

    id = "algebra.linear.both_sides"
    malrules = (
        MalRule("move_term_keep_sign", "invalid_inference",
                "moves the unknown's term to the other side of = without changing its sign"),
        *_FINISH_RULES,
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = _VARS[int(rng.integers(len(_VARS)))]
        top = {"easy": 9, "medium": 15, "hard": 25}[difficulty]
        while True:
            a, c = int(rng.integers(1, top + 1)), int(rng.integers(1, top + 1))
            if difficulty != "easy":
                a *= int(rng.choice([-1, 1]))
                c *= int(rng.choice([-1, 1]))
            if difficulty == "easy" and a <= c:
                continue
            if difficulty == "hard":
                x = sympy.Rational(int(rng.integers(-30, 31)), int(rng.integers(1, 5)))
            else:
                x = sympy.Integer(int(rng.integers(-10 if difficulty == "medium" else 1, 13)))
            b = int(rng.integers(-30, 31)) if difficulty != "easy" else int(rng.integers(1, 30))
            dd = (a - c) * x + b
            if a != c and c != 0 and x != 0 and b != 0 and dd.q == 1 and dd != 0:
                return {"var": var, "a": a, "b": b, "c": c, "d": int(dd)}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "move_term_keep_sign" and params["a"] + params["c"] == 0:
            return None  # the unknown would vanish: not a solution a pupil could finish
        if rule in ("move_term_keep_sign", *(r.id for r in _FINISH_RULES)):
            return _marked(self._worked(params, {}, rule))
        return None

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic],
                mal: str | None = None) -> list[StepDraft]:
        var, a, b, c, dd = params["var"], params["a"], params["b"], params["c"], params["d"]
        b_, d_ = sympy.Integer(b), sympy.Integer(dd)
        d = Derivation(overrides)
        keep = mal == "move_term_keep_sign"
        _eq_step(d, "mal:" + mal if keep else "subtract_both_sides" if c > 0 else "add_both_sides",
                 [x_term(a, var), x_term(c if keep else -c, var), const(b_)], [const(d_)])
        k = d.compute(sympy.Integer(a + c if keep else a - c))
        _eq_step(d, "collect_like_terms", [x_term(k, var), const(b_)], [const(d_)], k)
        _finish(d, var, k, b_, d_, mal=mal)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        v = sympy.Symbol(params["var"])
        return sympy.Eq(params["a"] * v + params["b"], params["c"] * v + params["d"], evaluate=False)

    def equation_text(self, params: dict[str, Any]) -> tuple[str, str]:
        var = params["var"]
        left = [x_term(params["a"], var), const(params["b"])]
        right = [x_term(params["c"], var), const(params["d"])]
        return (f"{side(left)[1]} = {side(right)[1]}", f"{side(left, True)[1]} = {side(right, True)[1]}")


def _factor(p: int, q: int, var: str) -> list[Term]:
    """The terms of ``px + q``."""
    return [x_term(p, var), const(q)] if q else [x_term(p, var)]


def _bracketed(p: int, q: int, var: str, latex: bool = False) -> str:
    return rf"\left({side(_factor(p, q, var), True)[1]}\right)" if latex else f"({side(_factor(p, q, var))[1]})"


def _either(parts: list[tuple[sympy.Expr, str, str]]) -> tuple[sympy.Basic, str, str]:
    """``A or B`` for one-variable equations: the value is ``(a)(b) = 0``, same solution set."""
    value = sympy.Eq(sympy.Mul(*(p[0] for p in parts), evaluate=False), 0, evaluate=False)
    return value, " or ".join(p[1] for p in parts), r" \text{ or } ".join(p[2] for p in parts)


@register
class QuadraticFactoring(Family):
    """Solve by splitting the middle term, grouping, and the zero-product rule.

    easy: x² + bx + c = 0; medium: x² + bx = k (rearrange first); hard: px² + bx + c = 0.
    The solution is a pair of equations joined by ``or``; its value is ``(x − r₁)(x − r₂) = 0``.
    """

    id = "algebra.quadratic.factoring"
    domain = "algebra"
    subdomain = "quadratic_equations"
    grade_band = "9-10"
    malrules = (
        MalRule("root_keeps_bracket_sign", "invalid_inference",
                "reads each root off its bracket with the sign it has there: (x + 3) = 0 gives x = 3"),
        MalRule("single_root", "invalid_assumption",
                "assumes the equation has one solution and solves only the first bracket"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        var = _VARS[int(rng.integers(len(_VARS)))]
        while True:
            p = int(rng.choice([2, 3, 5])) if difficulty == "hard" else 1
            q = int(rng.integers(-9, 10))
            s = int(rng.integers(-9, 10))
            roots = {sympy.Rational(-s), sympy.Rational(-q, p)}
            # distinct, nonzero roots; a non-trivial middle term; hard needs a fractional root
            if len(roots) == 2 and 0 not in roots and p * s + q != 0 and (
                    difficulty != "hard" or q % p != 0):
                k = int(rng.choice([-1, 1])) * int(rng.integers(1, 21)) if difficulty == "medium" else 0
                return {"var": var, "p": p, "q": q, "s": s, "k": k}

    def _coefficients(self, params: dict[str, Any]) -> tuple[int, int, int]:
        p, q, s = params["p"], params["q"], params["s"]
        return p, p * s + q, q * s

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        var, p, q, s, k = params["var"], params["p"], params["q"], params["s"], params["k"]
        a, b, c = self._coefficients(params)
        x = sympy.Symbol(var)
        d = Derivation(overrides)
        sq = Term(a * x**2, ("" if a == 1 else str(a)) + f"{var}^2", ("" if a == 1 else str(a)) + f"{var}^2", False)
        if k:  # medium: the question has x² + bx + (c + k) = k; move k across first
            e = c + k
            moved = [sq, x_term(b, var)] + ([const(e)] if e else []) + [const(-k)]
            _eq_step(d, "subtract_both_sides" if k > 0 else "add_both_sides", moved, [const(0)])
            c_shown = d.compute(sympy.Integer(c))
            _eq_step(d, "simplify", [sq, x_term(b, var), const(c_shown)], [const(0)], c_shown)
        _eq_step(d, "split_middle_term", [sq, x_term(p * s, var), x_term(q, var), const(c)], [const(0)])
        group = Term(p * x * (x + s), ("" if p == 1 else str(p)) + f"{var}{_bracketed(1, s, var)}",
                     ("" if p == 1 else str(p)) + f"{var}{_bracketed(1, s, var, True)}", False)
        second = Term(q * (x + s), f"{abs(q)}{_bracketed(1, s, var)}", f"{abs(q)}{_bracketed(1, s, var, True)}", q < 0)
        _eq_step(d, "factor_pairs", [group, second], [const(0)])
        both = Term((x + s) * (p * x + q), _bracketed(1, s, var) + _bracketed(p, q, var),
                    _bracketed(1, s, var, True) + _bracketed(p, q, var, True), False)
        _eq_step(d, "factor_common_bracket", [both], [const(0)])

        def eq(terms: list[Term], rhs: sympy.Basic) -> tuple[sympy.Expr, str, str]:
            lv, lt = side(terms)
            return lv - rhs, f"{lt} = {format_number(rhs)}", f"{side(terms, True)[1]} = {latex_number(rhs)}"

        def add_either(rule: str, parts: list[tuple[sympy.Expr, str, str]], result: sympy.Basic | None) -> None:
            value, text, latex = _either(parts)
            d.add(StepDraft(rule=rule, value=value, text=text, latex=latex, result=result))

        first_done = eq(_factor(1, s, var), sympy.Integer(0))
        second_open = eq(_factor(p, q, var), sympy.Integer(0))
        add_either("zero_product", [first_done, second_open], None)
        r1 = d.compute(sympy.Integer(-s))
        add_either("solve_linear", [eq([x_term(1, var)], r1), second_open], r1)
        if p != 1:
            rhs = d.compute(sympy.Integer(-q))
            add_either("subtract_both_sides" if q > 0 else "add_both_sides",
                       [eq([x_term(1, var)], r1), eq([x_term(p, var)], rhs)], rhs)
        else:
            rhs = sympy.Integer(-q)
        r2 = d.compute(rhs / p)
        add_either("solve_linear", [eq([x_term(1, var)], r1), eq([x_term(1, var)], r2)], r2)
        return d.steps

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        clean = self.derive(params)
        solve = [i for i, st in enumerate(clean, start=1) if st.rule in ("solve_linear", "subtract_both_sides",
                                                                         "add_both_sides") and i > 2]
        if rule == "root_keeps_bracket_sign":
            p, q, s = params["p"], params["q"], params["s"]
            # Replay with each computed root (or p·x = −q) given the bracket's own sign.
            wrong = {solve[0]: sympy.Integer(s)}
            if p != 1:
                wrong[solve[1]] = sympy.Integer(q)
            else:
                wrong[solve[-1]] = sympy.Integer(q)
            steps = self.derive(params, wrong)
            k = solve[0] - 1
            return [*steps[:k], replace(steps[k], rule="mal:" + rule), *steps[k + 1:]]
        if rule == "single_root":
            var, s = params["var"], params["s"]
            k = next(i for i, st in enumerate(clean) if st.rule == "zero_product")
            first = [x_term(1, var), const(s)] if s else [x_term(1, var)]
            d = Derivation(steps=list(clean[:k]))
            _eq_step(d, "mal:single_root", first, [const(0)])
            _eq_step(d, "solve_linear", [x_term(1, var)], [const(-s)], sympy.Integer(-s))
            return d.steps
        return None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        a, b, c = self._coefficients(params)
        x = sympy.Symbol(params["var"])
        return sympy.Eq(a * x**2 + b * x + c + params["k"], params["k"], evaluate=False)

    def answer_of(self, value: sympy.Basic) -> sympy.Basic:
        """The solution set, encoded as the monic polynomial whose roots it is (an expression,
        so the pipeline can subtract answers; ``x² + 3x − 10`` stands for ``x = 2 or x = −5``)."""
        if not isinstance(value, sympy.Eq):
            return value
        poly = sympy.Poly(sympy.expand(value.lhs - value.rhs), *sorted(value.free_symbols, key=str))
        return poly.monic().as_expr() if poly.total_degree() > 0 else value.lhs - value.rhs

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Quadratic formula on the question's coefficients, then Vieta: x² − (sum)x + product.
        a, b, c = self._coefficients(params)
        root = sympy.sqrt(sympy.Integer(b * b - 4 * a * c))
        r1, r2 = (-b + root) / (2 * a), (-b - root) / (2 * a)
        x = sympy.Symbol(params["var"])
        return sympy.expand(x**2 - (r1 + r2) * x + r1 * r2)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        var = params["var"]
        roots = [sympy.Integer(-params["s"]), sympy.Rational(-params["q"], params["p"])]
        return (" or ".join(f"{var} = {format_number(r)}" for r in roots),
                r" \text{ or } ".join(f"{var} = {latex_number(r)}" for r in roots))

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        a, b, c = self._coefficients(params)
        var, k = params["var"], params["k"]
        x = sympy.Symbol(var)
        sq = Term(a * x**2, ("" if a == 1 else str(a)) + f"{var}^2", ("" if a == 1 else str(a)) + f"{var}^2", False)
        left = [sq, x_term(b, var)] + ([const(c + k)] if c + k != 0 else [])
        text = f"{side(left)[1]} = {format_number(sympy.Integer(k))}"
        latex = f"{side(left, True)[1]} = {k}"
        return {**params, "equation": text, "latex": latex}
