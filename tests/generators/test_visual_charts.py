"""Chart elements that carry a relation a pupil must read: a line chart's highest point, a pie chart's equal marks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from perturb.reasoning import inject
from render.describe import describe_figure
from render.figures import draw_figure
from synth.generators import get_family
from synth.records import Figure
from synth.verifier import verify
from tests.generators._fixed import built_with, elements, problem_with

LINE = "statistics.line_chart.reading"
PIE = "statistics.pie_chart.reading"

# Water in a tank from 1 pm: the highest reading (8 litres) is at 3 pm, and 7 litres at 5 pm is one gridline lower.
PEAK = {"values": [4, 3, 8, 4, 7], "a": 0, "b": 2, "step": 1, "context": 3, "ask": "rate", "image_role": "required",
        "peak": "the highest point"}
# Pets owned: Rabbit (60°, unprinted) carries the same equal-angle mark as Cat (60°, printed); Dog is asked.
EQUAL = {"angles": [140, 60, 100, 60], "ask": 0, "context": 3, "image_role": "required", "hidden": 0, "marked": 3,
         "same_as": "Cat", "total": 90}


def _relations(family_id: str, params: dict[str, Any]) -> list[Any]:
    return [r for r in get_family(family_id).figure_readings(params) if r.kind == "misread_relation"]


# -- line chart: a rate of change up to the highest point -------------------------------------------------------


def test_a_rate_to_the_highest_point_ends_at_the_highest_reading_and_the_question_does_not_name_it() -> None:
    problem = problem_with(LINE, PEAK)
    assert [s.text for s in problem.steps] == ["(8 − 4) ÷ (15 − 13)", "4 ÷ (15 − 13)", "4 ÷ 2", "2"]
    assert problem.answer_text == "2"
    assert "highest" in problem.question_text and "1 pm" in problem.question_text
    assert "3 pm" not in problem.question_text  # which time is highest is read off the graph


def test_the_later_point_a_gridline_below_the_highest_is_taken_for_it() -> None:
    family = get_family(LINE)
    (reading,) = _relations(LINE, PEAK)
    assert reading.param == "peak" and reading.element == "point_4"
    assert reading.misreads == ("the second-highest point",)
    assert family.derive(reading.apply(PEAK, reading.misreads[0]))[0].text == "(7 − 4) ÷ (17 − 13)"


@pytest.mark.parametrize(("values", "why"), [
    ([4, 3, 8, 4, 6], "two gridlines below the highest point: told apart by eye"),
    ([7, 3, 8, 4, 5], "the runner-up is the starting reading, not a later time"),
])
def test_no_highest_point_misread_where_the_runner_up_is_clearly_lower_or_not_after_the_start(
        values: list[int], why: str) -> None:
    assert _relations(LINE, {**PEAK, "values": values}) == [], why


def test_without_a_highest_point_question_no_relation_is_read() -> None:
    assert _relations(LINE, {k: v for k, v in PEAK.items() if k != "peak"}) == []


def test_the_misread_highest_point_injects_with_verified_labels() -> None:
    problem = problem_with(LINE, PEAK)
    v = inject(problem, "misread_relation", np.random.default_rng(0))
    assert v is not None and v.error.edit["element"] == "point_4"
    assert v.steps[0].text == "(7 − 4) ÷ (17 − 13)" and v.shown_answer == "3/4"
    verdict = verify(problem, v.steps, family=get_family(LINE))
    assert verdict.first_error_step == v.error.first_error_step == 1 and not verdict.answer_correct
    assert problem.figure == get_family(LINE).figure(PEAK)  # drawn from the true values


def test_highest_point_questions_are_part_of_easy_and_medium_only() -> None:
    assert 0 < built_with(LINE, "peak", "easy") < 40
    assert 0 < built_with(LINE, "peak", "medium") < 40
    assert built_with(LINE, "peak", "hard") == 0


# -- pie chart: two sectors marked equal ---------------------------------------------------------------------------


def test_the_marked_sector_is_read_as_the_printed_angle_of_the_sector_with_the_same_mark() -> None:
    problem = problem_with(PIE, EQUAL)
    assert problem.steps[0].text == "(360 − 60 − 100 − 60) ÷ 360 × 90"
    assert problem.answer_text == "35"
    els = elements(problem)
    assert not els["wedge_3"]["show_angle"] and els["wedge_1"]["show_angle"] and not els["wedge_0"]["show_angle"]
    assert {e["sector"] for e in els.values() if e["type"] == "equal_mark"} == {"Rabbit", "Cat"}


def test_the_equal_mark_taken_for_the_neighbouring_sector_pairs_the_marked_sector_with_it() -> None:
    family = get_family(PIE)
    (reading,) = _relations(PIE, EQUAL)
    # Cat's neighbours are Dog (asked, unprinted) and Fish (100°): Rabbit read as equal to Fish.
    assert reading.element == "equal_mark_1" and reading.misreads == ("Fish",)
    assert family.derive(reading.apply(EQUAL, "Fish"))[0].text == "(360 − 60 − 100 − 100) ÷ 360 × 90"


def test_no_equal_mark_misread_that_would_leave_the_asked_sector_no_room() -> None:
    # Cat's printed neighbour is 220°: Rabbit read as 220° would leave Dog 360 − 60 − 220 − 220 < 0.
    params = {**EQUAL, "angles": [20, 60, 220, 60], "total": 72}
    assert _relations(PIE, params) == []


def test_a_useful_question_states_the_equal_sectors_and_lists_only_printed_angles() -> None:
    text = problem_with(PIE, {**EQUAL, "image_role": "useful"}).question_text
    assert "The Rabbit sector is marked equal to the Cat sector." in text
    assert "Cat 60°" in text and "Rabbit 60°" not in text


def test_equal_marks_are_drawn_at_the_centre_of_their_sectors_and_described() -> None:
    figure = get_family(PIE).figure(EQUAL)
    image = draw_figure(figure, 150)
    boxes = {b.ref: b for b in image.boxes}
    pie = boxes["wedge_0"]
    h, w = image.pixels.shape[:2]
    for ref in ("equal_mark_1", "equal_mark_3"):
        box = boxes[ref]
        cx, cy = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
        assert box.x1 - box.x0 < w / 4 and box.y1 - box.y0 < h / 4  # a small mark, not a second outline
        assert pie.x0 - w / 4 < cx < pie.x1 + w / 4 and abs(cy - (h + 0.2 * h) / 2) < h / 4  # near the centre
        assert (image.pixels[box.y0:box.y1, box.x0:box.x1] < 80).any()  # inked in the chart's ink
    text = describe_figure(figure)
    assert "The sectors for Cat and Rabbit carry the same angle mark" in text or \
        "The sectors for Rabbit and Cat carry the same angle mark" in text


def test_an_equal_mark_drawn_alone_inks_only_inside_its_box() -> None:
    figure = get_family(PIE).figure(EQUAL)
    full = {box.ref: box for box in draw_figure(figure, 100).boxes}
    for element in (e for e in figure.spec["elements"] if e["type"] == "equal_mark"):
        alone = draw_figure(Figure(figure.kind, {**figure.spec, "elements": [element]}), 100)
        (box,) = alone.boxes
        assert box == full[element["id"]]
        ink = np.argwhere((alone.pixels < 245).any(axis=2))
        (y0, x0), (y1, x1) = ink.min(axis=0), ink.max(axis=0)
        assert box.x0 <= x0 and x1 < box.x1 and box.y0 <= y0 and y1 < box.y1


def test_equal_marks_appear_on_part_of_the_medium_charts_only() -> None:
    assert 0 < built_with(PIE, "marked", "medium") < 40
    assert built_with(PIE, "marked", "easy") == built_with(PIE, "marked", "hard") == 0


# -- two-way table printed in hundreds: a column's total -----------------------------------------------------------

TWO_WAY = "probability.table.two_way"
# Tickets sold at a museum (hundreds): Sunday's column holds 16 adults' and 8 children's hundreds.
SCALED = {"counts": [[7, 9, 16], [10, 3, 8]], "row": 1, "col": 2, "context": 0, "ask": "count", "scale": 100,
          "image_role": "required"}


def test_a_column_total_is_counted_in_the_unit_the_title_prints() -> None:
    problem = problem_with(TWO_WAY, SCALED)
    assert [s.text for s in problem.steps] == ["(16 + 8) × 100", "24 × 100", "Sunday: 2400"]
    assert problem.answer_text == "2400"
    assert problem.figure.spec["elements"][-1]["text"] == "Tickets sold at a museum (hundreds)"
    # the unit is read off the table: a question that only needs the figure does not state it
    assert "hundred" not in problem.question_text and "tickets sold on Sunday" in problem.question_text
    useful = problem_with(TWO_WAY, {**SCALED, "image_role": "useful"}).question_text
    assert "in hundreds" in useful and "Sunday 16" in useful


def test_the_title_unit_overlooked_counts_the_printed_numbers_as_tickets() -> None:
    family = get_family(TWO_WAY)
    (reading,) = [r for r in family.figure_readings(SCALED) if r.kind == "misread_scale"]
    assert reading.param == "scale" and reading.element == "title" and reading.misreads == (1,)
    assert [d.text for d in family.derive(reading.apply(SCALED, 1))] == ["16 + 8", "Sunday: 24"]
    problem = problem_with(TWO_WAY, SCALED)
    v = inject(problem, "misread_scale", np.random.default_rng(0))
    assert v is not None and v.shown_answer == "24"
    verdict = verify(problem, v.steps, family=family)
    assert verdict.first_error_step == v.error.first_error_step == 1 and not verdict.answer_correct


def test_probability_tables_have_no_unit_to_overlook() -> None:
    params = {"counts": [[7, 9, 16], [10, 3, 8]], "row": 1, "col": 2, "context": 0, "ask": "given_row",
              "image_role": "required", "answer_form": "fraction"}
    assert [r for r in get_family(TWO_WAY).figure_readings(params) if r.kind == "misread_scale"] == []


def test_scaled_tables_are_part_of_the_easy_and_medium_problems_only() -> None:
    family = get_family(TWO_WAY)
    asks = {d: [family.build(np.random.default_rng(seed), difficulty=d, question_type="free",
                             problem_id="s").params["ask"] for seed in range(40)] for d in ("easy", "medium", "hard")}
    assert 0 < asks["easy"].count("count") < 40 and 0 < asks["medium"].count("count") < 40
    assert "count" not in asks["hard"]
