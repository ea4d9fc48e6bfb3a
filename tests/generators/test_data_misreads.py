"""Visual misreads of the data and everyday figures: each one a mistake a pupil makes on what the figure shows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from perturb.reasoning import inject
from synth.generators import get_family
from synth.generators.base import DIFFICULTIES, Reading
from synth.records import Problem
from synth.verifier import verify


def _readings(family_id: str, params: dict[str, Any], kind: str) -> list[Reading]:
    return [r for r in get_family(family_id).figure_readings(params) if r.kind == kind]


def _build(family_id: str, seed: int, difficulty: str) -> Problem:
    return get_family(family_id).build(np.random.default_rng(seed), difficulty=difficulty, question_type="free",
                                       problem_id=f"m{seed}")


def _first(family_id: str, kind: str, difficulties: tuple[str, ...] = DIFFICULTIES) -> Problem:
    family = get_family(family_id)
    for seed in range(60):
        for difficulty in difficulties:
            p = _build(family_id, seed, difficulty)
            if _readings(family_id, p.params, kind):
                return p
    raise AssertionError(f"no {kind} misread on 60 seeds of {family_id}: {family.id}")


# -- clocks -----------------------------------------------------------------------------------------


def test_clock_minutes_past_the_half_hour_are_counted_back_from_the_twelve() -> None:
    params = {"h1": 4, "m1": 40, "h2": 6, "m2": 10, "pm": False, "context": 0, "image_role": "required"}
    (reading,) = _readings("commonsense.clock.interval", params, "misread_relation")
    assert reading.param == "m1" and reading.element == "hand_minute_1" and reading.misreads == (20,)
    family = get_family("commonsense.clock.interval")
    assert "4 × 60 + 20" in family.derive({**params, "m1": 20})[0].text


def test_clock_minutes_before_thirty_five_past_are_not_counted_back() -> None:
    params = {"h1": 4, "m1": 31, "h2": 6, "m2": 10, "pm": False, "context": 0, "image_role": "required"}
    assert _readings("commonsense.clock.interval", params, "misread_relation") == []


def test_clock_minutes_counted_back_are_not_offered_when_the_clocks_would_read_out_of_order() -> None:
    # 9:05 to 9:45 read as 9:05 to 9:15 is still in order; 9:40 to 9:55 read as 9:40 to 9:05 is not.
    ok = {"h1": 9, "m1": 5, "h2": 9, "m2": 45, "pm": False, "context": 0, "image_role": "required"}
    bad = {"h1": 9, "m1": 40, "h2": 9, "m2": 55, "pm": False, "context": 0, "image_role": "required"}
    assert [r.param for r in _readings("commonsense.clock.interval", ok, "misread_relation")] == ["m2"]
    assert [r.param for r in _readings("commonsense.clock.interval", bad, "misread_relation")] == ["m1"]


def test_ten_to_counted_back_is_the_hands_number_read_as_minutes_so_only_misread_scale() -> None:
    # 9:50 counted back from the 12 is 9:10, and the minute hand on the 10 read as 10 minutes is 9:10 too.
    params = {"h1": 9, "m1": 5, "h2": 9, "m2": 50, "pm": False, "context": 0, "image_role": "required"}
    assert _readings("commonsense.clock.interval", params, "misread_relation") == []
    assert [r.misreads for r in _readings("commonsense.clock.interval", params, "misread_scale")
            if r.param == "m2"] == [(10,)]


# -- number line ------------------------------------------------------------------------------------


def test_number_line_counted_on_in_ones_is_left_to_the_each_tick_is_one_mal_rule() -> None:
    # Counting the unlabelled marks on in ones writes exactly the mal-rule's working: one working, one label.
    family = get_family("commonsense.number_line")
    for seed in range(10):
        for difficulty in DIFFICULTIES:
            p = _build(family.id, seed, difficulty)
            assert _readings(family.id, p.params, "misread_scale") == []
    params = {"start": 20, "end": 40, "n": 4, "labels": [0, 4], "ks": [3], "decimal": False,
              "image_role": "required", "answer_form": "fraction"}
    mal = family.derive_mal(params, "each_tick_is_one")
    assert mal is not None and family.answer_of(mal[-1].value) == 23  # 20, 21, 22, 23 where the marks go in 5s


# -- counting objects with a pictogram key ----------------------------------------------------------


def test_pictogram_key_multiplies_the_count_and_is_drawn_from_the_true_value() -> None:
    family = get_family("commonsense.counting.objects")
    p = _first(family.id, "misread_scale", ("medium", "hard"))
    per = p.params["per"]
    pictures = sum(g["rows"] * g["cols"] - len(g["missing"]) for g in p.params["groups"])
    assert family.target(p.params) * p.params.get("share", 1) == pictures * per
    key = next(e for e in p.figure.spec["elements"] if e["id"] == "key")
    assert key["text"].startswith(f"= {per} ")
    assert any(g.source in ("figure:key", "text") and g.value == str(per) for g in p.givens)


def test_pictogram_key_overlooked_counts_each_picture_once() -> None:
    family = get_family("commonsense.counting.objects")
    # a key only the picture shows: one the question also states is no misread (perturb.reasoning.visual.figure_only)
    p = next(q for seed in range(60) if (q := _build(family.id, seed, "medium")).params.get("image_role") == "required"
             and _readings(family.id, q.params, "misread_scale"))
    v = inject(p, "misread_scale", np.random.default_rng(0))
    per = p.params["per"]
    assert v is not None and v.error.edit["element"] == "key"
    assert v.error.edit["changes"] == [{"param": "per", "from": per, "to": 1}]
    groups = p.params["groups"]
    if "counted" in p.params:  # the question asks about one group (A, B, ...)
        groups = [groups[ord(p.params["counted"]) - ord("A")]]
    pictures = sum(g["rows"] * g["cols"] - len(g["missing"]) for g in groups)
    # the pictures are counted and not multiplied at all (no "× 1" a pupil would never write)
    assert p.steps[0].text.endswith(f"× {per}") and not v.steps[0].text.endswith(("× 1", f"× {per}"))
    assert v.shown_answer == str(pictures)
    assert verify(p, v.steps, family=family).first_error_step == v.error.first_error_step == 1


def test_easy_pictures_have_no_key() -> None:
    for seed in range(20):
        p = _build("commonsense.counting.objects", seed, "easy")
        assert "per" not in p.params and all(e["id"] != "key" for e in p.figure.spec["elements"])


def test_a_key_misread_that_cannot_be_shared_out_whole_is_not_offered() -> None:
    params = {"shape": "apple", "groups": [{"rows": 2, "cols": 3, "missing": [0]}], "image_role": "required",
              "per": 2, "share": 2}
    # 5 pictures worth 2 each share out between 2; counted as 1 each (5) they do not, nor as 7 each (35).
    assert _readings("commonsense.counting.objects", params, "misread_scale") == []
    assert _readings("commonsense.counting.objects", params, "misread_value") == []


# -- bar chart, line chart, pie chart, two-way table ------------------------------------------------


def test_bar_chart_runner_up_within_a_gridline_is_taken_for_the_tallest() -> None:
    family = get_family("statistics.mean.bar_chart")
    params = {"values": [110, 135, 100, 45, 115, 145, 50], "scale": 10, "context": 4, "ask": "above_mean",
              "image_role": "required", "largest": "the tallest bar"}
    (reading,) = _readings(family.id, params, "misread_relation")
    assert reading.element == "bar_1" and reading.misreads == ("the second-tallest bar",)
    assert family.derive(reading.apply(params, reading.misreads[0]))[0].text.startswith("135 − ")
    assert _readings(family.id, {**params, "values": [110, 125, 100, 45, 115, 145, 50]}, "misread_relation") == []


def test_line_chart_miscount_is_one_gridline_from_an_unnumbered_line_never_onto_a_number() -> None:
    family = get_family("statistics.line_chart.reading")
    params = {"values": [12, 8, 4, 18, 18], "a": 0, "b": 4, "step": 2, "context": 3, "ask": "rate",
              "image_role": "required", "numbered_every": 5}
    misreads = [m for r in _readings(family.id, params, "miscount") for m in r.misreads]
    # 12 sits one line above the number 10: only one line too many; 18 sits between 10 and 20: one either way.
    assert sorted(m[0] for m in misreads if m[0] != 12) == [14]
    assert sorted(m[4] for m in misreads if m[4] != 18) == [16]
    figure = family.figure(params)
    assert figure.spec["label_every"] == 5 and figure.spec["y_max"] % (5 * 2) == 0
    assert _readings(family.id, {k: v for k, v in params.items() if k != "numbered_every"}, "miscount") == []


def test_pie_chart_sector_ending_at_twelve_left_out_of_the_angles_taken_from_360() -> None:
    family = get_family("statistics.pie_chart.reading")
    params = {"angles": [150, 65, 45, 100], "ask": 1, "context": 0, "image_role": "required", "hidden": 1,
              "total": 72}
    (reading,) = _readings(family.id, params, "miscount")
    assert reading.element == "wedge_3" and reading.misreads == ([150, 65, 45],)
    assert family.derive(reading.apply(params, reading.misreads[0]))[0].text == "(360 − 150 − 45) ÷ 360 × 72"
    assert _readings(family.id, {**params, "hidden": None}, "miscount") == []  # the angle asked is printed
    assert _readings(family.id, {**params, "ask": 3, "hidden": 3}, "miscount") == []  # the last sector is the one asked


def test_two_way_table_added_up_without_its_last_column() -> None:
    family = get_family("probability.table.two_way")
    params = {"counts": [[13, 11, 6], [7, 2, 3]], "row": 0, "col": 0, "context": 0, "ask": "given_row",
              "image_role": "required", "answer_form": "fraction"}
    (reading,) = _readings(family.id, params, "miscount")
    assert reading.element == "cell_0_3" and reading.misreads == ([[13, 11], [7, 2]],)
    assert family.derive(reading.apply(params, reading.misreads[0]))[0].text == "13 ÷ (13 + 11)"
    assert _readings(family.id, {**params, "col": 2}, "miscount") == []  # the column asked about is never skipped
    assert _readings(family.id, {**params, "counts": [[13, 11], [7, 2]]}, "miscount") == []


@pytest.mark.parametrize("family_id", ("commonsense.counting.objects", "statistics.line_chart.reading"))
def test_added_figure_elements_appear_on_only_part_of_the_problems(family_id: str) -> None:
    key = {"commonsense.counting.objects": "per", "statistics.line_chart.reading": "numbered_every"}[family_id]
    shares = [key in _build(family_id, seed, "hard").params for seed in range(40)]
    assert 0 < sum(shares) < len(shares)


def test_percent_pie_chart_is_worked_in_percent_and_its_signs_can_be_overlooked() -> None:
    family = get_family("statistics.pie_chart.reading")
    params = {"angles": [90, 108, 162], "ask": 1, "context": 3, "image_role": "required", "hidden": None,
              "percents": [25, 30, 45], "printed": "percent", "read_as": "percent", "total": 360}
    wedges = [e for e in family.figure(params).spec["elements"] if e["type"] == "wedge"]
    assert [(e["value_text"], e["show_angle"]) for e in wedges] == [("25%", False), ("30%", False), ("45%", False)]
    assert family.derive(params)[0].text == "30 ÷ 100 × 360" and family.target(params) == 108
    (reading,) = _readings(family.id, params, "misread_scale")
    assert reading.param == "read_as" and reading.misreads == ("degrees",)
    assert family.derive(reading.apply(params, "degrees"))[0].text == "30 ÷ 360 × 360"
    # the angle mal-rules (divide by 100, angles add to 180) are about degree charts
    assert all(family.derive_mal(params, rule.id) is None for rule in family.malrules)
    # where taking the numbers for degrees gives a part of a person, the pupil would notice: not offered
    assert _readings(family.id, {**params, "total": 90}, "misread_scale") == []  # 30 ÷ 360 × 90 = 7.5


def test_degree_pie_charts_have_no_percent_reading() -> None:
    params = {"angles": [90, 108, 162], "ask": 1, "context": 3, "image_role": "required", "hidden": None,
              "total": 360}
    assert _readings("statistics.pie_chart.reading", params, "misread_scale") == []
