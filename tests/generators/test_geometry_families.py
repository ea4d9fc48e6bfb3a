"""Geometry, solid and right-triangle families: verified solutions, honest givens, image roles, mal-rules, misreads."""

from __future__ import annotations

import re

import numpy as np
import pytest

from synth.generators import get_family
from synth.generators.base import DIFFICULTIES, finalize
from synth.records import Problem
from synth.verifier import parse_step, same_value, verify

FAMILIES = (
    "geometry.triangle.angle_sum", "geometry.pythagoras", "geometry.similar_triangles", "geometry.circle.area",
    "geometry.circle.circumference_arc", "geometry.polygon.area_perimeter", "geometry.angles.parallel_lines",
    "solid.prism.volume_surface", "solid.cylinder.volume_surface", "solid.cone.volume",
    "solid.sphere.volume_surface", "trig.right_triangle.ratios",
)  # fmt: skip
SEEDS = 15


def _problems(family_id: str, seeds: int = SEEDS) -> list[Problem]:
    family = get_family(family_id)
    return [family.build(np.random.default_rng(seed), difficulty=DIFFICULTIES[seed % 3], question_type="free",
                         problem_id=f"g{seed}") for seed in range(seeds)]


def _elements(problem: Problem) -> dict[str, dict]:
    assert problem.figure is not None
    return {e["id"]: e for e in problem.figure.spec["elements"]}


@pytest.mark.parametrize("family_id", FAMILIES)
def test_clean_solutions_verify_and_parse_back(family_id: str) -> None:
    family = get_family(family_id)
    for problem in _problems(family_id):
        verdict = verify(problem, problem.steps, family=family)
        assert verdict.fully_correct, (problem.params, [s.text for s in problem.steps])
        assert 3 <= len(problem.steps) <= 20, [s.text for s in problem.steps]
        for step in problem.steps:
            assert same_value(parse_step(step.text), parse_step(step.value)), step


@pytest.mark.parametrize("family_id", FAMILIES)
def test_difficulty_levels_differ_in_steps_or_concept(family_id: str) -> None:
    family = get_family(family_id)

    def steps(level: str) -> list[int]:
        return [len(family.derive(family.sample(np.random.default_rng(s), level))) for s in range(20)]

    def rules(level: str) -> set[str]:
        return {family.derive(family.sample(np.random.default_rng(s), level))[0].rule for s in range(20)}

    easy, hard = steps("easy"), steps("hard")
    assert sum(hard) > sum(easy) or rules("hard").isdisjoint(rules("easy"))


@pytest.mark.parametrize("family_id", FAMILIES)
def test_every_figure_given_points_at_an_element_holding_its_true_value(family_id: str) -> None:
    for problem in _problems(family_id):
        elements = _elements(problem)
        assert problem.givens
        for given in problem.givens:
            if problem.image_role == "useful":
                assert given.source == "text"
                continue
            kind, _, element_id = given.source.partition(":")
            assert kind == "figure" and element_id in elements, (given, sorted(elements))
            if "value" in elements[element_id]:
                assert str(elements[element_id]["value"]) == given.value


@pytest.mark.parametrize("family_id", FAMILIES)
def test_required_items_leave_the_needed_values_out_of_the_text(family_id: str) -> None:
    seen_roles = set()
    for problem in _problems(family_id, 40):
        seen_roles.add(problem.image_role)
        for given in problem.givens:
            stated = re.search(rf"(?<![\w.]){re.escape(given.value)}(?![\w.])", problem.question_text)
            if problem.image_role == "required":
                assert stated is None, (given, problem.question_text)
            else:
                assert stated is not None, (given, problem.question_text)
    assert seen_roles == {"required", "useful"}


@pytest.mark.parametrize("family_id", FAMILIES)
def test_each_malrule_gives_a_wrong_answer_first_wrong_at_the_misapplied_step(family_id: str) -> None:
    family = get_family(family_id)
    used = set()
    for problem in _problems(family_id, 30):
        for rule in family.malrules:
            drafts = family.derive_mal(problem.params, rule.id)
            if drafts is None:
                continue
            used.add(rule.id)
            verdict = verify(problem, finalize(drafts), family=family)
            intended = next(i for i, d in enumerate(drafts, start=1) if d.rule.startswith("mal:"))
            assert all(verdict.parses), [d.text for d in drafts]
            assert verdict.first_error_step == intended, (rule.id, [d.text for d in drafts])
            assert not verdict.answer_correct and verdict.propagated
    assert used == {r.id for r in family.malrules}, f"mal-rules that never apply: {set(family.malrules) - used}"


@pytest.mark.parametrize("family_id", FAMILIES)
def test_figure_misreads_change_the_answer_from_the_first_step(family_id: str) -> None:
    family = get_family(family_id)
    found = 0
    for problem in _problems(family_id, 18):
        readings = family.figure_readings(problem.params)
        if problem.image_role != "required":
            assert readings == ()
            continue
        elements = _elements(problem)
        for reading in readings:
            assert reading.element in elements
            for wrong in reading.misreads:
                drafts = family.derive(reading.apply(problem.params, wrong))
                verdict = verify(problem, finalize(drafts), family=family)
                assert verdict.first_error_step == 1 and not verdict.answer_correct, (reading, wrong)
                found += 1
    assert found > 0


def test_angle_sum_uses_180_and_the_360_malrule_shows_it() -> None:
    family = get_family("geometry.triangle.angle_sum")
    params = {"level": "two_angles", "names": "ABC", "a": 50, "b": 60, "image_role": "useful"}
    assert [s.text for s in family.derive(params)] == ["180 − (50 + 60)", "180 − 110", "70"]
    assert [s.text for s in family.derive_mal(params, "angle_sum_360")] == ["360 − (50 + 60)", "360 − 110", "250"]


def test_circle_area_stays_exact_in_pi_and_the_circumference_malrule_uses_2_pi_r() -> None:
    family = get_family("geometry.circle.area")
    params = {"shape": "circle", "given": "radius", "r": 5, "unit": "cm", "image_role": "useful"}
    assert [s.text for s in family.derive(params)] == ["π × 5^2", "π × 25", "25π"]
    assert family.derive_mal(params, "area_as_circumference")[0].text == "2π × 5"
    assert family.answer_text(params, family.target(params))[0] == "25π cm²"


def test_pythagoras_leg_subtracts_and_the_malrule_adds() -> None:
    family = get_family("geometry.pythagoras")
    params = {"names": "ABC", "unit": "cm", "flip": False, "find": "leg", "a": 5, "b": None, "c": 13,
              "image_role": "required"}
    assert [s.text for s in family.derive(params)][0] == "√(13^2 − 5^2)"
    assert family.derive(params)[-1].text == "12"
    assert family.derive_mal(params, "leg_by_adding")[0].text == "√(13^2 + 5^2)"


def test_trig_divides_by_a_surd_and_rationalises() -> None:
    family = get_family("trig.right_triangle.ratios")
    params = {"names": "ABC", "unit": "cm", "flip": False, "level": "side", "func": "cos", "angle": 30,
              "op": "divide", "known": 9, "known_side": "adj", "image_role": "useful"}
    assert [s.text for s in family.derive(params)] == ["9 ÷ cos 30°", "9 ÷ (√3/2)", "18/√3", "(18√3)/3", "6√3"]
    assert [s.text for s in family.derive_mal(params, "ratio_swap")][:2] == ["9 ÷ sin 30°", "9 ÷ (1/2)"]


def test_cone_without_a_third_is_the_cylinder_volume() -> None:
    family = get_family("solid.cone.volume")
    params = {"given": "radius", "r": 3, "h": 4, "slant": None, "unit": "cm", "image_role": "useful"}
    assert family.derive(params)[-1].text == "12π"
    assert family.derive_mal(params, "cone_without_third")[-1].text == "36π"


# -- squared paper, tick marks and rings: the figure elements the visual misreads read -----------------

GRIDDED = ("geometry.polygon.area_perimeter", "geometry.pythagoras", "geometry.circle.area",
           "geometry.circle.circumference_arc")


def _readings(family_id: str, params: dict) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in get_family(family_id).figure_readings(params):
        out.setdefault(r.kind, []).append(r)
    return out


@pytest.mark.parametrize("family_id", GRIDDED)
def test_grid_items_give_lengths_only_by_squares_and_a_key(family_id: str) -> None:
    family = get_family(family_id)
    gridded = [p for p in _problems(family_id, 30) if p.params.get("grid")]
    assert gridded, "no problem on squared paper in 30 seeds"
    for problem in gridded:
        k, elements = problem.params["grid"], _elements(problem)
        assert elements["grid_key"]["text"] == f"1 square = {k} {problem.params['unit']}"
        counted = [q for q in family.quantities(problem.params) if q.on_grid]
        assert counted
        for q in counted:
            assert problem.params[q.param] % k == 0
            # Nothing printed: the side shows its number of squares, which the key turns into the length.
            assert "text" not in elements[q.element] and "value" not in elements[q.element]
            assert elements[q.element]["squares"] * k == problem.params[q.param]


def test_a_grid_key_ignored_counts_squares_and_a_miscount_is_one_square_out() -> None:
    family = get_family("geometry.polygon.area_perimeter")
    params = {"shape": "rectangle", "l": 21, "w": 9, "unit": "cm", "grid": 3, "image_role": "required",
              "answer_unit": "cm"}
    readings = _readings(family.id, params)
    assert set(readings) == {"miscount", "misread_scale"}  # nothing printed, so no value or label misread
    (scale,) = readings["misread_scale"]
    assert scale.element == "grid_key" and scale.misreads == ((1, 7, 3),)
    assert [s.text for s in family.derive(scale.apply(params, scale.misreads[0]))][0] == "2 × (7 + 3)"
    assert {r.element: r.misreads for r in readings["miscount"]} == {"side_AB": (18, 24), "side_BC": (6, 12)}


def test_the_isosceles_ticks_read_as_pairing_the_base_give_the_base_twice() -> None:
    family = get_family("geometry.polygon.area_perimeter")
    params = {"shape": "triangle_perimeter", "a": 10, "b": 10, "c": 16, "unit": "ft", "isosceles": True,
              "image_role": "required", "answer_unit": "ft"}
    elements = {e["id"]: e for e in family.figure(params).spec["elements"]}
    assert not {"text", "value"} & set(elements["side_CA"]) and {"tick_BC", "tick_CA"} <= set(elements)
    readings = _readings(family.id, params)
    (relation,) = readings["misread_relation"]
    assert relation.element == "tick_CA" and relation.misreads == (16,)
    assert family.derive(relation.apply(params, 16))[0].text == "16 + 10 + 16"
    # A misread of BC's label carries to CA, which the ticks make equal to it.
    assert all(len(set(m)) == 1 for r in readings["misread_value"] if r.param == "a" for m in r.misreads)


def test_the_outer_radius_labelled_in_the_ring_is_read_as_the_ring_width() -> None:
    family = get_family("geometry.circle.area")
    params = {"shape": "annulus", "R": 18, "r": 6, "unit": "cm", "turn": 0, "image_role": "required",
              "answer_unit": "cm²"}
    (relation,) = _readings(family.id, params)["misread_relation"]
    assert relation.param == "R" and relation.misreads == (24,)
    label = next(e for e in family.figure(params).spec["elements"] if e["id"] == "radius_R")
    assert label["text_at"] > params["r"] / params["R"]  # the label sits on the ring, not inside the hole


def test_a_circles_radius_taken_for_a_diameter_is_halved_but_a_sectors_is_not() -> None:
    family = get_family("geometry.circle.circumference_arc")
    circle = {"ask": "circumference", "given": "radius", "r": 15, "theta": 360, "unit": "cm", "turn": 0,
              "image_role": "required", "answer_unit": "cm"}
    (label,) = _readings(family.id, circle)["misread_label"]
    assert label.misreads == (("diameter", 15),)
    assert [s.text for s in family.derive(label.apply(circle, label.misreads[0]))][:2] == \
        ["2 × 3.14 × (15 ÷ 2)", "2 × 3.14 × 7.5"]
    sector = {**circle, "ask": "arc", "theta": 90}
    assert "misread_label" not in _readings(family.id, sector)


def test_an_angle_read_off_the_protractor_is_misread_on_its_other_scale_or_a_neighbouring_tick() -> None:
    family = get_family("geometry.triangle.angle_sum")
    params = {"level": "two_angles", "names": "ABC", "a": 65, "b": 50, "protractor": "inner",
              "image_role": "required"}
    elements = {e["id"]: e for e in family.figure(params).spec["elements"]}
    assert "angle_A" not in elements  # angle A is measured, not printed
    assert elements["protractor"]["value"] == 65 and elements["protractor"]["scale"] == "inner"
    readings = _readings(family.id, params)
    assert [r.misreads for r in readings["misread_scale"]] == [(115,)]
    assert (60, 70) in [r.misreads for r in readings["misread_value"] if r.element == "protractor"]
    assert "misread_label" not in readings  # a measured angle and a printed one are not two labels to swap
    wrong = readings["misread_scale"][0]
    assert [s.text for s in family.derive(wrong.apply(params, 115))][0] == "180 − (115 + 50)"


def test_a_protractor_on_the_parallel_lines_lies_along_the_line_of_the_measured_angle() -> None:
    family = get_family("geometry.angles.parallel_lines")
    params = {"relation": "co_interior", "phi": 80, "given_pos": [1, 1], "x_pos": [0, 2], "g": 100,
              "x_form": [2, 30], "g_form": None, "protractor": "outer", "image_role": "required"}
    elements = {e["id"]: e for e in family.figure(params).spec["elements"]}
    tool = elements["protractor"]
    # Angle 1 at F (upper left) runs from the ray to C round to the transversal's ray up to E.
    assert (tool["at"], tool["base"], tool["side"], tool["value"]) == ("F", "C", "E", 100)
    assert "text" not in elements["angle_given"] and "value" not in elements["angle_given"]  # not printed
    readings = _readings(family.id, params)
    assert [r.misreads for r in readings["misread_scale"]] == [(80,)]
    assert family.derive(readings["misread_scale"][0].apply(params, 80))[0].text == "2x + 30 + 80 = 180"
