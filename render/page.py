"""Page composer: question (and choices), figure, numbered solution steps and answer area, with boxes.

Composition is split like the degradation ops: :func:`compose_page` samples every random choice
(handwriting jitter, the exam's question number) into a :class:`Draft` of ink marks, and
:meth:`Draft.rasterize` draws it. Layout boxes of ink (question tokens and lines, choices, steps,
headers, crossed-out words) are measured from the ink each mark actually left, so a box always
contains its ink; rasterizing a subset of keys draws, e.g., one step alone in its exact place.

A step is either a worked line (its ``spans`` empty or the whole text: the step's LaTeX, typeset as
one line of math) or a sentence (a student's answer, a chain of thought): words in the page's text
font or the writer's hand with the math fragments ``spans`` marks typeset inline, wrapped at the
spaces between words, never inside a fragment. Each fragment also gets a box,
``step_math:<step>:<span index>``, inside the step's box, so an edit or an error can point at the claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal

import numpy as np

from render.figures import draw_figure
from render.handwriting import Hand, Writer, sample_line, sample_writer
from render.typeset import (
    SANS,
    SANS_BOLD,
    Face,
    GlyphOp,
    InkGlyph,
    InkLayer,
    InkMark,
    InkRect,
    Laid,
    PrintedFace,
    Row,
    Sym,
    TypesetError,
    font,
    lay_ink,
    layout,
    layout_lines,
    mark_bounds,
    moved,
    parse,
    parse_inline,
    parse_plain,
)
from synth.errors import ConfigError
from synth.records import Box, Problem, RenderedPage, Step, Variant
from synth.seeding import stage_rng

PAGE_INCHES = {"a4": (8.27, 11.69), "phone": (6.0, 8.0)}  # phone: a 3:4 photo of a page
PAPERS = ("plain", "lined", "grid", "exam")
STYLES = ("printed", "handwritten")
PAPER_RGB = {"plain": (250, 249, 245), "lined": (252, 252, 248), "grid": (251, 251, 249), "exam": (255, 255, 255)}
RULE_RGB = (170, 195, 225)
MARGIN_RGB = (225, 150, 150)
INK_RGB = (25, 25, 30)
SHRINK = (1.0, 0.86, 0.74, 0.64, 0.55)  # tried in turn when a solution does not fit the page
RULED_SLOPE = 0.3  # share of a hand's line slope left on ruled paper (sentence lines run the page's width)
STEP_OVERLAP_EM = 0.3  # how far a handwritten sentence step's box may reach into the box of the step above
TOUCH_EM = 0.12  # how far a handwritten line's ink may reach into the line above it within one step
PARAGRAPH_CHARS = 60  # sentence steps this long on average are paragraphs (cot), set apart; shorter ones are lines
HAND_SPACE_EM = 0.45  # between handwritten words: wider than a font's space, as pens leave it
RULE_PITCH_IN = 0.37  # exercise-book ruling (9.4 mm): a line with a radical or exponents fits on one rule


class PageFullError(ConfigError, ValueError):
    """The solution does not fit on the page even in the smallest type: the config asks for a page too small."""


@dataclass(frozen=True)
class PageImage:
    pixels: np.ndarray  # H x W x 3, uint8, RGB
    page: RenderedPage


@dataclass(frozen=True)
class PlacedFigure:
    pixels: np.ndarray
    x: int
    y: int
    boxes: tuple[Box, ...]  # already offset onto the page


@dataclass(frozen=True)
class Draft:
    """Everything needed to draw a page, with all randomness already sampled."""

    width: int
    height: int
    paper: str
    pitch: int  # rule spacing of lined / grid paper
    rule_top: int
    margin: int
    printed: tuple[tuple[str, InkMark], ...]  # (box key "kind:ref", mark)
    hand: tuple[tuple[str, InkMark], ...]
    hand_rgb: tuple[int, int, int]
    figures: tuple[PlacedFigure, ...]
    fixed: tuple[Box, ...]  # boxes that are places rather than ink (answer area, name field)
    meta: RenderedPage

    def rasterize(self, only: frozenset[str] | None = None) -> PageImage:
        """Draw the page; with ``only``, draw just the marks of those box keys (everything else blank)."""
        pixels = _paper(self.paper, self.width, self.height, self.pitch, self.rule_top, self.margin)
        boxes: list[Box] = []
        for fig in self.figures:
            if only is None or any(f"{b.kind}:{b.ref}" in only for b in fig.boxes):
                _multiply(pixels, fig.pixels, fig.x, fig.y)
            boxes.extend(fig.boxes)
        for marks, rgb in ((self.printed, INK_RGB), (self.hand, self.hand_rgb)):
            if not marks:
                continue
            layer = InkLayer(self.height, self.width)
            for key, mark in marks:
                if only is None or not only.isdisjoint(key.split("|")):
                    layer.draw(key, mark)
            pixels = lay_ink(pixels, layer.a, rgb)
            boxes.extend(Box(*key.split(":", 1), *map(float, ext)) for key, ext in layer.boxes().items())
        boxes.extend(self.fixed)
        return PageImage(pixels, replace(self.meta, layout=tuple(_merge_lines(boxes))))


def _merge_lines(boxes: list[Box]) -> list[Box]:
    """One box per key: a step written on two lines is one step box (the union of its ink)."""
    merged: dict[tuple[str, str], Box] = {}
    for b in boxes:
        key = (b.kind, b.ref)
        if key in merged:
            m = merged[key]
            b = Box(b.kind, b.ref, min(m.x0, b.x0), min(m.y0, b.y0), max(m.x1, b.x1), max(m.y1, b.y1))
        merged[key] = b
    return list(merged.values())


def _paper(kind: str, w: int, h: int, pitch: int, top: int, margin: int) -> np.ndarray:
    return _blank(kind, w, h, pitch, top, margin).copy()


@cache
def _blank(kind: str, w: int, h: int, pitch: int, top: int, margin: int) -> np.ndarray:
    """The empty sheet, built once per process and size (filling a page costs more than copying one)."""
    img = np.tile(np.array(PAPER_RGB[kind], np.uint8), (h, w, 1))
    if kind == "lined":
        img[top::pitch, :] = RULE_RGB
        img[:, max(0, margin - pitch // 2)] = MARGIN_RGB
    elif kind == "grid":
        step = max(6, pitch // 2)
        img[top % step::step, :] = RULE_RGB
        img[:, margin % step::step] = RULE_RGB
    img.flags.writeable = False
    return img


def _multiply(pixels: np.ndarray, fig: np.ndarray, x: int, y: int) -> None:
    h, w = fig.shape[:2]
    region = pixels[y:y + h, x:x + w]
    region[...] = (region.astype(np.uint16) * fig[:region.shape[0], :region.shape[1]] // 255).astype(np.uint8)


# ------------------------------------------------------------------------------------ composition


class _Composer:
    """Places a page top to bottom; ``y`` is the lowest ink (or layout bottom) placed so far.

    Every line asks :meth:`_baseline` where to sit: just below what is above it, and on ruled
    paper on the next free rule, so a normal line takes one rule and only a taller one (a stacked
    fraction) takes two. Handwritten lines are placed by the ink their jittered marks will leave.
    """

    def __init__(self, problem: Problem, variant: Variant, *, page: str, paper: str, dpi: int, style: str,
                 writer: Writer | None, seed: int, scale: float, show_solution: bool,
                 handwritten_question: bool) -> None:
        w_in, h_in = PAGE_INCHES[page]
        self.problem, self.variant, self.paper, self.dpi, self.style, self.seed = (
            problem, variant, paper, dpi, style, seed)
        self.show_solution = show_solution
        self.hand_question = handwritten_question and writer is not None
        self.width, self.height = int(round(w_in * dpi)), int(round(h_in * dpi))
        self.margin = round((0.8 if page == "a4" else 0.45) * dpi)
        self.size = max(8, round(12 * dpi / 72 * scale))
        self.line_h = round(self.size * 1.6)
        self.pitch = max(8, round(RULE_PITCH_IN * dpi * scale))
        self.rule_top = self.margin + self.pitch
        self.ruled = paper in ("lined", "grid")
        self.face = PrintedFace()
        self.writer = writer
        self.hand_size = 0.21 * dpi * scale * (writer.size if writer else 1.0)
        self.printed: list[tuple[str, InkMark]] = []
        self.hand: list[tuple[str, InkMark]] = []
        self.fixed: list[Box] = []
        self.figures: list[PlacedFigure] = []
        self.y = float(self.margin)
        self.paragraphs = True  # whether paragraphs are set apart (compose_page: a chain of thought's, while it fits)
        self._sky: tuple[float, float, dict[int, float]] | None = None  # (y when set, baseline, lowest ink per column)
        self._last_baseline = 0.0
        ascent, descent = font(SANS, self.size).getmetrics()
        self.text_ascent, self.text_descent = float(ascent), float(descent)

    # -- vertical placement
    def _snap(self, baseline: float) -> float:
        """On ruled paper text sits on the rules: move the baseline down to the next rule."""
        if not self.ruled:
            return float(np.ceil(baseline))
        step = self.pitch if self.paper == "lined" else max(6, self.pitch // 2)
        k = max(0.0, np.ceil((baseline - self.rule_top) / step))
        return float(self.rule_top + k * step - 1)

    def _baseline(self, ascent: float, gap: float) -> float:
        """Baseline for a line rising ``ascent`` above it, at least ``gap`` below everything placed."""
        return self._snap(self.y + gap + ascent)

    def _gap(self, plain: float) -> float:
        # Rules already separate lines, so ruled paper needs only clearance between ink.
        return self.size * (0.3 if self.ruled else plain)

    # -- printed words
    def text(self, key: str, text: str, x: float, baseline: float, bold: bool = False) -> float:
        path = SANS_BOLD if bold else SANS
        size = round(self.size * (1.1 if bold else 1.0))
        self.printed.append((key, InkGlyph(path, text, x, baseline, size)))
        return x + font(path, size).getlength(text)

    def heading(self, key: str, text: str, gap: float) -> None:
        baseline = self._baseline(self.text_ascent * 1.1, gap)
        self.text(key, text, self.margin, baseline, bold=True)
        self.y = baseline + self.text_descent

    # -- sections
    def header(self) -> None:
        rng = stage_rng(self.seed, "render:page")
        number = int(rng.integers(1, 21))
        if self.paper == "exam":
            self._exam_header(number)
        elif self.hand_question:
            hand = Hand(self.writer, stage_rng(self.seed, "render:header"))  # type: ignore[arg-type]
            laid = layout(Row((Sym(f"Q{number}.", "text"),)), hand.face, self.hand_size)
            self._hand_lines([[("header:problem", laid, float(self.margin))]], hand, gap=0.0)
        else:
            self.heading("header:problem", f"Question {number}", 0.0)

    def _exam_header(self, number: int) -> None:
        m, size = self.margin, self.size
        top = self.y
        box_h = round(size * 1.9)
        label_base = top + box_h * 0.68
        x = self.text("header:name_label", "Name", m, label_base) + size * 0.5
        name_w = (self.width - 2 * m) * 0.5
        self._frame("exam_field:name", x, top, x + name_w, top + box_h)
        x = self.text("header:date_label", "Date", x + name_w + size * 1.2, label_base) + size * 0.5
        self._frame("exam_field:date", x, top, self.width - m, top + box_h)
        self.y = top + box_h + size * 0.9
        self.printed.append(("header:rule", InkRect(m, self.y, self.width - m, self.y + max(2, size * 0.12))))
        self.y += size * 0.9
        self.text("header:problem", f"Question {number}", m, self.y + size * 1.1, bold=True)
        marks = f"[{min(6, 1 + len(self.variant.steps) // 2)} marks]"
        right = self.width - m - font(SANS, size).getlength(marks)
        self.text("header:marks", marks, right, self.y + size * 1.1)
        self.y += size * 1.1 + self.text_descent

    def _frame(self, key: str, x0: float, y0: float, x1: float, y1: float) -> None:
        t = float(max(1, round(self.size * 0.08)))
        for r in ((x0, y0, x1, y0 + t), (x0, y1 - t, x1, y1), (x0, y0, x0 + t, y1), (x1 - t, y0, x1, y1)):
            self.printed.append((key.replace("exam_field", "frame"), InkRect(*r)))
        self.fixed.append(Box(*key.split(":", 1), x0, y0, x1, y1))

    def question(self) -> None:
        gap = self.size * 0.9
        if self.hand_question:
            hand = Hand(self.writer, stage_rng(self.seed, "render:question"))  # type: ignore[arg-type]
            size = self.hand_size
            tokens = [(laid, f"question_token:{n}") for n, laid in enumerate(
                _token_layouts(self.problem.question_text, hand.face, size, self.problem.id))]
            lines = _wrap(tokens, self.margin, self.width - self.margin, hand.face.metrics(" ", "text")[0] * size)
            keyed = [[(f"{key}|question_line:{n}", laid, x) for laid, key, x in line]
                     for n, line in enumerate(lines, start=1)]
            self._hand_lines(keyed, hand, gap=gap)
            for letter, choice in zip("ABCDE", self.problem.choices or ()):
                laid = layout(Row((Sym(f"({letter}) {choice}", "text"),)), hand.face, size)
                self._hand_lines([[(f"choice:{letter}", laid, self.margin + self.size)]], hand, gap=self.size * 0.3)
            return
        tokens = [(laid, f"question_token:{n}") for n, laid in enumerate(
            _token_layouts(self.problem.question_text, self.face, self.size, self.problem.id))]
        lines = _wrap(tokens, self.margin, self.width - self.margin, font(SANS, self.size).getlength(" "))
        for n, line in enumerate(lines, start=1):
            ascent = max(self.text_ascent, *(laid.ascent for laid, _, _ in line))
            descent = max(self.text_descent, *(laid.descent for laid, _, _ in line))
            baseline = self._baseline(ascent, gap if n == 1 else self._gap(0.4))
            for laid, key, x in line:
                self.printed.extend((f"{key}|question_line:{n}", m) for m in self.face.marks(laid.ops, x, baseline))
            self.y = baseline + descent
        for letter, choice in zip("ABCDE", self.problem.choices or ()):
            baseline = self._baseline(self.text_ascent, self._gap(0.4))
            self.text(f"choice:{letter}", f"({letter}) {choice}", self.margin + self.size, baseline)
            self.y = baseline + self.text_descent

    def figure(self) -> None:
        fig = self.problem.figure
        if fig is None:
            return
        drawn = draw_figure(fig, self.dpi)
        h, w = drawn.pixels.shape[:2]
        if w > self.width - 2 * self.margin:
            raise ValueError(f"{self.problem.id}: the {fig.kind} figure is {w} px wide; the page has "
                             f"{self.width - 2 * self.margin} px between margins (make spec['size_in'] smaller)")
        x, y = (self.width - w) // 2, int(round(self.y + self.size))
        boxes = tuple(Box(b.kind, b.ref, b.x0 + x, b.y0 + y, b.x1 + x, b.y1 + y) for b in drawn.boxes)
        whole = Box("figure", fig.kind, float(x), float(y), float(x + w), float(y + h))
        self.figures.append(PlacedFigure(drawn.pixels, x, y, (whole, *boxes)))
        self.y = y + h

    def solution(self) -> None:
        if self.style == "printed":
            self.heading("header:solution", "Solution", self.size * 1.2)
            for step in self.variant.steps:
                if is_sentence(step):
                    self._printed_sentence(step)
                else:
                    self._printed_step(step.index, step.latex)
        else:
            for n, step in enumerate(self.variant.steps):
                if is_sentence(step):
                    self._hand_sentence(step, first=n == 0)
                else:
                    self._hand_step(step.index, step.latex, gap=self.size * 1.0 if n == 0 else self._hand_gap())

    def working(self) -> None:
        """Question-only pages: blank working space down to an answer area at the foot of the page."""
        bottom = self.height - self.margin - self.size * (3.4 if self.paper == "exam" else 2.0)
        top = self.y + self.size
        if bottom - top < 2 * self.size:
            bottom = top + 2 * self.size  # the page is full: a small area; compose_page shrinks the type
        self.fixed.append(Box("working_area", "working", float(self.margin), top, float(self.width - self.margin),
                              bottom))
        self.y = bottom

    def _lines(self, index: int, latex: str, face: object, size: float, x0: float) -> list:
        try:
            row = parse(latex)
        except TypesetError as exc:
            raise TypesetError(f"{self.problem.id} step {index}: {exc}") from None
        return layout_lines(row, face, size, self.width - self.margin - x0)  # type: ignore[arg-type]

    def _printed_step(self, index: int, latex: str) -> None:
        x0 = self.margin + self.size * 2.2
        lines = self._lines(index, latex, self.face, self.size, x0)
        for n, laid in enumerate(lines):
            baseline = self._baseline(max(laid.ascent, self.size * 0.75), self._gap(0.55))
            if n == 0:
                self.text(f"step_number:{index}", f"{index}.", self.margin, baseline)
            x = x0 + (self.size * 1.5 if n else 0.0)
            self.printed.extend((f"step:{index}", m) for m in self.face.marks(laid.ops, x, baseline))
            self.y = baseline + max(laid.descent, self.size * 0.25)

    def _hand_step(self, index: int, latex: str, gap: float) -> None:
        assert self.writer is not None
        hand = Hand(self.writer, stage_rng(self.seed, "render:step", index))
        size = self.hand_size
        x0 = self.margin + size * 2.0
        lines = self._lines(index, latex, hand.face, size, x0 + size * 2.5)
        for n, laid in enumerate(lines):
            line = sample_line(hand.rng, self.writer)
            x = x0 + (size * 1.5 if n else 0.0)
            marks: list[tuple[str, InkMark]] = []
            if n == 0:
                num = layout_lines(parse(f"{index}."), hand.face, size, 1e9)[0]
                marks.extend((f"step_number:{index}", m) for m in hand.marks(num.ops, self.margin, 0.0, size, line))
                if hand.rng.random() < hand.jit.cross_out:
                    word, strikes, width = hand.cross_out(x, 0.0, size, line)
                    marks.extend((f"step:{index}|crossed_out:{index}", m) for m in (*word, *strikes))
                    x += width
            marks.extend((f"step:{index}", m) for m in hand.marks(laid.ops, x, 0.0, size, line))
            self._put_hand(marks, gap if n == 0 else self._hand_gap())

    # -- sentence steps: words in the text font or the writer's hand, math fragments typeset inline
    def _units(self, step: Step, face: Face, size: float, column: float,
               word: Callable[[str], Laid]) -> list[list[tuple[Laid, str]]]:
        """The step cut where a line may break: at spaces in prose, never inside a math fragment (unless
        the fragment alone is wider than ``column``: then before its operators, as math lines break).

        A unit is the parts written without a space between them ("(so", "92°."), each with its box key:
        words belong to the step, a math fragment also to its ``step_math:<step>:<span>`` box.
        """
        units: list[list[tuple[Laid, str]]] = [[]]
        step_key = f"step:{step.index}"
        for text, span in _segments(step):
            if span is None:
                for piece in re.split(r"(\s+)", text):
                    if piece.isspace():
                        units.append([])
                    elif piece:
                        units[-1].append((word(piece), step_key))
                continue
            if text[:1].isspace():
                units.append([])
            key = f"{step_key}|step_math:{step.index}:{span}"
            lines = layout_lines(self._fragment(step, text), face, size, column, indent_em=0.0)
            if len(lines) > 1 and units[-1]:
                units.append([])  # a fragment broken over lines starts on its own line
            for n, laid in enumerate(lines):
                if n:
                    units.append([])
                units[-1].append((laid, key))
            if text[-1:].isspace():
                units.append([])
        return [u for u in units if u]

    def _fragment(self, step: Step, text: str) -> Row:
        """The claim itself is set from the step's LaTeX (as a worked line is); other fragments from their text."""
        try:
            if step.latex and text.strip() == (step.math or step.text).strip():
                return parse(step.latex)
            return parse_plain(text.strip())
        except TypesetError as exc:
            raise TypesetError(f"{self.problem.id} step {step.index}: {exc}") from None

    def _sentence_gap(self, hand: bool = False) -> float:
        """Space above a sentence step: more than between its own lines; paragraphs (a chain of thought) are
        set further apart, on ruled paper by a blank rule, while a student's short lines follow each other."""
        if self.ruled:
            return (self._hand_gap() if hand else self.size * 0.3) + (self.pitch * 0.7 if self.paragraphs else 0.0)
        return self.size * (1.1 if self.paragraphs else 0.75)

    def _printed_word(self, word: str) -> Laid:
        ascent, descent = font(SANS, round(self.size)).getmetrics()
        return Laid(font(SANS, round(self.size)).getlength(word), float(ascent), float(descent),
                    (GlyphOp(word, "text", 0.0, 0.0, self.size),))

    def _printed_sentence(self, step: Step) -> None:
        x0, right = self.margin + self.size * 2.2, float(self.width - self.margin)
        units = self._units(step, self.face, self.size, right - x0, self._printed_word)
        space = font(SANS, round(self.size)).getlength(" ")
        lines = _fill(units, x0, right, [space] * len(units), x0)
        for n, line in enumerate(lines):
            ascent = max(self.text_ascent, *(laid.ascent for laid, _, _ in line))
            descent = max(self.text_descent, *(laid.descent for laid, _, _ in line))
            baseline = self._baseline(ascent, self._sentence_gap() if n == 0 else self._gap(0.35))
            if n == 0:
                self.text(f"step_number:{step.index}", f"{step.index}.", self.margin, baseline)
            for laid, key, x in line:
                self.printed.extend((key, m) for m in self.face.marks(laid.ops, x, baseline))
            self.y = baseline + descent

    def _hand_sentence(self, step: Step, first: bool) -> None:
        """A sentence written by hand: every word and symbol jittered, one drifting baseline per line."""
        assert self.writer is not None
        hand = Hand(self.writer, stage_rng(self.seed, "render:step", step.index))
        size = self.hand_size
        x0, right = self.margin + size * 2.0, self.width - self.margin - size * 0.3  # room for the jitter
        crossed = hand.rng.random() < hand.jit.cross_out
        reserve = size * 2.5 if crossed else 0.0  # room for a false start before the first word
        units = self._units(step, hand.face, size, right - x0 - reserve,
                            lambda w: layout(Row((Sym(w, "text"),)), hand.face, hand.word_size(size)))
        space = HAND_SPACE_EM * size * self.writer.spacing
        spaces = (space * np.exp(hand.rng.normal(0.0, 2 * hand.jit.size, len(units)))).tolist()
        lines = _fill(units, x0, right, spaces, x0 + reserve)
        for n, line in enumerate(lines):
            drift = sample_line(hand.rng, self.writer)
            if self.ruled:  # the rules guide the pen along a long line: it wanders, but hardly climbs or falls
                drift = replace(drift, slope=drift.slope * RULED_SLOPE)
            marks: list[tuple[str, InkMark]] = []
            start = x0
            if n == 0:
                num = layout_lines(parse(f"{step.index}."), hand.face, size, 1e9)[0]
                marks.extend((f"step_number:{step.index}", m)
                             for m in hand.marks(num.ops, self.margin, 0.0, size, drift))
                if crossed:
                    word, strikes, width = hand.cross_out(x0, 0.0, size, drift)
                    marks.extend((f"step:{step.index}|crossed_out:{step.index}", m) for m in (*word, *strikes))
                    start = x0 + width - reserve  # the first word follows the false start
            for laid, key, x in line:
                # ops shifted to the line's own origin, so the baseline drifts along the line, not per word
                write = hand.marks if "step_math" in key else hand.word_marks
                marks.extend((key, m) for m in write(laid.shifted(x - x0, 0.0), start, 0.0, size, drift))
            if n == 0 and first:
                self._put_hand(marks, self.size * 1.0)  # the first line starts the skyline (_put_sentence_line)
                self._sky = self._sky_after([mark_bounds(m) for _, m in marks], {}, self._last_baseline)
            else:
                self._put_sentence_line(marks, new_step=n == 0)

    def _put_sentence_line(self, marks: list[tuple[str, InkMark]], new_step: bool) -> None:
        """Place a handwritten sentence line under the one before it, column by column: ascenders may reach
        down where the line above has no descenders, as on paper, so a messy line still takes one rule.

        The line's ink clears the ink above it in every column (inside one step a messy hand may touch the
        line above, as a hurried student does; a new step's ink never meets the step above, and its box reaches
        into that step's box by at most ``STEP_OVERLAP_EM``), its baseline sits at least
        a line below the previous line's (a new paragraph: a blank line or rule more), and on ruled paper it
        snaps to a rule.
        """
        sky = self._sky if self._sky is not None and self._sky[0] == self.y else None
        if sky is None:  # something else was placed since: clear everything, as other lines do
            self._put_hand(marks, self._hand_gap())
            self._sky = self._sky_after([mark_bounds(m) for _, m in marks], {}, self._last_baseline)
            return
        _, previous, floor = sky
        cell = self._sky_cell()
        gap = self._hand_gap() if new_step else -TOUCH_EM * self.hand_size
        line = self.pitch * 0.9 if self.ruled else self.hand_size * 1.25
        extra = (self.pitch if self.ruled else self.hand_size * 0.8) if new_step and self.paragraphs else 0.0
        need = previous + line + extra
        bounds = [mark_bounds(m) for _, m in marks]
        if new_step:  # a step's box reaches into the one above by at most STEP_OVERLAP_EM (their ink never meets)
            need = max(need, self.y + gap - min(b[1] for b in bounds) - STEP_OVERLAP_EM * self.hand_size)
        for x0, y0, x1, _ in bounds:
            for c in range(int(x0 // cell), int(x1 // cell) + 1):
                if c in floor:
                    need = max(need, floor[c] + gap - y0)
        baseline = self._snap(need)
        self.hand.extend((key, moved(m, 0.0, baseline)) for key, m in marks)
        self.y = max(self.y, baseline + max(b[3] for b in bounds) + 1)
        self._sky = self._sky_after(bounds, floor, baseline)

    def _sky_cell(self) -> float:
        return max(2.0, self.hand_size * 0.25)

    def _sky_after(self, bounds: list[tuple[float, float, float, float]], below: dict[int, float],
                   baseline: float) -> tuple[float, float, dict[int, float]]:
        """The skyline once marks with ``bounds`` (at baseline 0) are placed at ``baseline`` under the ink of
        ``below``: (the page's y now, the line's baseline, the lowest ink per column)."""
        floor = dict(below)
        cell = self._sky_cell()
        for x0, _, x1, y1 in bounds:
            for c in range(int(x0 // cell), int(x1 // cell) + 1):
                floor[c] = max(floor.get(c, -np.inf), baseline + y1)
        return self.y, baseline, floor

    def _hand_gap(self) -> float:
        """Clearance between handwritten lines: on ruled paper the rules part them, so ink may come close."""
        return 1.0 if self.ruled else self.size * 0.5

    def _hand_lines(self, lines: list[list[tuple[str, Laid, float]]], hand: Hand, gap: float) -> None:
        """Write laid-out tokens by hand, one drifting line each, placed below what is on the page."""
        for n, line in enumerate(lines):
            drift = sample_line(hand.rng, self.writer)  # type: ignore[arg-type]
            marks = [(key, m) for key, laid, x in line for m in hand.marks(laid.ops, x, 0.0, self.hand_size, drift)]
            self._put_hand(marks, gap if n == 0 else self._hand_gap())

    def _put_hand(self, marks: list[tuple[str, InkMark]], gap: float) -> None:
        """Place marks sampled at baseline 0 so their ink clears everything above by ``gap``."""
        if not marks:
            return
        bounds = [mark_bounds(m) for _, m in marks]
        top, bottom = min(b[1] for b in bounds), max(b[3] for b in bounds)
        baseline = self._snap(self.y + gap - top)
        self.hand.extend((key, moved(m, 0.0, baseline)) for key, m in marks)
        self.y = baseline + bottom + 1  # +1: glyph positions round to whole pixels when moved
        self._last_baseline = baseline

    def answer(self) -> None:
        size = self.size
        if self.paper == "exam":
            x0, x1 = self.width - self.margin - 3.2 * self.dpi, self.width - self.margin
            top = self.y + size * 0.8
            self.text("header:answer", "Answer", x0 + size * 0.4, top + size * 1.2, bold=True)
            self._frame("answer_area:answer", x0, top, x1, top + size * 3.4)
            self.y = top + size * 3.4
            return
        baseline = self._baseline(self.text_ascent * 1.1, size * 0.8)
        end = self.text("header:answer", "Answer:", self.margin, baseline, bold=True)
        x0 = end + size
        self.printed.append(("header:answer_line", InkRect(x0, baseline + 2, x0 + 2 * self.dpi, baseline + 3)))
        self.fixed.append(Box("answer_area", "answer", x0, baseline - size * 1.5, x0 + 2 * self.dpi, baseline + 3))
        self.y = baseline + 3

    def draft(self, hand_rgb: tuple[int, int, int], meta: RenderedPage) -> Draft:
        return Draft(self.width, self.height, self.paper, self.pitch, self.rule_top, self.margin,
                     tuple(self.printed), tuple(self.hand), hand_rgb, tuple(self.figures), tuple(self.fixed), meta)


def question_tokens(text: str) -> list[str]:
    """The question's tokens: its words, except that a mixed number (``1 5/7``) is one token."""
    words = text.split()
    out: list[str] = []
    for word in words:
        if out and _WHOLE.fullmatch(out[-1]) and _FRACTION_START.match(word):
            out[-1] = f"{out[-1]} {word}"
        else:
            out.append(word)
    return out


_WHOLE = re.compile(r"[−-]?\d+")
_FRACTION_START = re.compile(r"\d+/\d+(?![\w(]|\.\d)")


def _token_layouts(text: str, face: Face, size: float, problem_id: str) -> list[Laid]:
    """Each question token laid out: keyboard math (``a^9``, ``3/4``, ``√2``) typeset, words as they are."""
    out = []
    printed = isinstance(face, PrintedFace)
    if printed:
        ascent, descent = font(SANS, round(size)).getmetrics()
    for token in question_tokens(text):
        try:
            row = parse_inline(token)
        except TypesetError as exc:
            raise TypesetError(f"{problem_id} question: {exc}") from None
        if row is None and printed:  # a plain word: the font's own metrics, no ink measuring
            out.append(Laid(font(SANS, round(size)).getlength(token), float(ascent), float(descent),
                            (GlyphOp(token, "text", 0.0, 0.0, size),)))
        else:
            out.append(layout(row if row is not None else Row((Sym(token, "text"),)), face, size))
    return out


def is_sentence(step: Step) -> bool:
    """Whether a step has prose around its math (its spans leave words); a worked line is all math."""
    return bool(step.spans) and step.spans != ((0, len(step.text)),)


def _paragraphs(variant: Variant, solution_style: str | None = None) -> bool:
    """Whether the solution is written in paragraphs (a chain of thought) rather than a student's short lines.

    With the row's ``solution_style`` this is exact (``cot`` is paragraphs, ``student`` and ``worked`` are not);
    without it, it is guessed from the sentences' average length.
    """
    sentences = [s for s in variant.steps if is_sentence(s)]
    if not sentences:
        return False
    if solution_style is not None:
        return solution_style == "cot"
    return sum(len(s.text) for s in sentences) / len(sentences) >= PARAGRAPH_CHARS


def _segments(step: Step) -> list[tuple[str, int | None]]:
    """``step.text`` cut into prose (span None) and its math fragments (their index in ``step.spans``)."""
    out: list[tuple[str, int | None]] = []
    pos = 0
    for k, (start, end) in enumerate(step.spans):
        if not pos <= start < end <= len(step.text):
            raise TypesetError(f"step {step.index}: spans must be ascending, non-overlapping [start, end) ranges "
                               f"inside its text ({len(step.text)} characters), got {list(step.spans)}")
        if start > pos:
            out.append((step.text[pos:start], None))
        out.append((step.text[start:end], k))
        pos = end
    if pos < len(step.text):
        out.append((step.text[pos:], None))
    return out


def _fill(units: list[list[tuple[Laid, str]]], x0: float, right: float, spaces: list[float], first_x: float,
          ) -> list[list[tuple[Laid, str, float]]]:
    """Greedy line filling of units (parts set without a space between them); lines of (layout, key, x)."""
    lines: list[list[tuple[Laid, str, float]]] = [[]]
    x = first_x
    for unit, space in zip(units, spaces):
        width = sum(laid.width for laid, _ in unit)
        if lines[-1] and x + width > right:
            lines.append([])
            x = x0
        for laid, key in unit:
            lines[-1].append((laid, key, x))
            x += laid.width
        x += space
    return [line for line in lines if line]


def _wrap(tokens: list[tuple[Laid, str]], x0: float, right: float, space: float,
          ) -> list[list[tuple[Laid, str, float]]]:
    """Greedy line breaking of laid-out tokens; returns lines of (layout, key, x)."""
    lines: list[list[tuple[Laid, str, float]]] = [[]]
    x = x0
    for laid, key in tokens:
        if lines[-1] and x + laid.width > right:
            lines.append([])
            x = x0
        lines[-1].append((laid, key, x))
        x += laid.width + space
    return [line for line in lines if line]


def compose_page(problem: Problem, variant: Variant, *, page: str = "a4", paper: str = "plain", dpi: int = 100,
                 style: Literal["printed", "handwritten"] = "printed", writer: Writer | None = None,
                 seed: int = 0, show_solution: bool = True, handwritten_question: bool = False,
                 solution_style: str | None = None) -> Draft:
    """Lay out the page and sample its handwriting; shrinks the type when the solution would not fit.

    ``seed`` keys every random choice (``stage_rng(seed, "render:step", i)`` per step), so the clean
    page and its variants share all steps before the first edited one. ``show_solution=False``
    draws the question (and figure) over blank working space and an empty answer area, the way a
    photographed worksheet looks before it is done; ``handwritten_question`` (handwritten style
    only) has the writer copy the question out by hand too. ``solution_style`` is the row's (``worked``,
    ``student``, ``cot``): a chain of thought is set in paragraphs, a student's answer in lines; None (a page
    drawn without a row) guesses it from the sentences' length.
    """
    if page not in PAGE_INCHES:
        raise ValueError(f"page must be one of {sorted(PAGE_INCHES)}, got {page!r}")
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {PAPERS}, got {paper!r}")
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    if handwritten_question and style != "handwritten":
        raise ValueError("handwritten_question needs style='handwritten' (a printed page has no writer)")
    if style == "handwritten" and writer is None:
        writer = sample_writer(stage_rng(seed, "render:writer"), neatness=1)
    hand = style == "handwritten" and writer is not None
    hand_rgb = writer.rgb if (writer and hand) else INK_RGB
    # A chain of paragraphs first gives up the space between its paragraphs, then shrinks the type.
    paragraphs = show_solution and _paragraphs(variant, solution_style)
    spaced = (True, False) if paragraphs else (True,)
    for scale, apart in ((scale, apart) for scale in SHRINK for apart in spaced):
        c = _Composer(problem, variant, page=page, paper=paper, dpi=dpi, style=style,
                      writer=writer if hand else None, seed=seed, scale=scale, show_solution=show_solution,
                      handwritten_question=handwritten_question)
        c.paragraphs = apart and paragraphs
        c.header()
        c.question()
        c.figure()
        if show_solution:
            c.solution()
        else:
            c.working()
        c.answer()
        if c.y <= c.height - c.margin * 0.5:
            break
    else:
        what = "solution" if show_solution else "question"
        shorter = "fewer steps" if not any(is_sentence(s) for s in variant.steps) else \
            "fewer steps, or generate.solution_style: worked (a chain in sentences takes more room)"
        raise PageFullError(f"{problem.id}: the {what} does not fit on a {page} page at {dpi} dpi even at "
                            f"{SHRINK[-1]:.0%} type size; use render.page: a4 or {shorter}")
    meta = RenderedPage(style=style, font=writer.name if hand else "DejaVu Sans", paper=paper,
                        ink=writer.ink if hand else "black", dpi=dpi, width=c.width, height=c.height,
                        neatness=writer.neatness if hand else None, show_solution=show_solution,
                        handwritten_question=handwritten_question)
    return c.draft(hand_rgb, meta)


def render_page(problem: Problem, variant: Variant, *, page: str = "a4", paper: str = "plain", dpi: int = 100,
                style: Literal["printed", "handwritten"] = "printed", writer: Writer | None = None,
                seed: int = 0, show_solution: bool = True, handwritten_question: bool = False,
                solution_style: str | None = None) -> PageImage:
    """Draw the question, figure and the variant's steps; every line, token, step and figure primitive
    gets a box. Same arguments, same bytes. ``solution_style``: see :func:`compose_page`."""
    return compose_page(problem, variant, page=page, paper=paper, dpi=dpi, style=style, writer=writer,
                        seed=seed, show_solution=show_solution, handwritten_question=handwritten_question,
                        solution_style=solution_style).rasterize()


def sample_hand(rng: np.random.Generator, *, style: str, handwritten_share: float | None = None,
                neatness: int | list[int] = 1, writers: tuple[str, ...] | list[str] | None = None,
                ) -> tuple[Literal["printed", "handwritten"], Writer | None]:
    """Pick one item's modality and writer from the render config (``style`` printed/handwritten/mixed)."""
    if style == "mixed":
        share = 0.5 if handwritten_share is None else handwritten_share
        style = "handwritten" if rng.random() < share else "printed"
    if style == "printed":
        return "printed", None
    levels = neatness if isinstance(neatness, list) else [neatness]
    level = int(levels[int(rng.integers(len(levels)))])
    fonts = tuple(writers) if writers else ("kalam", "caveat", "indie_flower", "shadows_into_light")
    return "handwritten", sample_writer(rng, neatness=level, fonts=fonts)
