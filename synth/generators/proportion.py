"""Proportional reasoning in words: sharing in a ratio, unit rates, converting units."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.presentation import Vocabulary, label_last, unit_last

_step = E.add_step
_dec = E.dec

_NAMES = ("Ava", "Ben", "Chen", "Dara", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jo")




@register
class RatioShare(Family):
    """Share an amount in a ratio; hard asks for the gap between the largest and smallest share."""

    id = "arithmetic.ratio.share"
    domain = "arithmetic"
    subdomain = "ratio"
    grade_band = "6-8"
    malrules = (
        MalRule("wrong_share", "misinterpret_question",
                "answers for the wrong person: another person's share, or the largest share instead of the gap"),
        MalRule("divide_by_people", "invalid_assumption",
                "assumes one part is the total divided by the number of people, not by the number of parts"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        n = 2 if difficulty == "easy" else 3
        ask = "difference" if difficulty == "hard" else "share"
        while True:
            ratio = [int(rng.integers(1, 10 if difficulty != "hard" else 13)) for _ in range(n)]
            if len(set(ratio)) < n or np.gcd.reduce(ratio) != 1:
                continue
            unit = int(rng.integers(2, 30 if difficulty == "easy" else 120))
            start = int(rng.integers(0, len(_NAMES) - n + 1))
            return {"ratio": ratio, "total": unit * sum(ratio), "ask": ask,
                    "who": int(rng.integers(n)), "names": list(_NAMES[start:start + n])}

    def _parts(self, params: dict[str, Any]) -> E.Node:
        r = params["ratio"]
        if params["ask"] == "share":
            return r[params["who"]]
        return ["group", ["-", max(r), min(r)]]

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        total, ratio = params["total"], params["ratio"]
        d = Derivation(overrides)
        parts = self._parts(params)
        _step(d, "total_parts", ["*", ["/", total, ["group", E.sum_of(list(ratio))]], parts])
        n_parts = d.compute(sympy.Integer(sum(ratio)))
        _step(d, "add_parts", ["*", ["/", total, E.leaf(n_parts)], parts], n_parts)
        one = d.compute(sympy.Integer(total) / n_parts)
        _step(d, "one_part", ["*", _dec(one), parts], one)
        if not isinstance(parts, int):
            k = d.compute(sympy.Integer(max(ratio) - min(ratio)))
            parts = E.leaf(k)
            _step(d, "parts_difference", ["*", _dec(one), parts], k)
        answer = d.compute(one * E.sym(parts))
        _step(d, "scale_up", _dec(answer), answer)
        return label_last(d.steps, self._label(params))

    @staticmethod
    def _label(params: dict[str, Any]) -> str:
        return f"{params['names'][params['who']]}'s share" if params["ask"] == "share" else "Difference"

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        """Everyone's share by name (a contextual swap names the wrong person), or the difference asked for."""
        names, ratio = params["names"], params["ratio"]
        if params["ask"] != "share":
            return Vocabulary({"difference": self.target(params)}, tuple(n.lower() for n in names))
        shares = {f"{n}'s share": sympy.Rational(params["total"] * r, sum(ratio)) for n, r in zip(names, ratio)}
        return Vocabulary(shares, tuple(n.lower() for n in names))

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        ratio = params["ratio"]
        if rule == "wrong_share":
            if params["ask"] == "share":
                misread = {**params, "who": (params["who"] + 1) % len(ratio)}
            else:
                misread = {**params, "ask": "share", "who": ratio.index(max(ratio))}
            steps = self.derive(misread)
            return [replace(steps[0], rule="mal:" + rule), *steps[1:]]
        if rule == "divide_by_people":
            total, people = params["total"], len(ratio)
            parts = self._parts(params)
            d = Derivation()
            _step(d, "mal:" + rule, ["*", ["/", total, people], parts])
            one = sympy.Rational(total, people)
            _step(d, "one_part", ["*", _dec(one), parts], one)
            if not isinstance(parts, int):
                k = sympy.Integer(max(ratio) - min(ratio))
                parts = E.leaf(k)
                _step(d, "parts_difference", ["*", _dec(one), parts], k)
            answer = one * E.sym(parts)
            _step(d, "scale_up", _dec(answer), answer)
            return d.steps
        return None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(params["total"]) * E.sym(self._parts(params)) / sum(params["ratio"])

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Share everyone's amount, then read off (a fraction-of-total route).
        shares = [Fraction(params["total"] * r, sum(params["ratio"])) for r in params["ratio"]]
        v = shares[params["who"]] if params["ask"] == "share" else max(shares) - min(shares)
        return sympy.Rational(v.numerator, v.denominator)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        names = params["names"]
        people = ", ".join(names[:-1]) + " and " + names[-1]
        ratio = ":".join(str(r) for r in params["ratio"])
        order = [names[i] for i in range(len(names))]
        return {**params, "people": people, "ratio_text": ratio, "person": names[params["who"]],
                "most": order[params["ratio"].index(max(params["ratio"]))],
                "least": order[params["ratio"].index(min(params["ratio"]))],
                "latex": f"{params['total']} \\text{{ in the ratio }} {ratio}"}


@register
class UnitRate(Family):
    """Unitary method: find the rate for one, then scale (hard: time given in hours and minutes)."""

    id = "arithmetic.rate.unit_rate"
    domain = "arithmetic"
    subdomain = "rates"
    grade_band = "6-7"

    _CONTEXTS = ("cost", "speed", "printer", "recipe")
    malrules = (
        MalRule("rate_inverted", "formula_misuse",
                "finds the rate for one by dividing the count by the amount (the unit rate upside down)"),
        MalRule("hour_as_100_minutes", "unit_conversion", "converts hours to minutes with 100 minutes in an hour"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        context = self._CONTEXTS[int(rng.integers(len(self._CONTEXTS)))]
        while True:
            n1 = int(rng.integers(2, 13))
            if difficulty == "easy":
                rate = Fraction(int(rng.integers(2, 20)))
                n2 = int(rng.integers(2, 20))
                hours, minutes = 0, 0
            elif difficulty == "medium":
                rate = Fraction(int(rng.integers(105, 2000)), 100 if context == "cost" else 10)
                n2 = int(rng.integers(2, 40))
                hours, minutes = 0, 0
            else:
                rate = Fraction(int(rng.integers(2, 30)))
                hours, minutes = int(rng.integers(1, 4)), int(rng.choice([10, 15, 20, 30, 40, 45, 50]))
                n2 = hours * 60 + minutes
            if n2 != n1:
                return {"context": "printer" if difficulty == "hard" else context, "n1": n1,
                        "amount1": E.decimal_text(rate * n1), "n2": n2, "hours": hours, "minutes": minutes}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        return self._worked(params, overrides)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "rate_inverted" or (rule == "hour_as_100_minutes" and params["hours"]):
            return self._worked(params, {}, rule)
        return None

    def _worked(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic],
                mal: str | None = None) -> list[StepDraft]:
        d = Derivation(overrides)
        n1, amount = params["n1"], params["amount1"]
        hours, minutes = params["hours"], params["minutes"]
        per_hour = 100 if mal == "hour_as_100_minutes" else 60
        count: E.Node = ["group", ["+", ["*", hours, per_hour], minutes]] if hours else params["n2"]
        inverted = mal == "rate_inverted"
        _step(d, "mal:" + mal if mal else "unitary_method", ["*", ["/", n1, amount] if inverted else ["/", amount, n1],
                                                              count])
        rate = d.compute(n1 / E.sym(amount) if inverted else E.sym(amount) / n1)
        _step(d, "rate_for_one", ["*", _dec(rate), count], rate)
        if hours:
            h = d.compute(sympy.Integer(hours * per_hour))
            _step(d, "hours_to_minutes", ["*", _dec(rate), ["group", ["+", E.leaf(h), minutes]]], h)
            m = d.compute(h + minutes)
            count = E.leaf(m)
            _step(d, "total_minutes", ["*", _dec(rate), count], m)
        answer = d.compute(rate * E.sym(count))
        _step(d, "scale_up", _dec(answer), answer)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(params["amount1"]) * params["n2"] / params["n1"]

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Scale factor route: amount × (n2 / n1), without a rate for one.
        v = Fraction(params["amount1"]) * Fraction(params["n2"], params["n1"])
        return sympy.Rational(v.numerator, v.denominator)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer, decimal=True), E.num_latex(answer, decimal=True)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "latex": f"{params['amount1']} / {params['n1']} \\times {params['n2']}"}


# name: (big unit, small unit, factors from big to small)
_MIXED = {"length": ("m", "cm", (100,)), "mass": ("kg", "g", (1000,)), "time": ("h", "min", (60,)),
          "volume": ("L", "mL", (1000,)), "distance": ("km", "m", (1000,))}
_TWO_STEP = {"time": ("h", "s", (60, 60)), "distance": ("km", "cm", (1000, 100)),
             "days": ("days", "min", (24, 60)), "mass": ("t", "g", (1000, 1000))}


@register
class UnitConversion(Family):
    """easy: 3 m 45 cm in cm; medium: 2.5 h in s (two factors, either direction); hard: km/h <-> m/s."""

    id = "arithmetic.units.conversion"
    domain = "arithmetic"
    subdomain = "measurement"
    grade_band = "5-7"
    malrules = (
        MalRule("wrong_factor", "unit_conversion",
                "uses the wrong conversion factor (100 for 1000, 1000 for 100, 100 minutes in an hour)"),
        MalRule("wrong_direction", "unit_conversion",
                "multiplies by the conversion factors where it should divide, or divides where it should multiply"),
        MalRule("sixty_seconds_in_an_hour", "unit_conversion", "takes an hour to be 60 seconds"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        if difficulty == "easy":
            kind = sorted(_MIXED)[int(rng.integers(len(_MIXED)))]
            factor = _MIXED[kind][2][0]
            return self._with_unit({"level": "mixed", "kind": kind, "big": int(rng.integers(1, 20)),
                                    "small": int(rng.integers(1, factor))})
        if difficulty == "medium":
            kind = sorted(_TWO_STEP)[int(rng.integers(len(_TWO_STEP)))]
            f1, f2 = _TWO_STEP[kind][2]
            amount = Fraction(int(rng.integers(2, 40)), int(rng.choice([1, 2, 4])))
            down = bool(rng.random() < 0.5)
            value = amount if down else amount * f1 * f2  # going up starts from the small unit
            return self._with_unit({"level": "two_factor", "kind": kind, "to_small": down,
                                    "amount": E.decimal_text(value)})
        to_ms = bool(rng.random() < 0.5)
        speed = int(rng.integers(2, 45)) * (18 if to_ms else 5)  # whole numbers both ways
        return self._with_unit({"level": "speed", "to_ms": to_ms, "amount": speed})

    def _with_unit(self, params: dict[str, Any]) -> dict[str, Any]:
        """The answer's unit, declared so the verifier can check the unit written after the answer."""
        return {**params, "answer_unit": self.question_context(params)["to_unit"]}

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        if params["level"] == "mixed":
            factor = _MIXED[params["kind"]][2][0]
            big, small = params["big"], params["small"]
            _step(d, "convert_big_unit", ["+", ["*", big, factor], small])
            b = d.compute(sympy.Integer(big * factor))
            _step(d, "multiply", ["+", E.leaf(b), small], b)
            total = d.compute(b + small)
            _step(d, "add", E.leaf(total), total)
            return unit_last(d.steps, params["answer_unit"])
        if params["level"] == "two_factor":
            f1, f2 = _TWO_STEP[params["kind"]][2]
            if not params["to_small"]:  # going up, the small unit's factor comes first
                f1, f2 = f2, f1
            op = "*" if params["to_small"] else "/"
            amount = params["amount"]
            _step(d, "conversion_factors", [op, [op, amount, f1], f2])
            first = d.compute(E.sym([op, amount, f1]))
            _step(d, "first_factor", [op, _dec(first), f2], first)
            answer = d.compute(E.sym([op, _dec(first), f2]))
            _step(d, "second_factor", _dec(answer), answer)
            return unit_last(d.steps, params["answer_unit"])
        speed = params["amount"]
        hour: E.Node = ["group", ["*", 60, 60]]
        node = ["/", ["*", speed, 1000], hour] if params["to_ms"] else ["/", ["*", speed, hour], 1000]
        _step(d, "conversion_factors", node)
        s = d.compute(sympy.Integer(3600))
        hour = E.leaf(s)
        node = ["/", ["*", speed, 1000], hour] if params["to_ms"] else ["/", ["*", speed, hour], 1000]
        _step(d, "seconds_in_an_hour", node, s)
        top = d.compute(sympy.Integer(speed) * (1000 if params["to_ms"] else s))
        node = ["/", E.leaf(top), hour] if params["to_ms"] else ["/", E.leaf(top), 1000]
        _step(d, "multiply", node, top)
        answer = d.compute(E.sym(node))
        _step(d, "divide", _dec(answer), answer)
        return unit_last(d.steps, params["answer_unit"])

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        d = Derivation()
        level = params["level"]
        if rule == "wrong_factor" and level == "mixed":
            factor = {100: 1000, 1000: 100, 60: 100}[_MIXED[params["kind"]][2][0]]
            big, small = params["big"], params["small"]
            _step(d, "mal:" + rule, ["+", ["*", big, factor], small])
            _step(d, "multiply", ["+", big * factor, small], sympy.Integer(big * factor))
            _step(d, "add", big * factor + small, sympy.Integer(big * factor + small))
            return unit_last(d.steps, params["answer_unit"])
        if rule == "wrong_direction" and level == "two_factor":
            f1, f2 = _TWO_STEP[params["kind"]][2]
            if params["to_small"]:
                f1, f2 = f2, f1
            op = "/" if params["to_small"] else "*"
            amount = params["amount"]
            _step(d, "mal:" + rule, [op, [op, amount, f1], f2])
            first = E.sym([op, amount, f1])
            _step(d, "first_factor", [op, _dec(first), f2], first)
            answer = E.sym([op, _dec(first), f2])
            _step(d, "second_factor", _dec(answer), answer)
            return unit_last(d.steps, params["answer_unit"])
        if rule == "sixty_seconds_in_an_hour" and level == "speed":
            speed = params["amount"]
            node = ["/", ["*", speed, 1000], 60] if params["to_ms"] else ["/", ["*", speed, 60], 1000]
            _step(d, "mal:" + rule, node)
            top = speed * (1000 if params["to_ms"] else 60)
            node = ["/", top, 60] if params["to_ms"] else ["/", top, 1000]
            _step(d, "multiply", node, sympy.Integer(top))
            answer = E.sym(node)
            _step(d, "divide", _dec(answer), answer)
            return unit_last(d.steps, params["answer_unit"])
        return None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        if params["level"] == "mixed":
            return sympy.Integer(params["big"] * _MIXED[params["kind"]][2][0] + params["small"])
        if params["level"] == "two_factor":
            f1, f2 = _TWO_STEP[params["kind"]][2]
            amount = E.sym(params["amount"])
            return amount * f1 * f2 if params["to_small"] else amount / (f1 * f2)
        return sympy.Rational(params["amount"] * 5, 18) if params["to_ms"] else sympy.Rational(params["amount"] * 18, 5)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Dimensional analysis on exact fractions, one unit ratio at a time.
        if params["level"] == "mixed":
            factor = Fraction(_MIXED[params["kind"]][2][0])
            v = params["big"] * factor + params["small"]
        elif params["level"] == "two_factor":
            v = Fraction(params["amount"])
            for f in _TWO_STEP[params["kind"]][2]:
                v = v * f if params["to_small"] else v / f
        else:
            km_per_h_in_m_per_s = Fraction(1000, 3600)
            v = params["amount"] * (km_per_h_in_m_per_s if params["to_ms"] else 1 / km_per_h_in_m_per_s)
        return sympy.Rational(v.numerator, v.denominator)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        unit = self.question_context(params)["to_unit"]
        return f"{E.num_text(answer, decimal=True)} {unit}", rf"{E.num_latex(answer, decimal=True)}\ \mathrm{{{unit}}}"

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        if params["level"] == "mixed":
            big, small, _ = _MIXED[params["kind"]]
            ctx = {"from_text": f"{params['big']} {big} {params['small']} {small}", "to_unit": small}
        elif params["level"] == "two_factor":
            big, small, _ = _TWO_STEP[params["kind"]]
            src, dst = (big, small) if params["to_small"] else (small, big)
            ctx = {"from_text": f"{params['amount']} {src}", "to_unit": dst}
        else:
            src, dst = ("km/h", "m/s") if params["to_ms"] else ("m/s", "km/h")
            ctx = {"from_text": f"{params['amount']} {src}", "to_unit": dst}
        return {**params, **ctx, "latex": ctx["from_text"]}
