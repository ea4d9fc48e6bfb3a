"""Systems of equations, trigonometric identities, simple and compound probability: working, checks, mal-rules."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from synth.generators import get_family
from synth.generators.base import DIFFICULTIES, finalize
from synth.generators.trig_identity import identical
from synth.verifier import parse_step, verify

NEW = ("algebra.systems.two_equations", "trig.identity.simplify", "probability.simple", "probability.compound")


def build(family_id: str, seed: int, difficulty: str = "medium", qtype: str = "free"):
    return get_family(family_id).build(np.random.default_rng(seed), difficulty=difficulty, question_type=qtype,
                                       problem_id=f"p{seed}")


def with_params(problem, params):
    family = get_family(problem.family)
    return problem.__class__(**{**problem.__dict__, "params": params, "steps": finalize(family.derive(params))})


@pytest.mark.parametrize("family_id", NEW)
def test_mal_rule_line_is_the_first_error_and_the_error_is_carried_to_the_answer(family_id: str) -> None:
    family = get_family(family_id)
    assert len(family.malrules) >= 2
    used = set()
    for level in DIFFICULTIES:
        for seed in range(12):
            problem = build(family_id, seed, level)
            for rule in family.malrules:
                drafts = family.derive_mal(problem.params, rule.id)
                if drafts is None:
                    continue
                used.add(rule.id)
                tagged = next(i for i, d in enumerate(drafts, start=1) if d.rule == f"mal:{rule.id}")
                verdict = verify(problem, finalize(drafts), family=family)
                texts = [d.text for d in drafts]
                assert all(verdict.parses), (rule.id, texts)
                assert verdict.first_error_step == tagged, (rule.id, texts)
                assert verdict.propagated and not verdict.answer_correct, (rule.id, texts)
    assert used == {r.id for r in family.malrules}


def test_elimination_reads_like_a_pupils_working() -> None:
    family = get_family("algebra.systems.two_equations")
    params = {"vars": ["x", "y"], "method": "elimination", "eq1": [2, 3, 12], "eq2": [4, -3, 6]}
    texts = [s.text for s in family.derive(params)]
    assert texts == ["2x + 3y + 4x − 3y = 12 + 6", "6x = 18", "x = 18 ÷ 6", "x = 3", "2 × 3 + 3y = 12",
                     "3y = 12 − 6", "3y = 6", "x = 3 and y = 2"]


def test_scaled_elimination_multiplies_both_equations_first() -> None:
    family = get_family("algebra.systems.two_equations")
    params = {"vars": ["m", "n"], "method": "elimination", "eq1": [3, 4, -13], "eq2": [-9, -8, -1]}
    texts = [s.text for s in family.derive(params)]
    assert texts[:4] == ["6m + 8n = −26", "6m + 8n − 9m − 8n = −26 − 1", "−3m = −27", "m = −27 ÷ (−3)"]
    assert texts[-1] == "m = 9 and n = −10"


def test_a_system_line_must_combine_earlier_lines_and_hold_at_the_solution() -> None:
    family = get_family("algebra.systems.two_equations")
    params = {"vars": ["x", "y"], "method": "elimination", "eq1": [2, 3, 12], "eq2": [4, -3, 6]}
    start = family.initial(params)
    judge = family.judge_step
    # eq1 + eq2: follows and is true
    assert judge(params, parse_step("6x = 18"), start, ()) == (True, True)
    # true at (3, 2), but it does not follow from a wrong line before it (6x = 20)
    wrong = parse_step("6x = 20")
    assert judge(params, parse_step("x = 3"), wrong, (wrong,)) == (False, True)
    # carrying the wrong line on is valid working, and wrong
    assert judge(params, parse_step("x = 20 ÷ 6"), wrong, (wrong,)) == (True, False)
    # a wrong sum of the right-hand sides: follows from nothing, false at the solution
    assert judge(params, parse_step("6x = 6"), start, ()) == (False, False)
    # the answer line must pin the point down
    assert judge(params, parse_step("x = 3 and y = 2"), parse_step("3y = 6"), (parse_step("x = 3"),))[1]
    assert not judge(params, parse_step("x = 2 and y = 3"), parse_step("3y = 6"), (parse_step("x = 3"),))[1]


def test_slipped_line_in_a_system_is_found_and_carried_forward() -> None:
    family = get_family("algebra.systems.two_equations")
    problem = build("algebra.systems.two_equations", 0, "easy")
    computed = [i for i, d in enumerate(family.derive(problem.params), start=1) if d.result is not None]
    k = computed[0]
    slipped = family.derive(problem.params, {k: family.derive(problem.params)[k - 1].result + 1})
    verdict = verify(problem, finalize(slipped), family=family)
    assert verdict.first_error_step == k and verdict.propagated and not verdict.answer_correct


def test_substitution_answer_is_the_pair_of_values() -> None:
    family = get_family("algebra.systems.two_equations")
    params = {"vars": ["s", "t"], "method": "substitution", "eq1": [1, -2, -40], "eq2": [3, 1, 6]}
    texts = [s.text for s in family.derive(params)]
    assert texts[0] == "s − 2(−3s + 6) = −40" and texts[-1] == "s = −4 and t = 18"
    assert family.answer_text(params, family.target(params))[0] == "s = −4 and t = 18"
    p = build("algebra.systems.two_equations", 3, "medium", "fill")
    assert p.question_text.endswith(f"{p.params['vars'][0]} = ____ and {p.params['vars'][1]} = ____")


@pytest.mark.parametrize(("a", "b", "same"), [
    ("sin^2 θ + cos^2 θ", "1", True), ("sec^2 θ − tan^2 θ", "1", True), ("csc^2 x − cot^2 x", "1", True),
    ("tan θ cos θ", "sin θ", True), ("5/sec^2 α", "5 − 5sin^2 α", True), ("sec^2 θ + tan^2 θ", "1", False),
    ("3 − 3cos^2 θ", "3sin^2 θ", True), ("3 − 3cos^2 θ", "3cos^2 θ", False), ("sin^2 θ + cos^2 x", "1", False),
])
def test_identities_are_decided_exactly(a: str, b: str, same: bool) -> None:
    assert identical(parse_step(a), parse_step(b)) is same


def test_identity_working_splits_the_larger_coefficient_then_uses_the_identity() -> None:
    family = get_family("trig.identity.simplify")
    params = {"angle": "theta", "pair": "sin_cos", "a": 5, "b": 3, "k": 4, "disguise": None}
    texts = [s.text for s in family.derive(params)]
    assert texts == ["3sin^2 θ + 3cos^2 θ + 2sin^2 θ + 4", "3(sin^2 θ + cos^2 θ) + 2sin^2 θ + 4",
                     "3 × 1 + 2sin^2 θ + 4", "3 + 2sin^2 θ + 4", "7 + 2sin^2 θ"]
    assert family.answer_text(params, family.target(params))[0] == "7 + 2sin^2 θ"


def test_identity_hard_problem_rewrites_the_hidden_term_first() -> None:
    family = get_family("trig.identity.simplify")
    params = {"angle": "x", "pair": "sec_tan", "a": 9, "b": 5, "k": -4, "disguise": 0}
    assert family.question_context(params)["expression"] == "9/cos^2 x − 5tan^2 x − 4"
    texts = [s.text for s in family.derive(params)]
    assert texts[0] == "9sec^2 x − 5tan^2 x − 4" and texts[-1] == "1 + 4sec^2 x"


def test_simple_probability_counts_outcomes_and_odds_is_a_different_answer() -> None:
    family = get_family("probability.simple")
    params = {"bag": 0, "colours": ["red", "blue", "green"], "counts": [3, 10, 8], "ask": "not", "chosen": [0]}
    assert [s.text for s in family.derive(params)] == ["1 − 3/(3 + 10 + 8)", "1 − 3/(13 + 8)", "1 − 3/21",
                                                       "1 − 1/7", "P(not red) = 6/7"]
    assert family.target(params) == sympy.Rational(6, 7)
    odds = family.derive_mal(params, "odds_not_probability")
    assert odds[0].text == "1 − 3/(10 + 8)" and odds[-1].text == "5/6"
    assert family.fill_stem(params) == "P(not red) = ____"


def test_without_replacement_mal_rule_puts_the_first_item_back() -> None:
    family = get_family("probability.compound")
    params = {"mode": "same", "bags": [[["red", "blue"], [5, 7]]], "picks": [0, 0], "bag": 0, "replace": False}
    assert family.derive(params)[0].text == "5/12 × 4/11"
    assert family.target(params) == sympy.Rational(5, 33)
    wrong = family.derive_mal(params, "dependent_as_independent")
    assert wrong[0].text == "5/12 × 5/12" and wrong[-1].text == "25/144"


def test_or_of_overlapping_events_takes_away_both() -> None:
    family = get_family("probability.compound")
    params = {"mode": "or", "bags": [[["red", "blue"], [1, 3]], [["green", "red"], [1, 1]]], "picks": [0, 0],
              "bag": 0, "replace": True}
    assert family.derive(params)[0].text == "1/4 + 1/2 − 1/4 × 1/2"
    assert family.target(params) == sympy.Rational(5, 8)
    assert family.derive_mal(params, "or_adds_overlap_twice")[-1].text == "3/4"


@pytest.mark.parametrize("family_id", NEW)
def test_mcq_offers_a_mal_rule_answer_when_one_applies(family_id: str) -> None:
    family = get_family(family_id)
    with_mal = 0
    for seed in range(10):
        p = build(family_id, seed, "hard", "mcq")
        assert len(set(p.choices)) == 4 and p.answer_text in p.choices
        if any(family.derive_mal(p.params, r.id) for r in family.malrules):
            with_mal += 1
            assert any(s.startswith("mal:") for s in p.params["choice_sources"]), p.params["choice_sources"]
    assert with_mal >= 5
