"""The mean of the bars of a bar chart, and how far the tallest bar is above it."""

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
    axes_elements,
    data_answer,
    mal_chain,
    misread_list,
    neighbour_swaps,
    rational,
    reduce_steps,
    replace_at,
    sample_role,
    sum_node,
)
from synth.generators._figure import pick
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure, Given

_BAR_CONTEXTS = (
    # title, x label, y label, categories, noun
    ("Books read in a month", "Pupil", "Number of books", ("Ana", "Ben", "Cara", "Dev", "Emil", "Faye", "Gus"),
     "books"),
    ("Ice creams sold", "Day", "Ice creams", ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), "ice creams"),
    ("Rainfall", "Month", "Rainfall (mm)", ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul"), "mm of rain"),
    ("Cars passing the school", "Day", "Number of cars", ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), "cars"),
    ("Points scored by each team", "Team", "Points", ("Red", "Blue", "Green", "Gold", "Pink", "Grey", "Teal"),
     "points"),
)


_TALLEST, _SECOND_TALLEST = "the tallest bar", "the second-tallest bar"


@dataclass(frozen=True)
class _Level:
    top: int  # the tallest a bar may be, in gridlines
    half_steps: bool  # bars may end half-way between gridlines (on an even scale)
    whole_mean: bool  # the mean must be a whole number
    ask: str  # "mean", or "above_mean": how far the tallest bar (unique) is above the mean


_LEVELS = {"easy": _Level(12, half_steps=False, whole_mean=True, ask="mean"),
           "medium": _Level(14, half_steps=True, whole_mean=False, ask="mean"),
           "hard": _Level(16, half_steps=True, whole_mean=False, ask="above_mean")}


@register
class BarChartMean(Family):
    """Mean of the bars in a bar chart; hard asks how far the tallest bar is above the mean."""

    id = "statistics.mean.bar_chart"
    domain = "statistics"
    subdomain = "averages"
    grade_band = "5-7"
    figure_kind = "bar_chart"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("mean_wrong_count", "formula_misuse", "divides the total by one less than the number of bars"),
        MalRule("mean_as_midrange", "incorrect_fact", "takes the mean as halfway between the largest and smallest "
                "bar"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        # Bar counts and scales per level; every level's is drawn, whichever is asked, so problems keep their seeds.
        n = {"easy": 4, "medium": int(rng.integers(5, 7)), "hard": int(rng.integers(6, 8))}[difficulty]
        scale = {"easy": 1, "medium": int(pick(rng, (2, 5))), "hard": int(pick(rng, (5, 10)))}[difficulty]
        context = int(rng.integers(len(_BAR_CONTEXTS)))
        while True:
            half = 2 if level.half_steps and scale % 2 == 0 else 1
            values = [int(rng.integers(2 * half, level.top * half + 1)) * scale // half for _ in range(n)]
            mean = Fraction(sum(values), n)
            if level.whole_mean and mean.denominator != 1:
                continue
            if not E.is_decimal(mean) or len(set(values)) < n - 1:
                continue
            if level.ask == "above_mean" and values.count(max(values)) > 1:
                continue
            params = {"values": values, "scale": scale, "context": context, "ask": level.ask,
                      "image_role": sample_role(rng)}
            if level.ask == "above_mean":  # which bar the solver compares with the mean (a relation off the chart)
                params["largest"] = _TALLEST
            return params

    def _tree(self, params: dict[str, Any], count: int | None = None) -> E.Node:
        values = params["values"]
        mean: E.Node = ["/", sum_node(values), count or len(values)]
        if params["ask"] != "above_mean":
            return mean
        top = sorted(values)[-2] if params.get("largest") == _SECOND_TALLEST else max(values)
        return ["-", top, ["group", mean]]

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="mean_formula", decimal=True)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        values = params["values"]
        mean = Fraction(sum(values), len(values))
        return rational(max(values) - mean if params["ask"] == "above_mean" else mean)

    def working_head(self, params: dict[str, Any]) -> tuple[sympy.Basic, str, str]:
        """The value of the tree ``derive`` reduces (its last step keeps the tree's exact value), the tree's text
        (its first step) and the text of that value as a decimal where it ends (its last step)."""
        tree = self._tree(params)
        value = E.value(tree)
        return rational(value), E.text_and_latex(tree)[0], E.text_and_latex(E.leaf(value, decimal=True))[0]

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return data_answer(answer)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        values = params["values"]
        if rule == "mean_wrong_count":
            return mal_chain(self, params, self._tree(params, len(values) - 1), "mean_formula", decimal=True)
        if rule == "mean_as_midrange":
            mid: E.Node = ["/", ["group", ["+", max(values), min(values)]], 2]
            if Fraction(max(values) + min(values), 2) == Fraction(sum(values), len(values)):
                return None
            tree = ["-", max(values), ["group", mid]] if params["ask"] == "above_mean" else mid
            return mal_chain(self, params, tree, "mean_formula", decimal=True)
        return None

    def _categories(self, params: dict[str, Any]) -> list[str]:
        return list(_BAR_CONTEXTS[params["context"]][3][: len(params["values"])])

    def figure(self, params: dict[str, Any]) -> Figure:
        title, x_label, y_label, _, _ = _BAR_CONTEXTS[params["context"]]
        values, scale = params["values"], params["scale"]
        y_max = scale * (max(values) // scale + 2)
        elements = axes_elements(y_label, x_label)
        for i, (cat, v) in enumerate(zip(self._categories(params), values)):
            elements.append({"id": f"bar_{i}", "type": "bar", "index": i, "value": v})
            elements.append({"id": f"label_{i}", "type": "label", "index": i, "text": cat})
        elements.append({"id": "title", "type": "text", "text": title})
        return Figure("bar_chart", {"size_in": [4.2, 2.8], "n_bars": len(values), "y_max": y_max,
                                    "y_step": scale, "label_every": 1 if y_max // scale <= 12 else 2,
                                    "elements": elements})

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        source = "text" if params["image_role"] == "useful" else None
        return tuple(Given(cat, str(v), source or f"figure:bar_{i}")
                     for i, (cat, v) in enumerate(zip(self._categories(params), params["values"])))

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        values, scale = params["values"], params["scale"]
        out = []
        for i, v in enumerate(values):
            out.append(Reading("values", f"bar_{i}", "misread_value",
                               misread_list(values, i, (scale, -scale), low=1)))
            # the height of the bar beside it, read against this bar's name
            out.append(Reading("values", f"label_{i}", "misread_label", neighbour_swaps(values, i, (i - 1, i + 1))))
            if scale > 1 and v % scale == 0:  # counted gridlines instead of reading the scale
                out.append(Reading("values", f"bar_{i}", "misread_scale",
                                   (replace_at(values, i, v // scale),)))
        # the bars counted one short: the first (against the axis) or the last left out of the total and the count
        for i in dict.fromkeys((0, len(values) - 1)):
            out.append(Reading("values", f"bar_{i}", "miscount", ([*values[:i], *values[i + 1:]],)))
        ranked = sorted(range(len(values)), key=lambda j: values[j])
        if "largest" in params and values[ranked[-1]] - values[ranked[-2]] <= scale:
            # two bars within a gridline of each other: the runner-up taken for the tallest
            out.append(Reading("largest", f"bar_{ranked[-2]}", "misread_relation", (_SECOND_TALLEST,)))
        return effective_readings(self, params, out)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        title, _, _, _, noun = _BAR_CONTEXTS[params["context"]]
        cats = self._categories(params)
        listing = ", ".join(f"{c} {v}" for c, v in zip(cats, params["values"]))
        return {**params, "title": title.lower(), "noun": noun, "n": len(cats), "listing": listing}
