"""Figures read against a key or a header's unit: coin stacks, enlargements on squared paper, tables in thousands."""

from __future__ import annotations

import numpy as np
import pytest

from perturb.reasoning import REGISTRY as INJECTORS
from perturb.reasoning import inject
from synth.generators import get_family
from synth.records import Problem
from synth.templating import _phrasings
from synth.verifier import verify
from tests.generators._fixed import elements, problem_with

COINS = {"ask": "volume", "given": "radius", "r": 12, "h": 24, "unit": "mm", "coin": 3, "coins": 8,
         "image_role": "required", "answer_unit": "mm³"}
GRID = {"level": "separate", "unit": "cm", "names": ["ABC", "DEF"], "small": [6, 8, 10], "k": "3", "pair": 1,
        "ask": 2, "direction": "up", "grid": 2, "q_from": 8, "q_to": 24, "q_known": 10, "image_role": "required",
        "answer_unit": "cm"}
VISITORS = {"kind": "list", "data": [31, 28, 40, 34, 32, 40, 30, 42], "context": 4, "ask": "median_minus_mode",
            "image_role": "required", "scale": 100}




def _wrong_and_verified(problem: Problem, kind: str, seed: int = 0):  # noqa: ANN202
    v = inject(problem, kind, np.random.default_rng(seed))
    assert v is not None and v.error is not None
    verdict = verify(problem, v.steps, family=get_family(problem.family))
    assert verdict.first_error_step == v.error.first_error_step and not verdict.answer_correct
    return v


# -- a stack of coins ------------------------------------------------------------------------------


def test_a_coin_stack_is_as_tall_as_the_coins_counted_times_the_key_coin() -> None:
    p = problem_with("solid.cylinder.volume_surface", COINS)
    assert [s.text for s in p.steps] == ["π × 12^2 × (8 × 3)", "π × 12^2 × 24", "π × 144 × 24", "3456π mm³"]
    assert p.answer_text == "3456π mm³"
    assert verify(p, p.steps, family=get_family(p.family)).answer_correct


def test_a_coin_stack_shows_the_coins_and_the_key_coin_but_no_height() -> None:
    p = problem_with("solid.cylinder.volume_surface", COINS)
    els = elements(p)
    assert els["coin_lines"]["count"] == 8 and els["coin_lines"]["type"] == "disc_lines"
    assert els["key_edge"]["text"] == "3 mm" and els["key_caption"]["text"] == "1 coin"
    assert els["radius"]["text"] == "12 mm" and "height" not in els
    assert "stack of" in p.question_text and "coin" in p.question_text and "24" not in p.question_text


def test_coin_stacks_need_their_figure_and_appear_only_for_easy_and_medium_volumes() -> None:
    family = get_family("solid.cylinder.volume_surface")
    sampled = [(d, family.sample(np.random.default_rng(s), d)) for s in range(60) for d in ("easy", "medium", "hard")]
    stacks = [(d, p) for d, p in sampled if "coin" in p]
    assert {d for d, _ in stacks} == {"easy", "medium"}
    assert all(p["ask"] == "volume" and p["image_role"] == "required" and p["unit"] == "mm" for _, p in stacks)
    for _, p in stacks:
        r = p["r"] if p["given"] == "radius" else p["d"] // 2
        assert p["h"] == p["coins"] * p["coin"] and r <= p["h"] <= 4 * r


def test_ignoring_the_key_coin_takes_the_count_as_the_height() -> None:
    p = problem_with("solid.cylinder.volume_surface", COINS)
    v = _wrong_and_verified(p, "misread_scale")
    assert [s.text for s in v.steps] == ["π × 12^2 × 8", "π × 144 × 8", "1152π mm³"]
    assert v.error.edit["changes"] == [{"param": "coin", "from": 3, "to": 1}]
    assert elements(p)["key_edge"]["value"] == 3  # the key still shows the truth


def test_a_coin_miscount_is_one_coin_off_and_carried_to_the_volume() -> None:
    p = problem_with("solid.cylinder.volume_surface", COINS)
    for seed in range(4):
        v = _wrong_and_verified(p, "miscount", seed)
        (change,) = v.error.edit["changes"]
        assert change["param"] == "coins" and change["to"] in (7, 9)
        assert v.steps[0].text == f"π × 12^2 × ({change['to']} × 3)"
    assert elements(p)["coin_lines"]["count"] == 8


# -- an enlargement on squared paper -------------------------------------------------------------------


def test_an_enlargement_on_squared_paper_has_every_vertex_on_a_grid_point() -> None:
    p = problem_with("geometry.similar_triangles", GRID)
    g = GRID["grid"]
    origin = p.figure.spec["points"]["A"]
    assert all((x - origin[0]) % g == 0 and (y - origin[1]) % g == 0 for x, y in p.figure.spec["points"].values())
    els = elements(p)
    assert els["grid_key"]["text"] == "1 square = 2 cm"
    # The paired legs are counted (4 and 12 squares), the small hypotenuse printed, the large one asked.
    assert els["side_BC"]["squares"] == 4 and els["side_EF"]["squares"] == 12
    assert "text" not in els["side_BC"] and "text" not in els["side_EF"]
    assert els["side_CA"]["text"] == "10 cm" and els["side_FD"]["text"] == "x"
    assert p.answer_text == "30 cm" and "squared paper" in p.question_text


def test_a_leg_miscounted_by_one_square_changes_the_scale_factor() -> None:
    p = problem_with("geometry.similar_triangles", GRID)
    for seed in range(4):
        v = _wrong_and_verified(p, "miscount", seed)
        (change,) = v.error.edit["changes"]
        assert change["param"] in ("q_from", "q_to") and abs(change["to"] - change["from"]) == GRID["grid"]


def test_ignoring_the_grid_key_is_no_error_for_a_ratio_of_counted_legs() -> None:
    # Both legs scale alike, so the scale factor and x are unchanged: no misread_scale is offered.
    family = get_family("geometry.similar_triangles")
    p = problem_with(family.id, GRID)
    assert not INJECTORS["misread_scale"].applies(family, p)
    assert {r.kind for r in family.figure_readings(p.params)} == {"misread_value", "miscount"}


# -- a table whose header states its unit ------------------------------------------------------------


def test_a_table_in_hundreds_is_answered_in_visitors() -> None:
    p = problem_with("statistics.median_mode.table", VISITORS)
    assert p.figure.spec["rows"][0] == ["Week", "Visitors (hundreds)"]
    assert [s.text for s in p.steps][0] == "((32 + 34) ÷ 2 − 40) × 100"
    assert p.answer_text == "−700"
    assert "number of visitors" in p.question_text and "hundred" not in p.question_text


def test_overlooking_the_header_unit_leaves_out_the_multiplication() -> None:
    p = problem_with("statistics.median_mode.table", VISITORS)
    v = _wrong_and_verified(p, "misread_scale")
    assert [s.text for s in v.steps] == ["(32 + 34) ÷ 2 − 40", "66 ÷ 2 − 40", "33 − 40", "−7"]
    assert v.error.edit["element"] == "cell_0_1" and v.error.edit["changes"] == [
        {"param": "scale", "from": 100, "to": 1}]


@pytest.mark.parametrize("image_role", ["required", "useful"])
def test_the_question_is_the_same_whatever_scale_the_header_is_read_as(image_role: str) -> None:
    family = get_family("statistics.median_mode.table")
    true, read = {**VISITORS, "image_role": image_role}, {**VISITORS, "image_role": image_role, "scale": 1}
    for template in _phrasings(family.id):
        assert template.render(**family.question_context(true)) == template.render(**family.question_context(read))


def test_only_listed_tables_carry_a_header_unit() -> None:
    family = get_family("statistics.median_mode.table")
    sampled = [family.sample(np.random.default_rng(s), d) for s in range(60) for d in ("easy", "medium", "hard")]
    scaled = [p for p in sampled if "scale" in p]
    assert scaled and all(p["kind"] == "list" and p["scale"] in (100, 1000) for p in scaled)
    # a frequency table's mean and median do not change with a common unit, so it never has one
    assert not any("scale" in p for p in sampled if p["kind"] == "frequency")
