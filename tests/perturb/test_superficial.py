"""Superficial controls: visibly different, still fully correct, labelled as controls."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from perturb.reasoning import INJECTORS, inject
from perturb.reasoning.base import Funnel
from perturb.reasoning.superficial import declare_rename, plain_latex
from synth.generators import get_family
from synth.generators.base import finalize
from synth.mathparse import parse_math
from synth.verifier import DECLARE_RULE, REMARK_RULE, verify

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


def test_equivalent_format_can_write_a_fraction_answer_as_a_decimal() -> None:
    family = get_family("algebra.linear.two_step")
    problem = family.build(np.random.default_rng(0), difficulty="easy", question_type="free", problem_id="p")
    params = {"var": "x", "a": 4, "b": 1, "c": 8}  # x = 7/4
    problem = dataclasses.replace(problem, params=params, steps=finalize(family.derive(params)))
    shown = set()
    for seed in range(40):
        v = inject(problem, "equivalent_format", np.random.default_rng(seed))
        assert v is not None and verify(problem, v.steps).fully_correct
        shown.add(v.steps[-1].text)
    assert "x = 1.75" in shown


def test_equivalent_format_varies_its_forms_and_never_adds_point_zero() -> None:
    forms, changed = set(), []
    for family_id in ("arithmetic.order_of_operations", "algebra.linear.two_step", "geometry.circle.circumference_arc",
                      "arithmetic.fractions.add_unlike", "commonsense.clock.interval", "arithmetic.units.conversion"):
        for problem in _problems(family_id, 8):
            v = inject(problem, "equivalent_format", np.random.default_rng(int(problem.id[1:])))
            if v is None:
                continue
            forms.add(v.control.edit["form"])
            changed.append(v.control.edit["to"])
            assert verify(problem, v.steps).fully_correct
    assert len(forms) >= 4, forms
    assert sum(re.search(r"\d\.0(?!\d)", t) is not None for t in changed) <= len(changed) // 10, changed


def test_plain_latex_writes_fractions_operators_and_powers() -> None:
    assert plain_latex("1/4 × 6.28 − 7^2") == r"\frac{1}{4} \times 6.28 - 7^{2}"
    assert plain_latex("(2 + 3) ÷ π") == r"\left(2 + 3\right) \div \pi"
    assert plain_latex("√49") is None  # outside what the rewrites touch: no rewrite rather than wrong LaTeX


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
        assert remark.rule == "remark" and len(v.steps) == len(problem.steps) + 1
        assert [s.index for s in v.steps] == list(range(1, len(v.steps) + 1))
        assert verify(problem, v.steps).fully_correct
    assert kept >= 5


def test_irrelevant_info_is_a_wordless_side_calculation_in_varied_places() -> None:
    texts, places, n = [], set(), 0
    for family_id in FAMILIES:
        for problem in _problems(family_id, 20):
            v = inject(problem, "irrelevant_info", np.random.default_rng(int(problem.id[1:])))
            if v is None:
                continue
            k = v.control.edit["inserted_step"]
            n = len(problem.steps)
            places.add("first" if k == 1 else "after_answer" if k == n + 1 else "between")
            remark = v.steps[k - 1]
            assert remark.rule == REMARK_RULE  # the verifier reads it by its rule, with no "Note: " prefix
            texts.append(remark.text)
            assert not remark.text.startswith("Note")
            assert remark.math and all(remark.text[a:b] == remark.math for a, b in remark.spans)
    assert places == {"first", "between", "after_answer"}
    # No word marks the control (worked lines have none): the remark is a side calculation, bare or in brackets.
    assert not [w for t in texts for w in re.findall(r"[A-Za-z]{2,}", t) if w not in ("cos", "sin", "tan")]
    assert {t.startswith("(") for t in texts} == {True, False}


def test_variable_rename_is_declared_before_the_new_letter_is_used() -> None:
    problem = next(_problems("algebra.linear.two_step", 1))
    steps = declare_rename(problem, "q", "Let {new} stand for {old}")
    old = problem.params["var"]
    assert steps[0].rule == DECLARE_RULE and steps[0].text == f"Let q stand for {old}"
    assert steps[0].math == f"q = {old}" and [steps[0].text[a:b] for a, b in steps[0].spans] == ["q", old]
    assert all(re.search(rf"(?<![A-Za-z]){old}(?![A-Za-z])", s.text) is None for s in steps[1:])
    assert [s.index for s in steps] == list(range(1, len(problem.steps) + 2))


def test_variable_rename_is_offered_where_there_is_a_letter_and_declares_it_on_a_line_the_verifier_reads() -> None:
    problem = next(_problems("algebra.linear.two_step", 1))
    assert INJECTORS["variable_rename"].applies(get_family(problem.family), problem)
    v = inject(problem, "variable_rename", np.random.default_rng(0))
    assert v is not None and [s.rule for s in v.steps].count(DECLARE_RULE) == 1
    assert verify(problem, v.steps).fully_correct
    sums = next(_problems("arithmetic.order_of_operations", 1))  # no letter to rename
    assert not INJECTORS["variable_rename"].applies(get_family(sums.family), sums)


def test_a_false_remark_is_an_error_where_it_is_written() -> None:
    problem = next(_problems("algebra.linear.two_step", 1))
    false = dataclasses.replace(problem.steps[0], text="Note: 6 × 7 = 43", value="Eq(42, 43)")
    verdict = verify(problem, (false, *problem.steps[1:]))
    assert verdict.first_error_step == 1 and verdict.answer_correct
