"""Page composer: boxes that hold exactly their ink, figures on the page, paper styles, same seed same bytes."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from perturb.reasoning.base import clean_variant
from render.figures import DRAWERS, FigureImage
from render.handwriting import sample_writer
from render.page import compose_page, render_page, sample_hand
from synth.generators import get_family
from synth.records import Box, Figure, Problem, Step, Variant


def _problem(family: str = "arithmetic.fractions.add_unlike", seed: int = 5) -> Problem:
    return get_family(family).build(np.random.default_rng(seed), difficulty="hard", question_type="free",
                                    problem_id=f"page-{seed:06d}")


def _box(page, kind: str, ref: str) -> Box:
    return next(b for b in page.layout if b.kind == kind and b.ref == ref)


def _ink(draft, keys: set[str]) -> np.ndarray:
    """Pixels (row, col) where drawing only ``keys`` changes the empty page."""
    blank = draft.rasterize(only=frozenset()).pixels
    alone = draft.rasterize(only=frozenset(keys)).pixels
    return np.argwhere((alone != blank).any(axis=2))


def _inside(points: np.ndarray, b: Box) -> np.ndarray:
    return (points[:, 0] >= b.y0) & (points[:, 0] < b.y1) & (points[:, 1] >= b.x0) & (points[:, 1] < b.x1)


STYLES = [("printed", 1, "plain"), ("handwritten", 1, "lined"), ("handwritten", 3, "exam"),
          ("handwritten", 2, "grid")]


@pytest.mark.parametrize(("style", "neatness", "paper"), STYLES, ids=[f"{s}-{n}-{p}" for s, n, p in STYLES])
def test_each_step_box_holds_its_own_ink_and_no_other_steps_ink(style: str, neatness: int, paper: str) -> None:
    problem = _problem("trig.exact_values")
    writer = sample_writer(np.random.default_rng(2), neatness=neatness)
    draft = compose_page(problem, clean_variant(problem), paper=paper, dpi=80, style=style, writer=writer, seed=9)
    together = draft.rasterize()
    steps = [s.index for s in problem.steps]
    for i in steps:
        box = _box(together.page, "step", str(i))
        own = _ink(draft, {f"step:{i}"})
        assert len(own) > 20 and _inside(own, box).all(), f"step {i} has ink outside its box"
        others = _ink(draft, {f"step:{j}" for j in steps if j != i})
        assert not _inside(others, box).any(), f"another step's ink lies inside step {i}'s box"


def test_same_seed_gives_identical_png_bytes_and_a_new_seed_changes_the_hand() -> None:
    problem = _problem()
    writer = sample_writer(np.random.default_rng(1), neatness=2)

    def png(seed: int) -> bytes:
        page = render_page(problem, clean_variant(problem), style="handwritten", writer=writer, seed=seed, dpi=80)
        return cv2.imencode(".png", page.pixels)[1].tobytes()

    assert png(3) == png(3)
    assert png(3) != png(4)


def test_question_words_are_tokens_on_numbered_lines() -> None:
    problem = _problem()
    page = render_page(problem, clean_variant(problem), dpi=80).page
    tokens = [b for b in page.layout if b.kind == "question_token"]
    lines = [b for b in page.layout if b.kind == "question_line"]
    assert len(tokens) == len(problem.question_text.split())
    assert lines and all(any(_contains(line, t) for line in lines) for t in tokens)


def _contains(outer: Box, inner: Box) -> bool:
    return outer.x0 <= inner.x0 and outer.y0 <= inner.y0 and inner.x1 <= outer.x1 and inner.y1 <= outer.y1


def test_exam_sheet_has_name_and_date_fields_and_an_answer_box_below_the_steps() -> None:
    problem = _problem()
    page = render_page(problem, clean_variant(problem), paper="exam", dpi=80).page
    name, date, answer = _box(page, "exam_field", "name"), _box(page, "exam_field", "date"), _box(
        page, "answer_area", "answer")
    last_step = _box(page, "step", str(problem.steps[-1].index))
    assert name.x1 < date.x0 and name.y1 < _box(page, "question_line", "1").y0
    assert answer.y0 > last_step.y1 and answer.x1 - answer.x0 > 2 * 80


def test_phone_page_is_three_by_four_and_a4_is_a4() -> None:
    problem = _problem()
    phone = render_page(problem, clean_variant(problem), page="phone", dpi=100).page
    a4 = render_page(problem, clean_variant(problem), page="a4", dpi=100).page
    assert (phone.width, phone.height) == (600, 800)
    assert (a4.width, a4.height) == (827, 1169)


def test_handwritten_page_records_its_writer() -> None:
    problem = _problem()
    writer = sample_writer(np.random.default_rng(0), neatness=1, fonts=("caveat",))
    page = render_page(problem, clean_variant(problem), style="handwritten", writer=writer, dpi=80).page
    assert (page.style, page.font, page.ink) == ("handwritten", "Caveat", writer.ink)


def test_a_solution_too_long_for_the_page_says_so() -> None:
    problem = _problem()
    step = problem.steps[0]
    many = tuple(replace(step, index=i) for i in range(1, 90))
    with pytest.raises(ValueError, match="does not fit on a phone page"):
        render_page(problem, Variant("clean", many, problem.answer_value, True), page="phone", dpi=80)


def test_steps_with_unsupported_latex_name_the_step() -> None:
    problem = _problem()
    bad = (Step(1, "r", "1", "1", r"\begin{matrix}1\end{matrix}"),)
    with pytest.raises(ValueError, match=r"step 1: .*\\begin"):
        render_page(problem, Variant("clean", bad, "1", True), dpi=80)


def _square_figure(figure: Figure, dpi: int) -> FigureImage:
    side = int(figure.spec["size_in"][0] * dpi)
    img = np.full((side, side, 3), 255, np.uint8)
    img[10:30, 10:30] = (200, 0, 0)  # the "point" primitive
    img[side - 25:side - 5, side - 45:side - 5] = (0, 0, 200)  # the "label" primitive
    return FigureImage(img, (Box("figure_point", "P", 10, 10, 30, 30),
                             Box("figure_label", "label_P", side - 45, side - 25, side - 5, side - 5)))


def test_figure_primitive_boxes_are_offset_onto_the_page_and_hold_their_ink(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(DRAWERS, "test_square", _square_figure)
    problem = replace(_problem(), figure=Figure("test_square", {"size_in": [1.5, 1.5], "elements": []}))
    page = render_page(problem, clean_variant(problem), dpi=100)
    point, label = _box(page.page, "figure_point", "P"), _box(page.page, "figure_label", "label_P")
    red = np.argwhere((page.pixels[..., 0] > 150) & (page.pixels[..., 1] < 60))
    blue = np.argwhere((page.pixels[..., 2] > 150) & (page.pixels[..., 0] < 60))
    assert len(red) == 400 and _inside(red, point).all()
    assert len(blue) == 800 and _inside(blue, label).all()
    question_bottom = max(b.y1 for b in page.page.layout if b.kind == "question_line")
    first_step = _box(page.page, "step", "1")
    assert question_bottom < point.y0 and label.y1 < first_step.y0


def test_mixed_style_samples_both_modalities_by_share() -> None:
    styles = [sample_hand(np.random.default_rng(s), style="mixed", handwritten_share=0.3, neatness=[1, 3])[0]
              for s in range(400)]
    share = styles.count("handwritten") / len(styles)
    assert 0.22 < share < 0.38
    assert sample_hand(np.random.default_rng(0), style="printed") == ("printed", None)
