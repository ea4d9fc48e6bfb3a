"""Problems built around fixed params, for tests that need one exact figure or working."""

from __future__ import annotations

import numpy as np

from perturb.reasoning import inject
from perturb.reasoning.base import Variant
from synth.generators import get_family
from synth.records import Problem
from synth.verifier import verify


def problem_with(family_id: str, params: dict) -> Problem:
    """A problem built around fixed params (the family's own build, with sample replaced)."""
    family = get_family(family_id)
    family.sample = lambda rng, difficulty: dict(params)  # type: ignore[method-assign]
    try:
        return family.build(np.random.default_rng(0), difficulty="easy", question_type="free", problem_id="p")
    finally:
        del family.sample


def elements(problem: Problem) -> dict[str, dict]:
    """The problem's figure elements by id."""
    assert problem.figure is not None
    return {e["id"]: e for e in problem.figure.spec["elements"]}


def injected_and_verified(problem: Problem, kind: str, seed: int = 0) -> Variant:
    """``kind`` injected into ``problem``: the verifier, reading the variant's text alone, finds the wrong
    answer and the labelled first wrong step."""
    v = inject(problem, kind, np.random.default_rng(seed))
    assert v is not None and v.error is not None and v.error.subtype == kind
    verdict = verify(problem, v.steps, family=get_family(problem.family))
    assert verdict.first_error_step == v.error.first_error_step and not verdict.answer_correct
    return v


def built_with(family_id: str, key: str, difficulty: str, seeds: int = 40) -> int:
    """How many of ``seeds`` built problems of ``difficulty`` have ``key`` in their params."""
    family = get_family(family_id)
    return sum(key in family.build(np.random.default_rng(seed), difficulty=difficulty, question_type="free",
                                   problem_id="s").params for seed in range(seeds))
