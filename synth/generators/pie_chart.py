"""A count read off a pie chart from its sectors' angles or percentages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import (
    data_answer,
    digit_misreads,
    mal_chain,
    rational,
    reduce_steps,
    replace_at,
    sample_role,
)
from synth.generators._figure import pick
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.presentation import Vocabulary, label_last
from synth.records import Figure, Given

_PIE_CONTEXTS = (
    ("Favourite sport", ("Football", "Tennis", "Swimming", "Netball", "Cricket"), "pupils", "chose"),
    ("How pupils travel to school", ("Walk", "Bus", "Car", "Bike", "Train"), "pupils", "travel by"),
    ("Favourite fruit", ("Apple", "Banana", "Grapes", "Mango", "Pear"), "people", "chose"),
    ("Pets owned", ("Dog", "Cat", "Fish", "Rabbit", "Bird"), "families", "own a"),
)
_PIE_ANGLES = (30, 36, 40, 45, 60, 72, 80, 90, 100, 108, 120, 135, 144, 150, 180)
# How a chart's sector numbers are printed and read: percentages of the whole, or angles in degrees.
_PERCENT, _DEGREES = "percent", "degrees"


@dataclass(frozen=True)
class _Level:
    percent_share: float  # share of charts labelled in percent (0: none, nothing drawn)
    equal_share: float  # share of charts with an unprinted sector marked equal to a printed one (0: none)
    hidden: bool  # the asked sector's angle is not printed (the solver finds it from the others)
    from_count: bool  # scaled from another sector's count (else from the total)


_LEVELS = {"easy": _Level(0.4, 0.0, hidden=False, from_count=False),
           "medium": _Level(0.0, 0.5, hidden=True, from_count=False),
           "hard": _Level(0.0, 0.0, hidden=True, from_count=True)}


@register
class PieChartReading(Family):
    """A count from a sector: easy from the total; medium, the sector's angle is the missing one; hard, from another
    sector's count.

    Some medium charts leave a second sector unprinted and mark it equal to a printed one (the same angle mark
    at the centre of both), so its angle is read from the marks.
    """

    id = "statistics.pie_chart.reading"
    domain = "statistics"
    subdomain = "charts"
    grade_band = "7-9"
    figure_kind = "pie_chart"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("pie_from_100", "formula_misuse", "treats the angle as a percentage (divides by 100, not 360)"),
        MalRule("angles_sum_180", "incorrect_fact", "takes the angles of a pie chart to add up to 180°"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        context = int(rng.integers(len(_PIE_CONTEXTS)))
        # Sectors per level; the hard count is drawn whichever level is asked, so problems keep their seeds.
        k = {"easy": 3, "medium": 4, "hard": int(rng.integers(4, 6))}[difficulty]
        # Some easy charts label their sectors in percent. The question's wording speaks of angles wherever it
        # lists them, so a percent chart is image-only (required).
        percent = bool(level.percent_share) and bool(rng.random() < level.percent_share)
        equal = bool(level.equal_share) and bool(rng.random() < level.equal_share)
        while True:
            if equal:  # two sectors of one size, and the rest all different
                angles = [int(pick(rng, _PIE_ANGLES)) for _ in range(k - 2)]
                angles.append(angles[0])
                last = 360 - sum(angles)
                if last < 20 or last % 5 or len(set(angles + [last])) != k - 1:
                    continue
            elif percent:  # whole multiples of 5 % (18°)
                angles = [18 * int(rng.integers(1, 11)) for _ in range(k - 1)]
                last = 360 - sum(angles)
                if last < 36 or len(set(angles + [last])) < k:
                    continue
            else:
                angles = [int(pick(rng, _PIE_ANGLES)) for _ in range(k - 1)]
                last = 360 - sum(angles)
                if last < 20 or last % 5 or len(set(angles + [last])) < k:
                    continue
            angles.append(last)
            order = [int(i) for i in rng.permutation(k)]
            angles = [angles[i] for i in order]
            pair: list[int] = []
            if equal:  # which of the pair is printed is drawn; the sector asked is another one
                pair = [i for i, a in enumerate(angles) if angles.count(a) == 2]
                pair = pair if rng.random() < 0.5 else pair[::-1]
                ask = int(pick(rng, [i for i in range(k) if i not in pair]))
            else:
                ask = int(rng.integers(k))
            params = {"angles": angles, "ask": ask, "context": context,
                      "image_role": "required" if percent else sample_role(rng),
                      "hidden": ask if level.hidden else None}
            if pair:  # sector pair[0] carries no angle, only the mark it shares with sector pair[1]
                params.update({"marked": pair[0], "same_as": _PIE_CONTEXTS[context][1][pair[1]]})
            if percent:
                params.update({"percents": [a * 5 // 18 for a in angles], "printed": _PERCENT, "read_as": _PERCENT})
            if level.from_count:
                known = int(pick(rng, [i for i in range(k) if i != ask]))
                unit = Fraction(int(rng.integers(1, 9)), int(pick(rng, (1, 2, 3, 4, 6))))
                count = unit * angles[known] / 10
                if count.denominator != 1 or count < 4 or (unit * angles[ask] / 10).denominator != 1:
                    continue
                params.update({"known": known, "known_count": int(count)})
                if int(count) in angles:
                    continue
            else:
                total = int(pick(rng, (60, 72, 90, 120, 180, 240, 360, 480, 540, 600, 720)))
                if (Fraction(angles[ask], 360) * total).denominator != 1:
                    continue
                params["total"] = total
                if total in angles:
                    continue
            return params

    @staticmethod
    def _printed(params: dict[str, Any]) -> list[int]:
        """The numbers printed on the sectors: percentages on a percent chart, else angles."""
        return params["percents"] if params.get("printed") == _PERCENT else params["angles"]

    @staticmethod
    def _whole(params: dict[str, Any]) -> int:
        """What the printed numbers add up to, as the solver reads them (100 for percent, 360 for degrees)."""
        return 100 if params.get("read_as") == _PERCENT else 360

    def _read(self, params: dict[str, Any], shown: list[int]) -> list[int]:
        """``shown`` with the sector marked equal to another taking that sector's printed number, as it is read."""
        if "marked" not in params:
            return shown
        return replace_at(shown, params["marked"], shown[self._labels(params).index(params["same_as"])])

    def _angle_node(self, params: dict[str, Any], full: int | None = None) -> E.Node:
        shown, ask = self._read(params, self._printed(params)), params["ask"]
        if params["hidden"] is None:
            return shown[ask]
        others = [a for i, a in enumerate(shown) if i != ask]
        node: E.Node = self._whole(params) if full is None else full
        for a in others:
            node = ["-", node, a]
        return ["group", node]

    def _tree(self, params: dict[str, Any], *, whole: int | None = None, full: int | None = None) -> E.Node:
        angle = self._angle_node(params, full)
        if "known" in params:
            return ["*", ["/", params["known_count"], self._printed(params)[params["known"]]], angle]
        return ["*", ["/", angle, self._whole(params) if whole is None else whole], params["total"]]

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="sector_fraction", decimal=True)
        return label_last(d.steps, _PIE_CONTEXTS[params["context"]][1][params["ask"]])

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        """Every sector's count by its name: a contextual swap labels the answer with the wrong sector."""
        names = _PIE_CONTEXTS[params["context"]][1][: len(params["angles"])]
        per_degree = (sympy.Rational(params["known_count"], params["angles"][params["known"]]) if "known" in params
                      else sympy.Rational(params["total"], 360))
        return Vocabulary({n: per_degree * a for n, a in zip(names, params["angles"])},
                          tuple(n.lower() for n in names))

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        angles, ask = params["angles"], params["ask"]
        angle = 360 - sum(a for i, a in enumerate(angles) if i != ask)  # the angles fill the circle
        if "known" in params:
            per_degree = Fraction(params["known_count"], angles[params["known"]])
            return rational(per_degree * angle)
        return rational(Fraction(angle, 360) * params["total"])

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return data_answer(answer)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if params.get("printed") == _PERCENT:  # both rules are about angles in degrees
            return None
        if rule == "pie_from_100" and "total" in params:
            return mal_chain(self, params, self._tree(params, whole=100), "sector_fraction", decimal=True)
        if rule == "angles_sum_180" and params["hidden"] is not None:
            if 180 - sum(a for i, a in enumerate(params["angles"]) if i != params["ask"]) <= 0:
                return None
            return mal_chain(self, params, self._tree(params, full=180), "sector_fraction", decimal=True)
        return None

    def _labels(self, params: dict[str, Any]) -> list[str]:
        return list(_PIE_CONTEXTS[params["context"]][1][: len(params["angles"])])

    def figure(self, params: dict[str, Any]) -> Figure:
        angles = params["angles"]
        percent = params.get("printed") == _PERCENT
        labels = self._labels(params)
        elements: list[dict[str, Any]] = [  # clockwise from 12 o'clock, as pupils draw them
            {"id": f"wedge_{i}", "type": "wedge", "index": i, "angle": a, "start_deg": 90 - sum(angles[:i]),
             "text": label, "show_angle": i not in (params["hidden"], params.get("marked")) and not percent}
            for i, (a, label) in enumerate(zip(angles, labels))]
        if "marked" in params:  # one arc with a tick at the centre of each of the two equal sectors
            for i in (params["marked"], labels.index(params["same_as"])):
                elements.append({"id": f"equal_mark_{i}", "type": "equal_mark", "index": i, "sector": labels[i],
                                 "start_deg": 90 - sum(angles[:i]), "angle": angles[i], "ticks": 1})
        if percent:  # the sector's percentage is printed instead of its angle
            for el, v in zip(elements, params["percents"]):
                if el["index"] != params["hidden"]:
                    el.update({"value": v, "unit": "%", "value_text": f"{v}%"})
        elements.append({"id": "title", "type": "text", "text": _PIE_CONTEXTS[params["context"]][0]})
        return Figure("pie_chart", {"size_in": [3.2, 3.2], "elements": elements})

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        out = []
        labels = self._labels(params)
        percent = params.get("printed") == _PERCENT
        for i, a in enumerate(self._printed(params)):
            if i in (params["hidden"], params.get("marked")):
                continue
            in_text = params["image_role"] == "useful"
            out.append(Given(f"{'percent' if percent else 'angle'} {labels[i]}", str(a),
                             "text" if in_text else f"figure:wedge_{i}", "%" if percent else "°"))
        for key in ("total", "known_count"):
            if key in params:
                out.append(Given(key, str(params[key]), "text"))
        return tuple(out)

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        key = "percents" if params.get("printed") == _PERCENT else "angles"
        angles = params[key]
        unprinted = (params["hidden"], params.get("marked"))
        out = []
        for i, a in enumerate(angles):
            if i in unprinted:
                continue
            swaps = [angles[j] for j in range(len(angles)) if j != i and angles[j] != a and j not in unprinted]
            if swaps:  # read the label of the neighbouring sector
                out.append(Reading(key, f"wedge_{i}", "misread_label", (replace_at(angles, i, swaps[0]),)))
            # the printed number misread; the known sectors must still leave room for the hidden one
            out.append(Reading(key, f"wedge_{i}", "misread_value", tuple(
                w for w in digit_misreads(angles, i) if self._room(params, w, i))))
        if "marked" in params:
            labels = self._labels(params)
            m = labels.index(params["same_as"])
            for n in ((m - 1) % len(angles), (m + 1) % len(angles)):
                if n not in unprinted and angles[n] != angles[m] and self._room(params, angles, n, same_as=labels[n]):
                    # the mark at the centre of the equal sector taken for its neighbour's (the arcs of sectors
                    # meet at the centre): the marked sector read as equal to that neighbour
                    out.append(Reading("same_as", f"equal_mark_{m}", "misread_relation", (labels[n],)))
        last = len(angles) - 1
        if params["hidden"] is not None and last not in (params["ask"], params.get("known")):
            # going round clockwise from 12 o'clock, the sector that ends back at 12 is left out of the
            # numbers taken from the whole
            out.append(Reading(key, f"wedge_{last}", "miscount", (angles[:-1],)))
        if key == "percents" and E.value(self._tree({**params, "read_as": _DEGREES})).denominator == 1:
            # the % signs overlooked: the printed numbers taken for angles out of 360° (where that still gives
            # a whole number of people, so nothing looks wrong)
            labelled = (params.get("known"), params["ask"], 0, 1)
            shown = next(i for i in labelled if i is not None and i != params["hidden"])
            out.append(Reading("read_as", f"wedge_{shown}", "misread_scale", (_DEGREES,)))
        return effective_readings(self, params, out)

    def _room(self, params: dict[str, Any], shown: list[int], i: int, *, same_as: str | None = None) -> bool:
        """Whether ``shown`` (sector i misread) still reads as a chart: the asked sector keeps a positive angle."""
        hidden = params["hidden"]
        read = self._read({**params, "same_as": same_as or params.get("same_as")}, shown)
        return (read[i] if hidden is None else sum(read) - read[hidden]) < self._whole(params)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        title, labels, people, verb = _PIE_CONTEXTS[params["context"]]
        ask = labels[params["ask"]]
        ctx = {**params, "title": title.lower(), "people": people, "verb": verb, "target": ask,
               "target_angle": params["angles"][params["ask"]], "hard": "known" in params}
        if "known" in params:
            ctx.update({"other": labels[params["known"]], "other_angle": params["angles"][params["known"]]})
        ctx.setdefault("total", None)
        unit = "%" if params.get("printed") == _PERCENT else "°"
        ctx["angle_listing"] = ", ".join(f"{labels[i]} {a}{unit}" for i, a in enumerate(self._printed(params))
                                         if i not in (params["hidden"], params.get("marked")))
        ctx["equal_note"] = "" if "marked" not in params else \
            f" The {labels[params['marked']]} sector is marked equal to the {params['same_as']} sector."
        return ctx
