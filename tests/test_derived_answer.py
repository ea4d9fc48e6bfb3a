"""A family's ``working_head`` (the shortcut ``effective_readings`` and the visual injectors take instead of deriving
every misread's working) is exact: the answer, first and last line its derivation has, the same readings kept as
without it, and a misread passed over underived is one whose attempt the injector would have refused."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from perturb.reasoning.base import Attempt
from perturb.reasoning.conventions import unlike_family
from perturb.reasoning.visual import VISUAL, Misread
from synth.generators import get_family
from synth.generators.base import Family, Reading, effective_readings

FAMILIES = ("statistics.mean.bar_chart",)


def _all_readings(family: Family, params: dict[str, Any]) -> list[Reading]:
    """Every reading with every misread the family proposes (before ``effective_readings`` drops any)."""
    seen: list[Reading] = []
    module = importlib.import_module(type(family).__module__)
    saved = module.effective_readings
    module.effective_readings = lambda fam, p, readings: seen.extend(readings) or tuple(readings)
    try:
        family.figure_readings(params)
    finally:
        module.effective_readings = saved
    return seen


def _problems(family: Family, seeds: int) -> Iterator[dict[str, Any]]:
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        for difficulty in ("easy", "medium", "hard"):
            yield family.sample(rng, difficulty)


@pytest.mark.parametrize("family_id", FAMILIES)
def test_working_head_is_the_answer_and_first_line_of_the_derivation(family_id: str) -> None:
    family = get_family(family_id)
    checked = 0
    for params in _problems(family, 20):
        for p in [params, *(r.apply(params, w) for r in _all_readings(family, params) for w in r.misreads)]:
            if not family.valid(p):
                continue
            drafts = family.derive(p)  # must succeed wherever working_head answers
            expected = (family.answer_of(drafts[-1].value), drafts[0].text, drafts[-1].text)
            assert family.working_head(p) == expected, p
            checked += 1
    assert checked > 500


@pytest.mark.parametrize("family_id", FAMILIES)
def test_effective_readings_keep_the_same_misreads_with_and_without_the_shortcut(family_id: str) -> None:
    family = get_family(family_id)
    slow = type(family)()
    slow.working_head = lambda params: None  # every misread derived in full, as before the shortcut
    for params in _problems(family, 20):
        readings = _all_readings(family, params)
        assert effective_readings(family, params, readings) == effective_readings(slow, params, readings), params


@pytest.mark.parametrize("family_id", FAMILIES)
def test_a_misread_passed_over_underived_is_one_whose_attempt_ends_unlike_the_family(family_id: str) -> None:
    family = get_family(family_id)
    passed_over = 0
    for seed in range(45):
        problem = family.build(np.random.default_rng(seed), difficulty=("easy", "medium", "hard")[seed % 3],
                               question_type="free", problem_id=f"{family_id}-{seed}")
        for subtype in VISUAL:
            injector = Misread(subtype)
            for reading in injector.readings(family, problem):
                for wrong in reading.misreads:
                    if not injector._ends_unlike_family(family, problem, reading, wrong):
                        continue
                    attempt = injector._attempt(family, problem, reading, wrong)
                    assert isinstance(attempt, Attempt), (problem.params, wrong)
                    assert unlike_family(family_id, attempt.steps[-1].text, clean_text=problem.steps[-1].text)
                    passed_over += 1
    assert passed_over > 20
