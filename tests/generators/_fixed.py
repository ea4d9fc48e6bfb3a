"""Problems built around fixed params, for tests that need one exact figure or working."""

from __future__ import annotations

import numpy as np

from synth.generators import get_family
from synth.records import Problem


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
