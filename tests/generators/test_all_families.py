"""Acceptance harness: every registered family (including ones added later) clears the same bar."""

from __future__ import annotations

import numpy as np
import pytest

from synth.generators import REGISTRY, get_family
from synth.generators.acceptance import canonical_params, check_family, magnitude, problem_failures

FAST_SEEDS = 30
SLOW_SEEDS = 1000
# Easy levels of small families can repeat by chance (18 one-step limits exist at most); more
# than this share of repeats means the sampler is stuck, not unlucky.
MAX_DUPLICATE_RATE = 0.15


@pytest.mark.parametrize("family_id", sorted(REGISTRY))
def test_family_clears_the_acceptance_bar(family_id: str) -> None:
    report = check_family(family_id, FAST_SEEDS)
    assert not report.failures, "\n".join(report.failures[:10])
    assert report.graded, f"hard is not harder than easy: {report.levels}"
    assert report.duplicate_rate <= MAX_DUPLICATE_RATE, f"{report.duplicate_rate:.0%} repeated problems"


@pytest.mark.slow
@pytest.mark.parametrize("family_id", sorted(REGISTRY))
def test_family_clears_the_acceptance_bar_over_a_thousand_seeds(family_id: str) -> None:
    report = check_family(family_id, SLOW_SEEDS, question_seeds=100)
    assert not report.failures, "\n".join(report.failures[:10])
    assert report.graded, f"hard is not harder than easy: {report.levels}"


def test_canonical_params_ignore_the_variable_letter_and_question_keys() -> None:
    a = {"var": "x", "a": 3, "b": 1}
    b = {"var": "y", "a": 3, "b": 1, "answer_choice": "C", "choice_sources": ["answer"]}
    assert canonical_params(a) == canonical_params(b)
    assert canonical_params(a) != canonical_params({"var": "x", "a": 3, "b": 2})


def test_magnitude_counts_digits_of_every_number() -> None:
    assert magnitude({"var": "x", "a": 12, "b": -3, "c": "2.75", "terms": [[100, 2]]}) == 2 + 1 + 3 + 4


def test_a_wrong_step_text_is_reported() -> None:
    family = get_family("algebra.linear.one_step")
    problem = family.build(np.random.default_rng(0), difficulty="easy", question_type="free", problem_id="p")
    broken = problem.steps[-1].__class__(index=3, rule="compute", value=problem.steps[-1].value,
                                         text="x = 999", latex="x = 999")
    bad = problem.__class__(**{**problem.__dict__, "steps": problem.steps[:-1] + (broken,)})
    assert any("does not read back" in f for f in problem_failures(family, bad))
