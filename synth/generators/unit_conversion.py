"""Converting units: mixed units, two conversion factors, km/h and m/s."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.presentation import unit_last

_step = E.add_step
_dec = E.dec


# name: (big unit, small unit, factors from big to small)
_MIXED = {"length": ("m", "cm", (100,)), "mass": ("kg", "g", (1000,)), "time": ("h", "min", (60,)),
          "volume": ("L", "mL", (1000,)), "distance": ("km", "m", (1000,))}
_TWO_STEP = {"time": ("h", "s", (60, 60)), "distance": ("km", "cm", (1000, 100)),
             "days": ("days", "min", (24, 60)), "mass": ("t", "g", (1000, 1000))}


_LEVELS = {"easy": "mixed", "medium": "two_factor", "hard": "speed"}  # params["level"] of each difficulty


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
        samplers = {"mixed": self._sample_mixed, "two_factor": self._sample_two_factor, "speed": self._sample_speed}
        return self._with_unit(samplers[_LEVELS[difficulty]](rng))

    @staticmethod
    def _sample_mixed(rng: np.random.Generator) -> dict[str, Any]:
        """3 m 45 cm in cm."""
        kind = sorted(_MIXED)[int(rng.integers(len(_MIXED)))]
        factor = _MIXED[kind][2][0]
        return {"level": "mixed", "kind": kind, "big": int(rng.integers(1, 20)), "small": int(rng.integers(1, factor))}

    @staticmethod
    def _sample_two_factor(rng: np.random.Generator) -> dict[str, Any]:
        """2.5 h in s: two factors, either direction."""
        kind = sorted(_TWO_STEP)[int(rng.integers(len(_TWO_STEP)))]
        f1, f2 = _TWO_STEP[kind][2]
        amount = Fraction(int(rng.integers(2, 40)), int(rng.choice([1, 2, 4])))
        down = bool(rng.random() < 0.5)
        value = amount if down else amount * f1 * f2  # going up starts from the small unit
        return {"level": "two_factor", "kind": kind, "to_small": down, "amount": E.decimal_text(value)}

    @staticmethod
    def _sample_speed(rng: np.random.Generator) -> dict[str, Any]:
        """km/h to m/s or back."""
        to_ms = bool(rng.random() < 0.5)
        speed = int(rng.integers(2, 45)) * (18 if to_ms else 5)  # whole numbers both ways
        return {"level": "speed", "to_ms": to_ms, "amount": speed}

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
