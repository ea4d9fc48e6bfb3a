"""Figure families (coordinate, statistics, probability, commonsense): labels, givens, roles, mal-rules, misreads."""

from __future__ import annotations

import numpy as np
import pytest

from synth.generators import get_family
from synth.generators.base import DIFFICULTIES, finalize
from synth.records import Problem
from synth.templating import _phrasings
from synth.verifier import parse_step, same_value, verify

FAMILIES = (
    "coordinate.slope.two_points", "coordinate.line.through_points", "coordinate.intercepts",
    "coordinate.graph.read_value", "statistics.mean.bar_chart", "statistics.median_mode.table",
    "statistics.pie_chart.reading", "statistics.line_chart.reading", "probability.table.two_way",
    "commonsense.number_line", "commonsense.clock.interval", "commonsense.counting.objects",
)
SEEDS = 12


def _problems(family_id: str, seeds: int = SEEDS) -> list[Problem]:
    family = get_family(family_id)
    return [family.build(np.random.default_rng(seed), difficulty=DIFFICULTIES[seed % 3], question_type="free",
                         problem_id=f"d{seed}") for seed in range(seeds)]


@pytest.mark.parametrize("family_id", FAMILIES)
def test_clean_solutions_verify_and_read_back(family_id: str) -> None:
    family = get_family(family_id)
    for p in _problems(family_id):
        assert 3 <= len(p.steps) <= 20, (p.question_text, [s.text for s in p.steps])
        assert verify(p, p.steps, family=family).fully_correct, [s.text for s in p.steps]
        for step in p.steps:
            assert same_value(parse_step(step.text), parse_step(step.value)), step.text


@pytest.mark.parametrize("family_id", FAMILIES)
def test_every_problem_has_a_figure_whose_elements_are_unique(family_id: str) -> None:
    family = get_family(family_id)
    for p in _problems(family_id):
        assert p.figure is not None and p.figure.kind == family.figure_kind
        ids = [e["id"] for e in p.figure.spec["elements"]]
        assert len(ids) == len(set(ids))
        assert len(p.figure.spec["size_in"]) == 2


@pytest.mark.parametrize("family_id", FAMILIES)
def test_givens_point_at_real_figure_elements(family_id: str) -> None:
    for p in _problems(family_id):
        ids = {e["id"] for e in p.figure.spec["elements"]}
        assert p.givens
        for given in p.givens:
            assert given.source == "text" or given.source.startswith("figure:"), given
            if given.source != "text":
                assert given.source.removeprefix("figure:") in ids, (given, sorted(ids))


@pytest.mark.parametrize("family_id", FAMILIES)
def test_both_image_roles_occur_and_match_the_givens(family_id: str) -> None:
    problems = _problems(family_id, 30)
    assert {p.image_role for p in problems} == {"required", "useful"}
    for p in problems:
        figure_sourced = [g for g in p.givens if g.source.startswith("figure:")]
        assert bool(figure_sourced) == (p.image_role == "required")


def _all_phrasings(family_id: str, params: dict) -> list[str]:
    ctx = get_family(family_id).question_context(params)
    return [" ".join(t.render(**ctx).split()) for t in _phrasings(family_id)]


@pytest.mark.parametrize("family_id", FAMILIES)
def test_required_questions_do_not_state_what_the_figure_shows(family_id: str) -> None:
    # Misreading a figure value changes the answer; for a required item it must not change the
    # question (in any phrasing), so the text alone cannot give the answer.
    family = get_family(family_id)
    checked = 0
    for p in _problems(family_id, 30):
        if p.image_role == "useful":
            # A useful item's text says more than the same item's required text does.
            required = _all_phrasings(family_id, {**p.params, "image_role": "required"})
            assert all(len(u) > len(r) for u, r in zip(_all_phrasings(family_id, p.params), required))
            continue
        for reading in family.figure_readings(p.params):
            for wrong in reading.misreads:
                misread = reading.apply(p.params, wrong)
                assert _all_phrasings(family_id, misread) == _all_phrasings(family_id, p.params), reading
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("family_id", FAMILIES)
def test_figure_misreads_give_a_wrong_answer_from_the_first_step(family_id: str) -> None:
    family = get_family(family_id)
    kinds = set()
    for p in _problems(family_id):
        readings = family.figure_readings(p.params)
        assert readings, p.params
        for reading in readings:
            kinds.add(reading.kind)
            assert reading.element in {e["id"] for e in p.figure.spec["elements"]}
            for wrong in reading.misreads:
                steps = family.derive(reading.apply(p.params, wrong))
                verdict = verify(p, finalize(steps), family=family)
                assert not verdict.answer_correct and verdict.first_error_step == 1, (reading, wrong)
                assert all(verdict.parses) and all(verdict.local_valid[1:])
    assert kinds <= {"misread_value", "misread_label", "misread_scale", "miscount", "misread_relation"}


@pytest.mark.parametrize("family_id", FAMILIES)
def test_mal_rules_change_the_method_at_one_step_and_carry_it_forward(family_id: str) -> None:
    family = get_family(family_id)
    assert len(family.malrules) >= 2
    used = {rule.id: 0 for rule in family.malrules}
    for p in _problems(family_id, 30):
        for rule in family.malrules:
            drafts = family.derive_mal(p.params, rule.id)
            if drafts is None:
                continue
            used[rule.id] += 1
            steps = finalize(drafts)
            verdict = verify(p, steps, family=family)
            first_change = next(i for i, (a, b) in enumerate(zip(steps, p.steps), start=1) if a.text != b.text)
            assert verdict.first_error_step == first_change, (rule.id, [s.text for s in steps])
            assert not verdict.answer_correct and verdict.propagated
            assert all(verdict.parses) and all(verdict.local_valid[first_change:])
    assert all(used.values()), used


def test_slope_mal_rules_show_the_textbook_mistakes() -> None:
    family = get_family("coordinate.slope.two_points")
    params = {"A": [1, 3], "B": [4, 9], "scale": 1, "ask": "slope", "image_role": "required"}
    assert [s.text for s in family.derive(params)] == ["(9 − 3)/(4 − 1)", "6/(4 − 1)", "6/3", "2"]
    assert family.derive_mal(params, "run_over_rise")[0].text == "(4 − 1)/(9 − 3)"
    assert family.derive_mal(params, "mixed_order_subtraction")[-1].text == "−2"


def test_line_equation_is_tidied_from_point_gradient_form() -> None:
    family = get_family("coordinate.line.through_points")
    params = {"A": [2, 3], "B": [4, 9], "scale": 1, "image_role": "required"}
    texts = [s.text for s in family.derive(params)]
    assert texts[0] == "y − 3 = (9 − 3)/(4 − 2) × (x − 2)"
    assert texts[-3:] == ["y − 3 = 3x − 6", "y = 3x − 6 + 3", "y = 3x − 3"]
    assert family.answer_text(params, family.target(params))[0] == "y = 3x − 3"


def test_clock_interval_counts_minutes_across_noon() -> None:
    family = get_family("commonsense.clock.interval")
    params = {"h1": 10, "m1": 45, "h2": 14, "m2": 20, "pm": True, "context": 0, "image_role": "required"}
    assert family.target(params) == 215
    assert family.derive(params)[0].text == "((2 + 12) × 60 + 20) − (10 × 60 + 45)"
    wrong = family.derive_mal(params, "decimal_time")
    assert wrong[-1].text == str(1420 - 1045)  # 14:20 − 10:45 done as 1420 − 1045


def test_median_without_sorting_uses_the_table_order() -> None:
    family = get_family("statistics.median_mode.table")
    params = {"kind": "list", "data": [9, 2, 1, 8, 4, 7], "context": 0, "ask": "median", "image_role": "required"}
    assert [s.text for s in family.derive(params)] == ["(4 + 7) ÷ 2", "11 ÷ 2", "5.5"]
    assert [s.text for s in family.derive_mal(params, "median_without_sorting")] == ["(1 + 8) ÷ 2", "9 ÷ 2", "4.5"]


def test_figure_spec_holds_the_true_values() -> None:
    bar = _problems("statistics.mean.bar_chart", 3)[2]
    drawn = [e["value"] for e in bar.figure.spec["elements"] if e["type"] == "bar"]
    assert drawn == bar.params["values"]
    clock = _problems("commonsense.clock.interval", 3)[1]
    hands = {e["id"]: (e["hour"], e["minute"]) for e in clock.figure.spec["elements"] if e["type"] == "hand"}
    assert hands["hand_minute_1"] == (clock.params["h1"] % 12 or 12, clock.params["m1"])
    grid = _problems("coordinate.slope.two_points", 3)[0]
    points = {e["id"]: [e["x"], e["y"]] for e in grid.figure.spec["elements"] if e["type"] == "point"}
    assert points == {"point_A": grid.params["A"], "point_B": grid.params["B"]}


def test_a_useful_line_graph_s_text_says_which_value_is_at_which_time() -> None:
    # Seed 6021023's seeing_is_solving_like-000030: "(The values are 20 litres and 80 litres.)", solvable without
    # the image only by assuming which is which (Seeing Is Solving's codebook: no unlabelled correspondences).
    from tests.generators._fixed import problem_with

    p = problem_with("statistics.line_chart.reading", {"values": [100, 20, 100, 110, 80], "a": 1, "b": 4, "step": 10,
                                                        "context": 3, "ask": "percent", "image_role": "useful"})
    assert "20 litres at 2 pm and 80 litres at 5 pm" in p.question_text
