"""Median, mode and mean from a listed table, a frequency table or a stem-and-leaf diagram."""

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
    data_answer,
    digit_misreads,
    mal_chain,
    rational,
    reduce_steps,
    replace_at,
    safe_divisor,
    sample_role,
    sum_node,
    table_figure,
)
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure, Given

_TABLE_CONTEXTS = (
    # header name, header value, names
    ("Player", "Goals", ("Ali", "Bea", "Cal", "Dina", "Ed", "Fay", "Gil", "Hal")),
    ("Pupil", "Test score", ("Ivy", "Jon", "Kim", "Lea", "Max", "Nia", "Oli", "Pat")),
    ("Shop", "Price ($)", ("North", "South", "East", "West", "Market", "Corner", "Mall", "Kiosk")),
    ("City", "Temperature (°C)", ("Oslo", "Rome", "Cairo", "Lima", "Delhi", "Tokyo", "Paris", "Quito")),
    ("Week", "Visitors (hundreds)", tuple(f"Week {i}" for i in range(1, 9))),
    ("Town", "Population (thousands)", ("Ashby", "Brook", "Carlton", "Denton", "Elmore", "Fenwick", "Grange",
                                        "Hilton")),
)
# Tables whose value header states a unit (context index: the unit and what the question counts): the
# printed numbers are hundreds or thousands, and the question asks for the real number.
_TABLE_SCALES = {4: (100, "visitors in a week"), 5: (1000, "people living in a town")}
_FREQ_CONTEXTS = (
    ("Number of pets", "Number of pupils"),
    ("Goals in a match", "Number of matches"),
    ("People in a car", "Number of cars"),
    ("Books borrowed", "Number of pupils"),
)


@dataclass(frozen=True)
class _Level:
    kind: str  # "list": a table of values; "frequency": a frequency table (its mean minus its median)
    ask: str | None  # for lists: "median", or "median_minus_mode" (the data has one clear mode)
    rows: int = 0  # values in a listed table
    leaves: int = 0  # values in the asked group of a stem-and-leaf diagram


_LEVELS = {"easy": _Level("list", "median", rows=6, leaves=8),
           "medium": _Level("list", "median_minus_mode", rows=8, leaves=10),
           "hard": _Level("frequency", None)}


@register
class MedianModeTable(Family):
    """easy: median of a listed table; medium: median minus mode; hard: mean minus median of a frequency table."""

    id = "statistics.median_mode.table"
    domain = "statistics"
    subdomain = "averages"
    grade_band = "6-8"
    figure_kind = "table"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("median_without_sorting", "formula_misuse", "takes the middle of the table without sorting it"),
        MalRule("mode_as_largest", "incorrect_fact", "gives the largest value as the mode"),
        MalRule("mean_divides_by_rows", "formula_misuse", "divides the total by the number of rows, not the total "
                "frequency"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        role = sample_role(rng)
        if level.kind == "frequency":
            context = int(rng.integers(len(_FREQ_CONTEXTS)))
            while True:
                k = int(rng.integers(4, 6))
                start = int(rng.integers(0, 3))
                freqs = [int(rng.integers(1, 10)) for _ in range(k)]
                total = sum(freqs)
                values = list(range(start, start + k))
                mean = Fraction(sum(v * f for v, f in zip(values, freqs)), total)
                if total % 2 == 1 and E.is_decimal(mean) and safe_divisor(total) and mean != self._fmedian(
                        values, freqs):
                    return {"kind": "frequency", "values": values, "freqs": freqs, "context": context,
                            "image_role": role}
        n = level.rows
        context = int(rng.integers(len(_TABLE_CONTEXTS)))
        while True:
            lo = int(rng.integers(1, 30))
            data = [lo + int(rng.integers(0, 15)) for _ in range(n)]
            if level.ask == "median_minus_mode":
                data[int(rng.integers(n))] = data[int(rng.integers(n))]  # make a repeat likely
                counts = {v: data.count(v) for v in data}
                top = max(counts.values())
                if top < 2 or [c for c in counts.values()].count(top) > 1:
                    continue
            if sorted(data) == data:
                continue
            params = {"kind": "list", "data": data, "context": context, "ask": level.ask, "image_role": role}
            if context in _TABLE_SCALES:  # the header's unit: each printed number is this many
                params["scale"] = _TABLE_SCALES[context][0]
            if role == "required" and rng.random() < STEM_LEAF_SHARE:  # drawn last: other problems keep their data
                return self._stem_leaf(rng, level)
            return params

    def _stem_leaf(self, rng: np.random.Generator, level: _Level) -> dict[str, Any]:
        """Two groups in a back-to-back stem-and-leaf diagram; the question asks about the left-hand group.

        Values span three stems (two-digit numbers, every leaf 0-9), the left group has an even count
        (the median is the mean of the middle two), and on medium problems its mode is one clear value.
        The right-hand group has a few values fewer or more, as two classes rarely have the same size.
        """
        n = level.leaves
        context = int(rng.integers(len(_STEM_CONTEXTS)))
        while True:
            low = 10 * int(rng.integers(1, 7))
            left = [low + int(rng.integers(0, 30)) for _ in range(n)]
            if level.ask == "median_minus_mode":
                left[int(rng.integers(n))] = left[int(rng.integers(n))]
                counts = [left.count(v) for v in dict.fromkeys(left)]
                if max(counts) < 2 or counts.count(max(counts)) > 1:
                    continue
            right = [low + int(rng.integers(0, 30)) for _ in range(n + int(rng.integers(-2, 2)))]
            params = {"kind": "stem", "data": sorted(left), "other": sorted(right), "context": context,
                      "ask": level.ask, "image_role": "required"}
            # the left side read leaf-then-stem must move the answer, or the diagram shows no such slip
            if self.target({**params, "data": backwards(params["data"])}) != self.target(params):
                return params

    # -- statistics by an independent route (Fractions over the data itself)

    @staticmethod
    def _fmedian(values: Sequence[int], freqs: Sequence[int]) -> Fraction:
        expanded = sorted(v for v, f in zip(values, freqs) for _ in range(f))
        return _median(expanded)

    @staticmethod
    def _mode(data: Sequence[int]) -> int:
        return max(sorted(set(data)), key=data.count)

    def _tree(self, params: dict[str, Any], *, data: Sequence[int] | None = None, mode: int | None = None,
              count: int | None = None) -> E.Node:
        if params["kind"] == "frequency":
            values, freqs = params["values"], params["freqs"]
            total: E.Node = sum_node(freqs) if count is None else count
            mean = ["/", ["group", E.sum_of([["*", v, f] for v, f in zip(values, freqs)])], total]
            return ["-", mean, E.leaf(self._fmedian(values, freqs), decimal=True)]
        ordered = sorted(params["data"]) if data is None else list(data)
        n = len(ordered)
        # an odd count only when a misread changes how many values there are (the other group's leaves)
        median: E.Node = ordered[n // 2] if n % 2 else ["/", ["group", ["+", ordered[n // 2 - 1], ordered[n // 2]]], 2]
        tree = median if params["ask"] == "median" else \
            ["-", median, self._mode(params["data"]) if mode is None else mode]
        scale = params.get("scale", 1)
        if scale == 1:  # no unit in the header (or, misread, the header's unit ignored)
            return tree
        return ["*", tree if params["ask"] == "median" else ["group", tree], scale]

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="set_up", decimal=True)
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        if params["kind"] == "frequency":
            values, freqs = params["values"], params["freqs"]
            mean = Fraction(sum(v * f for v, f in zip(values, freqs)), sum(freqs))
            return rational(mean - self._fmedian(values, freqs))
        data = params["data"]
        median = _median(sorted(data))
        # In real units: every printed number times the header's unit (hundreds, thousands).
        scale = params.get("scale", 1)
        return rational(median * scale if params["ask"] == "median" else median * scale - self._mode(data) * scale)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return data_answer(answer)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "median_without_sorting" and params["kind"] == "list":
            data = params["data"]
            if _median(data) == _median(sorted(data)):
                return None
            return mal_chain(self, params, self._tree(params, data=data), "set_up", decimal=True)
        if rule == "mode_as_largest" and params["kind"] in ("list", "stem") and params["ask"] == "median_minus_mode":
            if max(params["data"]) == self._mode(params["data"]):
                return None
            return mal_chain(self, params, self._tree(params, mode=max(params["data"])), "set_up", decimal=True)
        if rule == "mean_divides_by_rows" and params["kind"] == "frequency":
            return mal_chain(self, params, self._tree(params, count=len(params["values"])), "set_up", decimal=True)
        return None

    def _rows(self, params: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
        if params["kind"] == "stem":
            title, left, right, _ = _STEM_CONTEXTS[params["context"]]
            return [left, "", right], stem_rows(params["data"], params["other"])
        if params["kind"] == "frequency":
            head = list(_FREQ_CONTEXTS[params["context"]])
            return head, [[str(v), str(f)] for v, f in zip(params["values"], params["freqs"])]
        name, value, names = _TABLE_CONTEXTS[params["context"]]
        return [name, value], [[names[i], str(v)] for i, v in enumerate(params["data"])]

    def figure(self, params: dict[str, Any]) -> Figure:
        head, rows = self._rows(params)
        if params["kind"] == "stem":
            return stem_leaf_figure(head, rows, _STEM_CONTEXTS[params["context"]][0])
        return table_figure(head, rows)

    def _figure_params(self, params: dict[str, Any]) -> list[tuple[str, int]]:
        """(param key, index) of each value the solver reads, in table order."""
        key = "freqs" if params["kind"] == "frequency" else "data"
        return [(key, i) for i in range(len(params[key]))]

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        head, rows = self._rows(params)
        if params["kind"] == "stem":  # each value of the left group, from the leaves of its stem's row
            stems = [int(row[1]) for row in rows]
            return tuple(Given(f"{_STEM_CONTEXTS[params['context']][3]} ({head[0]})", str(v),
                               f"figure:cell_{stems.index(v // 10) + 1}_0") for v in params["data"])
        out = []
        for r, (key, i) in enumerate(self._figure_params(params), start=1):
            source = "text" if params["image_role"] == "useful" else f"figure:cell_{r}_1"
            out.append(Given(f"{head[1]} ({rows[r - 1][0]})", str(params[key][i]), source))
        return tuple(out)

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        if params["kind"] == "stem":
            return effective_readings(self, params, self._stem_readings(params))
        out = []
        for r, (key, i) in enumerate(self._figure_params(params), start=1):
            values = params[key]
            neighbours = [values[j] for j in (i - 1, i + 1) if 0 <= j < len(values) and values[j] != values[i]]
            swaps = tuple(replace_at(values, i, v) for v in neighbours)  # read the next row's number
            if swaps:
                out.append(Reading(key, f"cell_{r}_1", "misread_label", swaps))
            out.append(Reading(key, f"cell_{r}_1", "misread_value", digit_misreads(values, i)))
        if params.get("scale", 1) != 1:  # the header's "(thousands)" overlooked: the printed numbers taken as counts
            out.append(Reading("scale", "cell_0_1", "misread_scale", (1,)))
        if params["kind"] == "frequency":  # the rows counted one short: the last value and its frequency left out
            k = len(params["values"])
            out.append(Reading("values", f"cell_{k}_0", "miscount", ((params["values"][:-1], params["freqs"][:-1]),),
                               also=("freqs",)))
        return effective_readings(self, params, out)

    def _stem_readings(self, params: dict[str, Any]) -> list[Reading]:
        """Misreads of the left-hand group in a back-to-back stem-and-leaf diagram.

        misread_relation: the left side (under ``cell_0_0``, its group's name) read in the wrong direction, leaf
        then stem as the digits stand on the page (``2 | 3`` taken as 23, not 32), the slip back-to-back
        diagrams are known for; misread_label: the right-hand group's leaves (``cell_0_2``) used for the
        left-hand group; misread_value: one leaf digit misread (3/8, 1/7, 5/6) in the row it stands in.
        """
        data, truth = params["data"], self.target(params)
        out = [Reading("data", "cell_0_0", "misread_relation", (backwards(data),))]
        other = params["other"]
        counts = [other.count(v) for v in dict.fromkeys(other)]
        if other != data and (params["ask"] == "median" or counts.count(max(counts)) == 1):  # one mode to take
            out.append(Reading("data", "cell_0_2", "misread_label", (params["other"],)))
        stems = [int(row[1]) for row in self._rows(params)[1]]
        for i, v in enumerate(data):
            leaf = v % 10
            wrong = [v - leaf + int(_LEAF_LOOKALIKE[str(leaf)])] if str(leaf) in _LEAF_LOOKALIKE else []
            # only a leaf whose misread moves the answer (a median rarely feels the ends): checked by the cheap
            # target here, so effective_readings derives the working of few
            misreads = tuple(m for m in (sorted(replace_at(data, i, w)) for w in wrong)
                             if self.target({**params, "data": m}) != truth)
            if misreads and (i == 0 or data[i - 1] != v):  # one reading per printed leaf value of a row
                out.append(Reading("data", f"cell_{stems.index(v // 10) + 1}_0", "misread_value", misreads))
        return out

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        head, rows = self._rows(params)
        if params["kind"] == "stem":
            title, left, right, noun = _STEM_CONTEXTS[params["context"]]
            return {**params, "title": _lower_first(title), "left": left, "right": right, "noun": noun}
        listing = "; ".join(f"{a}: {b}" for a, b in rows)
        counted, what = "", head[1]
        # The unit lives in the table's header; the question counts real things (whatever the scale is read as).
        if params["kind"] == "list" and params["context"] in _TABLE_SCALES:
            counted, what = _TABLE_SCALES[params["context"]][1], what.split(" (")[0]
            listing += " (in " + head[1].split(" (")[1]  # the text that states the data states the unit too
        return {**params, "what": _lower_first(what), "who": _lower_first(head[0]), "listing": listing,
                "n": len(rows), "counted": counted}


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _median(data: Sequence[int]) -> Fraction:
    n = len(data)
    return Fraction(data[n // 2]) if n % 2 else Fraction(data[n // 2 - 1] + data[n // 2], 2)


# Back-to-back stem-and-leaf diagrams: (title, left group, right group, the value's name in a question).
_STEM_CONTEXTS = (
    ("Marks in a science test", "Class A", "Class B", "mark"),
    ("Times to solve a puzzle (seconds)", "Girls", "Boys", "time"),
    ("Heights of sunflowers (cm)", "Sunny bed", "Shady bed", "height"),
    ("Ages of people at two concerts", "Concert 1", "Concert 2", "age"),
)
STEM_LEAF_SHARE = 0.5
# One leaf digit a glance turns into another (a single digit: no swapped pair to misread).
_LEAF_LOOKALIKE = {"1": "7", "7": "1", "3": "8", "8": "3", "5": "6", "6": "5", "4": "9", "9": "4"}


def backwards(values: Sequence[int]) -> list[int]:
    """Two-digit values as read off the left of a back-to-back stem-and-leaf diagram in the wrong direction:
    the leaf (written before the stem) taken as the tens, the stem as the units; 32 drawn as ``2 | 3`` -> 23."""
    return sorted(10 * (v % 10) + v // 10 for v in values)


def stem_rows(left: Sequence[int], right: Sequence[int]) -> list[list[str]]:
    """Rows of a back-to-back stem-and-leaf diagram: left leaves (growing away from the stem), stem, right leaves.

    Every stem between the smallest and largest value gets a row, even one with no leaves on a side.
    """
    values = [*left, *right]
    rows = []
    for stem in range(min(values) // 10, max(values) // 10 + 1):
        lefts = sorted((v % 10 for v in left if v // 10 == stem), reverse=True)
        rights = sorted(v % 10 for v in right if v // 10 == stem)
        rows.append([" ".join(map(str, lefts)), str(stem), " ".join(map(str, rights))])
    return rows


def stem_leaf_figure(head: Sequence[str], rows: Sequence[Sequence[str]], title: str) -> Figure:
    """A back-to-back stem-and-leaf diagram drawn as a ruled table (rules either side of the stem, no boxes),
    with its title above and its key below: the key reads one made-up row both ways. A side with no leaves on
    a stem has no cell (nothing is drawn there; the description says it is empty)."""
    stem = int(rows[len(rows) // 2][1])
    key = f"Key: 4 | {stem} | 1 means {stem}4 for {head[0]} and {stem}1 for {head[2]}"
    all_rows = [list(head), *[list(r) for r in rows]]
    align = ("right", "centre", "left")
    elements: list[dict[str, Any]] = [{"id": f"cell_{r}_{c}", "type": "cell", "row": r, "col": c, "text": text,
                                       "header": r == 0, "align": align[c]}
                                      for r, row in enumerate(all_rows) for c, text in enumerate(row) if text]
    elements += [{"id": "title", "type": "text", "text": title},
                 {"id": "key", "type": "text", "text": key, "at": "bottom"}]
    height = 0.3 * len(all_rows) + 0.7
    width = min(5.5, max(3.2, 0.075 * len(key) + 0.4))
    return Figure("table", {"size_in": [round(width, 2), round(height, 2)], "rows": all_rows, "title": True,
                            "key": True, "style": "stem_leaf", "noun": "back-to-back stem-and-leaf diagram",
                            "elements": elements})
