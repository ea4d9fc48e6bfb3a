"""handwritten_question / _answer / _working: what is written, where it lands, that it is counted back, and replay."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from perturb.photo import REGISTRY, degrade
from perturb.photo.base import DegradationError, NotApplicableError
from perturb.photo.handwritten import QUESTION_BINS, WORKING_BINS, page_text
from perturb.photo.measure import luma, pen_mask
from perturb.photo.profile import camera_base, degrade_profile
from perturb.reasoning import inject
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.generators import get_family
from synth.manifest import from_row, read_manifest, schema, to_row
from synth.pipeline import run
from synth.records import Item, dumps, loads
from tests.conftest import tiny_config

HANDWRITTEN = ("handwritten_question", "handwritten_answer", "handwritten_working")
CASES = (("algebra.linear.two_step", "free", {}), ("arithmetic.order_of_operations", "free", {"paper": "lined"}),
         ("algebra.linear.one_step", "mcq", {}), ("arithmetic.percent.of_quantity", "free",
                                                 {"paper": "grid", "show_solution": False}),
         ("geometry.angles.parallel_lines", "mcq", {"paper": "exam", "style": "handwritten"}))


@cache
def sheet(k: int, dpi: int = 60):
    family, qtype, kw = CASES[k % len(CASES)]
    problem = get_family(family).build(np.random.default_rng(k), difficulty="medium", question_type=qtype,
                                       problem_id=f"h{k}")
    drawn = render_page(problem, clean_variant(problem), dpi=dpi, seed=k, **kw)
    return drawn.pixels, drawn.page, page_text(problem, clean_variant(problem)), problem


def ink(image: np.ndarray) -> np.ndarray:
    return luma(image) < 128


# ------------------------------------------------------------------------------ handwritten_question


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_the_whole_question_is_rewritten_at_the_requested_neatness(severity: int) -> None:
    lo, hi = QUESTION_BINS[severity]
    for k in range(6):
        img, page, text, _ = sheet(k)
        _, _, rec = degrade(img, page, "handwritten_question", severity, np.random.default_rng(k), text=text)
        m = rec.measured
        assert lo <= m["neatness"] <= hi, (k, m)
        assert m["tokens_written"] == m["tokens"] == len(text.question_tokens), (k, m)
        assert m["printed_ink_left"] == 0, (k, m)
        assert rec.params["tokens"] == list(text.question_tokens)


def test_messier_writing_has_larger_jitter() -> None:
    img, page, text, _ = sheet(0)
    jit = [degrade(img, page, "handwritten_question", s, np.random.default_rng(0), text=text)[2]
           .measured["jitter"]["position_em"] for s in (1, 2, 3)]
    assert jit[0] < jit[1] < jit[2]


def test_question_boxes_move_to_the_handwriting_and_the_rest_of_the_page_is_untouched() -> None:
    img, page, text, _ = sheet(2)  # MCQ: the options are re-written too
    out, new, rec = degrade(img, page, "handwritten_question", 2, np.random.default_rng(3), text=text)
    pen = pen_mask(camera_base(np.full_like(img, 250), page, [rec]), out)  # any ink (beside the camera's light)
    tokens = [b for b in new.layout if b.kind == "question_token"]
    assert sorted(int(b.ref) for b in tokens) == list(range(len(text.question_tokens)))
    for b in tokens + [b for b in new.layout if b.kind == "choice"]:
        assert pen[int(b.y0):int(b.y1) + 1, int(b.x0):int(b.x1) + 1].any(), b
    old = {(b.kind, b.ref): b for b in page.layout}
    assert any(old[("question_token", b.ref)] != b for b in tokens)
    assert new.handwritten_question and not page.handwritten_question
    changed = (camera_base(img, page, [rec]) != out).any(axis=2)  # every photo has the camera's base layer
    below = max([b.y1 for b in new.layout if b.kind in ("question_line", "choice")]
                + [r[3] for r in rec.params["cover"]])  # the new writing, or the print it covered
    assert not changed[int(below) + 2:].any()  # the solution and everything under the question stay as printed


def test_question_marking_after_it_marks_the_handwritten_tokens() -> None:
    img, page, text, _ = sheet(0)
    _, new, recs = degrade_profile(img, page, [("question_marking", 1), ("handwritten_question", 2)],
                                   np.random.default_rng(4), text=text)
    assert [r.subtype for r in recs] == ["handwritten_question", "question_marking"]
    assert recs[1].measured["marked_tokens"] == 1


def test_a_question_already_written_by_hand_is_not_applicable() -> None:
    img, page, text, _ = sheet(0)
    done = replace(page, handwritten_question=True)
    assert not REGISTRY["handwritten_question"].applies(done)
    with pytest.raises(NotApplicableError, match="handwritten_question does not apply"):
        degrade(img, done, "handwritten_question", 1, np.random.default_rng(0), text=text)


def test_text_of_another_problem_is_refused() -> None:
    img, page, _, _ = sheet(0)
    other = sheet(2)[2]
    with pytest.raises(DegradationError, match="question_token boxes but the text has"):
        degrade(img, page, "handwritten_question", 1, np.random.default_rng(0), text=other)


# ------------------------------------------------------------------------------ handwritten_answer


def test_the_correct_answer_is_written_in_the_answer_blank() -> None:
    for k in (0, 1, 3):
        img, page, text, problem = sheet(k)
        out, new, rec = degrade(img, page, "handwritten_answer", 1, np.random.default_rng(k), text=text)
        area = next(b for b in page.layout if b.kind == "answer_area")
        assert rec.params["written"] == problem.answer_latex and rec.params["placement"] == "blank"
        assert rec.measured == {**rec.measured, "written": 1, "answer_correct": True, "ink_outside_target": 0.0}
        box = next(b for b in new.layout if b.kind == "handwritten_answer")
        assert area.x0 - 2 <= box.x0 and box.y1 <= area.y1 + 0.2 * page.dpi  # in the blank, on its line
        changed = np.argwhere((camera_base(img, page, [rec]) != out).any(axis=2))
        assert changed[:, 0].min() >= area.y0 - 0.1 * page.dpi


def test_mcq_answer_is_the_correct_option_in_the_blank_or_ticked_beside_it() -> None:
    img, page, text, problem = sheet(2)
    letter = problem.params["answer_choice"]
    seen = set()
    for seed in range(8):
        _, new, rec = degrade(img, page, "handwritten_answer", 1, np.random.default_rng(seed), text=text)
        seen.add(rec.params["placement"])
        assert rec.measured["written"] == 1 and rec.params["choice"] == letter
        assert rec.measured["ink_outside_target"] == 0
        if rec.params["placement"] == "tick":
            tick = next(b for b in new.layout if b.kind == "handwritten_answer")
            option = next(b for b in page.layout if b.kind == "choice" and b.ref == letter)
            assert tick.x0 > option.x1 and option.y0 - 0.15 * page.dpi < (tick.y0 + tick.y1) / 2 < option.y1
        else:
            assert rec.params["written"] == letter
    assert seen == {"tick", "blank"}


def test_an_error_variant_writes_its_wrong_answer_and_says_so() -> None:
    _, _, _, problem = sheet(0)
    variant = inject(problem, "final_number", np.random.default_rng(1))
    assert variant is not None and variant.error is not None
    text = page_text(problem, variant)
    assert not text.answer_correct and text.answer_latex == variant.steps[-1].latex
    drawn = render_page(problem, variant, dpi=60, seed=0)
    _, _, rec = degrade(drawn.pixels, drawn.page, "handwritten_answer", 1, np.random.default_rng(0), text=text)
    assert rec.measured["answer_correct"] is False and rec.params["written"] == variant.steps[-1].latex


def test_the_answer_has_no_severity_above_one() -> None:
    img, page, text, _ = sheet(0)
    with pytest.raises(DegradationError, match="handwritten_answer has severities 0 and 1"):
        degrade(img, page, "handwritten_answer", 2, np.random.default_rng(0), text=text)


def test_writing_ops_without_the_page_text_say_how_to_pass_it() -> None:
    img, page, _, _ = sheet(0)
    for op in HANDWRITTEN:
        with pytest.raises(DegradationError, match="pass text=perturb.photo.handwritten.page_text"):
            degrade(img, page, op, 1, np.random.default_rng(0))


# ------------------------------------------------------------------------------ handwritten_working


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_lines_of_working_counted_from_the_ink_land_in_the_bin(severity: int) -> None:
    lo, hi = WORKING_BINS[severity]
    for k in range(8):
        img, page, text, _ = sheet(k)
        _, _, rec = degrade(img, page, "handwritten_working", severity, np.random.default_rng(k), text=text)
        assert lo <= rec.measured["lines"] <= hi, (k, rec.measured)
        assert rec.measured["lines"] == rec.measured["lines_written"] == len(rec.params["lines"]), (k, rec.measured)


def test_working_never_touches_existing_ink_or_layout_boxes() -> None:
    for k in range(4):
        img, page, text, _ = sheet(k)
        out, _, rec = degrade(img, page, "handwritten_working", 3, np.random.default_rng(k), text=text)
        changed = (camera_base(img, page, [rec]) != out).any(axis=2)
        assert not (changed & ink(img)).any() and rec.measured["over_printed_ink"] == 0
        for b in page.layout:
            if b.kind != "working_area":
                assert not changed[int(b.y0):int(b.y1) + 1, int(b.x0):int(b.x1) + 1].any(), b


def test_working_on_a_question_only_page_copies_the_solution_steps() -> None:
    img, page, text, problem = sheet(3)
    assert not page.show_solution
    _, new, rec = degrade(img, page, "handwritten_working", 2, np.random.default_rng(0), text=text)
    n = len(rec.params["lines"])
    assert rec.params["sources"] == [f"step:{i}" for i in range(1, n + 1)]
    assert rec.params["lines"] == [s.latex for s in problem.steps[:n]]
    area = next(b for b in page.layout if b.kind == "working_area")
    for b in (b for b in new.layout if b.kind == "handwritten_working"):
        assert area.y0 <= b.y0 and b.y1 <= area.y1


def test_scratch_sums_are_exact() -> None:
    img, page, text, _ = sheet(0)  # a shown solution: scratch arithmetic comes first
    _, _, rec = degrade(img, page, "handwritten_working", 3, np.random.default_rng(2), text=text)
    sums = [line for line, src in zip(rec.params["lines"], rec.params["sources"], strict=True) if src == "scratch"]
    assert sums
    for line in sums:
        left, right = line.replace("−", "-").replace("×", "*").split("=")
        a, op, b = left.split()
        a, b = int(a), int(b.strip("()"))
        assert {"+": a + b, "-": a - b, "*": a * b}[op] == int(right)


# ------------------------------------------------------------------------------ all three


@pytest.mark.parametrize("subtype", HANDWRITTEN)
def test_replay_gives_the_same_bytes_and_severity_zero_is_identity(subtype: str) -> None:
    img, page, text, _ = sheet(1)
    out, new, rec = degrade(img, page, subtype, 1, np.random.default_rng(5), text=text)
    again, again_page, rec2 = degrade(img, page, subtype, 1, None, params=rec.params)
    assert out.tobytes() == again.tobytes() and again_page == new and rec2.measured == rec.measured
    assert not np.array_equal(out, img)
    same, same_page, zero = degrade(img, page, subtype, 0, np.random.default_rng(5), text=text)
    assert same is img and same_page is page and zero.params == {}


def test_a_different_seed_writes_differently() -> None:
    img, page, text, _ = sheet(0)
    a = degrade(img, page, "handwritten_working", 2, np.random.default_rng(1), text=text)[0]
    b = degrade(img, page, "handwritten_working", 2, np.random.default_rng(2), text=text)[0]
    assert a.tobytes() != b.tobytes()


def test_a_handwritten_page_is_written_on_in_its_own_hand() -> None:
    problem = sheet(0)[3]
    drawn = render_page(problem, clean_variant(problem), dpi=60, seed=0, style="handwritten")
    text = page_text(problem, clean_variant(problem))
    _, _, rec = degrade(drawn.pixels, drawn.page, "handwritten_working", 1, np.random.default_rng(0), text=text)
    from render.handwriting import WRITER_NAMES

    assert WRITER_NAMES[rec.params["writer"]["font"]] == drawn.page.font
    assert rec.params["writer"]["ink"] == drawn.page.ink


# ------------------------------------------------------------------------------ profile name in the manifest


def test_profile_name_round_trips_through_the_manifest_row() -> None:
    img, page, text, problem = sheet(0)
    item = Item(id="h0-p1", base_id="h0", index=0, seed=1, problem=problem, variant=clean_variant(problem),
                render=page, profile="homework_on_desk", image="images/h0-p1.png", clean_image="images/h0.png")
    assert loads(Item, dumps(item)) == item  # the record's own JSON round-trip keeps it too
    row = to_row(item)
    assert row["profile"] == "homework_on_desk" and from_row(row).profile == "homework_on_desk"
    assert not list(jsonschema.Draft202012Validator(schema()).iter_errors(row))
    assert from_row({k: v for k, v in row.items() if k != "profile"}).profile is None  # older manifests


@pytest.mark.slow
def test_a_run_writes_handwriting_items_and_names_each_photo_profile(tmp_path: Path) -> None:
    profile = {"name": "homework_done", "ops": [{"subtype": "handwritten_working", "severity": 2},
                                                {"subtype": "handwritten_answer", "severity": 1},
                                                {"subtype": "tilt", "severity": 1}]}
    cfg = tiny_config(count=2, degrade={"ops": [{"subtype": s, "severities": [1]} for s in HANDWRITTEN],
                                        "profiles": [profile]})
    run(cfg, tmp_path / "run")
    rows = list(read_manifest(tmp_path / "run"))
    validator = jsonschema.Draft202012Validator(schema())
    assert all(not list(validator.iter_errors(r)) for r in rows)
    photos = [r for r in rows if r["degradations"]]
    assert {r["degradations"][0]["subtype"] for r in photos if r["profile"] is None} == set(HANDWRITTEN)
    named = [r for r in photos if r["profile"] is not None]
    # Every page shown (the clean control and each error variant: ``degrade.apply_to``) photographed once under it.
    pages = [r for r in rows if not r["degradations"]]
    assert len(pages) > 2 and len(named) == len(pages) and {r["profile"] for r in named} == {"homework_done"}
    assert {r["id"].removesuffix("-p1") for r in named} == {r["id"] for r in pages}
    assert [d["subtype"] for d in named[0]["degradations"]] == ["handwritten_working", "handwritten_answer", "tilt"]
    assert all(r["profile"] is None for r in rows if not r["degradations"])
