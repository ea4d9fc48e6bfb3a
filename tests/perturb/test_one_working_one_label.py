"""One wrong working carries one label: no visual misread writes a mal-rule's working or another kind's."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from synth import generators
from synth.generators.base import Family, StepDraft
from synth.records import Problem

# A fixed sample of every figure family (the reviewer's audit used 40 seeds; 6 keep this test fast).
SEEDS = range(6)
DIFFICULTIES = ("easy", "medium", "hard")
_DERIVE_ERRORS = (ArithmeticError, ValueError, TypeError, KeyError, IndexError)


def _figure_families() -> list[str]:
    return sorted(fid for fid, cls in generators.REGISTRY.items() if cls.figure_kind and not fid.startswith("test."))


@cache
def _sample(family_id: str) -> tuple[Problem, ...]:
    family = generators.get_family(family_id)
    return tuple(family.build(np.random.default_rng(seed), difficulty=difficulty, question_type="free",
                              problem_id=f"{family_id}-{seed}-{difficulty}")
                 for seed in SEEDS for difficulty in DIFFICULTIES)


def _texts(drafts: list[StepDraft]) -> tuple[str, ...]:
    return tuple(d.text for d in drafts)


def _mal_workings(family: Family, params: dict) -> dict[tuple[str, ...], str]:
    out = {}
    for rule in family.malrules:
        try:
            drafts = family.derive_mal(params, rule.id)
        except _DERIVE_ERRORS:
            continue
        if drafts:
            out[_texts(drafts)] = rule.id
    return out


def _clashes(family_id: str) -> list[str]:
    """Every offered misread whose working is a mal-rule's, or is written by a misread of another kind."""
    family = generators.get_family(family_id)
    found = []
    for problem in _sample(family_id):
        params = problem.params
        mal = _mal_workings(family, params)
        kinds: dict[tuple[str, ...], tuple[str, str]] = {}
        for reading in family.figure_readings(params):
            for wrong in reading.misreads:
                working = _texts(family.derive(reading.apply(params, wrong)))
                where = f"{problem.id}: {reading.kind} of {reading.element} as {wrong!r}"
                if working in mal:
                    found.append(f"{where} writes mal-rule {mal[working]}'s working")
                first = kinds.setdefault(working, (reading.kind, reading.element))
                if first[0] != reading.kind:
                    found.append(f"{where} writes the working of {first[0]} of {first[1]}")
    return found


@pytest.mark.parametrize("family_id", _figure_families())
def test_no_misread_writes_a_mal_rule_or_another_kinds_working(family_id: str) -> None:
    clashes = _clashes(family_id)
    assert clashes == [], "\n".join(clashes[:5])


def test_the_sample_offers_misreads_to_check() -> None:
    # The test above would pass trivially on a family that offers no misread: every figure family offers some.
    offering = [fid for fid in _figure_families()
                if any(r.misreads for p in _sample(fid) for r in generators.get_family(fid).figure_readings(p.params))]
    assert len(offering) == len(_figure_families())
