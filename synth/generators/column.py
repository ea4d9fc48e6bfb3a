"""Multi-digit whole-number families worked column by column: carries, borrows, partial products."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.presentation import Vocabulary, label_last

_step = E.add_step

_PLACES = ("ones", "tens", "hundreds", "thousands", "ten_thousands", "hundred_thousands", "millions")


def _digits(rng: np.random.Generator, n: int) -> int:
    return int(rng.integers(10 ** (n - 1), 10**n))



def _chain(parts: list[E.Node]) -> E.Node:
    """Parts joined by +, with explicit negative parts written as subtraction."""
    parts = [p for p in parts if not (isinstance(p, int) and p == 0)] or [0]
    out = parts[0]
    for p in parts[1:]:
        out = ["+", out, p]
    return out


@register
class ColumnAddition(Family):
    id = "arithmetic.multi_digit.addition"
    domain = "arithmetic"
    subdomain = "multi_digit"
    grade_band = "2-4"

    _LEVELS = {"easy": (2, 3, 3, 1), "medium": (2, 4, 5, 2), "hard": (3, 5, 6, 2)}  # addends, digits range, min carries
    malrules = (MalRule("dropped_carry", "formula_misuse",
                        "writes only the units digit of each column sum and never carries to the next column"),)

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        count, lo, hi, carries = self._LEVELS[difficulty]
        while True:
            addends = [_digits(rng, int(rng.integers(lo, hi + 1))) for _ in range(count)]
            if len(str(max(addends))) >= lo and self._carries(addends) >= carries:
                return {"addends": addends}

    @staticmethod
    def _carries(addends: list[int]) -> int:
        carry, count = 0, 0
        for i in range(len(str(max(addends)))):
            s = sum(a // 10**i % 10 for a in addends) + carry
            carry = s // 10
            count += carry > 0
        return count

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        addends: list[int] = params["addends"]
        d = Derivation(overrides)
        done: sympy.Basic = sympy.Integer(0)
        carry = 0
        for i in range(len(str(max(addends)))):
            p = 10**i
            column = [a // p % 10 for a in addends]
            carried = carry + sum(column) >= 10
            carry = (carry + sum(column)) // 10
            done = d.compute(done + sum(column) * p)
            rest = [a // (10 * p) * 10 * p for a in addends]
            node = _chain([*rest, E.leaf(done)])
            _step(d, f"add_column:{_PLACES[i]}" + (":carry" if carried else ""), node, done)
        return label_last(d.steps, "Sum")

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule != "dropped_carry":
            return None
        addends: list[int] = params["addends"]
        width = len(str(max(addends)))
        d = Derivation()
        done, marked = 0, False
        for i in range(width):
            p = 10**i
            column = sum(a // p % 10 for a in addends)
            dropped = column >= 10 and i < width - 1  # the last column writes its whole sum
            done += (column % 10 if dropped else column) * p
            rest = [a // (10 * p) * 10 * p for a in addends]
            tag = "mal:dropped_carry" if dropped and not marked else f"add_column:{_PLACES[i]}"
            marked = marked or dropped
            _step(d, tag, _chain([*rest, done]), sympy.Integer(done))
        return d.steps if marked else None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(sum(params["addends"]))

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        return Vocabulary({"sum": self.initial(params)})

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(int("".join(reversed(_digit_sum(params["addends"])))))

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        node = _chain(list(params["addends"]))
        return {**params, "n": len(params["addends"]), "expression": E.text(node), "latex": E.latex(node)}


def _digit_sum(addends: list[int]) -> list[str]:
    """Schoolbook addition on digit strings: the independent route for the answer."""
    width = max(len(str(a)) for a in addends)
    rows = [str(a).rjust(width, "0") for a in addends]
    out, carry = [], 0
    for col in range(width - 1, -1, -1):
        s = carry + sum(int(r[col]) for r in rows)
        out.append(str(s % 10))
        carry = s // 10
    out.extend(reversed(str(carry)) if carry else [])
    return out


@register
class ColumnSubtraction(Family):
    id = "arithmetic.multi_digit.subtraction"
    domain = "arithmetic"
    subdomain = "multi_digit"
    grade_band = "2-4"

    _LEVELS = {"easy": (3, 3, 1), "medium": (4, 4, 2), "hard": (5, 6, 2)}  # digits, min borrows
    malrules = (MalRule("smaller_from_larger", "formula_misuse",
                        "in each column takes the smaller digit from the larger instead of borrowing"),)

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        lo, hi, borrows = self._LEVELS[difficulty]
        while True:
            top = _digits(rng, int(rng.integers(lo, hi + 1)))
            bottom = int(rng.integers(10 ** (lo - 2), top))
            if len(str(bottom)) >= lo - 1 and self.borrow_columns(top, bottom) >= borrows:
                return {"top": top, "bottom": bottom}

    @staticmethod
    def borrow_columns(top: int, bottom: int) -> int:
        """Columns that need a regrouping. Borrowing across zeros (5003 − 8) is one regrouping
        (5003 = 4990 + 13), as written in the worked steps."""
        count = 0
        for i in range(len(str(top))):
            p = 10**i
            t_val, b_val = top % (10 * p), bottom % (10 * p)
            top, bottom = top - t_val, bottom - b_val
            if t_val < b_val:
                top -= 10 * p
                count += 1
        return count

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        top_high, bot_high = params["top"], params["bottom"]
        d = Derivation(overrides)
        done: sympy.Basic = sympy.Integer(0)
        for i in range(len(str(params["top"]))):
            p = 10**i
            t_val, b_val = top_high % (10 * p), bot_high % (10 * p)
            top_high, bot_high = top_high - t_val, bot_high - b_val
            rest: list[E.Node] = [] if top_high == 0 else [top_high if bot_high == 0 else ["-", top_high, bot_high]]
            if t_val < b_val:  # borrow ten of this place from the next column
                top_high -= 10 * p
                t_val += 10 * p
                rest = [top_high if bot_high == 0 else ["-", top_high, bot_high]] if top_high else []
                column = ["group", ["-", t_val, b_val]]
                _step(d, f"borrow:{_PLACES[i]}", _chain([*rest, column, E.leaf(done)]))
            done = d.compute(done + t_val - b_val)
            _step(d, f"subtract_column:{_PLACES[i]}", _chain([*rest, E.leaf(done)]), done)
        return label_last(d.steps, "Difference")

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule != "smaller_from_larger":
            return None
        top, bottom = params["top"], params["bottom"]
        d = Derivation()
        done, marked = 0, False
        for i in range(len(str(top))):
            p = 10**i
            t_digit, b_digit = top // p % 10, bottom // p % 10
            done += abs(t_digit - b_digit) * p
            top_high, bot_high = top // (10 * p) * 10 * p, bottom // (10 * p) * 10 * p
            rest: list[E.Node] = [] if top_high == 0 else [top_high if bot_high == 0 else ["-", top_high, bot_high]]
            flipped = t_digit < b_digit
            tag = "mal:smaller_from_larger" if flipped and not marked else f"subtract_column:{_PLACES[i]}"
            marked = marked or flipped
            _step(d, tag, _chain([*rest, done]), sympy.Integer(done))
        return d.steps if marked else None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(params["top"] - params["bottom"])

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        return Vocabulary({"difference": self.initial(params)})

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Counting up from the smaller number (a different route from column borrowing).
        top, bottom = params["top"], params["bottom"]
        gap, here = 0, bottom
        for p in (10**k for k in range(len(str(top)), -1, -1)):
            while here + p <= top:
                here += p
                gap += p
        return sympy.Integer(gap)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        node = ["-", params["top"], params["bottom"]]
        return {**params, "expression": E.text(node), "latex": E.latex(node)}


@register
class ColumnMultiplication(Family):
    id = "arithmetic.multi_digit.multiplication"
    domain = "arithmetic"
    subdomain = "multi_digit"
    grade_band = "3-5"

    # digits of each factor; hard: on half of the problems a four-digit first factor
    _LEVELS = {"easy": (2, 2, False), "medium": (3, 2, False), "hard": (3, 3, True)}
    malrules = (MalRule("place_value_dropped", "formula_misuse",
                        "multiplies by the tens (and hundreds) digit as if it were ones, leaving out the zeros"),)

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        da, db, four_digits = self._LEVELS[difficulty]
        if four_digits and rng.random() < 0.5:
            da = 4
        while True:
            a, b = _digits(rng, da), _digits(rng, db)
            if "0" not in str(b) and a % 10 != 0:
                return {"a": a, "b": b}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        a, b = params["a"], params["b"]
        parts = [b // 10**i % 10 * 10**i for i in range(len(str(b)))]  # ones first, as in the column method
        return label_last(self._worked(a, parts, overrides, "split_multiplier"), "Product")

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule != "place_value_dropped":
            return None
        b = params["b"]
        return self._worked(params["a"], [b // 10**i % 10 for i in range(len(str(b)))], {}, "mal:place_value_dropped")

    @staticmethod
    def _worked(a: int, parts: list[int], overrides: Mapping[int, sympy.Basic], first: str) -> list[StepDraft]:
        d = Derivation(overrides)
        _step(d, first, _chain([["*", a, p] for p in parts]))
        shown: list[E.Node] = [["*", a, p] for p in parts]
        for j, p in enumerate(parts):
            product = d.compute(sympy.Integer(a * p))
            shown[j] = E.leaf(product)
            _step(d, "partial_product", _chain(shown), product)
        total = sympy.Integer(E.value(shown[0]))
        for j in range(1, len(parts)):
            total = d.compute(total + E.sym(shown[j]))
            _step(d, "add_partial_products", _chain([E.leaf(total), *shown[j + 1:]]), total)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(params["a"] * params["b"])

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        return Vocabulary({"product": self.initial(params)})

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Lattice (digit-by-digit) products summed by place value: independent of the chain.
        a, b = str(params["a"]), str(params["b"])
        total = sum(int(x) * int(y) * 10 ** (len(a) - 1 - i + len(b) - 1 - j)
                    for i, x in enumerate(a) for j, y in enumerate(b))
        return sympy.Integer(total)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        node = ["*", params["a"], params["b"]]
        return {**params, "expression": E.text(node), "latex": E.latex(node)}
