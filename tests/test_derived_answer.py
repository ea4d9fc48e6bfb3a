"""A family's ``working_head`` (the shortcut ``effective_readings`` takes instead of deriving every misread's
working) is exact: the answer and first line its derivation has, and the same readings kept as without it."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

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
            assert family.working_head(p) == (family.answer_of(drafts[-1].value), drafts[0].text), p
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
