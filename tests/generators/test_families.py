"""Every family's clean solutions verify, display what they claim, and vary with difficulty."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from synth.generators import REGISTRY, get_family
from synth.generators.base import DIFFICULTIES
from synth.verifier import parse_step, same_value, verify

SEEDS = 60


@pytest.mark.parametrize("family_id", sorted(REGISTRY))
@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_clean_solutions_verify_and_display_their_values(family_id: str, difficulty: str) -> None:
    family = get_family(family_id)
    for seed in range(SEEDS):
        problem = family.build(np.random.default_rng(seed), difficulty=difficulty, question_type="free",
                               problem_id=f"t{seed}")
        verdict = verify(problem, problem.steps, family=family)
        assert verdict.fully_correct, (seed, problem.question_text, [s.text for s in problem.steps])
        for step in problem.steps:
            assert same_value(parse_step(step.text), parse_step(step.value)), step


@pytest.mark.parametrize("family_id", sorted(REGISTRY))
def test_same_rng_gives_the_same_problem(family_id: str) -> None:
    family = get_family(family_id)
    a = family.build(np.random.default_rng(3), difficulty="medium", question_type="free", problem_id="x")
    b = family.build(np.random.default_rng(3), difficulty="medium", question_type="free", problem_id="x")
    assert a == b


@pytest.mark.parametrize("family_id", sorted(REGISTRY))
def test_harder_levels_have_more_steps_or_bigger_numbers(family_id: str) -> None:
    family = get_family(family_id)

    def profile(level: str) -> tuple[float, float]:
        steps, sizes = [], []
        for seed in range(40):
            p = family.build(np.random.default_rng(seed), difficulty=level, question_type="free", problem_id="x")
            steps.append(len(p.steps))
            sizes.append(len(p.question_text))
        return statistics.mean(steps), statistics.mean(sizes)

    easy, hard = profile("easy"), profile("hard")
    assert hard[0] > easy[0] or hard[1] > easy[1]


def test_order_of_operations_follows_the_convention() -> None:
    family = get_family("arithmetic.order_of_operations")
    steps = family.derive({"expression": ["+", 3, ["*", 4, 5]]})
    assert [s.text for s in steps] == ["3 + 20", "23"]
    steps = family.derive({"expression": ["*", ["+", 3, 4], 5]})
    assert [s.text for s in steps] == ["7 × 5", "35"]
    steps = family.derive({"expression": ["-", 10, ["-", 4, 1]]})
    assert steps[0].text == "10 − 3"


def test_linear_equation_steps_read_like_a_student_solution() -> None:
    family = get_family("algebra.linear.two_step")
    steps = family.derive({"var": "x", "a": 3, "b": 6, "c": 15})
    assert [s.text for s in steps] == ["3x + 6 − 6 = 15 − 6", "3x = 9", "x = 9 ÷ 3", "x = 3"]
