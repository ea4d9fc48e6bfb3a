"""Page composer: question (and choices), figure, numbered solution steps and answer area, with boxes.

Composition is split like the degradation ops: :func:`compose_page` samples every random choice
(handwriting jitter, the exam's question number) into a :class:`Draft` of ink marks, and
:meth:`Draft.rasterize` draws it. Layout boxes of ink (question tokens and lines, choices, steps,
headers, crossed-out words) are measured from the ink each mark actually left, so a box always
contains its ink; rasterizing a subset of keys draws, e.g., one step alone in its exact place.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import Literal

import numpy as np

from render.handwriting import Hand, Writer, sample_line, sample_writer
from render.typeset import (
    SANS,
    SANS_BOLD,
    InkGlyph,
    InkLayer,
    InkMark,
    InkRect,
    PrintedFace,
    TypesetError,
    font,
    lay_ink,
    layout_lines,
    parse,
)
from synth.records import Box, Problem, RenderedPage, Variant
from synth.seeding import stage_rng

PAGE_INCHES = {"a4": (8.27, 11.69), "phone": (6.0, 8.0)}  # phone: a 3:4 photo of a page
PAPERS = ("plain", "lined", "grid", "exam")
STYLES = ("printed", "handwritten")
PAPER_RGB = {"plain": (250, 249, 245), "lined": (252, 252, 248), "grid": (251, 251, 249), "exam": (255, 255, 255)}
RULE_RGB = (170, 195, 225)
MARGIN_RGB = (225, 150, 150)
INK_RGB = (25, 25, 30)
SHRINK = (1.0, 0.86, 0.74, 0.64, 0.55)  # tried in turn when a solution does not fit the page


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
    def __init__(self, problem: Problem, variant: Variant, *, page: str, paper: str, dpi: int, style: str,
                 writer: Writer | None, seed: int, scale: float) -> None:
        w_in, h_in = PAGE_INCHES[page]
        self.problem, self.variant, self.paper, self.dpi, self.style, self.seed = (
            problem, variant, paper, dpi, style, seed)
        self.width, self.height = int(round(w_in * dpi)), int(round(h_in * dpi))
        self.margin = round((0.8 if page == "a4" else 0.45) * dpi)
        self.size = max(8, round(12 * dpi / 72 * scale))
        self.line_h = round(self.size * 1.6)
        self.pitch = max(8, round(0.3 * dpi * scale))
        self.rule_top = self.margin + self.pitch
        self.face = PrintedFace()
        self.writer = writer
        self.hand_size = 0.21 * dpi * scale * (writer.size if writer else 1.0)
        self.printed: list[tuple[str, InkMark]] = []
        self.hand: list[tuple[str, InkMark]] = []
        self.fixed: list[Box] = []
        self.figures: list[PlacedFigure] = []
        self.y = float(self.margin)

    # -- printed words
    def text(self, key: str, text: str, x: float, baseline: float, bold: bool = False) -> float:
        path = SANS_BOLD if bold else SANS
        size = round(self.size * (1.1 if bold else 1.0))
        self.printed.append((key, InkGlyph(path, text, x, baseline, size)))
        return x + font(path, size).getlength(text)

    def words(self, kind: str, words: list[str], first_ref: int, x0: float, *, line_kind: str | None,
              line_no: int) -> tuple[int, int]:
        """Wrap ``words`` from ``x0``; each word is a token box; returns (next token ref, next line number)."""
        f = font(SANS, self.size)
        space = f.getlength(" ")
        right = self.width - self.margin
        x, ref = x0, first_ref
        baseline = self.y + self.size
        for word in words:
            wlen = f.getlength(word)
            if x > x0 and x + wlen > right:
                baseline += self.line_h
                line_no += 1
                x = x0
            key = f"{kind}:{ref}" + (f"|{line_kind}:{line_no}" if line_kind else "")
            self.printed.append((key, InkGlyph(SANS, word, x, baseline, self.size)))
            x += wlen + space
            ref += 1
        self.y = baseline + self.line_h - self.size
        return ref, line_no + 1

    # -- sections
    def header(self) -> None:
        rng = stage_rng(self.seed, "render:page")
        number = int(rng.integers(1, 21))
        if self.paper == "exam":
            self._exam_header(number)
        else:
            self.text("header:problem", f"Question {number}", self.margin, self.y + self.size * 1.1, bold=True)
            self.y += self.line_h * 1.5

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
        self.y += self.line_h * 1.5

    def _frame(self, key: str, x0: float, y0: float, x1: float, y1: float) -> None:
        t = float(max(1, round(self.size * 0.08)))
        for r in ((x0, y0, x1, y0 + t), (x0, y1 - t, x1, y1), (x0, y0, x0 + t, y1), (x1 - t, y0, x1, y1)):
            self.printed.append((key.replace("exam_field", "frame"), InkRect(*r)))
        self.fixed.append(Box(*key.split(":", 1), x0, y0, x1, y1))

    def question(self) -> None:
        words = self.problem.question_text.split()
        self.words("question_token", words, 0, self.margin, line_kind="question_line", line_no=1)
        if self.problem.choices:
            self.y += self.size * 0.4
            for letter, choice in zip("ABCDE", self.problem.choices):
                self.text(f"choice:{letter}", f"({letter}) {choice}", self.margin + self.size, self.y + self.size)
                self.y += self.line_h
        self.y += self.line_h * 0.6

    def figure(self) -> None:
        fig = self.problem.figure
        if fig is None:
            return
        from render.figures import draw_figure

        drawn = draw_figure(fig, self.dpi)
        h, w = drawn.pixels.shape[:2]
        if w > self.width - 2 * self.margin:
            raise ValueError(f"{self.problem.id}: the {fig.kind} figure is {w} px wide; the page has "
                             f"{self.width - 2 * self.margin} px between margins (make spec['size_in'] smaller)")
        x, y = (self.width - w) // 2, int(round(self.y))
        boxes = tuple(Box(b.kind, b.ref, b.x0 + x, b.y0 + y, b.x1 + x, b.y1 + y) for b in drawn.boxes)
        whole = Box("figure", fig.kind, float(x), float(y), float(x + w), float(y + h))
        self.figures.append(PlacedFigure(drawn.pixels, x, y, (whole, *boxes)))
        self.y += h + self.line_h * 0.6

    def solution(self) -> None:
        if self.style == "printed":
            self.text("header:solution", "Solution", self.margin, self.y + self.size * 1.1, bold=True)
            self.y += self.line_h * 1.3
            for step in self.variant.steps:
                self._printed_step(step.index, step.latex)
        else:
            self.y += self.line_h * 0.3
            for step in self.variant.steps:
                self._hand_step(step.index, step.latex)

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
            baseline = self.y + max(laid.ascent, self.size * 0.75)
            if n == 0:
                self.text(f"step_number:{index}", f"{index}.", self.margin, baseline)
            x = x0 + (self.size * 1.5 if n else 0.0)
            self.printed.extend((f"step:{index}", m) for m in self.face.marks(laid.ops, x, baseline))
            self.y = baseline + max(laid.descent, self.size * 0.25) + self.size * 0.55

    def _hand_step(self, index: int, latex: str) -> None:
        assert self.writer is not None
        hand = Hand(self.writer, stage_rng(self.seed, "render:step", index))
        size = self.hand_size
        x0 = self.margin + size * 2.0
        lines = self._lines(index, latex, hand.face, size, x0 + size * 2.5)
        j = hand.jit
        stray = (3 * j.position + 1.3 * j.drift + j.size) * size  # how far jittered ink may leave its layout
        for n, laid in enumerate(lines):
            baseline = self._snap(self.y + laid.ascent + stray + size * 0.1)
            line = sample_line(hand.rng, self.writer)
            x = x0 + (size * 1.5 if n else 0.0)
            if n == 0:
                num = layout_lines(parse(f"{index}."), hand.face, size, 1e9)[0]
                number = hand.marks(num.ops, self.margin, baseline, size, line)
                self.hand.extend((f"step_number:{index}", m) for m in number)
                if hand.rng.random() < hand.jit.cross_out:
                    word, strikes, width = hand.cross_out(x, baseline, size, line)
                    self.hand.extend((f"step:{index}|crossed_out:{index}", m) for m in (*word, *strikes))
                    x += width
            self.hand.extend((f"step:{index}", m) for m in hand.marks(laid.ops, x, baseline, size, line))
            self.y = baseline + laid.descent + stray + size * 0.1

    def _snap(self, baseline: float) -> float:
        """On ruled paper a hand writes on the rules: move the baseline down to the next rule."""
        if self.paper not in ("lined", "grid"):
            return baseline
        step = self.pitch if self.paper == "lined" else max(6, self.pitch // 2)
        k = np.ceil((baseline - self.rule_top) / step)
        return float(self.rule_top + k * step - 1)

    def answer(self) -> None:
        size = self.size
        self.y += self.line_h * 0.4
        if self.paper == "exam":
            x0, x1 = self.width - self.margin - 3.2 * self.dpi, self.width - self.margin
            top = self.y
            self.text("header:answer", "Answer", x0 + size * 0.4, top + size * 1.2, bold=True)
            self._frame("answer_area:answer", x0, top, x1, top + size * 3.4)
            self.y = top + size * 3.4
            return
        end = self.text("header:answer", "Answer:", self.margin, self.y + size, bold=True)
        x0 = end + size
        base = self.y + size + 2
        self.printed.append(("header:answer_line", InkRect(x0, base, x0 + 2 * self.dpi, base + 1)))
        self.fixed.append(Box("answer_area", "answer", x0, self.y - size * 0.5, x0 + 2 * self.dpi, base + 3))
        self.y = base + 3

    def draft(self, hand_rgb: tuple[int, int, int], meta: RenderedPage) -> Draft:
        return Draft(self.width, self.height, self.paper, self.pitch, self.rule_top, self.margin,
                     tuple(self.printed), tuple(self.hand), hand_rgb, tuple(self.figures), tuple(self.fixed), meta)


def compose_page(problem: Problem, variant: Variant, *, page: str = "a4", paper: str = "plain", dpi: int = 100,
                 style: Literal["printed", "handwritten"] = "printed", writer: Writer | None = None,
                 seed: int = 0) -> Draft:
    """Lay out the page and sample its handwriting; shrinks the type when the solution would not fit.

    ``seed`` keys every random choice (``stage_rng(seed, "render:step", i)`` per step), so the clean
    page and its variants share all steps before the first edited one.
    """
    if page not in PAGE_INCHES:
        raise ValueError(f"page must be one of {sorted(PAGE_INCHES)}, got {page!r}")
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {PAPERS}, got {paper!r}")
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    if style == "handwritten" and writer is None:
        writer = sample_writer(stage_rng(seed, "render:writer"), neatness=1)
    hand_rgb = writer.rgb if (writer and style == "handwritten") else INK_RGB
    for scale in SHRINK:
        c = _Composer(problem, variant, page=page, paper=paper, dpi=dpi, style=style,
                      writer=writer if style == "handwritten" else None, seed=seed, scale=scale)
        c.header()
        c.question()
        c.figure()
        c.solution()
        c.answer()
        if c.y <= c.height - c.margin * 0.5:
            break
    else:
        raise ValueError(f"{problem.id}: the solution does not fit on a {page} page at {dpi} dpi even at "
                         f"{SHRINK[-1]:.0%} type size; use page: a4 or fewer steps")
    hand = style == "handwritten" and writer is not None
    meta = RenderedPage(style=style, font=writer.name if hand else "DejaVu Sans", paper=paper,
                        ink=writer.ink if hand else "black", dpi=dpi, width=c.width, height=c.height)
    return c.draft(hand_rgb, meta)


def render_page(problem: Problem, variant: Variant, *, page: str = "a4", paper: str = "plain", dpi: int = 100,
                style: Literal["printed", "handwritten"] = "printed", writer: Writer | None = None,
                seed: int = 0) -> PageImage:
    """Draw the question, figure and the variant's steps; every line, token, step and figure primitive
    gets a box. Same arguments, same bytes."""
    return compose_page(problem, variant, page=page, paper=paper, dpi=dpi, style=style, writer=writer,
                        seed=seed).rasterize()


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
