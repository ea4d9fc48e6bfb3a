"""Minutes between the times shown on two clocks, across noon, or compared with a plan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import mal_chain, reduce_steps, sample_role
from synth.generators._figure import pick
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.presentation import unit_last
from synth.records import Figure, Given


def _clock_text(h: int, m: int) -> str:
    return f"{h}:{m:02d}"


@dataclass(frozen=True)
class _Level:
    step: int  # both times are on multiples of this many minutes
    hours: tuple[int, int]  # the start hour is drawn from lo to hi − 1
    longest: int  # the interval is drawn under this many minutes
    across_noon: bool  # the end is past 12 (times read am/pm); else both before 12
    plan: bool  # the interval is compared with a planned duration


_LEVELS = {"easy": _Level(5, (1, 12), 180, across_noon=False, plan=False),
           "medium": _Level(5, (8, 12), 300, across_noon=True, plan=False),
           "hard": _Level(1, (8, 12), 300, across_noon=True, plan=True)}


@register
class ClockInterval(Family):
    """Minutes between the times on two clocks (medium, hard: across noon; hard: compared with a plan)."""

    id = "commonsense.clock.interval"
    domain = "commonsense"
    subdomain = "time"
    grade_band = "3-5"
    figure_kind = "clock"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("hour_hand_as_minutes", "incorrect_fact", "swaps the hands: reads the hour hand as the minutes"),
        MalRule("decimal_time", "unit_conversion", "subtracts the times as if an hour had 100 minutes"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        step = level.step
        while True:
            h1 = int(rng.integers(*level.hours))
            m1 = int(rng.integers(0, 60 // step)) * step
            length = int(rng.integers(20, level.longest))
            length -= (m1 + length) % step
            start = h1 * 60 + m1
            end = start + length
            h2, m2 = divmod(end, 60)
            if not level.across_noon and h2 > 12 or length < 15:
                continue
            if level.across_noon and h2 <= 12:
                continue
            if m1 == 0 or m2 == 0 or (m1 // 5) % 12 == h1 % 12:
                continue
            params = {"h1": h1, "m1": m1, "h2": h2, "m2": m2, "pm": level.across_noon,
                      "context": int(rng.integers(len(_CLOCK_CONTEXTS))), "image_role": sample_role(rng),
                      "answer_unit": "min"}
            if level.plan:
                params["plan"] = int(rng.integers(1, 4)) * 60 + int(pick(rng, (0, 15, 30, 45)))
                if params["plan"] == length:
                    continue
            return params

    @staticmethod
    def _minutes(h: int, m: int, *, hundred: bool = False) -> E.Node:
        return ["group", ["+", ["*", h, 100 if hundred else 60], m]]

    def _tree(self, params: dict[str, Any], *, swap: bool = False, hundred: bool = False) -> E.Node:
        h1, m1 = (params["m1"] // 5 or 12, params["h1"] * 5 % 60) if swap else (params["h1"], params["m1"])
        h2 = params["h2"]
        hour2: E.Node = h2 if not params["pm"] else ["group", ["+", h2 - 12, 12]]
        node: E.Node = ["-", ["group", ["+", ["*", hour2, 100 if hundred else 60], params["m2"]]],
                        self._minutes(h1, m1, hundred=hundred)]
        if "plan" in params:
            hours, minutes = divmod(params["plan"], 60)
            node = ["-", node, self._minutes(hours, minutes)] if minutes else ["-", node, ["*", hours, 60]]
        return node

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="times_in_minutes")
        return unit_last(d.steps, params["answer_unit"]) if params.get("answer_unit") else d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Count on: to the next full hour, whole hours, then the minutes past.
        h1, m1, h2, m2 = params["h1"], params["m1"], params["h2"], params["m2"]
        minutes = (60 - m1) + (h2 - h1 - 1) * 60 + m2
        return sympy.Integer(minutes - params.get("plan", 0))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return f"{E.num_text(answer)} minutes", rf"{E.num_latex(answer)}\ \text{{minutes}}"

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "hour_hand_as_minutes":
            if params["m1"] % 5:
                return None
            return mal_chain(self, params, self._tree(params, swap=True), "times_in_minutes")
        if rule == "decimal_time":
            return mal_chain(self, params, self._tree(params, hundred=True), "times_in_minutes")
        return None

    def _captions(self, params: dict[str, Any]) -> tuple[str, str]:
        a, b = _CLOCK_CONTEXTS[params["context"]][:2]
        if params["pm"]:
            return f"{a} (morning)", f"{b} (afternoon)"
        return a, b

    def figure(self, params: dict[str, Any]) -> Figure:
        elements: list[dict[str, Any]] = []
        for i, caption in enumerate(self._captions(params), start=1):
            h, m = params[f"h{i}"] % 12 or 12, params[f"m{i}"]
            elements += [{"id": f"face_{i}", "type": "face", "slot": i - 1, "hour": h, "minute": m},
                         {"id": f"hand_hour_{i}", "type": "hand", "slot": i - 1, "hand": "hour", "hour": h,
                          "minute": m},
                         {"id": f"hand_minute_{i}", "type": "hand", "slot": i - 1, "hand": "minute", "hour": h,
                          "minute": m},
                         {"id": f"label_{i}", "type": "label", "slot": i - 1, "text": caption}]
        return Figure("clock", {"size_in": [4.4, 2.5], "faces": 2, "elements": elements})

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        useful = params["image_role"] == "useful"
        out = []
        for i in (1, 2):
            for part in ("h", "m"):
                hand = "hour" if part == "h" else "minute"
                out.append(Given(f"{part}{i}", str(params[f"{part}{i}"]), "text" if useful else
                                 f"figure:hand_{hand}_{i}"))
        if "plan" in params:
            out.append(Given("plan", str(params["plan"]), "text", "min"))
        return tuple(out)

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        out = []
        for i in (1, 2):
            h, m = params[f"h{i}"], params[f"m{i}"]
            # Past the half hour the hour hand is nearly at the next number: the classic misread.
            hour_misread = (h + 1,) if m >= 30 else ((h - 1,) if h > 1 else ())
            out.append(Reading(f"h{i}", f"hand_hour_{i}", "misread_value", hour_misread))
            out.append(Reading(f"m{i}", f"hand_minute_{i}", "misread_value",
                               tuple(v for v in (m + 5, m - 5) if 0 <= v < 60)))
            if m % 5 == 0:  # the number the minute hand points at read as the minutes (25 past read as 5 past)
                out.append(Reading(f"m{i}", f"hand_minute_{i}", "misread_scale", (m // 5,)))
            else:  # one minute mark too many or too few counted on from the last number
                out.append(Reading(f"m{i}", f"hand_minute_{i}", "miscount", (m + 1, m - 1)))
            swapped = self._hands_swapped(params, i)
            if swapped:  # the face's numbers read against the wrong hands: hour and minutes change together
                out.append(Reading(f"h{i}", f"hand_hour_{i}", "misread_label", (swapped,), also=(f"m{i}",)))
            backwards = self._minutes_backwards(params, i)
            if backwards is not None:  # 40 past read as 20 past: minutes counted anticlockwise from the 12
                out.append(Reading(f"m{i}", f"hand_minute_{i}", "misread_relation", (backwards,)))
        return effective_readings(self, params, out)

    @staticmethod
    def _minutes_backwards(params: dict[str, Any], i: int) -> int | None:
        """The minutes of clock i counted from the 12 the wrong way round, or None if implausible.

        On the left half of the face (from 35 minutes past) a pupil who has learnt "minutes to" counts
        from the 12 anticlockwise and writes that as minutes past: 4:40 becomes 4:20. Only offered where
        the clocks still read in order (a start after the end would be noticed).
        """
        m = params[f"m{i}"]
        if m < 35:  # only clearly "to" times, not a hand just past the 6
            return None
        if 60 - m == m // 5:  # 10 to (the hand on the 10) is also the hand's number read as minutes: misread_scale
            return None
        times = {j: params[f"h{j}"] * 60 + params[f"m{j}"] for j in (1, 2)}
        times[i] += 60 - 2 * m
        return 60 - m if times[2] > times[1] else None

    @staticmethod
    def _hands_swapped(params: dict[str, Any], i: int) -> tuple[int, int] | None:
        """Clock i read with its hands swapped, as (hour, minutes) in params' terms; None if implausible.

        Only where the minute hand points right at a number (the number read as the hour) and the time
        read stays on the same side of noon and before the other clock (a pupil would notice otherwise).
        The ``hour_hand_as_minutes`` mal-rule writes the same numbers for clock 1: there the cause is
        not knowing which hand is which, here it is seeing them the wrong way round.
        """
        h, m = params[f"h{i}"], params[f"m{i}"]
        if m % 5:
            return None
        hour, minutes = m // 5 or 12, (h % 12) * 5
        if params["pm"] and hour == 12:
            return None
        if params["pm"] and i == 2:
            hour += 12
        times = {j: params[f"h{j}"] * 60 + params[f"m{j}"] for j in (1, 2)}
        times[i] = hour * 60 + minutes
        return (hour, minutes) if times[2] > times[1] else None

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        a, b, event = _CLOCK_CONTEXTS[params["context"]]
        plan_h, plan_m = divmod(params.get("plan", 0), 60)
        plan = f"{plan_h} hour{'s' if plan_h > 1 else ''}" + (f" {plan_m} minutes" if plan_m else "")
        return {**params, "event": event, "start_label": a.lower(), "end_label": b.lower(),
                "t1": _clock_text(params["h1"], params["m1"]) + (" am" if params["pm"] else ""),
                "t2": _clock_text(params["h2"] % 12 or 12, params["m2"]) + (" pm" if params["pm"] else ""),
                "plan_text": plan, "has_plan": "plan" in params}


_CLOCK_CONTEXTS = (
    ("Start", "Finish", "a school trip"),
    ("Leaves", "Arrives", "a train journey"),
    ("Starts", "Ends", "a football tournament"),
    ("Begins", "Ends", "a baking class"),
    ("Sets off", "Gets home", "a bike ride"),
)
