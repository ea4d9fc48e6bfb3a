"""Explanations of visual misreads: values left out when counting read as such, at any depth of a list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
import sympy

from perturb.reasoning import inject
from synth import generators
from synth.generators.base import Family, Reading, StepDraft
from synth.records import Figure, Problem, Step
from synth.verifier import verify


class TallyTable(Family):
    """Add up every count in a small table of tallies (rows of counts, one column per day)."""

    id = "test.fake.tally_table"
    domain = "statistics"
    subdomain = "tables"
    grade_band = "3-4"
    figure_kind = "fake_table"
    image_roles = ("required",)

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        cells = [c for row in params["rows"] for c in row]
        total = sympy.Integer(sum(cells))
        shown = " + ".join(str(c) for c in cells)
        return [StepDraft("add", total, shown, shown), StepDraft("add", total, str(total), str(total), total)]

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return self.target(params)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(sum(c for row in params["rows"] for c in row))

    def figure(self, params: dict[str, Any]) -> Figure:
        return Figure("fake_table", {"rows": params["rows"]})

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        rows = params["rows"]
        return (
            Reading("rows", "the Friday column", "miscount", ([row[:-1] for row in rows],)),
            Reading("rows", "the last row", "misread_scale", (rows[:-1],)),
            # the same shape, one digit read wrongly: nothing is left out
            Reading("rows", "the first tally", "misread_value", ([[rows[0][0] + 3, *rows[0][1:]], *rows[1:]],)),
            # one tally missed in one row only: left out, but no column is
            Reading("rows", "the last tally of the second row", "misread_label", ([rows[0], rows[1][:-1]],)),
            # a row read with a wrong digit and another row short: not only left out, so a misread
            Reading("rows", "the table", "misread_relation", ([[4, 6], [5, 1, 8]],)),
        )


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Problem:
    monkeypatch.setitem(generators.REGISTRY, TallyTable.id, TallyTable)
    family = TallyTable()
    params = {"rows": [[4, 6, 2], [5, 1, 3]]}
    steps = tuple(Step(index=i, rule=d.rule, value=str(d.value), text=d.text, latex=d.latex)
                  for i, d in enumerate(family.derive(params), start=1))
    return Problem(id="t", family=family.id, domain="statistics", subdomain="tables", grade_band="3-4",
                   difficulty="easy", question_type="free", image_role="required",
                   question_text="How many tallies are in the table altogether?", question_latex="",
                   answer_text="21", answer_latex="21", answer_value="21", steps=steps,
                   figure=family.figure(params), params=params)


def test_a_column_left_out_of_every_row_is_explained_as_left_out_when_counting(table: Problem) -> None:
    v = inject(table, "miscount", np.random.default_rng(0))
    assert v is not None and v.error is not None
    assert v.error.explanation == (
        "leaves the Friday column out when counting what the figure shows (the last entry of every row), "
        "taking 4, 6, 5 and 1 instead of 4, 6, 2, 5, 1 and 3; "
        "the solution is worked correctly from the miscount")
    assert v.steps[0].text == "4 + 6 + 5 + 1" and v.shown_answer == "16"


def test_a_whole_row_left_out_still_reads_as_left_out_without_the_column_note(table: Problem) -> None:
    v = inject(table, "misread_scale", np.random.default_rng(0))
    assert v is not None
    assert v.error.explanation.startswith("leaves the last row out when counting what the figure shows, taking "
                                          "4, 6 and 2 instead of")


def test_a_same_shape_misread_is_explained_as_a_misread_value_not_a_miscount(table: Problem) -> None:
    v = inject(table, "misread_value", np.random.default_rng(0))
    assert v is not None
    # Only the entry read wrongly is named, not the whole table.
    assert v.error.explanation.startswith("reads the first tally in the figure as 7 instead of 4;")


def test_one_cell_left_out_reads_as_left_out_but_names_no_column(table: Problem) -> None:
    v = inject(table, "misread_label", np.random.default_rng(0))
    assert v is not None
    assert v.error.explanation.startswith("leaves the last tally of the second row out when counting what the "
                                          "figure shows, taking 4, 6, 2, 5 and 1 instead of")


def test_a_table_short_in_one_row_and_misread_in_another_is_not_called_left_out(table: Problem) -> None:
    v = inject(table, "misread_relation", np.random.default_rng(0))
    assert v is not None
    assert v.error.explanation.startswith("reads the table in the figure as 4, 6, 5, 1 and 8 instead of")
    assert "leaves" not in v.error.explanation


def _two_way_problem(params: dict[str, Any]) -> Problem:
    family = generators.get_family("probability.table.two_way")
    family.sample = lambda rng, difficulty: dict(params)  # type: ignore[method-assign]
    try:
        return family.build(np.random.default_rng(0), difficulty="easy", question_type="free", problem_id="p")
    finally:
        del family.sample


def test_a_two_way_table_added_up_without_its_last_column_says_the_column_was_left_out() -> None:
    problem = _two_way_problem({"counts": [[13, 11, 6], [7, 2, 3]], "row": 0, "col": 0, "context": 0,
                                "ask": "given_row", "image_role": "required", "answer_form": "fraction"})
    v = inject(problem, "miscount", np.random.default_rng(0))
    assert v is not None and v.error is not None
    heading = next(e["text"] for e in problem.figure.spec["elements"] if e.get("id") == "cell_0_3")
    assert v.error.explanation.startswith(f"leaves the column headed “{heading}” out when counting what the figure "
                                          "shows (the last entry of every row), taking 13, 11, 7 and 2 "
                                          "instead of 13, 11, 6, 7, 2 and 3")
    assert v.steps[0].text == "13 ÷ (13 + 11)"
    verdict = verify(problem, v.steps, family=generators.get_family(problem.family))
    assert verdict.first_error_step == v.error.first_error_step == 1
