"""Data and everyday figure families state the answer they are given: distractors and slips read as themselves."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from synth.generators import get_family

FAMILIES = (
    "commonsense.clock.interval", "commonsense.counting.objects", "commonsense.number_line",
    "statistics.line_chart.reading", "statistics.mean.bar_chart", "statistics.median_mode.table",
    "statistics.pie_chart.reading", "probability.table.two_way",
)


@pytest.mark.parametrize("family_id", FAMILIES)
def test_a_wrong_value_is_stated_as_itself_not_as_the_answer(family_id: str) -> None:
    family = get_family(family_id)
    p = family.build(np.random.default_rng(3), difficulty="medium", question_type="free", problem_id="a")
    truth = family.target(p.params)
    assert family.answer_text(p.params, truth)[0] == p.answer_text
    assert family.answer_text(p.params, truth + 1)[0] != p.answer_text
    assert family.answer_text(p.params, truth + 1)[0] == family.answer_text(p.params, truth + sympy.Integer(1))[0]


@pytest.mark.parametrize("family_id", FAMILIES)
@pytest.mark.parametrize("difficulty", ("easy", "medium", "hard"))
def test_multiple_choice_questions_offer_four_different_answers_one_of_them_right(family_id: str,
                                                                                   difficulty: str) -> None:
    family = get_family(family_id)
    p = family.build(np.random.default_rng(7), difficulty=difficulty, question_type="mcq", problem_id="q")
    assert p.choices is not None and len(set(p.choices)) == 4
    assert p.choices["ABCD".index(p.params["answer_choice"])] == p.answer_text
