"""The change between two points of a line chart, per unit of time or as a percent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import (
    axes_elements,
    data_answer,
    mal_chain,
    misread_list,
    neighbour_swaps,
    rational,
    reduce_steps,
    replace_at,
    safe_divisor,
    sample_role,
)
from synth.generators._figure import pick
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure, Given

_LINE_CONTEXTS = (
    # title, x label, y label, x tick labels, their positions in time units, time unit, value unit
    ("Temperature during the day", "Time", "Temperature (°C)", ("6 am", "8 am", "10 am", "12 pm", "2 pm", "4 pm",
                                                                "6 pm"), (6, 8, 10, 12, 14, 16, 18), "hour", "°C"),
    ("Height of a plant", "Week", "Height (cm)", ("1", "2", "3", "4", "5", "6", "7"), (1, 2, 3, 4, 5, 6, 7), "week",
     "cm"),
    ("Books sold by a shop", "Month", "Books sold", ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul"),
     (1, 2, 3, 4, 5, 6, 7), "month", "books"),
    ("Water in a tank", "Time", "Water (litres)", ("1 pm", "2 pm", "3 pm", "4 pm", "5 pm", "6 pm", "7 pm"),
     (13, 14, 15, 16, 17, 18, 19), "hour", "litres"),
)


# Where a change "to the highest point" ends, as the solver reads the chart: at the highest point, or (misread)
# at the point a gridline or less below it.
_HIGHEST, _SECOND_HIGHEST = "the highest point", "the second-highest point"


def _ranked_points(values: Sequence[int]) -> list[int]:
    """Point indices from the highest reading down (the earlier point first on a tie)."""
    return sorted(range(len(values)), key=lambda i: (-values[i], i))


# Gridlines between two numbers on the value axis, by gridline step: numbers at 0, 5, 10 / 0, 10, 20 / 0, 20, 40 /
# 0, 50, 100, as school charts print them.
_NUMBERED_EVERY = {1: 5, 2: 5, 5: 4, 10: 5}


@dataclass(frozen=True)
class _Level:
    ask: str  # "rate": change per unit of time; "percent": percent change
    whole_rate: bool  # the rate must be a whole number
    peak_share: float  # share of rates that run to the highest point (picked out by eye; 0: none, nothing drawn)


_LEVELS = {"easy": _Level("rate", whole_rate=True, peak_share=0.5),
           "medium": _Level("rate", whole_rate=False, peak_share=0.5),
           "hard": _Level("percent", whole_rate=False, peak_share=0.0)}


@register
class LineChartReading(Family):
    """Change between two points of a line chart: per unit of time (easy/medium), or as a percent (hard); some
    rates run to the chart's highest point, which the solver must pick out by eye."""

    id = "statistics.line_chart.reading"
    domain = "statistics"
    subdomain = "charts"
    grade_band = "6-8"
    figure_kind = "line_chart"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("subtract_wrong_way", "formula_misuse", "subtracts the later value from the earlier one"),
        MalRule("count_points_not_gaps", "invalid_inference", "divides by the number of plotted points instead of "
                "the time between them"),
        MalRule("percent_of_new", "formula_misuse", "divides the change by the new value instead of the original"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        context = int(rng.integers(len(_LINE_CONTEXTS)))
        times = _LINE_CONTEXTS[context][4]
        n = int(rng.integers(5, 8))
        # Gridline steps per level; every level's is drawn, whichever is asked, so problems keep their seeds.
        step = {"easy": int(pick(rng, (1, 2))), "medium": int(pick(rng, (2, 5))), "hard": int(pick(rng, (5, 10)))}[
            difficulty]
        # "from 8 am to the highest point"
        peak = bool(level.peak_share) and bool(rng.random() < level.peak_share)
        # half of those charts have a second high point a gridline or less below the highest, later than the
        # start (as real data often does): the two must be told apart by eye
        close = peak and bool(rng.random() < 0.5)
        while True:
            values = [int(rng.integers(1, 13)) * step for _ in range(n)]
            if _LINE_CONTEXTS[context][1] == "Week":  # plants grow
                values = sorted(values)
            if peak:
                b = values.index(max(values))
                if values.count(max(values)) > 1 or b == 0:
                    continue  # one highest point, after some earlier reading
                a = int(rng.integers(b))
                runner_up = _ranked_points(values)[1]
                if close and (runner_up <= a or values[b] - values[runner_up] > step):
                    continue
            else:
                a, b = sorted(int(i) for i in rng.choice(n, size=2, replace=False))
            change = Fraction(values[b] - values[a])
            rate = change / (times[b] - times[a])
            if change == 0 or not safe_divisor(times[b] - times[a]):
                continue
            if level.ask == "percent":
                pct = change / values[a] * 100
                if (pct * 10).denominator != 1:
                    continue
            elif (level.whole_rate and rate.denominator != 1) or not E.is_decimal(rate):
                continue
            params = {"values": values, "a": a, "b": b, "step": step, "context": context, "ask": level.ask,
                      "image_role": sample_role(rng)}
            if peak:
                params["peak"] = _HIGHEST
            if rng.random() < 0.5:  # the value axis numbered only at round values, gridlines between
                params["numbered_every"] = _NUMBERED_EVERY[step]
            return params

    def _tree(self, params: dict[str, Any], *, wrong_way: bool = False, points: bool = False,
              base: str = "old") -> E.Node:
        values, a, b = params["values"], params["a"], params["b"]
        if params.get("peak") == _SECOND_HIGHEST:  # the runner-up point taken for the highest one
            b = _ranked_points(values)[1]
        change: E.Node = ["group", ["-", values[a], values[b]] if wrong_way else ["-", values[b], values[a]]]
        if params["ask"] == "percent":
            return ["*", ["/", change, values[a] if base == "old" else values[b]], 100]
        times = _LINE_CONTEXTS[params["context"]][4]
        return ["/", change, b - a + 1 if points else ["group", ["-", times[b], times[a]]]]

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="change_formula", decimal=True)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        values, a, b = params["values"], params["a"], params["b"]
        if "peak" in params:  # the highest point of the chart, found from the values themselves
            b = _ranked_points(values)[0]
        change = Fraction(values[b] - values[a])
        if params["ask"] == "percent":
            return rational(100 * (Fraction(values[b], values[a]) - 1))
        times = _LINE_CONTEXTS[params["context"]][4]
        return rational(change / (times[b] - times[a]))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        text, latex = data_answer(answer)
        return (text + "%", latex + r"\%") if params["ask"] == "percent" else (text, latex)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "subtract_wrong_way":
            return mal_chain(self, params, self._tree(params, wrong_way=True), "change_formula", decimal=True)
        if rule == "count_points_not_gaps" and params["ask"] == "rate":
            times = _LINE_CONTEXTS[params["context"]][4]
            if params["b"] - params["a"] + 1 == times[params["b"]] - times[params["a"]]:
                return None
            return mal_chain(self, params, self._tree(params, points=True), "change_formula", decimal=True)
        if rule == "percent_of_new" and params["ask"] == "percent":
            return mal_chain(self, params, self._tree(params, base="new"), "change_formula", decimal=True)
        return None

    def figure(self, params: dict[str, Any]) -> Figure:
        title, x_label, y_label, cats, _, _, _ = _LINE_CONTEXTS[params["context"]]
        values, step = params["values"], params["step"]
        lines = max(values) // step + 2
        every = params.get("numbered_every")
        if every:  # up to a numbered gridline
            lines = -(-lines // every) * every
        y_max = step * lines
        elements = axes_elements(y_label, x_label)
        elements.append({"id": "line", "type": "curve", "values": values})
        for i, v in enumerate(values):
            elements.append({"id": f"point_{i}", "type": "point", "index": i, "value": v})
            elements.append({"id": f"label_{i}", "type": "label", "index": i, "text": cats[i]})
        elements.append({"id": "title", "type": "text", "text": title})
        return Figure("line_chart", {"size_in": [4.4, 2.8], "n_points": len(values), "y_max": y_max,
                                     "y_step": step, "label_every": every or (1 if y_max // step <= 12 else 2),
                                     "elements": elements})

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        cats = _LINE_CONTEXTS[params["context"]][3]
        source = params["image_role"] == "useful"
        # a change to the highest point needs every reading (which is highest); otherwise its two ends
        used = range(len(params["values"])) if "peak" in params else (params["a"], params["b"])
        return tuple(Given(f"value at {cats[i]}", str(params["values"][i]), "text" if source else f"figure:point_{i}")
                     for i in used)

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        values, step = params["values"], params["step"]
        out = []
        every = params.get("numbered_every")
        for i in (params["a"], params["b"]):
            counted: tuple[list[Any], ...] = ()
            if every and values[i] // step % every:
                # on an unnumbered gridline: one gridline too many or too few counted up from the number below
                counted = tuple(replace_at(values, i, values[i] + d * step) for d in (1, -1)
                                if (values[i] // step + d) % every)
            # the gridline above or below: a miscount where it is unnumbered too (one working, one label)
            out.append(Reading("values", f"point_{i}", "misread_value", tuple(
                m for m in misread_list(values, i, (step, -step), low=1) if m not in counted)))
            # the point above the next time label along, read as this one's
            out.append(Reading("values", f"label_{i}", "misread_label", neighbour_swaps(values, i, (i - 1, i + 1))))
            if step > 1 and values[i] % step == 0:  # counted gridlines instead of reading the axis numbers
                out.append(Reading("values", f"point_{i}", "misread_scale",
                                   (replace_at(values, i, values[i] // step),)))
            out.append(Reading("values", f"point_{i}", "miscount", counted))
        if params.get("peak") == _HIGHEST:
            top, runner_up = _ranked_points(values)[:2]
            if runner_up > params["a"] and values[top] - values[runner_up] <= step:
                # a later point within a gridline of the highest one: judged the higher by eye
                out.append(Reading("peak", f"point_{runner_up}", "misread_relation", (_SECOND_HIGHEST,)))
        return effective_readings(self, params, out)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        title, x_label, _, cats, _, unit_time, unit = _LINE_CONTEXTS[params["context"]]
        a, b = params["a"], params["b"]
        prefix = "week " if x_label == "Week" else ""
        listing = ", ".join(f"{prefix}{c} {v} {unit}" for c, v in zip(cats, params["values"]))
        return {**params, "title": title.lower(), "from": prefix + cats[a], "to": prefix + cats[b], "per": unit_time,
                "unit": unit, "listing": listing,
                "va": params["values"][a], "vb": params["values"][b]}
