"""A quota run of at least as many bases as families has every family (issue 19: the quickstart's 24 bases,
taken from a 100-base plan, used to show 7 of its 8 families)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from synth.allocation import MIN_PLAN_BASES, allocate, family_plan
from synth.config import load_config, validate_config
from synth.pipeline import run
from synth.resources import packaged_configs

TEN = ("algebra.exponents.simplify", "algebra.linear.both_sides", "algebra.linear.brackets",
       "algebra.linear.two_step", "algebra.quadratic.factoring", "arithmetic.decimals.operations",
       "arithmetic.fractions.add_unlike", "arithmetic.fractions.multiply_divide",
       "arithmetic.multi_digit.addition", "arithmetic.multi_digit.multiplication")


def _data(count: int, seed: int = 3, families: dict[str, float] | None = None) -> dict[str, Any]:
    return {"name": "cover", "seed": seed, "count": count,
            "generate": {"families": families or dict.fromkeys(TEN, 1.0), "allocation": "quota",
                         "difficulties": ["easy", "medium", "hard"]},
            "inject": {"variants_per_base": 1, "subtypes": {"intermediate_propagated": 2.0, "final_number": 1.0}},
            "render": {"enabled": False}, "degrade": {"ops": []}}


@pytest.mark.parametrize("name", packaged_configs())
def test_every_packaged_config_at_its_own_count_has_every_family(name: str) -> None:
    config = load_config(name)
    if config.generate.allocation != "quota" or config.count < len(config.generate.families):
        pytest.skip(f"{name}: not a quota run of at least as many bases as families")
    # the families allocate deals first (the subtype tables of the large configs take seconds to fit)
    assert set(family_plan(config)[:config.count]) == set(config.generate.families)
    if config.count <= 50:
        assert {p.family for p in allocate(config).plans} == set(config.generate.families)


def test_a_ten_family_run_of_ten_bases_has_ten_families(tmp_path: Path) -> None:
    config = validate_config(_data(10))
    assert Counter(p.family for p in allocate(config).plans) == Counter(TEN)
    run(config, tmp_path / "run")
    rows = [json.loads(line) for line in (tmp_path / "run" / "manifest.jsonl").read_text().splitlines()]
    assert {r["family"] for r in rows} == set(TEN)


@pytest.mark.parametrize("seed", range(12))
def test_small_runs_cover_every_family_on_any_seed_and_keep_the_plan_otherwise(seed: int) -> None:
    whole = allocate(validate_config(_data(MIN_PLAN_BASES - 1, seed))).plans
    for count in (10, 11, 13, 17, 24, 40):
        plans = allocate(validate_config(_data(count, seed))).plans
        assert {p.family for p in plans} == set(TEN), (seed, count)
        assert plans == allocate(validate_config(_data(count, seed))).plans  # deterministic
        # difficulties stay with their base; only families move, and only where one was missing
        assert [p.difficulty for p in plans] == [p.difficulty for p in whole[:count]]
        moved = sum(a.family != b.family for a, b in zip(plans, whole[:count]))
        missing = len(set(TEN) - {p.family for p in whole[:count]})
        assert moved <= 2 * missing and (missing > 0 or plans == whole[:count]), (seed, count, moved, missing)
        # no family holds more than its share of the run, rounded up, plus the bases given to missing ones
        held = Counter(p.family for p in plans)
        assert max(held.values()) <= max(Counter(p.family for p in whole[:count]).values())


def test_runs_shorter_than_their_families_are_planned_as_before() -> None:
    # A preview of 4 bases cannot hold 10 families: its plan is the first 4 bases of the 100-base plan.
    whole = allocate(validate_config(_data(MIN_PLAN_BASES - 1))).plans
    assert allocate(validate_config(_data(4))).plans == whole[:4]


def test_a_family_whose_weight_rounds_to_no_base_still_gets_one() -> None:
    families = {**dict.fromkeys(TEN[:9], 100.0), TEN[9]: 0.1}
    for count in (10, 30, 150):
        plans = allocate(validate_config(_data(count, families=families))).plans
        held = Counter(p.family for p in plans)
        assert held[TEN[9]] == 1 and set(held) == set(TEN), (count, held)
