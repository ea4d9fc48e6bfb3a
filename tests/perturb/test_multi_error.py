"""Several errors per variant: each one verified on the combined solution, listed in the manifest."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from perturb.reasoning.base import Attempt, Funnel, Intent, inject
from perturb.reasoning.multi import _disagreement, inject_many, stack
from synth.config import validate_config
from synth.errors import ConfigError
from synth.export import hf_features, hf_record
from synth.generators import get_family
from synth.manifest import read_manifest, schema
from synth.pipeline import run
from synth.records import Variant, dumps, loads
from synth.verifier import verify
from tests.conftest import tiny_config_data

COMBOS = (("intermediate_propagated", "operator_swap"), ("operator_swap", "contextual_swap"),
          ("final_number", "variable_misnaming"), ("intermediate_corrected", "terminology_swap"),
          ("copy_error", "incorrect_units"), ("contextual_swap", "terminology_swap"))
FAMILIES = ("arithmetic.order_of_operations", "algebra.linear.two_step", "arithmetic.units.conversion",
            "arithmetic.multi_digit.addition", "arithmetic.ratio.share")


def _problems(family_id: str, n: int):
    family = get_family(family_id)
    for seed in range(n):
        yield family.build(np.random.default_rng(seed), difficulty=("easy", "medium", "hard")[seed % 3],
                           question_type="free", problem_id=f"p{seed}")


def _two_error_variants():
    for family_id in FAMILIES:
        for problem in _problems(family_id, 6):
            for combo in COMBOS:
                v = inject_many(problem, combo, np.random.default_rng(int(problem.id[1:])))
                if v is not None:
                    yield problem, combo, v


def test_the_verifier_finds_every_injected_step_and_nothing_else() -> None:
    kept = 0
    for problem, combo, v in _two_error_variants():
        kept += 1
        labels = (v.error, *v.errors)
        assert sorted(e.subtype for e in labels) == sorted(combo)
        verdict = verify(problem, v.steps)
        assert set(verdict.error_steps) == set().union(*(e.error_steps for e in labels))
        assert all(e.first_error_step in verdict.error_steps for e in labels)
        assert verdict.first_error_step == v.error.first_error_step
    assert kept >= 30


def test_error_is_the_earliest_and_the_others_follow_in_order() -> None:
    for _, _, v in _two_error_variants():
        steps = [v.error.first_error_step, *(e.first_error_step for e in v.errors)]
        assert steps == sorted(steps) and len(v.errors) == 1
        assert len({*(e.first_error_step for e in (v.error, *v.errors))}) == 2  # never on the same line


def test_a_second_error_on_a_line_already_wrong_is_not_added() -> None:
    for problem in _problems("arithmetic.multi_digit.addition", 6):
        first = inject(problem, "final_number", np.random.default_rng(0))
        assert first is not None and first.error.first_error_step == len(problem.steps)
        funnel = Funnel()
        # The only label is on the last line, which the slip already made wrong.
        assert stack(problem, first, "terminology_swap", np.random.default_rng(0), funnel=funnel) is None
        assert funnel.as_dict()["presentation.terminology_swap/v1+stacked"]["kept"] == 0


def test_an_edit_that_touches_the_first_errors_lines_coincides() -> None:
    problem = next(p for p in _problems("arithmetic.order_of_operations", 12) if len(p.steps) >= 4)
    first = inject(problem, "intermediate_corrected", np.random.default_rng(3))
    assert first is not None
    k = first.error.first_error_step
    swapped = list(first.steps)
    swapped[k - 2], swapped[k - 1] = swapped[k - 1], swapped[k - 2]  # move the wrong line up one
    attempt = Attempt(tuple(dataclasses.replace(s, index=i) for i, s in enumerate(swapped, 1)),
                      Intent(first_error_step=k - 1, propagated=False, answer_changed=False, explanation="swap",
                             edit={}, presentation="logic_disruption"))
    verdict = verify(problem, attempt.steps)
    assert _disagreement(attempt, verdict, [first.error], {k - 1, k}) == "coincides"


def test_a_second_edit_that_undoes_the_first_error_is_compensating() -> None:
    problem = next(_problems("arithmetic.order_of_operations", 1))
    first = inject(problem, "intermediate_corrected", np.random.default_rng(3))
    assert first is not None
    restored = Attempt(problem.steps, Intent(first_error_step=len(problem.steps), propagated=True,
                                             answer_changed=False, explanation="restores", edit={}))
    assert _disagreement(restored, verify(problem, problem.steps), [first.error], set()) == "compensating"


def test_only_text_editing_subtypes_can_be_stacked() -> None:
    problem = next(_problems("arithmetic.order_of_operations", 1))
    first = inject(problem, "operator_swap", np.random.default_rng(0))
    assert first is not None
    with pytest.raises(ValueError, match="cannot be stacked"):
        stack(problem, first, "intermediate_propagated", np.random.default_rng(0))


def test_inject_many_is_deterministic_and_one_subtype_equals_inject() -> None:
    problem, combo, a = next(_two_error_variants())
    assert inject_many(problem, combo, np.random.default_rng(int(problem.id[1:]))) == a
    assert inject_many(problem, ("final_number",), np.random.default_rng(5)) == inject(
        problem, "final_number", np.random.default_rng(5))


def test_several_errors_round_trip_through_json() -> None:
    _, _, v = next(_two_error_variants())
    assert v.errors and loads(Variant, dumps(v)) == v


def test_errors_per_variant_needs_a_stackable_subtype() -> None:
    data = tiny_config_data(inject={"errors_per_variant": 2, "subtypes": {"intermediate_propagated": 1.0}})
    with pytest.raises(ConfigError, match="errors_per_variant"):
        validate_config(data)


def test_a_run_with_presentation_errors_and_two_per_variant_validates(tmp_path: Path) -> None:
    data = tiny_config_data(
        name="multi", count=6,
        generate={"families": {"arithmetic.fractions.add_unlike": 1.0, "arithmetic.units.conversion": 1.0,
                               "algebra.linear.two_step": 1.0, "arithmetic.ratio.share": 1.0}},
        inject={"variants_per_base": 2, "errors_per_variant": 2,
                "subtypes": {"intermediate_corrected": 1.0, "operator_swap": 1.0, "format_ignored": 1.0,
                             "incorrect_units": 1.0, "variable_misnaming": 1.0,
                             "terminology_swap": 1.0, "contextual_swap": 1.0}},
        degrade={"ops": []}, output={"root": str(tmp_path), "shard_size": 3})
    run(validate_config(data), tmp_path / "run", workers=1)
    rows = list(read_manifest(tmp_path / "run"))
    validator = jsonschema.Draft202012Validator(schema())
    for row in rows:
        errors = sorted(validator.iter_errors(row), key=str)
        assert not errors, f"{row['id']}: {errors[0].message}"
    stacked = [r for r in rows if r["errors"]]
    assert stacked and all(r["error"] and len(r["errors"]) == 1 for r in stacked)
    assert all(r["errors"] == [] for r in rows if r["variant"] != "error")
    assert any(e["family"] == "presentation" for r in stacked for e in (r["error"], *r["errors"]))
    record = hf_record(tmp_path / "run", stacked[0])
    assert set(record) == set(hf_features()) and record["error_count"] == 2
    assert record["other_error_subtypes"] == [stacked[0]["errors"][0]["subtype"]]


def test_a_run_counts_every_error_a_variant_holds(tmp_path: Path) -> None:
    # A stacked error on an earlier line becomes the variant's error and the planned one moves to errors:
    # stats.json counted only the first, and generate warned the planned subtype was unfilled ("0 made").
    data = tiny_config_data(
        name="count", count=4,
        generate={"families": {"algebra.linear.two_step": 1.0, "arithmetic.order_of_operations": 1.0}},
        inject={"variants_per_base": 1, "errors_per_variant": 2,
                "subtypes": {"intermediate_propagated": 1.0, "operator_swap": 1.0}},
        degrade={"ops": []}, output={"root": str(tmp_path), "shard_size": 2})
    run(validate_config(data), tmp_path / "run", workers=1)
    rows = [r for r in read_manifest(tmp_path / "run") if r["error"]]
    held: dict[str, int] = {}
    for r in rows:
        for e in (r["error"], *r["errors"]):
            held[e["subtype"]] = held.get(e["subtype"], 0) + 1
    stats = json.loads((tmp_path / "run" / "stats.json").read_text())
    assert rows and stats["counts"]["subtype_pages"] == held
