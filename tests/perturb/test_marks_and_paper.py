"""Marks where people make them and paper that behaves like paper (issue 20): question and figure marks,
bleed-through, the handwritten question, paper warp."""

from __future__ import annotations

from functools import cache

import numpy as np

from perturb.photo import degrade
from perturb.photo.handwritten import page_text
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.evaluate.tasks.solvable import REFUSED, _solvable_credit, _solvable_gold
from synth.generators import get_family
from synth.manifest import to_row
from synth.records import Item


@cache
def worksheet(family: str, seed: int, dpi: int = 60):
    p = get_family(family).build(np.random.default_rng(seed), difficulty="medium", question_type="free",
                                 problem_id=f"m{seed}")
    v = clean_variant(p)
    r = render_page(p, v, dpi=dpi)
    return p, v, r.pixels, r.page, page_text(p, v)


NUMBERS = ("arithmetic.order_of_operations", 3)  # "Simplify 18 ÷ 2 − 7 + ..." : most tokens are givens


def test_question_marks_never_hide_a_given_at_severities_1_and_2() -> None:
    for family, seed in (NUMBERS, ("geometry.triangle.angle_sum", 1), ("statistics.mean.bar_chart", 2)):
        _, _, img, page, text = worksheet(family, seed)
        for severity in (1, 2):
            for r in range(6):
                rec = degrade(img, page, "question_marking", severity, np.random.default_rng(r), text=text)[2]
                assert rec.measured["givens_known"]
                assert rec.measured["hidden_tokens"] == [] and rec.measured["hidden_givens"] == [], (family, r)


def test_a_blotted_given_makes_the_row_unsolvable_and_names_it() -> None:
    p, v, img, page, text = worksheet(*NUMBERS)
    blotted = []
    for r in range(40):
        rec = degrade(img, page, "question_marking", 3, np.random.default_rng(r), text=text)[2]
        scribbled = [m["tokens"][0] for m in rec.params["marks"] if m["kind"] == "scribble"]
        if scribbled:
            blotted.append(rec)
            given = text.question_tokens[int(scribbled[0])]
            assert rec.measured["hidden_givens"] == [given]
        else:
            assert rec.measured["hidden_givens"] == []
    assert 4 <= len(blotted) <= 24  # about 30 % of severity-3 photos
    item = Item(id="x-d1", base_id="x", index=0, seed=0, problem=p, variant=v, render=page,
                degradations=(blotted[0],))
    row = to_row(item)
    assert row["solvable"] is False and row["hidden_givens"] == blotted[0].measured["hidden_givens"]
    assert _solvable_gold(item) == REFUSED
    assert _solvable_credit(item, REFUSED) == 1.0 and _solvable_credit(item, p.answer_value) == 0.0
    clean = Item(id="x", base_id="x", index=0, seed=0, problem=p, variant=v, render=page)
    assert to_row(clean)["solvable"] is True and _solvable_gold(clean) == p.answer_value
