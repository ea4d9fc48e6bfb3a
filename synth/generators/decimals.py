"""Decimal arithmetic: aligning places for + and −, multiplying through whole numbers."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.presentation import form_request

_step = E.add_step


def places(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def padded(v: sympy.Basic | Fraction, n: int) -> E.Node:
    """v written with at least n decimal places (``9.4`` -> ``"9.40"``), as pupils align them."""
    f = E.to_fraction(v)
    if not E.is_decimal(f):
        return E.leaf(f)
    body = E.decimal_text(f)
    have = places(body)
    if n > have:
        body = (body if have else body + ".") + "0" * (n - have)
    return body if "." in body else int(body)



def _random_decimal(rng: np.random.Generator, lo: int, hi: int, dp: int) -> str:
    scaled = int(rng.integers(lo * 10**dp, hi * 10**dp))
    while scaled % 10 == 0:
        scaled = int(rng.integers(lo * 10**dp, hi * 10**dp))
    return E.decimal_text(Fraction(scaled, 10**dp))


_LEVELS = {"easy": "add_sub", "medium": "multiply", "hard": "bill"}  # params["kind"] of each difficulty


@register
class DecimalOperations(Family):
    """easy: a + b − c; medium: a × b; hard: a × b + c − d (a shopping bill with a coupon)."""

    id = "arithmetic.decimals.operations"
    domain = "arithmetic"
    subdomain = "decimals"
    grade_band = "5-7"
    malrules = (
        MalRule("align_last_digits", "formula_misuse",
                "lines the numbers up by their last digits instead of by the decimal point"),
        MalRule("places_of_one_factor", "formula_misuse",
                "places the decimal point by counting the decimal places of the first factor only"),
        MalRule("coupon_added", "misinterpret_question", "adds the coupon to the bill instead of taking it off"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        kind = _LEVELS[difficulty]
        while True:
            if kind == "add_sub":
                p = {"kind": "add_sub", "a": _random_decimal(rng, 5, 40, 2), "b": _random_decimal(rng, 1, 20, 2),
                     "c": _random_decimal(rng, 1, 10, 1)}
                ok = places(p["a"]) != places(p["c"]) or places(p["b"]) != places(p["c"])
            elif kind == "multiply":
                p = {"kind": "multiply", "a": _random_decimal(rng, 1, 20, 2), "b": _random_decimal(rng, 1, 10, 1)}
                ok = True
            else:
                p = {"kind": "bill", "a": _random_decimal(rng, 1, 15, 2), "n": int(rng.integers(3, 10)),
                     "b": _random_decimal(rng, 2, 20, 2), "c": _random_decimal(rng, 1, 5, 1)}
                ok = True
            if ok and self.initial(p) > 0:
                return {**p, "answer_form": "decimal"}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        if params["kind"] == "add_sub":
            a, b, c = params["a"], params["b"], params["c"]
            n = max(places(a), places(b), places(c))
            _step(d, "align_decimal_places", ["-", ["+", padded(E.value(a), n), padded(E.value(b), n)],
                                              padded(E.value(c), n)])
            s = d.compute(E.sym(["+", a, b]))
            _step(d, "add", ["-", padded(s, n), padded(E.value(c), n)], s)
            r = d.compute(s - E.sym(c))
            _step(d, "subtract", padded(r, n), r)
            return d.steps
        if params["kind"] == "multiply":
            self._product(d, params["a"], params["b"], lambda x: x)
            return d.steps
        self._bill(d, params, "-", "remove_decimal_points")
        return d.steps

    def _bill(self, d: Derivation, params: dict[str, Any], coupon: str, first: str) -> None:
        """a × n + b, then the coupon c taken off (``coupon`` "-") or, misread, added ("+")."""
        a, n, b, c = params["a"], params["n"], params["b"], params["c"]
        width = max(places(a), places(b), places(c))
        product = self._product(d, a, n, lambda x: [coupon, ["+", x, b], c], first=first)
        _step(d, "align_decimal_places", [coupon, ["+", padded(product, width), padded(E.value(b), width)],
                                          padded(E.value(c), width)])
        s = d.compute(product + E.sym(b))
        _step(d, "add", [coupon, padded(s, width), padded(E.value(c), width)], s)
        r = d.compute(s - E.sym(c) if coupon == "-" else s + E.sym(c))
        _step(d, "subtract" if coupon == "-" else "add", padded(r, width), r)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        kind = params["kind"]
        if rule == "align_last_digits" and kind == "add_sub":
            a, b, c = params["a"], params["b"], params["c"]
            n = max(places(a), places(b), places(c))
            # 12.5 under 3.25 with the last digits lined up reads as 1.25: every number gets n places.
            misread = [E.decimal_text(Fraction(int(x.replace(".", "")), 10**n)) for x in (a, b, c)]
            if misread == [padded(E.value(x), n) for x in (a, b, c)]:
                return None
            d = Derivation()
            shown = [padded(E.value(x), n) for x in misread]
            _step(d, "mal:align_last_digits", ["-", ["+", shown[0], shown[1]], shown[2]])
            s = E.sym(["+", misread[0], misread[1]])
            _step(d, "add", ["-", padded(s, n), padded(E.value(misread[2]), n)], s)
            r = s - E.sym(misread[2])
            _step(d, "subtract", padded(r, n), r)
            return d.steps
        if rule == "places_of_one_factor" and kind == "multiply" and places(str(params["b"])) > 0:
            d = Derivation()
            self._product(d, params["a"], params["b"], lambda x: x, shift=places(params["a"]),
                          first="mal:places_of_one_factor")
            return d.steps
        if rule == "coupon_added" and kind == "bill":
            d = Derivation()
            self._bill(d, params, "+", "mal:coupon_added")
            return d.steps
        return None

    @staticmethod
    def _product(d: Derivation, a: str, b: str | int, around: Any, shift: int | None = None,
                 first: str = "remove_decimal_points") -> sympy.Basic:
        """a × b through whole numbers: 3.46 × 2.5 = 346 × 25 ÷ 1000."""
        shift = places(a) + places(str(b)) if shift is None else shift
        whole_a, whole_b = int(str(a).replace(".", "")), int(str(b).replace(".", ""))
        _step(d, first, around(["/", ["*", whole_a, whole_b], 10**shift]))
        w = d.compute(sympy.Integer(whole_a * whole_b))
        _step(d, "multiply_whole_numbers", around(["/", E.leaf(w), 10**shift]), w)
        p = d.compute(w / sympy.Integer(10**shift))
        _step(d, "place_decimal_point", around(padded(p, 0)), p)
        return p

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        if params["kind"] == "add_sub":
            return E.sym(["-", ["+", params["a"], params["b"]], params["c"]])
        if params["kind"] == "multiply":
            return E.sym(["*", params["a"], params["b"]])
        return E.sym(["-", ["+", ["*", params["a"], params["n"]], params["b"]], params["c"]])

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Work in hundredths (cents) with integer arithmetic only.
        def cents(x: str | int) -> int:
            whole, _, frac = str(x).partition(".")
            return int(whole) * 100 + int((frac + "00")[:2])

        if params["kind"] == "add_sub":
            c = cents(params["a"]) + cents(params["b"]) - cents(params["c"])
            return sympy.Rational(c, 100)
        if params["kind"] == "multiply":
            return sympy.Rational(cents(params["a"]) * cents(params["b"]), 10000)
        c = cents(params["a"]) * params["n"] + cents(params["b"]) - cents(params["c"])
        return sympy.Rational(c, 100)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer, decimal=True), E.num_latex(answer, decimal=True)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        k = params["kind"]
        node = (["-", ["+", params["a"], params["b"]], params["c"]] if k == "add_sub" else
                ["*", params["a"], params["b"]] if k == "multiply" else
                ["-", ["+", ["*", params["a"], params["n"]], params["b"]], params["c"]])
        return {**params, "expression": E.text(node), "latex": E.latex(node),
                "form_request": form_request(params["answer_form"])}
