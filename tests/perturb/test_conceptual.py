"""Mal-rule catalogues and the conceptual injectors: the verifier labels the rule's line as the first error."""

from __future__ import annotations

import numpy as np
import pytest

from perturb.reasoning import inject
from perturb.reasoning.base import Funnel
from perturb.reasoning.conceptual import CONCEPTUAL, mal_step
from synth.generators import get_family
from synth.generators.base import finalize
from synth.verifier import verify

# The families this catalogue covers (others bring their own mal-rules).
FAMILIES = (
    "algebra.exponents.simplify", "algebra.linear.both_sides", "algebra.linear.brackets", "algebra.linear.two_step",
    "algebra.quadratic.factoring", "arithmetic.decimals.operations", "arithmetic.fractions.add_unlike",
    "arithmetic.fractions.multiply_divide", "arithmetic.multi_digit.addition", "arithmetic.multi_digit.multiplication",
    "arithmetic.multi_digit.subtraction", "arithmetic.order_of_operations", "arithmetic.percent.of_quantity",
    "arithmetic.percent.percent_change", "arithmetic.rate.unit_rate", "arithmetic.ratio.share",
    "arithmetic.units.conversion", "calculus.derivative.power_rule", "trig.exact_values",
)


def _problems(family_id: str, n: int):
    family = get_family(family_id)
    for seed in range(n):
        yield family.build(np.random.default_rng(seed), difficulty=("easy", "medium", "hard")[seed % 3],
                           question_type="free", problem_id=f"p{seed}")


def test_catalogue_has_enough_distinct_rules_with_valid_subtypes() -> None:
    rules = {(r.id, r.subtype, r.explanation) for f in FAMILIES for r in get_family(f).malrules}
    assert len({r[0] for r in rules}) >= 28
    assert {r[1] for r in rules} == {*CONCEPTUAL, "unit_conversion"}
    assert all(r[2] and len(r[2]) < 120 for r in rules)
    assert all(get_family(f).malrules for f in FAMILIES)


@pytest.mark.parametrize("family_id", FAMILIES)
def test_every_rule_applies_somewhere_and_errs_exactly_where_it_is_used(family_id: str) -> None:
    family = get_family(family_id)
    for rule in family.malrules:
        used = 0
        for problem in _problems(family_id, 30):
            drafts = family.derive_mal(problem.params, rule.id)
            if drafts is None:
                continue
            verdict = verify(problem, finalize(drafts), family=family)
            if verdict.answer_correct:
                continue  # the rule happens to land on the right answer: the injector rejects these
            used += 1
            k = mal_step(drafts, problem)
            assert all(verdict.parses), (rule.id, [d.text for d in drafts])
            assert verdict.first_error_step == k, (rule.id, [d.text for d in drafts])
            assert verdict.propagated and drafts[k - 1].rule == f"mal:{rule.id}"
        assert used >= 3, rule.id


def test_unknown_rule_id_does_not_apply() -> None:
    problem = next(_problems("algebra.linear.two_step", 1))
    assert get_family(problem.family).derive_mal(problem.params, "no_such_rule") is None


def test_clean_solution_is_untouched_by_the_catalogue() -> None:
    family = get_family("algebra.linear.brackets")
    problem = next(_problems("algebra.linear.brackets", 1))
    assert [d.text for d in family.derive(problem.params)] == [s.text for s in problem.steps]
    assert all(not d.rule.startswith("mal:") for d in family.derive(problem.params))


@pytest.mark.parametrize("subtype", [*CONCEPTUAL, "unit_conversion"])
def test_conceptual_variants_carry_the_rules_explanation_and_projections(subtype: str) -> None:
    funnel, kept = Funnel(), 0
    for family_id in FAMILIES:
        family = get_family(family_id)
        explanations = {r.explanation for r in family.malrules if r.subtype == subtype}
        for problem in _problems(family_id, 6):
            v = inject(problem, subtype, np.random.default_rng(0), funnel=funnel)
            if v is None:
                continue
            kept += 1
            err = v.error
            assert err is not None and err.subtype == subtype and err.explanation in explanations
            assert err.propagated and err.answer_changed and err.shown_answer != problem.answer_value
            assert err.edit["rule"] and err.edit["step"] == err.first_error_step
            expected = {"formula_misuse": "KNOW", "theorem_misapplication": "KNOW", "incorrect_fact": "KNOW",
                        "invalid_assumption": "REAS", "invalid_inference": "REAS", "misinterpret_question": "MIS",
                        "unit_conversion": "CAL"}[subtype]
            assert err.projections["errorradar"] == expected
    assert kept >= 5, funnel.as_dict()


def test_left_to_right_errs_at_the_first_operation_done_out_of_order() -> None:
    family = get_family("arithmetic.order_of_operations")
    problem = next(_problems("arithmetic.order_of_operations", 1))
    params = {"expression": ["+", 3, ["*", 4, 5]]}
    drafts = family.derive_mal(params, "left_to_right")
    assert [d.text for d in drafts] == ["7 × 5", "35"]
    assert drafts[0].rule == "mal:left_to_right"
    assert problem.family == family.id


def test_adding_across_shows_the_wrong_method_not_just_a_wrong_number() -> None:
    family = get_family("arithmetic.fractions.add_unlike")
    drafts = family.derive_mal({"fractions": [[1, 2], [1, 3]], "signs": ["+"]}, "add_across")
    assert [d.text for d in drafts] == ["(1 + 1)/(2 + 3)", "2/5"]


def test_non_propagated_form_keeps_the_final_answer() -> None:
    kept = 0
    for problem in _problems("algebra.linear.brackets", 9):
        v = inject(problem, "theorem_misapplication", np.random.default_rng(1), propagate=False)
        if v is None:
            continue
        kept += 1
        assert not v.error.propagated and not v.error.answer_changed
        assert v.shown_answer == problem.answer_value
        assert verify(problem, v.steps).first_error_step == v.error.first_error_step
    assert kept >= 3
