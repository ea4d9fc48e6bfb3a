"""Figure elements that give the counting, number-line and coordinate families their label, relation and count
misreads: a question about one tray of two, P counted from the wrong label, a y axis numbered in 5s, a grid
numbered on every other line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from perturb.reasoning import inject
from render.describe import describe_figure
from synth.generators import get_family
from synth.generators.base import Reading
from synth.verifier import verify
from tests.generators._fixed import built_with, elements, problem_with


def _readings(family_id: str, params: dict[str, Any], kind: str) -> list[Reading]:
    return [r for r in get_family(family_id).figure_readings(params) if r.kind == kind]


def _x_range(params: dict[str, Any]) -> list[int]:
    return get_family("coordinate.intercepts").figure(params).spec["x_range"]


# -- counting: one tray of two -----------------------------------------------------------------------

COUNTING = "commonsense.counting.objects"
TRAYS = [{"rows": 3, "cols": 4, "missing": [5]}, {"rows": 5, "cols": 5, "missing": [0, 7]}]  # 11 and 23


def test_a_question_about_one_tray_counts_only_that_tray_and_names_it() -> None:
    p = problem_with(COUNTING, {"shape": "egg", "groups": TRAYS, "image_role": "required", "ask": "B",
                                "counted": "B"})
    assert p.answer_value == "23" and p.steps[0].text == "5 × 5 − 2"
    assert "tray B" in p.question_text and "altogether" not in p.question_text
    # both trays are drawn, each under its own label
    assert {e["text"] for e in elements(p).values() if e["type"] == "label"} == {"Tray A", "Tray B"}


def test_the_other_trays_objects_counted_for_the_named_tray_is_a_label_misread() -> None:
    family = get_family(COUNTING)
    p = problem_with(COUNTING, {"shape": "egg", "groups": TRAYS, "image_role": "required", "ask": "B",
                                "counted": "B"})
    v = inject(p, "misread_label", np.random.default_rng(0))
    assert v is not None
    assert v.error.edit["element"] == "label_B"
    assert v.error.edit["changes"] == [{"param": "counted", "from": "B", "to": "A"}]
    assert v.steps[0].text == "3 × 4 − 1" and v.shown_answer == "11"
    verdict = verify(p, v.steps, family=family)
    assert verdict.first_error_step == v.error.first_error_step == 1 and not verdict.answer_correct
    assert p.params["counted"] == "B" and family.figure(p.params) == p.figure  # the picture is unchanged


def test_no_tray_label_misread_when_the_question_adds_the_trays_or_the_other_tray_cannot_be_shared() -> None:
    both = {"shape": "dot", "groups": TRAYS, "image_role": "required"}
    assert _readings(COUNTING, both, "misread_label") == []
    # tray B's 14 share out between 2 children; tray A's 11 would not, and a pupil would notice
    uneven = {**both, "groups": [{"rows": 3, "cols": 4, "missing": [5]}, {"rows": 4, "cols": 4, "missing": [0, 1]}],
              "ask": "B", "counted": "B", "share": 2}
    assert _readings(COUNTING, uneven, "misread_label") == []
    (kept,) = _readings(COUNTING, {k: v for k, v in uneven.items() if k != "share"}, "misread_label")
    assert kept.misreads == ("A",)


def test_the_description_says_how_many_objects_each_tray_holds() -> None:
    p = problem_with(COUNTING, {"shape": "egg", "groups": TRAYS, "image_role": "required", "ask": "A",
                                "counted": "A"})
    assert "There are 34 objects drawn: 11 in Tray A and 23 in Tray B." in describe_figure(p.figure)


def test_one_tray_questions_are_a_share_of_the_two_tray_problems() -> None:
    assert 0 < built_with(COUNTING, "ask", "medium") < 40
    assert built_with(COUNTING, "ask", "easy") == 0  # one tray: nothing to name


# -- number line: P counted from the wrong label -----------------------------------------------------

NUMBER_LINE = "commonsense.number_line"
LINE = {"start": 250, "end": 350, "n": 10, "labels": [0, 10], "ks": [8], "decimal": True,
        "image_role": "required", "answer_form": "decimal"}


def test_p_near_the_second_label_counted_on_from_the_first_is_a_relation_misread() -> None:
    (reading,) = _readings(NUMBER_LINE, LINE, "misread_relation")
    assert reading.element == "point_P" and reading.misreads == ([2],)  # 2 marks back from 350, on from 250
    family = get_family(NUMBER_LINE)
    wrong = family.derive(reading.apply(LINE, [2]))
    assert wrong[0].text == "250 + 2 × ((350 − 250) ÷ 10)" and wrong[-1].text == "270"
    assert family.target(LINE) == 330


@pytest.mark.parametrize("changes", [
    {"ks": [5]},  # halfway: as many marks from either label
    {"n": 5, "labels": [0, 5], "ks": [3]},  # counted back 2 and on from 250 is mark 2: one off, a miscount
    {"ks": [3]},  # nearer the first label: counted from it anyway
    {"start": -2, "end": 0, "n": 12, "labels": [2, 6], "ks": [1], "decimal": True},  # P outside the labels
])
def test_no_relation_misread_unless_p_lies_well_over_towards_the_second_label(changes: dict) -> None:
    assert _readings(NUMBER_LINE, {**LINE, **changes}, "misread_relation") == []


# -- graph: a y axis numbered every 5 lines ----------------------------------------------------------

GRAPH = "coordinate.graph.read_value"
LINEAR = {"coeffs": [0, 2, 2], "xs": [-4, 3], "ys": [-6, 8], "ks": [3, 1], "image_role": "required"}


def test_values_between_numbers_counted_one_line_off_are_miscounts_and_never_land_on_a_number() -> None:
    fives = {**LINEAR, "y_numbered": 5}
    miscounts = sorted(m for r in _readings(GRAPH, fives, "miscount") for m in r.misreads)
    # −6 sits one line below the number −5: one line too many only; 8 sits between 5 and 10: one either way
    assert miscounts == [[-7, 8], [-6, 7], [-6, 9]]
    values = [m for r in _readings(GRAPH, fives, "misread_value") for m in r.misreads]
    assert [-5, 8] in values and [-7, 8] not in values  # the number −5 itself taken is a value misread
    assert _readings(GRAPH, LINEAR, "miscount") == []  # every line numbered: nothing is counted


def test_a_y_axis_numbered_in_fives_shows_numbers_above_and_below_zero_and_is_described() -> None:
    figure = get_family(GRAPH).figure({**LINEAR, "y_numbered": 5})
    lo, hi = figure.spec["y_range"]
    assert figure.spec["y_label_step"] == 5 and figure.spec["y_grid_step"] == 1
    assert lo < -5 and hi > 10 and lo % 5 and hi % 5  # no multiple of 5 left unnumbered at an edge
    assert "the y-axis every 5" in describe_figure(figure)


def test_y_axes_in_fives_are_a_share_of_the_graphs() -> None:
    assert 0 < built_with(GRAPH, "y_numbered", "medium") < 40


# -- intercepts: a grid numbered on every other line --------------------------------------------------

INTERCEPTS = "coordinate.intercepts"
SEGMENT = {"A": [7, 12], "B": [5, 6], "scale": 1, "ask": "y", "image_role": "required"}


def test_a_point_off_a_numbered_line_read_at_its_neighbours_number_is_a_label_misread() -> None:
    numbered = {**SEGMENT, "numbered": 2}
    labels = {r.param: sorted(r.misreads) for r in _readings(INTERCEPTS, numbered, "misread_label")}
    # x = 5 lies between the numbered lines 4 and 6: either number taken. x = 7 lies between 6 and 8, but 8 is
    # the grid's last line (x from −1 to 8), which carries no number. y = 12 and 6 are numbered lines.
    assert _x_range(numbered) == [-1, 8]
    assert labels == {"A": [[6, 12]], "B": [[4, 6], [6, 6]]}
    assert [8, 12] in next(r for r in _readings(INTERCEPTS, numbered, "misread_value") if r.param == "A").misreads
    assert _readings(INTERCEPTS, SEGMENT, "misread_label") == []  # every line numbered
    figure = get_family(INTERCEPTS).figure(numbered)
    assert figure.spec["label_step"] == 2 and figure.spec["grid_step"] == 1
    assert "the x-axis is numbered every 2 and the y-axis every 2" in describe_figure(figure)


def test_grids_numbered_on_every_other_line_are_a_share_of_the_problems() -> None:
    assert 0 < built_with(INTERCEPTS, "numbered", "easy") < 40
