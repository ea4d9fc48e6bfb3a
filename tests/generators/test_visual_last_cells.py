"""The last relation misreads of issue #4: a back-to-back stem-and-leaf read the wrong way, an hourglass read as a
mirror image."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from render.describe import describe_figure
from render.figures import draw_figure
from synth.generators import get_family
from synth.generators.median_mode_table import backwards, stem_rows
from tests.generators._fixed import elements, injected_and_verified, problem_with

MEDIAN = "statistics.median_mode.table"
SIMILAR = "geometry.similar_triangles"

# Class A (left) 31 33 37 41 41 44 46 58, Class B (right) 34 35 35 37 42 44 54 54 56; the median of A is 41.
STEM = {"kind": "stem", "data": [31, 33, 37, 41, 41, 44, 46, 58], "other": [34, 35, 35, 37, 42, 44, 54, 54, 56],
        "context": 0, "ask": "median", "image_role": "required"}
# AB ∥ DE, crossing at C: AC = 3, BC = 4, CE = 6, so the scale factor is 6/3 and CD = 4 × 2 = 8 mm.
HOURGLASS = {"level": "hourglass", "unit": "mm", "ac": 3, "bc": 4, "ce": 6, "ce_matches": "AC", "angle": 67,
             "image_role": "required", "answer_unit": "mm"}


def _relations(family_id: str, params: dict[str, Any]) -> list[Any]:
    return [r for r in get_family(family_id).figure_readings(params) if r.kind == "misread_relation"]


# -- back-to-back stem-and-leaf: the left side read leaf then stem ----------------------------------------------


def test_left_leaves_grow_away_from_the_stem_and_every_stem_between_gets_a_row() -> None:
    assert stem_rows([31, 37, 58], [42, 45]) == [["7 1", "3", ""], ["", "4", "2 5"], ["8", "5", ""]]


def test_a_left_value_read_backwards_takes_its_leaf_as_the_tens() -> None:
    assert backwards([32, 35, 40, 58]) == [4, 23, 53, 85]


def test_the_median_is_the_left_hand_groups_and_the_question_names_that_group() -> None:
    problem = problem_with(MEDIAN, STEM)
    assert problem.answer_text == "41"
    assert [s.text for s in problem.steps][0] == "(41 + 41) ÷ 2"
    assert "Class A" in problem.question_text and "stem-and-leaf" in problem.question_text


def test_the_left_side_read_backwards_is_carried_through_against_the_true_diagram() -> None:
    problem = problem_with(MEDIAN, STEM)
    v = injected_and_verified(problem, "misread_relation")
    # 31 33 37 41 41 44 46 58 read as 13 33 73 14 14 44 64 85: sorted, the middle two are 33 and 44.
    assert v.error.edit["to"] == [13, 14, 14, 33, 44, 64, 73, 85]
    assert v.steps[0].text == "(33 + 44) ÷ 2" and v.steps[-1].text == "38.5"
    assert v.error.edit["element"] == "cell_0_0"  # under Class A, the left-hand group
    cells = elements(problem)
    assert cells["cell_1_0"]["text"] == "7 3 1" and cells["cell_1_1"]["text"] == "3"  # still drawn true


def test_the_right_hand_groups_leaves_used_for_the_left_is_a_label_misread_with_its_odd_count() -> None:
    (label,) = [r for r in get_family(MEDIAN).figure_readings(STEM) if r.kind == "misread_label"]
    assert label.element == "cell_0_2" and label.misreads == (STEM["other"],)
    # nine values: the middle one, not the mean of two
    assert [s.text for s in get_family(MEDIAN).derive({**STEM, "data": STEM["other"]})] == ["42"]


def test_a_leaf_misread_is_offered_only_where_it_moves_the_median() -> None:
    values = [r for r in get_family(MEDIAN).figure_readings(STEM) if r.kind == "misread_value"]
    family = get_family(MEDIAN)
    assert values and all(family.target({**STEM, "data": m}) != family.target(STEM) for r in values
                          for m in r.misreads)
    # the 58 at the top end (8 -> 3 gives 53) leaves the middle two alone: not offered
    assert all([31, 33, 37, 41, 41, 44, 46, 53] not in r.misreads for r in values)


def test_the_diagram_is_described_with_its_name_rows_and_key() -> None:
    text = describe_figure(problem_with(MEDIAN, STEM).figure)
    assert text.startswith("The figure is a back-to-back stem-and-leaf diagram.")
    assert "row 2: 7 3 1, 3, 4 5 5 7" in text
    assert "Key: 4 | 4 | 1 means 44 for Class A and 41 for Class B" in text


def test_a_side_with_no_leaves_on_a_stem_is_drawn_blank_and_described_as_empty() -> None:
    problem = problem_with(MEDIAN, {**STEM, "other": [*STEM["other"], 61]})  # stem 6 has a right leaf only
    cells = elements(problem)
    assert "cell_4_0" not in cells and cells["cell_4_1"]["text"] == "6" and cells["cell_4_2"]["text"] == "1"
    text = describe_figure(problem.figure)
    assert "row 1: Class A, (empty), Class B;" in text and "row 5: (empty), 6, 1." in text


def test_left_leaves_are_drawn_against_the_stem_and_right_leaves_start_at_it() -> None:
    figure = problem_with(MEDIAN, STEM).figure
    boxes = {b.ref: b for b in draw_figure(figure, 100).boxes}
    lefts = [boxes[f"cell_{r}_0"] for r in (1, 2, 3)]
    rights = [boxes[f"cell_{r}_2"] for r in (1, 2, 3)]
    assert max(b.x1 for b in lefts) - min(b.x1 for b in lefts) <= 2  # right-aligned against the stem's rule
    assert max(b.x0 for b in rights) - min(b.x0 for b in rights) <= 2  # left-aligned after it
    assert boxes["key"].y0 > max(b.y1 for b in lefts)  # the key sits under the diagram


def test_stem_and_leaf_problems_are_built_deterministically_and_only_when_the_figure_is_required() -> None:
    family = get_family(MEDIAN)
    built = [family.build(np.random.default_rng(seed), difficulty=d, question_type="free", problem_id="s")
             for seed in range(30) for d in ("easy", "medium")]
    stems = [p for p in built if p.params["kind"] == "stem"]
    assert stems and all(p.params["image_role"] == "required" for p in stems)
    again = family.build(np.random.default_rng(0), difficulty="easy", question_type="free", problem_id="s")
    assert again.params == built[0].params


# -- hourglass: the half-turned triangle read as a mirror image ------------------------------------------------


def test_cd_matches_bc_as_ce_matches_ac() -> None:
    problem = problem_with(SIMILAR, HOURGLASS)
    assert [s.text for s in problem.steps] == ["4 × (6 ÷ 3)", "4 × 2", "CD = 8 mm"]


def test_the_hourglass_is_drawn_with_ab_parallel_to_de_and_both_arrows_the_same_way() -> None:
    problem = problem_with(SIMILAR, HOURGLASS)
    pts = problem.figure.spec["points"]
    els = elements(problem)

    def vec(a: str, b: str) -> tuple[float, float]:
        return pts[b][0] - pts[a][0], pts[b][1] - pts[a][1]

    ab, de = vec(els["side_AB"]["from"], els["side_AB"]["to"]), vec(els["side_DE"]["from"], els["side_DE"]["to"])
    assert abs(ab[0] * de[1] - ab[1] * de[0]) < 1e-3 and ab[0] * de[0] + ab[1] * de[1] > 0  # parallel, same way
    assert els["side_AB"]["arrows"] == els["side_DE"]["arrows"] == 1
    assert abs(math.dist(pts["C"], pts["D"]) - 8) < 1e-3
    assert els["side_CD"]["text"] == "x"


def test_the_mirror_reading_pairs_ce_with_bc_and_is_carried_through() -> None:
    problem = problem_with(SIMILAR, HOURGLASS)
    v = injected_and_verified(problem, "misread_relation")
    assert v.steps[0].text == "3 × (6 ÷ 4)" and v.steps[-1].text == "CD = 4.5 mm"
    assert v.error.edit["changes"] == [{"param": "ce_matches", "from": "AC", "to": "BC"}]
    assert problem.figure == get_family(SIMILAR).figure(problem.params)


def test_the_mirror_reading_is_not_a_mal_rules_or_a_label_misreads_working() -> None:
    family = get_family(SIMILAR)
    mirror = tuple(d.text for d in family.derive({**HOURGLASS, "ce_matches": "BC"}))
    mals = {tuple(d.text for d in drafts) for rule in family.malrules
            if (drafts := family.derive_mal(HOURGLASS, rule.id))}
    labels = {tuple(d.text for d in family.derive(r.apply(HOURGLASS, m)))
              for r in family.figure_readings(HOURGLASS) if r.kind != "misread_relation" for m in r.misreads}
    assert mals and labels and mirror not in mals | labels


def test_no_mirror_misread_when_the_text_gives_the_lengths() -> None:
    assert _relations(SIMILAR, {**HOURGLASS, "image_role": "useful"}) == []
