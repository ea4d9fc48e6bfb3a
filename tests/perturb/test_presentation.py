"""Presentation errors: right math, wrong words, unit, form, name or order, as the verifier's checker finds them."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import sympy

from perturb.reasoning import REGISTRY, inject
from perturb.reasoning.base import Funnel
from synth.generators import REGISTRY as FAMILY_REGISTRY
from synth.generators import get_family
from synth.presentation import (
    Vocabulary,
    form_fault,
    label_fault,
    label_words,
    name_faults,
    order_faults,
    read_line,
)
from synth.records import Problem
from synth.verifier import parse_step, same_value, verify

# Families where each subtype has something to act on.
FAMILIES = {
    "format_ignored": ("arithmetic.fractions.add_unlike", "arithmetic.fractions.multiply_divide",
                       "arithmetic.decimals.operations"),
    "incorrect_units": ("arithmetic.units.conversion",),
    "variable_misnaming": ("algebra.linear.two_step", "algebra.linear.both_sides", "algebra.inequalities.linear"),
    "terminology_swap": ("arithmetic.multi_digit.addition", "arithmetic.multi_digit.subtraction",
                         "arithmetic.fractions.multiply_divide"),
    "contextual_swap": ("arithmetic.ratio.share",),
}


def _problems(family_id: str, n: int):
    family = get_family(family_id)
    for seed in range(n):
        yield family.build(np.random.default_rng(seed), difficulty=("easy", "medium", "hard")[seed % 3],
                           question_type="free", problem_id=f"p{seed}")


def _problem(family_id: str, seed: int = 0, difficulty: str = "easy") -> Problem:
    return get_family(family_id).build(np.random.default_rng(seed), difficulty=difficulty, question_type="free",
                                       problem_id="p")


def _with_last_text(problem: Problem, text: str) -> tuple:
    return (*problem.steps[:-1], dataclasses.replace(problem.steps[-1], text=text))


@pytest.mark.parametrize("subtype", sorted(FAMILIES))
def test_each_presentation_error_keeps_the_math_and_is_found_by_the_checker(subtype: str) -> None:
    funnel, kept = Funnel(), 0
    for family_id in FAMILIES[subtype]:
        for problem in _problems(family_id, 9):
            v = inject(problem, subtype, np.random.default_rng(int(problem.id[1:])), funnel=funnel)
            if v is None:
                continue
            kept += 1
            verdict = verify(problem, v.steps)
            k = v.error.first_error_step
            assert [i for i, kind in enumerate(verdict.presentation, 1) if kind][0] == k
            assert {kind for kind in verdict.presentation if kind} == {subtype}
            assert all(verdict.local_valid) and all(verdict.global_correct) and verdict.answer_correct
            assert not v.error.answer_changed and not v.is_correct
            assert v.error.family == "presentation" and v.error.projections["fermat"] == "PR"
            assert [s.text for s in v.steps] != [s.text for s in problem.steps]
    assert kept >= 6, funnel.as_dict()


def test_every_presentation_subtype_is_registered_as_a_text_edit() -> None:
    for subtype in FAMILIES:
        assert REGISTRY[subtype].edits_text, subtype


def test_clean_solutions_with_labels_units_and_forms_verify() -> None:
    families = {f for fams in FAMILIES.values() for f in fams}
    for family_id in sorted(families):
        for problem in _problems(family_id, 6):
            verdict = verify(problem, problem.steps)
            assert verdict.fully_correct and not any(verdict.presentation), (family_id, problem.steps)


def test_worded_lines_and_units_read_back_as_their_math() -> None:
    assert read_line("Chen's share: 60") == read_line("Chen's share: 60")
    assert read_line("Chen's share: 60").label == "Chen's share"
    assert read_line("Sum: 345 cm").unit == "cm" and read_line("Sum: 345 cm").math == "345"
    assert read_line("30 m/s").unit == "m/s" and read_line("2x + 3 = 11").label is None
    assert parse_step("Sum: 345 cm") == 345 and parse_step("Ben's share: 3 × 20") == 60
    assert read_line("1:2:3").label is None  # a ratio is not a label


def test_the_question_states_the_requested_form() -> None:
    for problem in _problems("arithmetic.fractions.add_unlike", 6):
        assert problem.params["answer_form"] == "fraction"
        assert "simplest form" in problem.question_text
    for problem in _problems("arithmetic.decimals.operations", 3):
        assert "as a decimal" in problem.question_text


def test_a_correct_value_in_the_wrong_form_is_format_ignored() -> None:
    assert form_fault("3/5", "fraction") is None and form_fault("6/10", "fraction") == "format_ignored"
    assert form_fault("0.6", "fraction") == "format_ignored" and form_fault("x = 7", "fraction") is None
    assert form_fault("42.08", "decimal") is None and form_fault("1052/25", "decimal") == "format_ignored"
    problem = next(p for p in _problems("arithmetic.fractions.add_unlike", 12) if p.steps[-1].text.endswith("3/5"))
    verdict = verify(problem, _with_last_text(problem, problem.steps[-1].text.replace("3/5", "0.6")))
    assert verdict.answer_correct and verdict.presentation[-1] == "format_ignored" and not verdict.fully_correct


def test_equivalent_format_stays_a_no_error_control_when_a_form_is_requested() -> None:
    # A requested form makes another form of the answer an error (format_ignored): the control rewrites
    # an earlier line only, and the variant stays correct.
    made = 0
    for problem in _problems("arithmetic.fractions.add_unlike", 6):
        v = inject(problem, "equivalent_format", np.random.default_rng(0))
        if v is not None:
            made += 1
            assert v.kind == "superficial" and v.steps[-1].text == problem.steps[-1].text
            assert verify(problem, v.steps).fully_correct
    assert made
    # Where no form is asked for, it still makes a correct variant, keeping label and unit.
    problem = _problem("arithmetic.units.conversion")
    v = inject(problem, "equivalent_format", np.random.default_rng(0))
    assert v is not None and v.kind == "superficial"
    assert read_line(v.steps[-1].text).unit == problem.params["answer_unit"]


def test_a_wrong_unit_is_flagged_and_a_missing_one_is_not() -> None:
    problem = _problem("arithmetic.units.conversion")
    unit = problem.params["answer_unit"]
    number = read_line(problem.steps[-1].text).math
    wrong = "km" if unit != "km" else "m"
    assert verify(problem, _with_last_text(problem, f"{number} {wrong}")).presentation[-1] == "incorrect_units"
    assert verify(problem, _with_last_text(problem, number)).fully_correct


def test_a_label_is_checked_against_the_problems_vocabulary() -> None:
    vocab = Vocabulary({"Ava's share": sympy.Integer(20), "Ben's share": sympy.Integer(40)}, ("ava", "ben"))
    assert label_fault("Ben's share", sympy.Integer(40), True, vocab, same_value) is None
    assert label_fault("Ava's share", sympy.Integer(40), True, vocab, same_value) == "contextual_swap"
    assert label_fault("Zoe's share", sympy.Integer(40), True, vocab, same_value) == "contextual_swap"
    assert label_fault("Ben's product", sympy.Integer(40), True, vocab, same_value) == "terminology_swap"
    # A miscalculated line keeps its label: that mistake is the number's, not the word's.
    assert label_fault("Ben's share", sympy.Integer(41), False, vocab, same_value) is None


def test_a_slip_on_a_labelled_line_is_not_also_a_presentation_error() -> None:
    for problem in _problems("arithmetic.multi_digit.addition", 6):
        v = inject(problem, "final_number", np.random.default_rng(1))
        assert v is not None and v.steps[-1].text.startswith("Sum: ")
        assert not any(verify(problem, v.steps).presentation)


def test_a_consistent_rename_is_fine_but_a_change_midway_is_not() -> None:
    x, y = frozenset({"x"}), frozenset({"y"})
    assert name_faults([y, y, None, y], "x") == [False, False, False, False]
    assert name_faults([x, x, y, y], "x") == [False, False, True, True]
    assert name_faults([x, y, x], "x") == [False, True, False]
    for problem in _problems("algebra.linear.two_step", 6):
        v = inject(problem, "variable_rename", np.random.default_rng(0))
        assert v is not None and v.kind == "superficial"


def test_a_line_shown_before_the_line_it_needs_is_out_of_order() -> None:
    ref = ["a", "b", "c", "d"]
    assert order_faults(["a", "c", "b", "d"], ref) == [False, True, False, False]
    assert order_faults(["a", "b", "d"], ref) == [False, False, False]  # a left-out line is not disorder
    assert order_faults(["a", None, "b", "c", "d"], ref) == [False] * 5


def test_contextual_swap_names_another_person_of_the_story() -> None:
    for problem in _problems("arithmetic.ratio.share", 9):
        v = inject(problem, "contextual_swap", np.random.default_rng(2))
        if v is None:
            assert problem.params["ask"] != "share"
            continue
        said = read_line(v.steps[-1].text).label
        assert said is not None and said != read_line(problem.steps[-1].text).label
        assert said.split("'")[0] in problem.params["names"]


def test_presentation_variants_are_deterministic() -> None:
    problem = _problem("arithmetic.ratio.share", seed=4, difficulty="medium")
    a = inject(problem, "contextual_swap", np.random.default_rng(11))
    b = inject(problem, "contextual_swap", np.random.default_rng(11))
    assert a is not None and a == b


# -- issue #4: every presentation and unit subtype applies to at least five families ---------------

# The families each subtype must keep applying to (more may join as families are added).
COVERAGE = {
    "incorrect_units": {"arithmetic.units.conversion", "commonsense.clock.interval", "geometry.circle.area",
                        "geometry.circle.circumference_arc", "geometry.polygon.area_perimeter", "geometry.pythagoras",
                        "geometry.similar_triangles", "solid.cone.volume", "solid.cylinder.volume_surface",
                        "solid.prism.volume_surface", "solid.sphere.volume_surface", "trig.right_triangle.ratios"},
    "format_ignored": {"arithmetic.decimals.operations", "arithmetic.fractions.add_unlike",
                       "arithmetic.fractions.multiply_divide", "commonsense.number_line", "probability.compound",
                       "probability.simple", "probability.table.two_way", "trig.right_triangle.ratios"},
    "contextual_swap": {"arithmetic.ratio.share", "geometry.similar_triangles", "probability.compound",
                        "probability.simple", "probability.table.two_way", "statistics.pie_chart.reading"},
    "unit_conversion": {"arithmetic.rate.unit_rate", "arithmetic.units.conversion", "commonsense.clock.interval",
                        "geometry.circle.circumference_arc", "geometry.polygon.area_perimeter",
                        "solid.prism.volume_surface"},
}
_SAMPLED = [(seed, difficulty) for seed in range(5) for difficulty in ("easy", "medium", "hard")]


@functools.cache
def _sampled(family_id: str) -> tuple[Problem, ...]:
    family = get_family(family_id)
    return tuple(family.build(np.random.default_rng(seed), difficulty=difficulty, question_type="free",
                              problem_id=f"p{seed}{difficulty[0]}") for seed, difficulty in _SAMPLED)


@pytest.mark.parametrize("subtype", sorted(COVERAGE))
def test_each_presentation_and_unit_subtype_applies_to_at_least_five_families(subtype: str) -> None:
    injector = REGISTRY[subtype]
    assert len(COVERAGE[subtype]) >= 5 and COVERAGE[subtype] <= set(FAMILY_REGISTRY)
    applies = {f for f in COVERAGE[subtype] if any(injector.applies(get_family(f), p) for p in _sampled(f))}
    assert applies == COVERAGE[subtype], sorted(COVERAGE[subtype] - applies)


@pytest.mark.parametrize("subtype", sorted(COVERAGE))
def test_each_family_of_a_subtype_yields_a_variant_the_verifier_labels_as_intended(subtype: str) -> None:
    injector = REGISTRY[subtype]
    for family_id in sorted(COVERAGE[subtype]):
        family = get_family(family_id)
        problem = next(p for p in _sampled(family_id) if injector.applies(family, p))
        v = inject(problem, subtype, np.random.default_rng(7))
        assert v is not None, (family_id, problem.id)
        assert v.error is not None and v.error.subtype == subtype
        verdict = verify(problem, v.steps)
        assert verdict.first_error_step == v.error.first_error_step, (family_id, [s.text for s in v.steps])
        if subtype == "unit_conversion":  # a wrong factor: the answer changes and the error is carried through
            assert not verdict.answer_correct and v.error.answer_changed and v.error.propagated
        else:  # right math, wrong unit / form / words, flagged on the edited line only
            assert verdict.answer_correct and all(verdict.local_valid) and all(verdict.global_correct)
            assert {kind for kind in verdict.presentation if kind} == {subtype}


def test_clean_solutions_of_the_new_unit_form_and_label_families_verify_without_presentation_faults() -> None:
    for family_id in sorted(set().union(*COVERAGE.values())):
        for problem in _sampled(family_id):
            verdict = verify(problem, problem.steps)
            assert verdict.fully_correct and not any(verdict.presentation), (family_id, problem.steps)


def test_units_follow_pi_and_square_or_cube_units_read_back() -> None:
    assert read_line("441π mm²") == read_line("441π mm^2")
    assert read_line("441π mm²").math == "441π" and read_line("441π mm²").unit == "mm²"
    assert read_line("(4096π)/3 in³").unit == "in³" and read_line("3√5 ft").unit == "ft"
    assert parse_step("(4096π)/3 mm³") == parse_step("(4096π)/3")


def test_a_figure_answer_carries_its_unit_and_a_wrong_one_is_flagged() -> None:
    problem = next(p for p in _sampled("solid.cylinder.volume_surface") if p.params["ask"] == "volume")
    unit = problem.params["answer_unit"]
    assert unit.endswith("³") and problem.steps[-1].text.endswith(" " + unit)
    number = read_line(problem.steps[-1].text).math
    verdict = verify(problem, _with_last_text(problem, f"{number} {unit[:-1]}²"))
    assert verdict.answer_correct and verdict.presentation[-1] == "incorrect_units"


def test_wrong_units_come_from_numbers_in_the_question_not_from_possessives() -> None:
    problem = next(p for p in _sampled("geometry.circle.area") if "'s" not in p.question_text)
    ball = dataclasses.replace(problem, question_text="A ball's shadow is a circle. " + problem.question_text)
    wrong = REGISTRY["incorrect_units"]._wrong_units(ball, problem.params["answer_unit"])
    assert "s" not in wrong and wrong[0] == problem.params["unit"]  # the length unit for an area: the usual slip


def test_probability_lines_are_labelled_with_their_event_and_read_back() -> None:
    assert read_line("P(Tennis | Boys) = 2/11").label == "P(Tennis | Boys)"
    assert read_line("RP = 27 mm") == read_line("RP = 27 mm") and read_line("RP = 27 mm").label == "RP"
    assert read_line("x = 27").label is None  # an equation in x is math, not a named side
    assert parse_step("P(neither red nor blue) = 19/39") == sympy.Rational(19, 39)
    family = get_family("probability.simple")
    for problem in _sampled("probability.simple"):
        label = read_line(problem.steps[-1].text).label
        assert f"{label} = ____" == family.fill_stem(problem.params)  # the line says what the question asks
        assert problem.params["answer_form"] == "fraction" and "simplest form" in problem.question_text


def test_contextual_swap_names_another_quantity_of_the_story_never_one_worth_the_same() -> None:
    for family_id in ("probability.simple", "probability.table.two_way", "statistics.pie_chart.reading",
                      "geometry.similar_triangles"):
        family = get_family(family_id)
        for problem in _sampled(family_id):
            v = inject(problem, "contextual_swap", np.random.default_rng(3))
            assert v is not None, (family_id, problem.id)
            k = v.error.first_error_step
            said = read_line(v.steps[k - 1].text).label
            vocab = family.vocabulary(problem.params)
            worth = {label_words(lb): val for lb, val in vocab.labels.items()}[label_words(said)]
            assert not same_value(worth, parse_step(problem.steps[k - 1].text)), (said, problem.steps[k - 1].text)


def test_a_pupil_who_stops_at_a_division_writes_the_unsimplified_fraction() -> None:
    problem = next(p for p in _sampled("probability.table.two_way") if p.steps[-2].text == "2 ÷ 22")
    v = inject(problem, "format_ignored", np.random.default_rng(0))
    assert v is not None and v.steps[-1].text == "P(Football | Girls) = 2/22"
    assert verify(problem, v.steps).presentation[-1] == "format_ignored"


@pytest.mark.parametrize(("family_id", "ask", "rule", "shown"), [
    ("solid.prism.volume_surface", "capacity", "litre_as_100_cm3", "÷ 100"),
    ("solid.prism.volume_surface", "capacity", "litres_multiplied", "× 1000"),
    ("geometry.circle.circumference_arc", "wheel", "metre_as_1000_cm", "÷ 1000"),
    ("geometry.circle.circumference_arc", "wheel", "metres_multiplied", "× 100"),
    ("geometry.polygon.area_perimeter", "area_m2", "square_metre_as_100_cm2", "÷ 100"),
])
def test_a_conversion_mal_rule_shows_the_wrong_factor_in_the_working(family_id: str, ask: str, rule: str,
                                                                     shown: str) -> None:
    family = get_family(family_id)
    problem = next(p for seed in range(40) for p in [family.build(np.random.default_rng(seed), difficulty="easy",
                                                                  question_type="free", problem_id="p")]
                   if p.params.get("ask") == ask)
    drafts = family.derive_mal(problem.params, rule)
    assert drafts is not None and drafts[0].rule == f"mal:{rule}" and drafts[0].text.endswith(shown)
    assert read_line(drafts[-1].text).unit == problem.params["answer_unit"]
    assert not same_value(parse_step(drafts[-1].text), family.target(problem.params))
