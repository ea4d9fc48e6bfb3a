"""Sharing an amount in a ratio: total parts, one part, each share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.presentation import Vocabulary, label_last

_step = E.add_step
_dec = E.dec

_NAMES = ("Ava", "Ben", "Chen", "Dara", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jo")


@dataclass(frozen=True)
class _Level:
    people: int  # how many share
    ask: str  # "share": one person's share; "difference": the largest share minus the smallest
    parts: int  # ratio parts are drawn from 1 to this − 1
    unit_top: int  # one part is worth 2 to this − 1


_LEVELS = {"easy": _Level(2, "share", parts=10, unit_top=30), "medium": _Level(3, "share", parts=10, unit_top=120),
           "hard": _Level(3, "difference", parts=13, unit_top=120)}


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
        level = _LEVELS[difficulty]
        n, ask = level.people, level.ask
        while True:
            ratio = [int(rng.integers(1, level.parts)) for _ in range(n)]
            if len(set(ratio)) < n or np.gcd.reduce(ratio) != 1:
                continue
            unit = int(rng.integers(2, level.unit_top))
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
