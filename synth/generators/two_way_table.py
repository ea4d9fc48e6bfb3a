"""Probabilities (a cell, conditional, either-or) from a two-way table of counts."""

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
from synth.presentation import Vocabulary, form_request, label_last
from synth.records import Figure, Given

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


@dataclass(frozen=True)
class _Level:
    cols: int  # columns of counts (two rows)
    ask: str  # "cell": P(cell); "given_row": P(column | row); "or": P(row or column)
    scaled: bool  # on a share (_SCALED_SHARE), printed in hundreds or thousands and asking a column's total


_LEVELS = {"easy": _Level(2, "cell", scaled=True), "medium": _Level(3, "given_row", scaled=True),
           "hard": _Level(3, "or", scaled=False)}
_SCALED_SHARE = 0.4


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
        level = _LEVELS[difficulty]
        context = int(rng.integers(len(_TWO_WAY)))
        cols = level.cols
        while True:
            counts = [[int(rng.integers(2, 20)) for _ in range(cols)] for _ in range(2)]
            r, c = int(rng.integers(2)), int(rng.integers(cols))
            total = sum(map(sum, counts))
            if safe_divisor(total) and safe_divisor(sum(counts[r])):
                params = {"counts": counts, "row": r, "col": c, "context": context,
                          "ask": level.ask,
                          "image_role": sample_role(rng), "answer_form": "fraction"}
                # drawn after the probability table, so those tables keep the params they had before
                if level.scaled and rng.random() < _SCALED_SHARE:
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
