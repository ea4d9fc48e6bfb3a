"""Figures read by counting or against a scale: cuboids built from cubes, gradient step triangles, y axes in 2s."""

from __future__ import annotations

import numpy as np
import pytest

from perturb.reasoning import inject
from synth.generators import get_family
from synth.verifier import verify
from tests.generators._fixed import elements, problem_with

CUBES = {"shape": "cuboid", "ask": "volume", "l": 10, "w": 4, "h": 6, "unit": "cm", "cube": 2, "nl": 5, "nw": 2,
         "nh": 3, "image_role": "required", "answer_unit": "cm³"}




# -- a cuboid built from cubes ------------------------------------------------------------------------


def test_a_cube_stack_is_solved_by_scaling_each_count_by_the_key_cube() -> None:
    p = problem_with("solid.prism.volume_surface", CUBES)
    assert [s.text for s in p.steps] == ["(5 × 2) × (2 × 2) × (3 × 2)", "10 × (2 × 2) × (3 × 2)",
                                         "10 × 4 × (3 × 2)", "10 × 4 × 6", "40 × 6", "240 cm³"]
    assert verify(p, p.steps, family=get_family(p.family)).answer_correct


def test_a_cube_stack_shows_counts_and_the_key_but_no_edge_lengths() -> None:
    els = elements(problem_with("solid.prism.volume_surface", CUBES))
    assert els["cubes_front"]["divisions"] == [5, 3] and els["cubes_top"]["divisions"] == [5, 2]
    assert els["cubes_right"]["divisions"] == [2, 3]
    assert els["key_edge"]["text"] == "2 cm" and els["key_caption"]["text"] == "1 cube"
    assert not any("text" in els[e] for e in ("edge_length", "edge_width", "edge_height"))


def test_cube_stacks_need_their_figure_and_appear_only_for_easy_volumes() -> None:
    family = get_family("solid.prism.volume_surface")
    stacks = [(d, family.sample(np.random.default_rng(s), d)) for s in range(60) for d in ("easy", "medium", "hard")]
    stacks = [(d, p) for d, p in stacks if "cube" in p]
    assert stacks and all(d == "easy" and p["ask"] == "volume" and p["image_role"] == "required" for d, p in stacks)
    assert all(p["l"] == p["nl"] * p["cube"] and p["h"] == p["nh"] * p["cube"] for _, p in stacks)


def test_a_cube_miscount_changes_one_count_by_one_and_the_figure_keeps_the_truth() -> None:
    p = problem_with("solid.prism.volume_surface", CUBES)
    v = inject(p, "miscount", np.random.default_rng(0))
    assert v is not None and v.error is not None
    (change,) = v.error.edit["changes"]
    assert change["param"] in ("nl", "nw", "nh") and abs(change["to"] - change["from"]) == 1
    assert v.error.first_error_step == 1 and v.error.answer_changed
    assert elements(p)["cubes_front"]["divisions"] == [5, 3]


def test_ignoring_the_key_cube_counts_cubes_as_lengths() -> None:
    p = problem_with("solid.prism.volume_surface", CUBES)
    v = inject(p, "misread_scale", np.random.default_rng(0))
    assert v is not None
    assert [s.text for s in v.steps] == ["5 × 2 × 3", "10 × 3", "30 cm³"]
    assert v.error.edit["changes"] == [{"param": "cube", "from": 2, "to": 1}]
    verdict = verify(p, v.steps, family=get_family(p.family))
    assert verdict.first_error_step == 1 and not verdict.answer_correct


# -- gradient step triangles ------------------------------------------------------------------------


def test_a_step_triangle_runs_across_from_a_then_up_or_down_to_b() -> None:
    params = {"A": [11, 1], "B": [7, 9], "scale": 1, "image_role": "required", "rise": 8, "run": 4}
    els = elements(problem_with("coordinate.line.through_points", params))
    assert els["step_run"]["from"] == [11, 1] and els["step_run"]["to"] == [7, 1]
    assert els["step_rise"]["from"] == [7, 1] and els["step_rise"]["to"] == [7, 9]


def test_counted_squares_give_a_negative_gradient_for_a_falling_line() -> None:
    params = {"A": [11, 1], "B": [7, 9], "scale": 1, "image_role": "required", "rise": 8, "run": 4}
    p = problem_with("coordinate.line.through_points", params)
    assert p.steps[0].text == "y − 1 = −8/4 × (x − 11)" and p.answer_text == "y = −2x + 23"


def test_a_miscounted_run_is_carried_into_the_equation_and_verified() -> None:
    params = {"A": [11, 1], "B": [7, 9], "scale": 1, "image_role": "required", "rise": 8, "run": 4}
    p = problem_with("coordinate.line.through_points", params)
    for seed in range(8):
        v = inject(p, "miscount", np.random.default_rng(seed))
        assert v is not None
        (change,) = v.error.edit["changes"]
        assert change["param"] in ("rise", "run") and abs(change["to"] - change["from"]) == 1
        assert v.error.edit["element"] == f"step_{change['param']}"
        assert verify(p, v.steps, family=get_family(p.family)).first_error_step == v.error.first_error_step == 1


def test_a_misread_point_leaves_the_counted_triangle_and_the_drawn_line_s_direction() -> None:
    # Seed 6021023's mmerror_like-000209-e1: A misread from (2, 12) to (2, 10), level with B, took its gradient's
    # sign from the misread points (-1/3) while the squares were counted on the drawn triangle (1 up, 3 across):
    # a working neither reading gives, labelled "worked correctly from the misread value".
    slope = {"A": [2, 12], "B": [-4, 10], "scale": 2, "ask": "perpendicular", "image_role": "required",
             "rise": 1, "run": 3, "falls": False}
    p = problem_with("coordinate.slope.two_points", slope)
    # Counting squares, a point's coordinates do not enter the gradient: misreading one is no error here.
    assert {r.param for r in get_family(p.family).figure_readings(slope) if r.misreads} == {"rise", "run"}
    for subtype in ("misread_value", "misread_relation", "misread_label", "misread_scale"):
        assert inject(p, subtype, np.random.default_rng(0)) is None
    # Where a point enters the working beside the counted gradient (the intercept from A), the misread
    # point is carried and the gradient stays the drawn one (seed 6021023's mmerror_like-000006-e1).
    intercept = {"A": [8, -3], "B": [-8, -5], "scale": 1, "ask": "y", "image_role": "required", "rise": 2, "run": 16,
                 "falls": False}
    q = problem_with("coordinate.intercepts", intercept)
    v = inject(q, "misread_relation", np.random.default_rng(0))
    assert v is not None and v.error.edit["to"] == [-3, 8]
    assert "2/16" in v.steps[0].text and "−2/16" not in v.steps[0].text
    assert verify(q, v.steps, family=get_family(q.family)).first_error_step == v.error.first_error_step == 1


def test_squares_over_squares_is_the_gradient_on_a_grid_in_twos() -> None:
    family = get_family("coordinate.slope.two_points")
    counted = [p for p in (family.sample(np.random.default_rng(s), "hard") for s in range(40)) if "rise" in p]
    assert counted
    for params in counted:
        (x1, y1), (x2, y2) = params["A"], params["B"]
        assert params["rise"] == abs(y2 - y1) // 2 and params["run"] == abs(x2 - x1) // 2
        assert family.answer_of(family.derive(params)[-1].value) == family.target(params)


@pytest.mark.parametrize("family_id", ["coordinate.slope.two_points", "coordinate.line.through_points",
                                       "coordinate.intercepts"])
def test_step_triangles_are_drawn_only_when_the_figure_is_required(family_id: str) -> None:
    family = get_family(family_id)
    sampled = [family.sample(np.random.default_rng(s), d) for s in range(30) for d in ("easy", "medium", "hard")]
    counted = [p for p in sampled if "rise" in p]
    assert counted and all(p["image_role"] == "required" for p in counted)
    assert len(counted) < len(sampled) // 2  # a share: reading coordinates stays the usual method


# -- a y axis counting in 2s --------------------------------------------------------------------------

GRAPH = {"coeffs": [0, -4, -8], "xs": [-4, -3], "ys": [8, 4], "ks": [3, 1], "image_role": "required", "y_step": 2}


def test_a_y_axis_in_twos_is_recorded_in_the_figure() -> None:
    p = problem_with("coordinate.graph.read_value", GRAPH)
    spec = p.figure.spec
    assert spec["grid_step"] == 1 and spec["y_grid_step"] == 2 and spec["y_range"][0] % 2 == spec["y_range"][1] % 2 == 0


def test_counting_squares_on_a_y_axis_in_twos_halves_every_value() -> None:
    p = problem_with("coordinate.graph.read_value", GRAPH)
    v = inject(p, "misread_scale", np.random.default_rng(0))
    assert v is not None and v.error.edit["to"] == [4, 2]
    assert v.steps[0].text == "3 × 4 + 2"
    assert verify(p, v.steps, family=get_family(p.family)).first_error_step == 1


@pytest.mark.parametrize("family_id", ["coordinate.graph.read_value", "coordinate.slope.two_points",
                                       "coordinate.line.through_points", "coordinate.intercepts"])
def test_no_grid_misread_is_offered_under_two_kinds(family_id: str) -> None:
    family = get_family(family_id)
    for seed in range(30):
        params = family.sample(np.random.default_rng(seed), ("easy", "medium", "hard")[seed % 3])
        misreads = [(r.params, repr(m)) for r in family.figure_readings(params) for m in r.misreads]
        assert len(misreads) == len(set(misreads)), params
