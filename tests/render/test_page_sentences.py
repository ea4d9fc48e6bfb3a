"""Sentence steps (a student's answer, a chain of thought): words and inline math, wrapped, with claim boxes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from perturb.reasoning.base import clean_variant
from render.handwriting import sample_writer
from render.ink import InkGlyph
from render.latex import Frac, Script, Sqrt, Sym, TypesetError, parse_plain
from render.page import STEP_OVERLAP_EM, compose_page, render_page
from synth.errors import ConfigError
from synth.generators import get_family
from synth.records import Box, Problem, Step, Variant


def _problem() -> Problem:
    return get_family("geometry.triangle.angle_sum").build(np.random.default_rng(3), difficulty="medium",
                                                           question_type="free", problem_id="sentences")


def sentence(index: int, *parts: str | tuple[str], latex: str = "") -> Step:
    """A step from prose strings and 1-tuples of math; the last math part is the claim (``math``)."""
    text, spans, claim = "", [], ""
    for part in parts:
        if isinstance(part, tuple):
            spans.append((len(text), len(text) + len(part[0])))
            claim = part[0]
        text += part[0] if isinstance(part, tuple) else part
    return Step(index, "demo", "0", text, latex, math=claim, spans=tuple(spans))


STUDENT = (
    sentence(1, "The question asks for the angle marked ", ("x",), "."),
    sentence(2, "From the figure, the top angle is ", ("40°",), " and the two marked sides are equal."),
    sentence(3, "So the base angles are equal, and the angles of a triangle add up to ", ("180°",), "."),
    sentence(4, "The two base angles together are ", ("180 − 40 = 140",), " degrees.", latex="180 - 40 = 140"),
    sentence(5, "Each base angle is ", ("140/2 = 70",), ".", latex=r"\frac{140}{2} = 70"),
    sentence(6, "Check: ", ("70 + 70 + 40 = 180",), ", which is right."),
    sentence(7, "So ", ("x = 70°",), ".", latex=r"x = 70^\circ"),
)
COT = (
    sentence(1, "First, let's find what the question asks: the angle marked x at the base of the isosceles "
             "triangle UVW. From the figure, the angle at W is ", ("40°",), ", and the tick marks show that "
             "the sides UW and VW are equal, so the triangle is isosceles."),
    sentence(2, "Next, the angles of a triangle add up to 180 degrees, and the two base angles are equal, so "
             "together they make ", ("180 − 40 = 140",), " degrees, and each of them is half of that, "
             "which is ", ("140/2 = 70",), " degrees.", latex=r"\frac{140}{2} = 70"),
    sentence(3, "Therefore, the angle marked x is ", ("70°",), ", and as a check ", ("70 + 70 + 40 = 180",),
             " degrees, which is the angle sum of a triangle, so the answer is consistent."),
)
PAGES = [("printed", 1, "plain"), ("handwritten", 1, "lined"), ("handwritten", 3, "plain"),
         ("handwritten", 2, "grid")]


def _draft(steps: tuple[Step, ...], style: str = "printed", neatness: int = 1, paper: str = "plain", seed: int = 7,
           page: str = "a4"):
    problem = _problem()
    writer = sample_writer(np.random.default_rng(neatness), neatness=neatness) if style == "handwritten" else None
    variant = replace(clean_variant(problem), steps=steps)
    return compose_page(problem, variant, page=page, paper=paper, dpi=80, style=style, writer=writer, seed=seed)


def _boxes(page, kind: str) -> dict[str, Box]:
    return {b.ref: b for b in page.layout if b.kind == kind}


def _ink(draft, keys: set[str]) -> np.ndarray:
    """Pixels (row, col) where drawing only ``keys`` changes the empty page."""
    blank = draft.rasterize(only=frozenset()).pixels
    alone = draft.rasterize(only=frozenset(keys)).pixels
    return np.argwhere((alone != blank).any(axis=2))


def _inside(points: np.ndarray, b: Box) -> np.ndarray:
    return (points[:, 0] >= b.y0) & (points[:, 0] < b.y1) & (points[:, 1] >= b.x0) & (points[:, 1] < b.x1)


def _contains(outer: Box, inner: Box) -> bool:
    return outer.x0 <= inner.x0 and outer.y0 <= inner.y0 and inner.x1 <= outer.x1 and inner.y1 <= outer.y1


@pytest.mark.parametrize(("style", "neatness", "paper"), PAGES, ids=[f"{s}-{n}-{p}" for s, n, p in PAGES])
@pytest.mark.parametrize("chain", ["student", "cot"])
def test_every_math_fragment_has_a_box_inside_its_step_box_and_holding_its_ink(
        chain: str, style: str, neatness: int, paper: str) -> None:
    steps = STUDENT if chain == "student" else COT
    draft = _draft(steps, style, neatness, paper)
    page = draft.rasterize().page
    step_boxes, math_boxes = _boxes(page, "step"), _boxes(page, "step_math")
    assert sorted(math_boxes) == sorted(f"{s.index}:{k}" for s in steps for k in range(len(s.spans)))
    for ref, box in math_boxes.items():
        step = ref.split(":")[0]
        assert _contains(step_boxes[step], box), f"fragment {ref} lies outside step {step}'s box"
        ink = _ink(draft, {f"step_math:{ref}"})
        assert len(ink) > 10 and _inside(ink, box).all(), f"fragment {ref}'s ink is not inside its box"
    for step in steps:
        box = step_boxes[str(step.index)]
        assert 0 <= box.x0 and box.x1 <= page.width and 0 <= box.y0 and box.y1 <= page.height
        words = _ink(draft, {f"step:{step.index}"})
        in_math = np.zeros(len(words), bool)
        for ref, b in math_boxes.items():
            if ref.startswith(f"{step.index}:"):
                in_math |= _inside(words, b)
        assert (~in_math).sum() > 50, f"step {step.index} has no words outside its math"


@pytest.mark.parametrize(("style", "neatness", "paper"), PAGES, ids=[f"{s}-{n}-{p}" for s, n, p in PAGES])
def test_paragraphs_wrap_inside_the_text_column_and_never_break_a_short_fragment(
        style: str, neatness: int, paper: str) -> None:
    draft = _draft(COT, style, neatness, paper)
    page = draft.rasterize().page
    steps, fragments = _boxes(page, "step"), _boxes(page, "step_math")
    line = 80 * 12 / 72 * 1.6  # a printed text line at 80 dpi
    for box in steps.values():
        assert draft.margin <= box.x0 and box.x1 <= draft.width - draft.margin + 2
        assert box.y1 - box.y0 > 1.5 * line, "a paragraph of three sentences wraps onto several lines"
    for ref, box in fragments.items():
        if ref != "2:1":  # every fragment but the stacked fraction (140/2) is one line high
            assert box.y1 - box.y0 < 1.4 * line, f"fragment {ref} was broken across lines"


def test_a_fragment_wider_than_the_column_breaks_before_its_operators_and_stays_inside() -> None:
    wide = " + ".join(str(n) for n in range(100, 160)) + " = 7770"
    draft = _draft((sentence(1, "Adding them all, ", (wide,), " in total."),))
    page = draft.rasterize().page
    box = _boxes(page, "step_math")["1:0"]
    assert box.y1 - box.y0 > 2 * 80 * 12 / 72 and box.x1 <= draft.width - draft.margin + 1


def test_fractions_roots_and_powers_in_fragments_stay_math() -> None:
    assert isinstance(parse_plain("140/2 = 70").items[0], Frac)
    assert isinstance(parse_plain("√(4^2 + 3^2)").items[0], Sqrt)
    assert isinstance(parse_plain("a^(3 × 3)").items[0], Script)
    assert parse_plain("12 cm").items[-1] == Sym("cm", "text")
    printed = _draft((sentence(1, "Each is ", ("140/2 = 70",), "."), sentence(2, "Each is ", ("140 ÷ 2 = 70",), ".")))
    boxes = _boxes(printed.rasterize().page, "step_math")
    stacked, inline = boxes["1:0"], boxes["2:0"]
    assert stacked.y1 - stacked.y0 > 1.6 * (inline.y1 - inline.y0), "a plain 140/2 is set as a stacked fraction"


def test_the_claim_is_set_from_the_steps_latex() -> None:
    claim = sentence(1, "Each base angle is ", ("140 ÷ 2 = 70",), ".", latex=r"\frac{140}{2} = 70")
    plain = replace(claim, latex="")
    tall = _boxes(_draft((claim,)).rasterize().page, "step_math")["1:0"]
    flat = _boxes(_draft((plain,)).rasterize().page, "step_math")["1:0"]
    assert tall.y1 - tall.y0 > 1.6 * (flat.y1 - flat.y0)


@pytest.mark.parametrize("style", ["printed", "handwritten"])
def test_a_step_whose_span_is_its_whole_text_is_drawn_as_a_worked_line(style: str) -> None:
    problem = _problem()
    worked = clean_variant(problem)
    spanned = replace(worked, steps=tuple(replace(s, math=s.text, spans=((0, len(s.text)),)) for s in worked.steps))
    writer = sample_writer(np.random.default_rng(1), neatness=2) if style == "handwritten" else None
    a = render_page(problem, worked, dpi=80, style=style, writer=writer, seed=3)
    b = render_page(problem, spanned, dpi=80, style=style, writer=writer, seed=3)
    assert np.array_equal(a.pixels, b.pixels) and a.page == b.page
    assert not _boxes(b.page, "step_math")


def test_sentence_pages_are_deterministic_and_the_hand_moves_words_per_seed() -> None:
    one = _draft(STUDENT, "handwritten", 2, "lined", seed=4).rasterize()
    again = _draft(STUDENT, "handwritten", 2, "lined", seed=4).rasterize()
    other = _draft(STUDENT, "handwritten", 2, "lined", seed=5).rasterize()
    assert np.array_equal(one.pixels, again.pixels) and one.page == again.page
    assert not np.array_equal(one.pixels, other.pixels)


@pytest.mark.parametrize("neatness", [1, 2, 3])
def test_a_paragraph_written_on_lined_paper_leaves_no_blank_rule_inside_it(neatness: int) -> None:
    draft = _draft(COT, "handwritten", neatness, "lined")
    for step in (COT[0], COT[2]):  # (the second holds a stacked fraction, which takes two rules)
        glyphs = [m for key, m in draft.hand if key.split("|")[0] == f"step:{step.index}" and isinstance(m, InkGlyph)]
        rules = {round((m.y + 1 - draft.rule_top) / draft.pitch) for m in glyphs}
        assert len(rules) > 1 and rules == set(range(min(rules), max(rules) + 1)), (
            f"step {step.index} skips a rule: written on rules {sorted(rules)}")


def test_paragraphs_are_set_further_apart_than_a_students_lines() -> None:
    def gaps(steps):
        b = sorted(_boxes(_draft(steps).rasterize().page, "step").values(), key=lambda b: b.y0)
        return min(n.y0 - p.y1 for p, n in zip(b, b[1:]))
    assert gaps(COT) > gaps(STUDENT[3:])


def test_spans_outside_the_text_name_the_step() -> None:
    bad = Step(2, "demo", "0", "So x = 4.", "x = 4", math="x = 4", spans=((3, 40),))
    with pytest.raises(TypesetError, match=r"step 2: spans must be .* inside its text \(9 characters\)"):
        _draft((STUDENT[0], bad))


def test_a_chain_too_long_for_the_page_is_refused_with_the_fix_not_cut_short() -> None:
    many = tuple(replace(COT[1], index=i) for i in range(1, 40))
    problem = _problem()
    with pytest.raises(ConfigError, match="does not fit on a phone page .* render.page: a4 .*solution_style: worked"):
        render_page(problem, Variant("clean", many, "70", True), page="phone", dpi=80)


@pytest.mark.parametrize(("style", "neatness", "paper"), [("printed", 1, "lined"), ("handwritten", 3, "lined"),
                                                         ("handwritten", 2, "plain")])
def test_steps_never_share_ink_and_their_boxes_barely_overlap(style: str, neatness: int, paper: str) -> None:
    draft = _draft(STUDENT, style, neatness, paper)
    boxes = _boxes(draft.rasterize().page, "step")
    allowed = 0.0 if style == "printed" else STEP_OVERLAP_EM * draft.meta.dpi * 0.21 * 1.1 + 1  # em at most
    owner = {}
    for step in STUDENT:
        for y, x in map(tuple, _ink(draft, {f"step:{step.index}"})):
            assert owner.setdefault((y, x), step.index) == step.index, f"steps {owner[y, x]} and {step.index} share ink"
    for above, below in zip(STUDENT, STUDENT[1:]):
        a, b = boxes[str(above.index)], boxes[str(below.index)]
        assert a.y1 - b.y0 <= allowed, f"step {below.index}'s box reaches {a.y1 - b.y0} px into step {above.index}'s"
