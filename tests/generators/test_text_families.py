"""Text-only families, their mal-rules, mcq/fill questions, and the verifier's inequality and `and` support."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import sympy

from synth.generators import get_family
from synth.generators.base import DIFFICULTIES, Family, StepDraft, finalize
from synth.verifier import parse_step, same_value, verify

TEXT_FAMILIES = (
    "algebra.linear.one_step", "algebra.polynomial.simplify", "algebra.inequalities.linear",
    "algebra.quadratic.formula", "calculus.derivative.product_rule", "calculus.derivative.chain_rule",
    "calculus.integral.definite", "calculus.limit.rational",
)


def build(family_id: str, seed: int, difficulty: str = "medium", qtype: str = "free"):
    return get_family(family_id).build(np.random.default_rng(seed), difficulty=difficulty, question_type=qtype,
                                       problem_id=f"p{seed}")


@pytest.mark.parametrize("family_id", TEXT_FAMILIES)
def test_solutions_have_three_to_twenty_steps_and_two_mal_rules(family_id: str) -> None:
    family = get_family(family_id)
    assert len(family.malrules) >= 2
    for level in DIFFICULTIES:
        for seed in range(15):
            assert 3 <= len(build(family_id, seed, level).steps) <= 20


@pytest.mark.parametrize("family_id", TEXT_FAMILIES)
def test_mal_rule_solutions_are_caught_with_a_wrong_answer(family_id: str) -> None:
    family = get_family(family_id)
    applied = 0
    for level in DIFFICULTIES:
        for seed in range(10):
            problem = build(family_id, seed, level)
            for rule in family.malrules:
                drafts = family.derive_mal(problem.params, rule.id)
                if drafts is None:
                    continue
                applied += 1
                verdict = verify(problem, finalize(drafts), family=family)
                assert all(verdict.parses), (rule.id, [d.text for d in drafts])
                assert verdict.first_error_step is not None, (rule.id, [d.text for d in drafts])
                assert not verdict.answer_correct, (rule.id, [d.text for d in drafts])
    assert applied >= 20


def test_one_step_solution_reads_like_a_pupil_writes_it() -> None:
    family = get_family("algebra.linear.one_step")
    steps = family.derive({"var": "x", "op": "add", "a": 5, "b": 12})
    assert [s.text for s in steps] == ["x + 5 − 5 = 12 − 5", "x = 12 − 5", "x = 7"]
    steps = family.derive({"var": "n", "op": "mul", "a": -3, "b": 12})
    assert [s.text for s in steps] == ["−3n ÷ (−3) = 12 ÷ (−3)", "n = 12 ÷ (−3)", "n = −4"]


def test_square_of_sum_mal_rule_drops_the_middle_term() -> None:
    family = get_family("algebra.polynomial.simplify")
    params = {"var": "x", "parts": [["sq", 1, 1, 3], ["lin", -2, 1, -1]]}
    clean = [s.text for s in family.derive(params)]
    wrong = [s.text for s in family.derive_mal(params, "square_of_sum")]
    assert clean[0] == "x^2 + 2 × x × 3 + 3^2 − 2(x − 1)"
    assert wrong[0] == "x^2 + 3^2 − 2(x − 1)"
    assert clean[-1] == "x^2 + 4x + 11" and wrong[-1] == "x^2 − 2x + 11"


def test_forgetting_to_flip_the_inequality_is_a_wrong_answer() -> None:
    family = get_family("algebra.inequalities.linear")
    params = {"var": "x", "rel": "<", "a": -2, "b": 4, "c": 0, "d": 10}
    assert [s.text for s in family.derive(params)][-1] == "x > −3"
    wrong = family.derive_mal(params, "no_flip_negative_divisor")
    assert wrong[-1].text == "x < −3"
    problem = build("algebra.inequalities.linear", 0)
    verdict = verify(problem.__class__(**{**problem.__dict__, "params": params}), finalize(wrong), family=family)
    assert verdict.first_error_step == 3 and not verdict.answer_correct


@pytest.mark.parametrize(("a", "b", "same"), [
    ("3x − 6 < 6", "x < 4", True), ("−2x > 6", "x < −3", True), ("4 > x", "x < 4", True),
    ("x > −3", "x < −3", False), ("x ≤ 4", "x < 4", False), ("2x ≥ 8", "x ≥ 4", True), ("x < 4", "x = 4", False),
])
def test_inequalities_compare_by_solution_set(a: str, b: str, same: bool) -> None:
    assert same_value(parse_step(a), parse_step(b)) is same


def test_and_joins_equations_into_one_solution_set() -> None:
    both = parse_step("x = 3 and y = 2")
    x, y = sympy.symbols("x y")
    assert both.lhs.subs({x: 3, y: 2}) == 0 and both.lhs.subs({x: 3, y: 1}) != 0
    assert same_value(both, parse_step("y = 2 and x = 3"))
    assert not same_value(both, parse_step("x = 2 and y = 3"))


def test_limit_steps_are_judged_by_their_limit() -> None:
    family = get_family("calculus.limit.rational")
    problem = build("calculus.limit.rational", 1, "easy")
    assert verify(problem, problem.steps, family=family).fully_correct
    wrong = family.derive_mal(problem.params, "difference_of_squares_as_square")
    verdict = verify(problem, finalize(wrong), family=family)
    assert verdict.first_error_step == 1 and verdict.propagated


# -- question types -------------------------------------------------------------------------


@pytest.mark.parametrize("family_id", ["algebra.linear.two_step", *TEXT_FAMILIES])
def test_mcq_and_fill_keep_the_free_problem(family_id: str) -> None:
    free, mcq, fill = (build(family_id, 4, "hard", q) for q in ("free", "mcq", "fill"))
    assert mcq.steps == free.steps == fill.steps and mcq.answer_text == free.answer_text
    assert mcq.question_text.startswith(free.question_text) and fill.question_text.startswith(free.question_text)
    assert {k: v for k, v in mcq.params.items() if k not in ("answer_choice", "choice_sources")} == free.params


@pytest.mark.parametrize("family_id", TEXT_FAMILIES)
def test_mcq_distractors_come_from_mal_rules_first(family_id: str) -> None:
    family = get_family(family_id)
    for seed in range(8):
        p = build(family_id, seed, "hard", "mcq")
        letter, sources = p.params["answer_choice"], p.params["choice_sources"]
        assert p.choices[ord(letter) - ord("A")] == p.answer_text
        assert len(set(p.choices)) == 4
        applicable = sum(family.derive_mal(p.params, r.id) is not None for r in family.malrules)
        mal = [s for s in sources if s.startswith("mal:")]
        # a mal answer can coincide with the right one (or another), so at most as many as apply
        assert len(mal) <= applicable and (applicable == 0 or mal or len(sources) == 4)


def test_mcq_is_deterministic_and_shuffled() -> None:
    letters = {build("algebra.linear.one_step", s, "easy", "mcq").params["answer_choice"] for s in range(30)}
    assert letters == set("ABCD")
    assert build("algebra.linear.one_step", 3, "easy", "mcq") == build("algebra.linear.one_step", 3, "easy", "mcq")


def test_fill_question_has_a_blank_where_the_answer_goes() -> None:
    p = build("algebra.linear.one_step", 2, "easy", "fill")
    assert p.question_text.endswith(f"{p.params['var']} = ____") or f"{p.params['var']} = ____" in p.question_text
    q = build("algebra.quadratic.formula", 2, "easy", "fill")
    assert q.question_text.count("____") == 2


class _NoDistractors(Family):
    id = "test.no_distractors"
    domain = "test"
    subdomain = "test"
    grade_band = "1"

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        return {"n": 4}

    def derive(self, params: dict[str, Any], overrides: Any = None) -> list[StepDraft]:
        return [StepDraft(rule="state", value=sympy.Integer(4), text="4", latex="4")]

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(4)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(4)


def test_mcq_without_enough_distractors_says_how_to_fix_it() -> None:
    with pytest.raises(ValueError, match="add mal-rules or computed steps"):
        _NoDistractors().multiple_choice({"n": 4}, sympy.Integer(4), np.random.default_rng(0))


def test_unknown_question_type_is_refused() -> None:
    with pytest.raises(ValueError, match="question_type must be one of"):
        get_family("algebra.linear.one_step").build(np.random.default_rng(0), difficulty="easy",
                                                    question_type="essay", problem_id="p")
