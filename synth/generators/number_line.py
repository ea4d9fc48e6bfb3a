"""The value at a marked point of a number line, from two labelled marks and the divisions between."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import mal_chain, rational, reduce_steps, sample_role
from synth.generators._figure import neighbour_misreads, pick
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure, Given

# How each difficulty labels the line: its two ends on round numbers (easy), its two ends (medium), or two marks
# inside it, so the division comes from the gap between them (hard).
_LEVELS = {"easy": "round_ends", "medium": "ends", "hard": "inner_marks"}


@register
class NumberLine(Family):
    """The value at a marked point from two labelled marks and the equal divisions between them.

    easy/medium label the two ends; hard labels two marks inside the line, so the division size
    comes from the gap between them and P may lie outside it.
    """

    id = "commonsense.number_line"
    domain = "commonsense"
    subdomain = "number_line"
    grade_band = "3-6"
    figure_kind = "number_line"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("count_ticks_not_gaps", "invalid_inference", "divides by the number of tick marks instead of the "
                "number of gaps between them"),
        MalRule("each_tick_is_one", "invalid_assumption", "assumes every small division is worth 1"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        samplers = {"round_ends": self._round_ends, "ends": self._ends, "inner_marks": self._inner_marks}
        draw = samplers[_LEVELS[difficulty]]
        while True:
            n, start, width, decimal, i, j = draw(rng)
            if j > n:
                continue
            k = int(pick(rng, [m for m in range(1, n) if m not in (i, j)]))
            if Fraction(width, j - i) == 1:
                continue
            return {"start": start, "end": start + width, "n": n, "labels": [i, j], "ks": [k], "decimal": decimal,
                    "image_role": sample_role(rng), "answer_form": "decimal" if decimal else "fraction"}

    # Each draws (divisions, start, width, decimal answer, labelled marks i and j).
    @staticmethod
    def _round_ends(rng: np.random.Generator) -> tuple[int, int, int, bool, int, int]:
        n = int(pick(rng, (4, 5, 10)))
        start = int(rng.integers(0, 40)) * 10
        width = n * int(pick(rng, (2, 5, 10, 20)))
        return n, start, width, True, 0, n

    @staticmethod
    def _ends(rng: np.random.Generator) -> tuple[int, int, int, bool, int, int]:
        n = int(pick(rng, (3, 4, 5, 6, 8)))
        start = int(rng.integers(0, 20))
        width = int(pick(rng, (1, 2, 3)))
        return n, start, width, n in (4, 5, 8) and bool(rng.random() < 0.5), 0, n

    @staticmethod
    def _inner_marks(rng: np.random.Generator) -> tuple[int, int, int, bool, int, int]:
        n = int(pick(rng, (8, 10, 12)))
        i = int(rng.integers(1, 4))
        j = i + int(pick(rng, (2, 3, 4, 5, 6)))
        start = -int(rng.integers(1, 7))
        width = int(pick(rng, (1, 2, 3, 4)))
        return n, start, width, bool(rng.random() < 0.5) and E.is_decimal(Fraction(width, j - i)), i, j

    def _tree(self, params: dict[str, Any], *, extra_tick: bool = False, unit: bool = False) -> E.Node:
        i, j = params["labels"]
        gaps: E.Node = j if i == 0 else ["group", ["-", j, i]]
        if extra_tick:
            gaps = ["group", ["+", gaps, 1]]
        size: E.Node = 1 if unit else ["group", ["/", ["group", ["-", params["end"], params["start"]]], gaps]]
        k = params["ks"][0]
        steps: E.Node = k if i == 0 else ["group", ["-", k, i]]
        return ["+", params["start"], ["*", steps, size]]

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="division_size", decimal=params["decimal"])
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Place the point by linear interpolation between the two labelled marks.
        (i, j), (k,) = params["labels"], params["ks"]
        s, e = Fraction(params["start"]), Fraction(params["end"])
        return rational(s + (e - s) * Fraction(k - i, j - i))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer, decimal=params["decimal"]), E.num_latex(answer, decimal=params["decimal"])

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "count_ticks_not_gaps":
            return mal_chain(self, params, self._tree(params, extra_tick=True), "division_size",
                             decimal=params["decimal"])
        if rule == "each_tick_is_one":
            return mal_chain(self, params, self._tree(params, unit=True), "division_size", decimal=params["decimal"])
        return None

    def figure(self, params: dict[str, Any]) -> Figure:
        n, (i, j) = params["n"], params["labels"]
        elements: list[dict[str, Any]] = [{"id": "axis", "type": "axis"}]
        for t in range(n + 1):
            label = E.num_text(params["start"]) if t == i else E.num_text(params["end"]) if t == j else None
            elements.append({"id": f"tick_{t}", "type": "tick", "index": t, "text": label})
        elements.append({"id": "point_P", "type": "point", "index": params["ks"][0], "text": "P"})
        return Figure("number_line", {"size_in": [4.6, 0.9], "divisions": n, "elements": elements})

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        useful = params["image_role"] == "useful"
        i, j = params["labels"]
        return (Given("first label", str(params["start"]), "text" if useful else f"figure:tick_{i}"),
                Given("second label", str(params["end"]), "text" if useful else f"figure:tick_{j}"),
                Given("divisions between labels", str(j - i), "text" if useful else "figure:axis"),
                Given("divisions to P", str(params["ks"][0] - i), "text" if useful else "figure:point_P"))

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        (k,), n, (i, j) = params["ks"], params["n"], params["labels"]
        moves = tuple([k + s] for s in (1, -1) if 0 < k + s < n and k + s not in (i, j))
        out = [Reading("ks", "point_P", "miscount", moves)]
        if i == 0:  # the labels are the ends: a miscount of all the divisions
            out.append(Reading("labels", "axis", "miscount", ([0, n + 1], [0, n - 1])))
        else:
            out.append(Reading("labels", f"tick_{j}", "miscount", ([i, j + 1], [i, j - 1]) if j - 1 > i else
                               ([i, j + 1],)))
            # the first number, printed under an inner tick, taken to belong to the tick beside it
            out.append(Reading("labels", f"tick_{i}", "misread_label",
                               tuple([i + s, j] for s in (1, -1) if 0 <= i + s < j and i + s != k)))
        if i < k < j and (k - i) - (j - k) >= 2:
            # P near the second label: its few divisions counted back from that label, then counted on from the
            # first (the position measured from the wrong labelled mark); the point stays between the labels
            out.append(Reading("ks", "point_P", "misread_relation", ([i + j - k],)))
        # a printed label misread (3/8, 1/7, swapped digits), still increasing along the line
        start, end = params["start"], params["end"]
        out.append(Reading("start", f"tick_{i}", "misread_value", tuple(
            v for v in _digit_misreads(start) if v < end)))
        out.append(Reading("end", f"tick_{j}", "misread_value", tuple(v for v in _digit_misreads(end) if v > start)))
        # No misread_scale: the unlabelled marks counted on in ones (20, 21, 22 where they go 20, 25, 30) is
        # exactly the each_tick_is_one mal-rule's working, and one working carries one label.
        return effective_readings(self, params, out)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        i, j = params["labels"]
        k1, start = params["ks"][0] - i, E.num_text(params["start"])

        def where(unit: str) -> str:  # "3 parts to the right of 20", "1 step to the left of −2"
            return f"{abs(k1)} {unit}{'' if abs(k1) == 1 else 's'} to the {'left' if k1 < 0 else 'right'} of {start}"

        return {**params, "form": "decimal" if params["decimal"] else "fraction", "ends": i == 0,
                "start": start, "end": E.num_text(params["end"]), "gaps": j - i, "k1": k1,
                "p_parts": where("part"), "p_steps": where("step")}


def _digit_misreads(v: int) -> list[int]:
    return [m if v >= 0 else -m for m in neighbour_misreads(abs(v))]
