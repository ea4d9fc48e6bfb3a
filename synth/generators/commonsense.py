"""Math commonsense with a picture: a point on a number line, time between two clocks, counting an array."""

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
from synth.presentation import unit_last
from synth.records import Figure, Given

# ---------------------------------------------------------------- number line


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
        while True:
            if difficulty == "easy":
                n = int(pick(rng, (4, 5, 10)))
                start = int(rng.integers(0, 40)) * 10
                width = n * int(pick(rng, (2, 5, 10, 20)))
                decimal, i, j = True, 0, n
            elif difficulty == "medium":
                n = int(pick(rng, (3, 4, 5, 6, 8)))
                start = int(rng.integers(0, 20))
                width = int(pick(rng, (1, 2, 3)))
                decimal, i, j = n in (4, 5, 8) and bool(rng.random() < 0.5), 0, n
            else:
                n = int(pick(rng, (8, 10, 12)))
                i = int(rng.integers(1, 4))
                j = i + int(pick(rng, (2, 3, 4, 5, 6)))
                start = -int(rng.integers(1, 7))
                width = int(pick(rng, (1, 2, 3, 4)))
                decimal = bool(rng.random() < 0.5) and E.is_decimal(Fraction(width, j - i))
            if j > n:
                continue
            k = int(pick(rng, [m for m in range(1, n) if m not in (i, j)]))
            if Fraction(width, j - i) == 1:
                continue
            return {"start": start, "end": start + width, "n": n, "labels": [i, j], "ks": [k], "decimal": decimal,
                    "image_role": sample_role(rng), "answer_form": "decimal" if decimal else "fraction"}

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


# ---------------------------------------------------------------- clocks


def _clock_text(h: int, m: int) -> str:
    return f"{h}:{m:02d}"


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
        step = 1 if difficulty == "hard" else 5
        while True:
            h1 = int(rng.integers(1, 12)) if difficulty == "easy" else int(rng.integers(8, 12))
            m1 = int(rng.integers(0, 60 // step)) * step
            length = int(rng.integers(20, 180 if difficulty == "easy" else 300))
            length -= (m1 + length) % step
            start = h1 * 60 + m1
            end = start + length
            h2, m2 = divmod(end, 60)
            if difficulty == "easy" and h2 > 12 or length < 15:
                continue
            if difficulty != "easy" and h2 <= 12:
                continue
            if m1 == 0 or m2 == 0 or (m1 // 5) % 12 == h1 % 12:
                continue
            params = {"h1": h1, "m1": m1, "h2": h2, "m2": m2, "pm": difficulty != "easy",
                      "context": int(rng.integers(len(_CLOCK_CONTEXTS))), "image_role": sample_role(rng),
                      "answer_unit": "min"}
            if difficulty == "hard":
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


# ---------------------------------------------------------------- counting objects

_KEY_VALUES = (2, 3, 4, 5)  # what one picture stands for in a pictogram's key


def _uneven_share(params: dict[str, Any], pictures: int, per: int) -> bool:
    """Whether ``pictures`` objects worth ``per`` each cannot be shared out whole (a pupil would notice)."""
    return "share" in params and pictures * per % params["share"] != 0


# Share of two-tray pictures whose question asks about one tray only ("How many eggs are in tray B?").
_ONE_TRAY_SHARE = 0.35


def _asked(params: dict[str, Any]) -> list[dict[str, Any]]:
    """The groups the working counts: all of them, or the one tray the question names (``ask``: "A" or "B").

    ``counted`` (sampled equal to ``ask``) is the tray whose objects are counted for it: the other one when
    the tray labels are misread. The question keeps naming ``ask``.
    """
    groups = params["groups"]
    if params.get("ask") is None:
        return groups
    return [groups["AB".index(params["counted"])]]


def _present(groups: list[dict[str, Any]]) -> int:
    return sum(g["rows"] * g["cols"] - len(g["missing"]) for g in groups)


_SHAPES = ("apple", "star", "dot", "egg")
_FLAT = ("sticker sheet", "board")  # objects sit on these, and in the others
_CONTAINERS = {"apple": ("apples", "crate"), "star": ("stars", "sticker sheet"), "dot": ("counters", "board"),
               "egg": ("eggs", "tray")}


@register
class CountingObjects(Family):
    """Objects in rows and columns with gaps: rows × columns − missing (medium: two groups; hard: shared out).

    Half of the medium and hard pictures are pictograms: a key under the picture says how many
    each drawn object stands for (``per``), as in school pictograms, so the count is multiplied by it.
    """

    id = "commonsense.counting.objects"
    domain = "commonsense"
    subdomain = "counting"
    grade_band = "2-4"
    figure_kind = "object_array"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("ignore_missing", "invalid_assumption", "counts the array as if it were full"),
        MalRule("add_rows_and_columns", "formula_misuse", "adds the number of rows and columns instead of "
                "multiplying"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        groups_n = 1 if difficulty == "easy" else 2
        shape = str(pick(rng, _SHAPES))
        while True:
            groups = []
            for _ in range(groups_n):
                rows, cols = int(rng.integers(2, 6)), int(rng.integers(3, 8))
                k = int(rng.integers(1, min(6, rows * cols // 3) + 1))
                cells = sorted(int(c) for c in rng.choice(rows * cols, size=k, replace=False))
                groups.append({"rows": rows, "cols": cols, "missing": cells})
            params = {"shape": shape, "groups": groups, "image_role": sample_role(rng)}
            if difficulty != "easy" and rng.random() < 0.5:
                params["per"] = int(pick(rng, _KEY_VALUES))
            if groups_n == 2 and rng.random() < _ONE_TRAY_SHARE:
                params["ask"] = params["counted"] = str(pick(rng, ("A", "B")))
                if _present(groups[:1]) == _present(groups[1:]):
                    continue  # the other tray holds as many: nothing tells the two apart
            if difficulty == "hard":
                total = params.get("per", 1) * _present(_asked(params))
                sharers = [s for s in (2, 3, 4, 5, 6) if total % s == 0]
                if not sharers:
                    continue
                params["share"] = int(pick(rng, sharers))
            return params

    def _tree(self, params: dict[str, Any], *, full: bool = False, add: bool = False) -> E.Node:
        terms: list[E.Node] = []
        for g in _asked(params):
            array: E.Node = ["+" if add else "*", g["rows"], g["cols"]]
            if add:
                array = ["group", array]
            terms.append(array if full else ["-", array, len(g["missing"])] if len(terms) == 0 else
                         ["group", ["-", array, len(g["missing"])]])
        node = terms[0]
        for t in terms[1:]:
            node = ["+", node, t]
        if params.get("per", 1) != 1:  # the pictures counted, then each worth what the key says
            node = ["*", ["group", node], params["per"]]
        if "share" in params:
            node = ["/", ["group", node], params["share"]]
        return node

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="rows_times_columns")
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Count the objects that are there, one by one.
        present = sum(1 for g in _asked(params) for cell in range(g["rows"] * g["cols"]) if cell not in g["missing"])
        return rational(Fraction(present * params.get("per", 1), params.get("share", 1)))

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "ignore_missing":
            if _uneven_share(params, sum(g["rows"] * g["cols"] for g in _asked(params)), params.get("per", 1)):
                return None  # a pupil would notice the share is not whole
            return mal_chain(self, params, self._tree(params, full=True), "rows_times_columns")
        if rule == "add_rows_and_columns":
            if any(g["rows"] + g["cols"] == g["rows"] * g["cols"] for g in _asked(params)):
                return None
            tree = self._tree(params, add=True)
            if "share" in params and E.value(tree).denominator != 1:
                return None
            return mal_chain(self, params, tree, "rows_times_columns")
        return None

    def figure(self, params: dict[str, Any]) -> Figure:
        noun, container = _CONTAINERS[params["shape"]]
        elements: list[dict[str, Any]] = []
        for gi, g in enumerate(params["groups"]):
            name = "AB"[gi]
            elements.append({"id": f"tray_{name}", "type": "polygon", "group": gi})
            elements.append({"id": f"label_{name}", "type": "label", "group": gi,
                             "text": f"{container.capitalize()} {name}" if len(params["groups"]) > 1 else
                             container.capitalize()})
            for cell in range(g["rows"] * g["cols"]):
                r, c = divmod(cell, g["cols"])
                elements.append({"id": f"object_{name}_{r}_{c}", "type": "object", "group": gi, "row": r, "col": c,
                                 "present": cell not in g["missing"]})
        widest = max(g["cols"] for g in params["groups"])
        tallest = max(g["rows"] for g in params["groups"])
        n = len(params["groups"])
        width = round(min(5.6, n * (widest * 0.36 + 0.35)), 2)
        height = tallest * 0.36 + 0.6
        spec: dict[str, Any] = {"shape": params["shape"], "groups": [[g["rows"], g["cols"]] for g in params["groups"]]}
        if "per" in params:  # the pictogram's key, under the picture: "<object> = 3 apples"
            elements.append({"id": "key", "type": "key", "text": f"= {params['per']} {noun}"})
            spec["key"] = True
            height += 0.36  # the key's row (26 pt) under the objects, which keep their size
            width = max(width, 1.6)
        return Figure("object_array", {"size_in": [width, round(height, 2)], **spec, "elements": elements})

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        useful = params["image_role"] == "useful"
        out = []
        for gi, g in enumerate(params["groups"]):
            name = "AB"[gi]
            for key in ("rows", "cols"):
                out.append(Given(f"{key} {name}", str(g[key]), "text" if useful else f"figure:tray_{name}"))
            first_gap = divmod(g["missing"][0], g["cols"])
            out.append(Given(f"missing {name}", str(len(g["missing"])), "text" if useful else
                             f"figure:object_{name}_{first_gap[0]}_{first_gap[1]}"))
        if "per" in params:
            out.append(Given("each picture stands for", str(params["per"]), "text" if useful else "figure:key"))
        if "share" in params:
            out.append(Given("people sharing", str(params["share"]), "text"))
        return tuple(out)

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        groups = params["groups"]
        out = []
        for gi, g in enumerate(groups):
            name = "AB"[gi]
            for key, kind in (("rows", "miscount"), ("cols", "miscount")):
                wrong = []
                for delta in (1, -1):
                    changed = dict(g, **{key: g[key] + delta})
                    size = changed["rows"] * changed["cols"]
                    if changed[key] >= 1 and all(c < size for c in g["missing"]):
                        wrong.append([changed if j == gi else h for j, h in enumerate(groups)])
                out.append(Reading("groups", f"tray_{name}", kind, tuple(wrong)))
            spare = [c for c in range(g["rows"] * g["cols"]) if c not in g["missing"]]
            fewer = dict(g, missing=g["missing"][1:])
            more = dict(g, missing=sorted([*g["missing"], spare[0]])) if spare else None
            options = [fewer] + ([more] if more else [])
            r, c = divmod(g["missing"][0], g["cols"])
            out.append(Reading("groups", f"object_{name}_{r}_{c}", "miscount",
                               tuple([o if j == gi else h for j, h in enumerate(groups)] for o in options)))
        if params.get("ask") is not None:  # the tray named in the question taken for the other one
            other = "B" if params["ask"] == "A" else "A"
            if not _uneven_share(params, _present(_asked({**params, "counted": other})), params.get("per", 1)):
                out.append(Reading("counted", f"label_{params['ask']}", "misread_label", (other,)))
        if "per" in params:
            pictures = _present(_asked(params))

            def whole(per: int) -> bool:
                return not _uneven_share(params, pictures, per)

            # the key overlooked: every picture counted as one; the key's digit misread (3/8, 5/6)
            out.append(Reading("per", "key", "misread_scale", tuple(v for v in (1,) if whole(v))))
            out.append(Reading("per", "key", "misread_value", tuple(
                v for v in neighbour_misreads(params["per"]) if whole(v))))
        return effective_readings(self, params, out)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        noun, container = _CONTAINERS[params["shape"]]
        g, ask = params["groups"], params.get("ask")
        desc = " and ".join(f"{x['rows']} rows of {x['cols']} with {len(x['missing'])} missing" +
                            ("" if ask is None else f" {'on' if container in _FLAT else 'in'} {container} {name}")
                            for name, x in zip("AB", g))
        if "per" in params:
            desc += f", each picture standing for {params['per']} {noun}"
        return {**params, "noun": noun, "container": container, "two": len(g) == 2, "desc": desc,
                "share": params.get("share"), "ask": ask,
                "asked": None if ask is None else f"{'on' if container in _FLAT else 'in'} {container} {ask}"}
