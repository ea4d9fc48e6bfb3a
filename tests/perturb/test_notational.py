"""Notational errors: the verifier judges what a line says, not what the student meant."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perturb.reasoning import inject
from perturb.reasoning.base import Funnel
from synth.generators import get_family
from synth.verifier import verify

NOTATIONAL = ("operator_swap", "misplaced_parentheses", "symbol_error")
FAMILIES = ("arithmetic.order_of_operations", "algebra.linear.brackets", "algebra.exponents.simplify",
            "trig.exact_values", "arithmetic.rate.unit_rate", "algebra.linear.both_sides")


def _problems(family_id: str, n: int):
    family = get_family(family_id)
    for seed in range(n):
        yield family.build(np.random.default_rng(seed), difficulty=("easy", "medium", "hard")[seed % 3],
                           question_type="free", problem_id=f"p{seed}")


def test_a_line_written_differently_from_its_value_is_judged_as_written() -> None:
    problem = next(p for p in _problems("arithmetic.order_of_operations", 20) if " × " in p.steps[0].text)
    wrong = dataclasses.replace(problem.steps[0], text=problem.steps[0].text.replace(" × ", " + ", 1))
    steps = (wrong, *problem.steps[1:])
    verdict = verify(problem, steps)
    assert verdict.parses[0] is False and all(verdict.parses[1:])
    assert verdict.first_error_step == 1 and not verdict.global_correct[0]
    assert not verdict.local_valid[1] and all(verdict.global_correct[1:])  # carries on from the meant value
    assert verdict.answer_correct


@pytest.mark.parametrize("subtype", NOTATIONAL)
def test_notational_variants_are_wrong_only_as_written(subtype: str) -> None:
    funnel, kept = Funnel(), 0
    for family_id in FAMILIES:
        for problem in _problems(family_id, 12):
            v = inject(problem, subtype, np.random.default_rng(int(problem.id[1:])), funnel=funnel)
            if v is None:
                continue
            kept += 1
            err = v.error
            k = err.first_error_step
            verdict = verify(problem, v.steps)
            assert [i for i, ok in enumerate(verdict.parses, 1) if not ok] == [k]
            assert [s.value for s in v.steps] == [s.value for s in problem.steps]  # the meaning is untouched
            assert v.steps[k - 1].text != problem.steps[k - 1].text
            assert v.steps[k - 1].latex != problem.steps[k - 1].latex
            last = k == len(problem.steps)
            assert err.propagated == last and err.answer_changed == last
            assert err.projections == {"errorradar": "CAL", "fermat": "NO", "mmerror": "B"}
    assert kept >= 5, funnel.as_dict()


def test_operator_swap_on_the_last_line_changes_the_written_answer() -> None:
    for problem in _problems("arithmetic.order_of_operations", 30):
        n = len(problem.steps)
        v = inject(problem, "operator_swap", np.random.default_rng(0), placement=n)
        if v is not None:
            assert v.error.answer_changed and v.shown_answer != problem.answer_value
            return
    # The last line of order-of-operations is a bare number: no operator to swap there.
    assert all(" " not in p.steps[-1].text for p in _problems("arithmetic.order_of_operations", 30))


def test_placement_by_index_is_honoured() -> None:
    for problem in _problems("arithmetic.order_of_operations", 10):
        v = inject(problem, "operator_swap", np.random.default_rng(0), placement=1)
        if v is not None:
            assert v.error.first_error_step == 1
