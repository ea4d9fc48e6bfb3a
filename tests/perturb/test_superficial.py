"""Superficial controls: visibly different, still fully correct, labelled as controls."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perturb.reasoning import inject
from perturb.reasoning.base import Funnel
from synth.generators import get_family
from synth.generators.base import finalize
from synth.mathparse import parse_math
from synth.verifier import verify

CONTROLS = ("step_omission", "variable_rename", "equivalent_format", "reorder_terms")
FAMILIES = ("arithmetic.order_of_operations", "algebra.linear.two_step")


def _problems(family_id: str, n: int):
    family = get_family(family_id)
    for seed in range(n):
        yield family.build(np.random.default_rng(seed), difficulty=("easy", "medium", "hard")[seed % 3],
                           question_type="free", problem_id=f"p{seed}")


@pytest.mark.parametrize("subtype", CONTROLS)
def test_controls_verify_as_correct_and_differ_visibly(subtype: str) -> None:
    funnel = Funnel()
    kept = 0
    for family_id in FAMILIES:
        for problem in _problems(family_id, 30):
            v = inject(problem, subtype, np.random.default_rng(int(problem.id[1:])), funnel=funnel)
            if v is None:
                continue
            kept += 1
            assert v.kind == "superficial" and v.is_correct and v.error is None
            assert v.control is not None and v.control.subtype == subtype and v.control.edit
            assert verify(problem, v.steps).fully_correct
            assert [s.text for s in v.steps] != [s.text for s in problem.steps]
    assert kept >= 15, funnel.as_dict()


def test_equivalent_format_writes_fractions_as_decimals() -> None:
    family = get_family("algebra.linear.two_step")
    problem = family.build(np.random.default_rng(0), difficulty="easy", question_type="free", problem_id="p")
    params = {"var": "x", "a": 4, "b": 1, "c": 8}  # x = 7/4
    problem = dataclasses.replace(problem, params=params, steps=finalize(family.derive(params)))
    v = inject(problem, "equivalent_format", np.random.default_rng(0))
    assert v is not None and v.steps[-1].text == "x = 1.75"


def test_sign_error_flips_a_computed_sign() -> None:
    for problem in _problems("algebra.linear.two_step", 10):
        v = inject(problem, "sign_error", np.random.default_rng(1))
        if v is None:
            continue
        edit = v.error.edit
        assert edit["slip"] == "sign_slip"
        assert parse_math(edit["to"]) == -parse_math(edit["from"])
        assert v.error.projections["fermat"] == "CO"


def test_irrelevant_info_adds_a_true_remark_and_stays_correct() -> None:
    kept = 0
    for problem in _problems("algebra.linear.two_step", 10):
        v = inject(problem, "irrelevant_info", np.random.default_rng(0))
        if v is None:
            continue
        kept += 1
        remark = v.steps[v.control.edit["inserted_step"] - 1]
        assert remark.text.startswith("Note: ") and len(v.steps) == len(problem.steps) + 1
        assert [s.index for s in v.steps] == list(range(1, len(v.steps) + 1))
        assert verify(problem, v.steps).fully_correct
    assert kept >= 5


def test_a_false_remark_is_an_error_where_it_is_written() -> None:
    problem = next(_problems("algebra.linear.two_step", 1))
    false = dataclasses.replace(problem.steps[0], text="Note: 6 × 7 = 43", value="Eq(42, 43)")
    verdict = verify(problem, (false, *problem.steps[1:]))
    assert verdict.first_error_step == 1 and verdict.answer_correct
