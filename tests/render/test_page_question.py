"""Question rendering: typeset keyboard math, question-only pages, handwritten questions, ruled spacing."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from perturb.reasoning.base import clean_variant
from render.handwriting import sample_writer
from render.page import compose_page, question_tokens, render_page
from render.typeset import InkGlyph, InkRect, InkStroke
from synth.generators import get_family
from synth.records import Box, Problem

# Families whose questions carry keyboard math: exponents, negative exponents in brackets,
# squares of brackets, numeric and mixed-number fractions, trig powers and degrees.
MATH_FAMILIES = ("algebra.exponents.simplify", "calculus.derivative.power_rule", "calculus.derivative.chain_rule",
                 "algebra.polynomial.simplify", "algebra.quadratic.formula", "arithmetic.fractions.add_unlike",
                 "arithmetic.fractions.multiply_divide", "trig.exact_values")


def _problem(family: str, seed: int = 0) -> Problem:
    return get_family(family).build(np.random.default_rng(seed), difficulty="hard", question_type="free",
                                    problem_id=f"q-{seed:06d}")


def _question_marks(draft, hand: bool = False) -> list:
    return [m for key, m in (draft.hand if hand else draft.printed) if key.startswith("question_token:")]


def _boxes(page, kind: str) -> list[Box]:
    return [b for b in page.layout if b.kind == kind]


@pytest.mark.parametrize("family", MATH_FAMILIES)
def test_question_math_is_typeset_not_drawn_as_carets_and_slashes(family: str) -> None:
    problem = _problem(family)
    draft = compose_page(problem, clean_variant(problem), dpi=80)
    glyphs = [m for m in _question_marks(draft) if isinstance(m, InkGlyph)]
    assert glyphs and not any("^" in g.text for g in glyphs)
    text = problem.question_text
    if "^" in text:  # some glyph is a raised, smaller exponent
        body = max(g.size for g in glyphs)
        assert any(g.size < 0.8 * body for g in glyphs), f"{family}: no exponent glyph in {text!r}"
    if any(c.isdigit() and "/" in w for w in text.split() for c in w[:1]):  # a numeric fraction: a bar
        assert any(isinstance(m, InkRect) for m in _question_marks(draft)), f"{family}: no fraction bar"


def test_each_question_token_gets_one_box_and_a_mixed_number_is_one_token() -> None:
    problem = _problem("arithmetic.fractions.multiply_divide")
    tokens = question_tokens(problem.question_text)
    assert any(" " in t and "/" in t for t in tokens), tokens  # e.g. "1 5/7"
    page = render_page(problem, clean_variant(problem), dpi=80).page
    assert len(_boxes(page, "question_token")) == len(tokens)


def test_question_only_page_has_working_space_and_answer_area_but_no_steps() -> None:
    problem = _problem("geometry.pythagoras", 1)
    drawn = render_page(problem, clean_variant(problem), page="phone", paper="lined", dpi=80, show_solution=False)
    page = drawn.page
    assert not _boxes(page, "step") and not _boxes(page, "step_number")
    (work,), (answer,) = _boxes(page, "working_area"), _boxes(page, "answer_area")
    question_bottom = max(b.y1 for b in page.layout if b.kind in ("question_line", "figure"))
    assert question_bottom < work.y0 and work.y1 <= answer.y0 and work.y1 - work.y0 > 0.3 * page.height
    blank = render_page(problem, clean_variant(problem), page="phone", paper="lined", dpi=80,
                        show_solution=False).pixels
    region = blank[int(work.y0):int(work.y1), 0:page.width]
    assert np.array_equal(region, compose_page(problem, clean_variant(problem), page="phone", paper="lined", dpi=80,
                                               show_solution=False).rasterize(only=frozenset()).pixels[
        int(work.y0):int(work.y1), 0:page.width]), "the working space must be empty paper"
    assert page.show_solution is False


def test_handwritten_question_is_written_by_the_pages_writer() -> None:
    problem = _problem("algebra.exponents.simplify")
    writer = sample_writer(np.random.default_rng(3), neatness=2)
    draft = compose_page(problem, clean_variant(problem), paper="lined", dpi=80, style="handwritten", writer=writer,
                         seed=4, handwritten_question=True)
    assert not _question_marks(draft) and _question_marks(draft, hand=True)
    page = draft.rasterize().page
    assert len(_boxes(page, "question_token")) == len(question_tokens(problem.question_text))
    assert page.handwritten_question and page.neatness == 2
    with pytest.raises(ValueError, match="handwritten_question needs style='handwritten'"):
        compose_page(problem, clean_variant(problem), dpi=80, handwritten_question=True)


def test_printed_pages_have_no_neatness_and_handwritten_pages_record_it() -> None:
    problem = _problem("algebra.linear.two_step")
    assert render_page(problem, clean_variant(problem), dpi=60).page.neatness is None
    for level in (1, 3):
        writer = sample_writer(np.random.default_rng(0), neatness=level)
        page = render_page(problem, clean_variant(problem), dpi=60, style="handwritten", writer=writer).page
        assert page.neatness == level


def _rule_of_each_step(family: str, seed: int, neatness: int) -> tuple[list[int], list[bool]]:
    """The rule each step's number sits on (digits and a dot have no descender), and which steps are fractions."""
    problem = _problem(family, seed)
    writer = sample_writer(np.random.default_rng(seed), neatness=neatness)
    draft = compose_page(problem, clean_variant(problem), page="a4", paper="lined", dpi=100, style="handwritten",
                         writer=writer, seed=seed)
    numbers = {b.ref: b for b in draft.rasterize().page.layout if b.kind == "step_number"}
    rules = [round((numbers[str(s.index)].y1 - draft.rule_top) / draft.pitch) for s in problem.steps]
    return rules, [r"\frac" in s.latex for s in problem.steps]


@pytest.mark.parametrize(("family", "neatness"), [("geometry.pythagoras", 1), ("geometry.pythagoras", 2),
                                                  ("algebra.exponents.simplify", 1),
                                                  ("algebra.exponents.simplify", 2),
                                                  ("arithmetic.fractions.add_unlike", 2)])
def test_on_lined_paper_a_normal_step_takes_the_next_rule_and_a_fraction_at_most_two(family: str,
                                                                                        neatness: int) -> None:
    for seed in range(3):
        rules, fractions = _rule_of_each_step(family, seed, neatness)
        for k in range(1, len(rules)):
            step = rules[k] - rules[k - 1]
            if fractions[k] or fractions[k - 1]:
                assert 1 <= step <= 2, (family, seed, rules)
            else:
                assert step == 1, f"{family} seed {seed}: an empty rule after step {k} ({rules})"


def test_question_only_and_handwritten_question_pages_are_deterministic() -> None:
    problem = _problem("trig.exact_values")
    writer = sample_writer(np.random.default_rng(1), neatness=3)

    def png(seed: int) -> bytes:
        page = render_page(problem, clean_variant(problem), paper="grid", dpi=70, style="handwritten", writer=writer,
                           seed=seed, show_solution=False, handwritten_question=True)
        return cv2.imencode(".png", page.pixels)[1].tobytes()

    assert png(5) == png(5) and png(5) != png(6)


def test_handwritten_question_draws_symbols_its_font_lacks_as_strokes() -> None:
    problem = _problem("geometry.circle.area")
    assert "π" in problem.question_text
    writer = sample_writer(np.random.default_rng(0), neatness=1, fonts=("caveat",))  # Caveat has no π
    draft = compose_page(problem, clean_variant(problem), dpi=80, style="handwritten", writer=writer,
                         handwritten_question=True)
    marks = _question_marks(draft, hand=True)
    assert any(isinstance(m, InkStroke) for m in marks)
    assert not any(isinstance(m, InkGlyph) and "π" in m.text for m in marks)
