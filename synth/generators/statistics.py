"""Statistics and probability read from figures: bar-chart mean, table median/mode, pie, line chart, two-way table.

Also home of the small helpers the figure families share (``reduce_steps`` evaluates a displayed
tree one operation per step, the way a pupil writes it out; ``sample_role`` decides whether the
text repeats what the figure shows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from math import gcd
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._figure import neighbour_misreads
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.presentation import Vocabulary, form_request, label_last
from synth.records import Figure, Given

# ---------------------------------------------------------------- shared helpers

_RULES = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "frac": "simplify"}
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "frac": 2}


def pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    return options[int(rng.integers(len(options)))]


def sample_role(rng: np.random.Generator, p_required: float = 0.7) -> str:
    """``required``: the needed values are only in the figure; ``useful``: the text repeats them."""
    return "required" if rng.random() < p_required else "useful"


def safe_divisor(n: int) -> bool:
    """A divisor no common slip (off by one, dropped carry) can turn into 0: |n| >= 2, not a power of 10."""
    n = abs(n)
    return n >= 2 and str(n).rstrip("0") != "1"


def _leaf_like(node: E.Node) -> bool:
    if not isinstance(node, list):
        return True
    if node[0] == "frac" and all(isinstance(a, int) for a in node[1:]):
        p, q = node[1], node[2]
        return q > 1 and gcd(p, q) == 1
    return False


Candidate = tuple[tuple[int, int], tuple[int, ...]]  # (bracket depth, precedence), path to the node


def _candidates(node: E.Node, depth: int = 0, path: tuple[int, ...] = ()) -> list[Candidate]:
    if _leaf_like(node):
        return []
    op, *args = node
    if op == "group":
        return _candidates(args[0], depth + 1, path + (1,))
    found = []
    for i, child in enumerate(args, start=1):
        wrapped = isinstance(child, list) and not _leaf_like(child) and child[0] != "group" and (
            op == "frac" or _PREC[child[0]] < _PREC[op] or (i == 2 and _PREC[child[0]] == _PREC[op]))
        found += _candidates(child, depth + wrapped, path + (i,))
    if all(_leaf_like(a) for a in args):
        found.append(((depth, _PREC[op]), path))
    return found


def _get(node: E.Node, path: tuple[int, ...]) -> E.Node:
    for i in path:
        node = node[i]
    return node


def _put(node: E.Node, path: tuple[int, ...], new: E.Node) -> E.Node:
    if not path:
        return new
    out = list(node)
    out[path[0]] = _put(node[path[0]], path[1:], new)
    return out


def _unwrap(node: E.Node) -> E.Node:
    """Drop brackets around a single number: ``(12)`` is written ``12`` once its inside is done."""
    if not isinstance(node, list):
        return node
    if node[0] == "group" and _leaf_like(node[1]):
        return node[1]
    return [node[0], *(_unwrap(a) for a in node[1:])]


def reduce_steps(d: Derivation, tree: E.Node, *, first_rule: str, decimal: bool = False,
                 lhs: str | None = None) -> E.Node:
    """Show ``tree`` as step 1, then do one operation per step (brackets, then × ÷, then + −, left to right).

    Each operation's result goes through ``d.compute`` so an injector can slip it and the later
    steps carry the slip. With ``lhs`` (a variable name) every step is written ``lhs = tree``.
    """
    _show(d, first_rule, tree, None, lhs)
    while not _leaf_like(tree):
        _, path = max(_candidates(tree), key=lambda c: c[0])
        node = _get(tree, path)
        result = d.compute(E.sym(node))
        tree = _unwrap(_put(tree, path, E.leaf(result, decimal=decimal)))
        _show(d, _RULES[node[0]], tree, result, lhs)
    return tree


def _show(d: Derivation, rule: str, tree: E.Node, result: sympy.Basic | None, lhs: str | None) -> None:
    if lhs is None:
        E.add_step(d, rule, tree, result)
        return
    value = sympy.Eq(sympy.Symbol(lhs), E.sym(tree), evaluate=False)
    d.add(StepDraft(rule=rule, value=value, text=f"{lhs} = {E.text(tree)}", latex=f"{lhs} = {E.latex(tree)}",
                    result=result))


def rational(v: Fraction | int) -> sympy.Rational:
    f = Fraction(v)
    return sympy.Rational(f.numerator, f.denominator)


def sum_node(values: Sequence[E.Node]) -> E.Node:
    return ["group", E.sum_of(list(values))] if len(values) > 1 else values[0]


def num_text(v: Fraction | int) -> str:
    """A JSON-friendly number as pupils write it (decimals where they terminate)."""
    return E.text(E.leaf(Fraction(v), decimal=True))


def replace_at(values: Sequence[Any], i: int, new: Any) -> list[Any]:
    out = list(values)
    out[i] = new
    return out


def mal_chain(family: Family, params: dict[str, Any], tree: E.Node, first_rule: str, *,
              decimal: bool = False, lhs: str | None = None) -> list[StepDraft] | None:
    """A student's solution set up with the wrong method (``tree``) and then worked out correctly."""
    d = Derivation()
    reduce_steps(d, tree, first_rule=first_rule, decimal=decimal, lhs=lhs)
    if sympy.simplify(family.answer_of(d.steps[-1].value) - family.target(params)) == 0:
        return None  # the mistake happens to give the right answer here: not a usable error
    return d.steps


def _answer(answer: sympy.Basic) -> tuple[str, str]:
    """An answer as the data families state it (a decimal where it terminates); ``answer`` may be a distractor."""
    return E.num_text(answer, decimal=True), E.num_latex(answer, decimal=True)


# ---------------------------------------------------------------- chart scaffolding

def axes_elements(y_label: str, x_label: str) -> list[dict[str, Any]]:
    return [{"id": "grid", "type": "gridline"},
            {"id": "axis_x", "type": "axis", "label": x_label},
            {"id": "axis_y", "type": "axis", "label": y_label},
            {"id": "ticks_y", "type": "tick"}]


def misread_list(values: Sequence[int], i: int, deltas: Sequence[int], *, low: int = 0) -> tuple[list[int], ...]:
    """``values`` with entry i moved by each delta (skipping moves below ``low`` or no-ops)."""
    out = []
    for delta in deltas:
        v = values[i] + delta
        if delta != 0 and v >= low:
            out.append(replace_at(values, i, v))
    return tuple(out)


def digit_misreads(values: Sequence[int], i: int) -> tuple[list[int], ...]:
    """``values`` with entry i as a glance misreads its printed digits (3/8, 1/7, swapped digits); sign kept."""
    v = values[i]
    return tuple(replace_at(values, i, m if v >= 0 else -m) for m in neighbour_misreads(abs(v)))


def neighbour_swaps(values: Sequence[int], i: int, positions: Sequence[int]) -> tuple[list[int], ...]:
    """``values`` with entry i replaced by the entry at each neighbouring position (a label read one along)."""
    seen = dict.fromkeys(values[j] for j in positions if 0 <= j < len(values) and values[j] != values[i])
    return tuple(replace_at(values, i, v) for v in seen)


# ---------------------------------------------------------------- bar chart mean

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
        n = {"easy": 4, "medium": int(rng.integers(5, 7)), "hard": int(rng.integers(6, 8))}[difficulty]
        scale = {"easy": 1, "medium": int(pick(rng, (2, 5))), "hard": int(pick(rng, (5, 10)))}[difficulty]
        context = int(rng.integers(len(_BAR_CONTEXTS)))
        top = {"easy": 12, "medium": 14, "hard": 16}[difficulty]
        while True:
            # Bars end on a gridline (easy) or on a half step between gridlines (harder).
            half = 2 if difficulty != "easy" and scale % 2 == 0 else 1
            values = [int(rng.integers(2 * half, top * half + 1)) * scale // half for _ in range(n)]
            mean = Fraction(sum(values), n)
            if difficulty == "easy" and mean.denominator != 1:
                continue
            if not E.is_decimal(mean) or len(set(values)) < n - 1:
                continue
            if difficulty == "hard" and values.count(max(values)) > 1:
                continue
            params = {"values": values, "scale": scale, "context": context, "ask": "above_mean"
                      if difficulty == "hard" else "mean", "image_role": sample_role(rng)}
            if difficulty == "hard":  # which bar the solver compares with the mean (a relation read off the chart)
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

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return _answer(answer)

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


# ---------------------------------------------------------------- table median / mode

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
        role = sample_role(rng)
        if difficulty == "hard":
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
        n = 6 if difficulty == "easy" else 8
        context = int(rng.integers(len(_TABLE_CONTEXTS)))
        while True:
            lo = int(rng.integers(1, 30))
            data = [lo + int(rng.integers(0, 15)) for _ in range(n)]
            if difficulty == "medium":
                data[int(rng.integers(n))] = data[int(rng.integers(n))]  # make a repeat likely
                counts = {v: data.count(v) for v in data}
                top = max(counts.values())
                if top < 2 or [c for c in counts.values()].count(top) > 1:
                    continue
            if sorted(data) == data:
                continue
            params = {"kind": "list", "data": data, "context": context,
                      "ask": "median" if difficulty == "easy" else "median_minus_mode", "image_role": role}
            if context in _TABLE_SCALES:  # the header's unit: each printed number is this many
                params["scale"] = _TABLE_SCALES[context][0]
            if role == "required" and rng.random() < STEM_LEAF_SHARE:  # drawn last: other problems keep their data
                return self._stem_leaf(rng, difficulty)
            return params

    def _stem_leaf(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        """Two groups in a back-to-back stem-and-leaf diagram; the question asks about the left-hand group.

        Values span three stems (two-digit numbers, every leaf 0-9), the left group has an even count
        (the median is the mean of the middle two), and on medium problems its mode is one clear value.
        The right-hand group has a few values fewer or more, as two classes rarely have the same size.
        """
        n = 8 if difficulty == "easy" else 10
        context = int(rng.integers(len(_STEM_CONTEXTS)))
        while True:
            low = 10 * int(rng.integers(1, 7))
            left = [low + int(rng.integers(0, 30)) for _ in range(n)]
            if difficulty != "easy":
                left[int(rng.integers(n))] = left[int(rng.integers(n))]
                counts = [left.count(v) for v in dict.fromkeys(left)]
                if max(counts) < 2 or counts.count(max(counts)) > 1:
                    continue
            right = [low + int(rng.integers(0, 30)) for _ in range(n + int(rng.integers(-2, 2)))]
            params = {"kind": "stem", "data": sorted(left), "other": sorted(right), "context": context,
                      "ask": "median" if difficulty == "easy" else "median_minus_mode", "image_role": "required"}
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
        return _answer(answer)

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


def table_figure(head: Sequence[str], rows: Sequence[Sequence[str]], *, title: str = "") -> Figure:
    all_rows = [list(head), *[list(r) for r in rows]]
    elements = [{"id": f"cell_{r}_{c}", "type": "cell", "row": r, "col": c, "text": text, "header": r == 0 or c == 0
                 and len(head) > 2}
                for r, row in enumerate(all_rows) for c, text in enumerate(row) if text]
    if title:
        elements.append({"id": "title", "type": "text", "text": title})
    height = 0.3 * len(all_rows) + (0.35 if title else 0.1)
    width = min(5.5, 0.5 + sum(max(0.7, 0.2 + 0.085 * max(len(r[c]) for r in all_rows)) for c in range(len(head))))
    return Figure("table", {"size_in": [round(width, 2), round(height, 2)], "rows": all_rows, "title": bool(title),
                            "elements": elements})


# ---------------------------------------------------------------- pie chart

_PIE_CONTEXTS = (
    ("Favourite sport", ("Football", "Tennis", "Swimming", "Netball", "Cricket"), "pupils", "chose"),
    ("How pupils travel to school", ("Walk", "Bus", "Car", "Bike", "Train"), "pupils", "travel by"),
    ("Favourite fruit", ("Apple", "Banana", "Grapes", "Mango", "Pear"), "people", "chose"),
    ("Pets owned", ("Dog", "Cat", "Fish", "Rabbit", "Bird"), "families", "own a"),
)
_PIE_ANGLES = (30, 36, 40, 45, 60, 72, 80, 90, 100, 108, 120, 135, 144, 150, 180)
# How a chart's sector numbers are printed and read: percentages of the whole, or angles in degrees.
_PERCENT, _DEGREES = "percent", "degrees"


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
        context = int(rng.integers(len(_PIE_CONTEXTS)))
        k = {"easy": 3, "medium": 4, "hard": int(rng.integers(4, 6))}[difficulty]
        # Some easy charts label their sectors in percent. The question's wording speaks of angles wherever it
        # lists them, so a percent chart is image-only (required).
        percent = difficulty == "easy" and bool(rng.random() < 0.4)
        equal = difficulty == "medium" and bool(rng.random() < 0.5)
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
                      "hidden": ask if difficulty != "easy" else None}
            if pair:  # sector pair[0] carries no angle, only the mark it shares with sector pair[1]
                params.update({"marked": pair[0], "same_as": _PIE_CONTEXTS[context][1][pair[1]]})
            if percent:
                params.update({"percents": [a * 5 // 18 for a in angles], "printed": _PERCENT, "read_as": _PERCENT})
            if difficulty == "hard":
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
        return _answer(answer)

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


# ---------------------------------------------------------------- line chart

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
        context = int(rng.integers(len(_LINE_CONTEXTS)))
        times = _LINE_CONTEXTS[context][4]
        n = int(rng.integers(5, 8))
        step = {"easy": int(pick(rng, (1, 2))), "medium": int(pick(rng, (2, 5))), "hard": int(pick(rng, (5, 10)))}[
            difficulty]
        peak = difficulty != "hard" and bool(rng.random() < 0.5)  # "from 8 am to the highest point"
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
            if difficulty == "hard":
                pct = change / values[a] * 100
                if (pct * 10).denominator != 1:
                    continue
            elif (difficulty == "easy" and rate.denominator != 1) or not E.is_decimal(rate):
                continue
            params = {"values": values, "a": a, "b": b, "step": step, "context": context,
                      "ask": "percent" if difficulty == "hard" else "rate", "image_role": sample_role(rng)}
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
        text, latex = _answer(answer)
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


# ---------------------------------------------------------------- two-way table probability

_TWO_WAY = (
    (("Year 7", "Year 8"), ("Walk", "Bus", "Car"), "pupil", "How pupils travel to school"),
    (("Boys", "Girls"), ("Football", "Tennis", "Swimming"), "pupil", "Favourite sport"),
    (("Morning", "Afternoon"), ("Tea", "Coffee", "Juice"), "customer", "Drinks sold in a café"),
    (("Club A", "Club B"), ("Red", "Blue", "Green"), "member", "Favourite colour"),
)
# Two-way tables printed in hundreds or thousands (the unit in the title, as tables of large counts are): the
# "how many" question they carry, where the unit matters (in a probability it cancels). Rows, columns, noun, title,
# what each column's total counts, the unit.
_TWO_WAY_SCALED = (
    (("Adults", "Children"), ("Friday", "Saturday", "Sunday"), "ticket", "Tickets sold at a museum",
     "tickets sold on {col}", (100, "hundreds")),
    (("Online", "In store"), ("Books", "Games", "Films"), "sale", "Sales in one month", "{low} sold",
     (1000, "thousands")),
    (("Cars", "Vans"), ("Morning", "Afternoon", "Evening"), "vehicle", "Vehicles crossing a bridge",
     "vehicles crossing in the {low}", (100, "hundreds")),
)


@register
class TwoWayTableProbability(Family):
    """easy: P(cell); medium: P(column | row); hard: P(row or column), all from a two-way table of counts.

    Some easy and medium tables are printed in hundreds or thousands and ask how many a column counts in all.
    """

    id = "probability.table.two_way"
    domain = "probability"
    subdomain = "probability"
    grade_band = "7-9"
    figure_kind = "table"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("wrong_denominator", "misinterpret_question", "divides by the wrong total (row total for a whole-"
                "table probability, whole table for a conditional one)"),
        MalRule("or_adds_overlap_twice", "formula_misuse", "adds P(A) and P(B) without taking away the overlap"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        context = int(rng.integers(len(_TWO_WAY)))
        cols = {"easy": 2, "medium": 3, "hard": 3}[difficulty]
        while True:
            counts = [[int(rng.integers(2, 20)) for _ in range(cols)] for _ in range(2)]
            r, c = int(rng.integers(2)), int(rng.integers(cols))
            total = sum(map(sum, counts))
            if safe_divisor(total) and safe_divisor(sum(counts[r])):
                params = {"counts": counts, "row": r, "col": c, "context": context,
                          "ask": {"easy": "cell", "medium": "given_row", "hard": "or"}[difficulty],
                          "image_role": sample_role(rng), "answer_form": "fraction"}
                # drawn after the probability table, so those tables keep the params they had before
                if difficulty != "hard" and rng.random() < 0.4:
                    return self._sample_scaled(rng, cols)
                return params

    @staticmethod
    def _sample_scaled(rng: np.random.Generator, cols: int) -> dict[str, Any]:
        """A table printed in hundreds or thousands, and the column whose total is asked."""
        context = int(rng.integers(len(_TWO_WAY_SCALED)))
        while True:
            counts = [[int(rng.integers(2, 20)) for _ in range(cols)] for _ in range(2)]
            if len({sum(col) for col in zip(*counts)} | {sum(row) for row in counts}) == cols + 2:
                # every total its own number, so no other row or column is worth the same as the one asked
                # "row" is unused by a column's total (kept so every table names one)
                return {"counts": counts, "row": 0, "col": int(rng.integers(cols)), "context": context,
                        "ask": "count", "scale": _TWO_WAY_SCALED[context][5][0], "image_role": sample_role(rng)}

    def _tree(self, params: dict[str, Any], *, denominator: str | None = None, overlap: bool = True) -> E.Node:
        counts, r, c = params["counts"], params["row"], params["col"]
        cells = [v for row in counts for v in row]
        ask = params["ask"]
        if ask == "count":  # the column's cells added, times the unit the table is printed in
            column = ["+", counts[0][c], counts[1][c]]
            return column if params["scale"] == 1 else ["*", ["group", column], params["scale"]]
        grand = sum_node(cells)
        row_total = sum_node(counts[r])
        if ask == "or":
            col_total = sum_node([row[c] for row in counts])
            top: E.Node = ["+", row_total, col_total]
            top = ["group", ["-", top, counts[r][c]] if overlap else top]
            return ["/", top, grand]
        use = denominator or ("grand" if ask == "cell" else "row")
        return ["/", counts[r][c], grand if use == "grand" else row_total]

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="probability_formula")
        return label_last(d.steps, self._event(params))

    @staticmethod
    def _names(params: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...], str, str]:
        """Row names, column names, the noun and the title of the problem's table."""
        if params["ask"] == "count":
            rows, cols, noun, title, _, (_, unit) = _TWO_WAY_SCALED[params["context"]]
            return rows, cols, noun, f"{title} ({unit})"
        return _TWO_WAY[params["context"]]

    def _event(self, params: dict[str, Any]) -> str:
        """``P(Boys and Tennis)``, ``P(Tennis | Boys)``, ``P(Boys or Tennis)``, in the table's own words; a count
        is labelled with its column's name (``Saturday: 1900``)."""
        rows, cols, _, _ = self._names(params)
        row, col = rows[params["row"]], cols[params["col"]]
        return {"cell": f"P({row} and {col})", "given_row": f"P({col} | {row})", "or": f"P({row} or {col})",
                "count": col}[params["ask"]]

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        """The same event for every row and column: a contextual swap names the wrong group or choice (for a
        count, the wrong column or a row)."""
        rows, cols, _, _ = self._names(params)
        width = len(params["counts"][0])
        words = [w for name in (*rows, *cols[:width]) for w in name.lower().split()]
        if params["ask"] == "count":
            unit = sympy.Integer(params["scale"])
            labels = {cols[c]: sum(row[c] for row in params["counts"]) * unit for c in range(width)}
            labels.update({rows[r]: sum(params["counts"][r]) * unit for r in range(2)})
            return Vocabulary(labels, tuple(dict.fromkeys(words)))
        cells = [{**params, "row": r, "col": c} for r in range(2) for c in range(width)]
        return Vocabulary({self._event(p): self.target(p) for p in cells}, tuple(dict.fromkeys(words)))

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Count outcomes directly: every (row, column) pair that satisfies the event.
        counts, r, c = params["counts"], params["row"], params["col"]
        total = sum(map(sum, counts))
        if params["ask"] == "count":  # in real units: every printed number times the title's unit
            return sympy.Integer(sum(row[c] for row in counts) * params["scale"])
        if params["ask"] == "cell":
            return rational(Fraction(counts[r][c], total))
        if params["ask"] == "given_row":
            return rational(Fraction(counts[r][c], sum(counts[r])))
        hits = sum(v for i, row in enumerate(counts) for j, v in enumerate(row) if i == r or j == c)
        return rational(Fraction(hits, total))

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "wrong_denominator" and params["ask"] != "or":
            wrong = "row" if params["ask"] == "cell" else "grand"
            return mal_chain(self, params, self._tree(params, denominator=wrong), "probability_formula")
        if rule == "or_adds_overlap_twice" and params["ask"] == "or":
            return mal_chain(self, params, self._tree(params, overlap=False), "probability_formula")
        return None

    def figure(self, params: dict[str, Any]) -> Figure:
        rows, cols, _, title = self._names(params)
        head = ["", *cols[: len(params["counts"][0])]]
        body = [[rows[i], *map(str, counts)] for i, counts in enumerate(params["counts"])]
        return table_figure(head, body, title=title)

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        rows, cols, _, _ = self._names(params)
        src = params["image_role"] == "useful"
        return tuple(Given(f"{rows[i]} {cols[j]}", str(v), "text" if src else f"figure:cell_{i + 1}_{j + 1}")
                     for i, row in enumerate(params["counts"]) for j, v in enumerate(row))

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        counts = params["counts"]
        out = []
        for i, row in enumerate(counts):
            for j, v in enumerate(row):
                if (params["ask"] == "count" and j != params["col"]) or (params["ask"] == "given_row"
                                                                         and i != params["row"]):
                    continue  # a column's total or P(column | row) reads only its own cells: a misread elsewhere
                    # changes nothing (and would be dropped after working it through)
                neighbours = {counts[a][b] for a, b in ((1 - i, j), (i, j - 1), (i, j + 1))
                              if 0 <= b < len(row) and counts[a][b] != v}
                wrong = []
                for n in sorted(neighbours):  # the number in the next cell along or the other row
                    grid = [list(x) for x in counts]
                    grid[i][j] = n
                    wrong.append(grid)
                out.append(Reading("counts", f"cell_{i + 1}_{j + 1}", "misread_label", tuple(wrong)))
                out.append(Reading("counts", f"cell_{i + 1}_{j + 1}", "misread_value",
                                   tuple(replace_at(counts, i, r) for r in digit_misreads(row, j))))
        last = len(counts[0]) - 1
        if last >= 2 and params["col"] != last:
            # a three-column table added up without its last column (the totals are not printed)
            out.append(Reading("counts", f"cell_0_{last + 1}", "miscount", ([row[:-1] for row in counts],)))
        if params.get("scale", 1) != 1:  # the title's "(hundreds)" overlooked: the printed numbers taken as counts
            out.append(Reading("scale", "title", "misread_scale", (1,)))
        return effective_readings(self, params, out)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        rows, cols, noun, title = self._names(params)
        listing = "; ".join(f"{rows[i]}: " + ", ".join(f"{cols[j]} {v}" for j, v in enumerate(row))
                            for i, row in enumerate(params["counts"]))
        ctx = {**params, "row_name": rows[params["row"]], "col_name": cols[params["col"]], "noun": noun,
               "title": title.lower(), "listing": listing}
        if params["ask"] == "count":  # the unit is printed in the table's title (and stated with a listing)
            _, _, _, name, what, (_, unit) = _TWO_WAY_SCALED[params["context"]]
            col = cols[params["col"]]
            ctx.update({"title": name[:1].lower() + name[1:], "unit_word": unit,
                        "what": what.format(col=col, low=col.lower())})
            return ctx
        return {**ctx, "form_request": form_request(params["answer_form"])}
