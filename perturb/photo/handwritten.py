"""Handwritten interference: the question copied out by hand, a final answer written in, working in free space.

MathReal's rubric (severity 0 = identity):

- ``handwritten_question``: printed / neat / irregular / messy. The printed question (and its
  options) is covered with the paper's own colour and rules, and a writer copies the same tokens
  out at neatness = severity; the ``question_token`` / ``question_line`` / ``choice`` boxes become
  the handwritten ones, so question_marking run afterwards marks the handwriting.
- ``handwritten_answer`` (0/1): the final answer written in the answer blank, or a tick beside the
  chosen option of a multiple-choice question.
- ``handwritten_working``: 1 line / 2-3 lines / 4 or more lines of working, from the shown
  solution's steps and scratch arithmetic on the question's numbers, placed in space that no
  layout box touches, so it never lands on ink.

An op sees only the page, whose layout holds boxes, not words, so the words come in as a
:class:`~perturb.photo.base.PageText` (``degrade(..., text=page_text(problem, variant))``). The
written answer is the shown solution's: for a clean control it is correct; for an error variant
it is the wrong answer the solution reached, and ``answer_correct`` says so. Every word written is
recorded in the params, so a replay needs only the params. On a handwritten page the student's own
hand (the page's font and ink) does the writing; on a printed page a writer is sampled.
"""

from __future__ import annotations

import math
import re
from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import DegradationError, Op, PageText, Rubric
from perturb.photo.functional.handwriting import (
    LINE_GAP_EM,
    answer_marks,
    cover_px,
    extent,
    laid_latex,
    paper_under,
    question_marks,
    working_marks,
    write_answer,
    write_question,
    write_working,
    writer_of,
)
from perturb.photo.measure import luma, pen_mask
from render.handwriting import NEATNESS, WRITER_NAMES, Hand, Writer, sample_writer
from render.page import question_tokens
from render.typeset import mark_bounds
from synth.records import Box, Problem, RenderedPage, Variant
from synth.seeding import stable_hash

# handwritten_question: the neatness drawn is the severity. handwritten_answer: written or not.
# handwritten_working: lines of working counted back from the ink.
QUESTION_BINS = {1: (1, 1), 2: (2, 2), 3: (3, 3)}
ANSWER_BINS = {1: (1, 1)}
WORKING_BINS = {1: (1, 1), 2: (2, 3), 3: (4, 10_000)}
_WORKING_LINES = {1: (1, 1), 2: (2, 3), 3: (4, 6)}
HAND_EM_IN = 0.19  # em of handwriting in inches (render.page writes at this size)
_MERGE_EM = 0.45  # ink rows closer than this belong to one line (a fraction's bar, an exponent)
_CLEAR_IN = 0.1  # clearance kept around every layout box


# ------------------------------------------------------------------------------ page words


def page_text(problem: Problem, variant: Variant) -> PageText:
    """The words on a page of ``problem`` showing ``variant``, for the handwriting ops.

    >>> text = page_text(problem, clean_variant(problem))
    >>> degrade(pixels, page, "handwritten_answer", 1, rng, text=text)
    """
    correct = variant.shown_answer == problem.answer_value
    answer = problem.answer_latex if correct or not variant.steps else variant.steps[-1].latex
    choice = None
    if problem.choices:
        if correct:
            choice = problem.params.get("answer_choice")
        else:
            shown = variant.steps[-1].text if variant.steps else ""
            choice = next((letter for letter, c in zip("ABCDE", problem.choices) if shown.endswith(c)), None)
    return PageText(question_tokens=tuple(question_tokens(problem.question_text)),
                    choices=tuple(problem.choices) if problem.choices else None, answer_latex=answer,
                    answer_correct=correct, choice=choice, steps=tuple(s.latex for s in variant.steps))


# ------------------------------------------------------------------------------ writers and ink


def _sample_writer(neatness: int, page: RenderedPage) -> dict[str, Any]:
    """The student who owns the sheet, as params: on a handwritten page its own hand (font and ink).

    Drawn from the page itself, not the op's rng, so every op on one sheet (the question copied
    out, the working, the answer) is written by the same person with the same pen.
    """
    sheet = [page.width, page.height, page.dpi, page.paper,
             *(f"{b.kind}:{b.ref}:{float(b.x0):.1f}:{float(b.y0):.1f}" for b in page.layout[:40])]
    rng = np.random.default_rng(stable_hash("|".join(map(str, sheet))))
    own = [k for k, name in WRITER_NAMES.items() if name == page.font] if page.style == "handwritten" else []
    w = sample_writer(rng, neatness=neatness, fonts=tuple(own) or tuple(WRITER_NAMES))
    ink = page.ink if own and page.ink in ("blue", "black", "pencil") else w.ink
    return {"font": w.font, "size": round(w.size, 4), "slant": round(w.slant, 3), "spacing": round(w.spacing, 4),
            "ink": ink, "pressure": round(w.pressure, 4), "pen": round(w.pen, 5)}





def _hand_em(page: RenderedPage, writer: Writer) -> float:
    return HAND_EM_IN * page.dpi * writer.size





def _boxes(page: RenderedPage, *kinds: str) -> list[Box]:
    return [b for b in page.layout if b.kind in kinds]





# ------------------------------------------------------------------------------ free space


class _Free:
    """Where nothing is: a coarse grid over the page with every layout box (plus clearance) marked busy."""

    def __init__(self, page: RenderedPage, free_kinds: frozenset[str] = frozenset({"working_area"}),
                 within: Box | None = None) -> None:
        self.cell = max(2.0, 0.04 * page.dpi)
        self.page = page
        gw, gh = int(math.ceil(page.width / self.cell)), int(math.ceil(page.height / self.cell))
        busy = np.zeros((gh, gw), bool)
        edge = int(math.ceil(0.3 * page.dpi / self.cell))
        busy[:edge], busy[-edge:], busy[:, :edge], busy[:, -edge:] = True, True, True, True
        if page.layout:  # nobody writes in the top margin above the sheet's first line
            busy[:int(min(b.y0 for b in page.layout) // self.cell)] = True
        if within is not None:
            inside = np.zeros_like(busy)
            inside[int(math.ceil(within.y0 / self.cell)):int(within.y1 // self.cell),
                   int(math.ceil(within.x0 / self.cell)):int(within.x1 // self.cell)] = True
            busy |= ~inside
        pad = _CLEAR_IN * page.dpi
        for b in page.layout:
            if b.kind in free_kinds:
                continue
            x0, y0 = int((b.x0 - pad) // self.cell), int((b.y0 - pad) // self.cell)
            x1, y1 = int(math.ceil((b.x1 + pad) / self.cell)), int(math.ceil((b.y1 + pad) / self.cell))
            busy[max(0, y0):max(0, y1), max(0, x0):max(0, x1)] = True
        self.busy = busy
        self.sat = np.pad(busy.astype(np.int32).cumsum(0).cumsum(1), ((1, 0), (1, 0)))

    def fits(self, width: float, height: float) -> np.ndarray:
        """(row, col) grid cells where a free block of ``width`` x ``height`` page px can start."""
        cw, ch = int(math.ceil(width / self.cell)) + 1, int(math.ceil(height / self.cell)) + 1
        gh, gw = self.busy.shape
        if cw >= gw or ch >= gh:
            return np.empty((0, 2), int)
        s = self.sat
        inside = s[ch:, cw:] - s[:-ch, cw:] - s[ch:, :-cw] + s[:-ch, :-cw]
        return np.argwhere(inside == 0)


# ------------------------------------------------------------------------------ handwritten_question





class HandwrittenQuestion(Op):
    subtype = "handwritten_question"
    family = "interference"
    rubric = Rubric("neatness", QUESTION_BINS, "copied out by hand,", names={1: "neat", 2: "irregular", 3: "messy"})
    stage = "marks"
    stage_rank = -3  # the sheet is written before it is marked: question_marking then marks the handwriting
    uses_text = True
    requirement = "needs printed question_token boxes (a question already written by hand is not re-written)"

    def applies(self, page: RenderedPage) -> bool:
        return bool(_boxes(page, "question_token")) and not getattr(page, "handwritten_question", False)

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage, *,
                      text: PageText) -> dict[str, Any]:
        tokens = sorted(_boxes(page, "question_token"), key=lambda b: int(b.ref))
        if len(tokens) != len(text.question_tokens):
            raise DegradationError(f"handwritten_question: the page has {len(tokens)} question_token boxes but the"
                                   f" text has {len(text.question_tokens)} tokens; pass the text of this page")
        region = _question_region(page)
        base = {"neatness": severity, "writer": _sample_writer(severity, page),
                "seed": int(rng.integers(2**31 - 1)),
                "tokens": list(text.question_tokens), "choices": list(text.choices or []),
                "left": region["left"], "right": region["right"], "top": region["top"],
                "cover": region["cover"]}
        em = _hand_em(page, writer_of(base))
        for shrink in (1.0, 0.9, 0.8, 0.72, 0.65, 0.58, 0.52):
            params = {**base, "size_px": round(em * shrink, 3)}
            marks = question_marks(params)
            if extent(marks)[3] <= region["bottom"]:
                return params
        raise DegradationError(f"handwritten_question: the question does not fit between y={region['top']:.0f} and"
                               f" y={region['bottom']:.0f} px even at half the handwriting size")

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return write_question(image, params, page)

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        s = before.shape[1] / page.width
        printed = left = 0
        for x0, y0, x1, y1 in cover_px(params, s):
            region = np.s_[max(0, y0):y1, max(0, x0):x1]
            dark = luma(before[region]) < 128
            printed += int(dark.sum())
            left += int((dark & (before[region] == after[region]).all(axis=2)).sum())
        # A token counts as written when pen ink landed where its handwritten marks are, against the
        # covered sheet (the hand often writes where print was, which is no darker than before).
        pen = pen_mask(paper_under(before, cover_px(params, s)), after)
        spans: dict[str, list[float]] = {}
        lines = set()
        for key, mark in question_marks(params):
            token = key.split("|")[0]
            lines.update(k for k in key.split("|") if k.startswith("question_line"))
            b = mark_bounds(mark)
            old = spans.setdefault(token, list(b))
            spans[token] = [min(old[0], b[0]), min(old[1], b[1]), max(old[2], b[2]), max(old[3], b[3])]
        written = [k for k, (x0, y0, x1, y1) in spans.items() if k.startswith("question_token")
                   and pen[max(0, int(y0 * s)):int(y1 * s) + 1, max(0, int(x0 * s)):int(x1 * s) + 1].sum() >= 3]
        j = NEATNESS[int(params["neatness"])]
        return {"neatness": int(params["neatness"]), "jitter": {"position_em": j.position, "rotate_deg": j.rotate,
                                                               "size_log": j.size, "drift_em": j.drift},
                "tokens": len(params["tokens"]), "tokens_written": len(written), "lines": len(lines),
                "printed_ink_left": round(left / max(printed, 1), 4),
                "size_px": params["size_px"]}





def _question_region(page: RenderedPage) -> dict[str, Any]:
    """Where the question is (to cover) and how far its handwritten copy may reach down."""
    q = _boxes(page, "question_line", "question_token", "choice")
    top, bottom = min(b.y0 for b in q), max(b.y1 for b in q)
    left = min(b.x0 for b in q)
    below = [b.y0 for b in page.layout if b.kind not in ("question_line", "question_token", "choice")
             and b.y0 >= bottom - 1 and b.kind != "working_area"]
    limit = (min(below) if below else page.height - 0.4 * page.dpi) - 0.08 * page.dpi
    above = [b.y1 for b in page.layout if b.y1 <= top + 1]
    start = max(max(above, default=0.3 * page.dpi) + 0.06 * page.dpi, top - 0.12 * page.dpi)
    pad = max(2.0, 0.02 * page.dpi)
    cover = [[round(b.x0 - pad, 2), round(b.y0 - pad, 2), round(b.x1 + pad, 2), round(b.y1 + pad, 2)]
             for b in _boxes(page, "question_line", "choice")]
    return {"left": round(left, 2), "right": round(page.width - left, 2), "top": round(start, 2),
            "bottom": round(max(limit, bottom), 2), "cover": cover}





# ------------------------------------------------------------------------------ handwritten_answer


class HandwrittenAnswer(Op):
    subtype = "handwritten_answer"
    family = "interference"
    rubric = Rubric("written", ANSWER_BINS, "final answer", names={1: "written in"})
    stage = "marks"
    stage_rank = -1
    uses_text = True
    levels = (1,)  # MathReal: an answer is written or not
    requirement = "needs an answer_area box (the answer blank) or choice boxes"

    def applies(self, page: RenderedPage) -> bool:
        return bool(_boxes(page, "answer_area", "choice"))

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage, *,
                      text: PageText) -> dict[str, Any]:
        params: dict[str, Any] = {"neatness": int(rng.integers(1, 4)), "writer": _sample_writer(1, page),
                                  "seed": int(rng.integers(2**31 - 1)), "answer_correct": text.answer_correct}
        writer = writer_of(params)
        em = _hand_em(page, writer)
        choices = {b.ref: b for b in _boxes(page, "choice")}
        area = next(iter(_boxes(page, "answer_area")), None)
        tick_ok = text.choice in choices and _clear(page, _tick_box(choices[text.choice], em), 0.04 * page.dpi)
        if text.choice is not None and (area is None or (tick_ok and rng.random() < 0.5)):
            if not tick_ok:
                raise DegradationError(f"handwritten_answer: no room beside option {text.choice} for a tick and"
                                       " no answer_area box on the page")
            tick = [round(v, 2) for v in _tick_box(choices[text.choice], em)]
            pad = 0.25 * em + 2  # the pen's width, its wobble and anti-aliasing around the tick's path
            return {**params, "placement": "tick", "choice": text.choice, "written": "✓", "size_px": round(em, 3),
                    "tick": tick, "target": [round(tick[0] - pad, 2), round(tick[1] - pad, 2),
                                             round(tick[2] + pad, 2), round(tick[3] + pad, 2)]}
        if area is None:
            raise DegradationError("handwritten_answer: the page has no answer_area box to write the answer in")
        content = text.choice if text.choice is not None else text.answer_latex
        inner = [b for b in page.layout if b.kind != "answer_area" and b.x0 >= area.x0 - 1 and b.x1 <= area.x1 + 1
                 and b.y0 >= area.y0 - 1 and b.y1 <= area.y1 + 1 and b.y1 - b.y0 > 4]  # a heading inside a frame
        top = max([area.y0] + [b.y1 + 0.05 * page.dpi for b in inner])
        x0 = area.x0 + 0.12 * em
        right = page.width - 0.3 * page.dpi
        for shrink in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.42):
            size = em * shrink
            p = {**params, "placement": "blank", "choice": text.choice, "written": content, "size_px": round(size, 3),
                 "x": round(x0, 2), "baseline": round(area.y1 - max(3.0, 0.12 * size), 2)}
            x_0, y_0, x_1, _ = extent(answer_marks(p))
            if y_0 >= top - 0.25 * size and x_1 <= right:
                x_0, y_0, x_1, y_1 = extent(answer_marks(p))  # the blank and wherever the writing reaches
                return {**p, "target": [round(min(area.x0, x_0), 2), round(min(area.y0, y_0), 2),
                                        round(max(area.x1, x_1), 2), round(max(area.y1, y_1), 2)]}
        raise DegradationError(f"handwritten_answer: the answer {content!r} does not fit in the answer blank")

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return write_answer(image, params, page)

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        pen = pen_mask(before, after)
        s = before.shape[1] / page.width
        x0, y0, x1, y1 = params["target"]
        inside = pen[max(0, int(y0 * s)):int(math.ceil(y1 * s)), max(0, int(x0 * s)):int(math.ceil(x1 * s))].sum()
        total = int(pen.sum())
        written = int(inside >= 3)
        return {"written": written, "placement": params["placement"], "answer_correct": params["answer_correct"],
                "ink_outside_target": round(float(1 - inside / max(total, 1)), 4),
                "pen_pixel_frac": round(float(pen.mean()), 6)}


def _tick_box(choice: Box, em: float) -> tuple[float, float, float, float]:
    cy = (choice.y0 + choice.y1) / 2
    x0 = choice.x1 + 0.6 * em
    return x0, cy - 0.75 * em, x0 + 1.1 * em, cy + 0.45 * em


def _clear(page: RenderedPage, rect: tuple[float, float, float, float], pad: float) -> bool:
    """Whether ``rect`` keeps ``pad`` away from every layout box and stays on the page."""
    x0, y0, x1, y1 = rect
    if x0 < 0 or y0 < 0 or x1 > page.width or y1 > page.height:
        return False
    return not any(b.x0 - pad < x1 and x0 < b.x1 + pad and b.y0 - pad < y1 and y0 < b.y1 + pad
                   for b in page.layout if b.kind != "working_area")





# ------------------------------------------------------------------------------ handwritten_working


_INT = re.compile(r"[−-]?\d+")


def _scratch(texts: list[str], rng: np.random.Generator, count: int) -> list[str]:
    """Side sums on the problem's own whole numbers (its steps, then its question), exact:
    ``59 + 16 = 75``, ``24 × 21 = 504``. With fewer than two such numbers, sums on two-digit numbers of
    the student's own (only used when the steps alone are too few lines)."""
    nums: list[int] = []
    for t in texts:
        for m in _INT.findall(re.sub(r"\\[a-zA-Z]+", " ", t).replace("−", "-")):
            v = int(m)
            if 1 < abs(v) < 10_000 and v not in nums:
                nums.append(v)
    if len(nums) < 2:
        nums = [*nums, *(int(v) for v in rng.choice(np.arange(12, 100), 3 - len(nums), replace=False))]
    out: list[str] = []
    for _ in range(count):
        for _attempt in range(20):  # a student does not do the same sum twice
            a, b = (int(v) for v in rng.choice(nums, 2, replace=False))
            op = str(rng.choice(["+", "×", "−"]))
            c = a + b if op == "+" else a * b if op == "×" else a - b
            fmt = [str(v).replace("-", "−") if v >= 0 or k == 0 else f"({str(v).replace('-', '−')})"
                   for k, v in enumerate((a, b))]
            line = f"{fmt[0]} {op} {fmt[1]} = {str(c).replace('-', '−')}"
            if line not in out:
                break
        out.append(line)
    return out


class HandwrittenWorking(Op):
    subtype = "handwritten_working"
    family = "interference"
    rubric = Rubric("lines", WORKING_BINS, "lines of working")
    stage = "marks"
    stage_rank = -2
    uses_text = True
    requirement = "needs free space on the page (no room for four lines of working away from the layout boxes)"

    def applies(self, page: RenderedPage) -> bool:
        if not page.layout:
            return False
        em = 0.55 * HAND_EM_IN * page.dpi
        return len(_Free(page).fits(1.6 * page.dpi, 4 * (1.6 + LINE_GAP_EM) * em)) > 0

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage, *,
                      text: PageText) -> dict[str, Any]:
        lo, hi = _WORKING_LINES[severity]
        want = int(rng.integers(lo, hi + 1))
        base = {"neatness": int(rng.integers(1, 4)), "writer": _sample_writer(1, page),
                "seed": int(rng.integers(2**31 - 1))}
        steps = [(f"step:{i}", latex) for i, latex in enumerate(text.steps, start=1)]
        sums = [("scratch", s) for s in _scratch([*text.steps, *text.question_tokens], rng, hi + 2)]
        pool = steps + sums if not page.show_solution else sums + steps  # a shown solution needs no copy
        area = next(iter(_boxes(page, "working_area")), None)  # a question-only page: work in its space
        frees = [_Free(page, within=area), _Free(page)] if area is not None else [_Free(page)]
        em = _hand_em(page, writer_of(base))
        max_w = min(3.6 * page.dpi, 0.8 * page.width)
        for shrink in (0.85, 0.75, 0.66, 0.58, 0.5):
            size = em * shrink
            hand = Hand(writer_of(base), np.random.default_rng(0))
            chosen = [(src, s) for src, s in pool if laid_latex(s, hand, size).width <= max_w][:want]
            if len(chosen) < lo:
                continue
            p = {**base, "size_px": round(size, 3), "lines": [s for _, s in chosen],
                 "sources": [src for src, _ in chosen], "x": 0.0, "y": 0.0}
            x0, y0, x1, y1 = extent(working_marks(p))
            for free in frees:
                spots = free.fits(x1 - x0, y1 - y0)
                if len(spots):
                    r, c = _spot(rng, spots)
                    p["x"] = round(c * free.cell + free.cell / 2 - x0, 2)
                    p["y"] = round(r * free.cell + free.cell / 2 - y0, 2)
                    return p
        raise DegradationError(f"handwritten_working severity {severity}: no free space on the page for {lo}"
                               " lines of working, even at half the handwriting size")

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return write_working(image, params, page)

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        s = before.shape[1] / page.width
        region = _changed(before, after)  # only the written block is examined
        b, a = before[region], after[region]
        pen = pen_mask(b, a)
        runs = _runs(pen.any(axis=1), merge=max(2, math.ceil(_MERGE_EM * params["size_px"] * s)))
        tall = [r for r in runs if r[1] - r[0] >= max(2, 0.2 * params["size_px"] * s)]
        over = np.count_nonzero((luma(b) < 128) & (b != a).any(axis=2))
        return {"lines": len(tall), "lines_written": len(params["lines"]),
                "over_printed_ink": round(over / max(np.count_nonzero(luma(before) < 128), 1), 5),
                "pen_pixel_frac": round(np.count_nonzero(pen) / (before.shape[0] * before.shape[1]), 6)}


def _changed(before: np.ndarray, after: np.ndarray) -> tuple[slice, slice]:
    """The bounding rows and columns of every pixel that differs (an empty slice when none does)."""
    d = cv2.absdiff(before, after)
    x, y, w, h = cv2.boundingRect(cv2.max(cv2.max(d[..., 0], d[..., 1]), d[..., 2]))  # of the non-zero pixels
    return slice(y, y + h), slice(x, x + w)


def _spot(rng: np.random.Generator, spots: np.ndarray) -> tuple[int, int]:
    """Where the working starts: mostly high up and at the left edge of the free space, as students
    work top-down from the margin; sometimes anywhere that is free (a corner, beside the solution)."""
    if rng.random() < 0.25:
        r, c = spots[int(rng.integers(len(spots)))]
        return int(r), int(c)
    rows = np.unique(spots[:, 0])
    r = int(rows[int(rng.integers(max(1, len(rows) // 3)))])
    cols = spots[spots[:, 0] == r, 1]
    return r, int(cols.min() if rng.random() < 0.6 else cols[int(rng.integers(len(cols)))])


def _runs(flags: np.ndarray, merge: int) -> list[tuple[int, int]]:
    """Runs of True, joining runs separated by fewer than ``merge`` False entries."""
    idx = np.flatnonzero(flags)
    if idx.size == 0:
        return []
    runs = [[int(idx[0]), int(idx[0]) + 1]]
    for i in idx[1:]:
        if i - runs[-1][1] < merge:
            runs[-1][1] = int(i) + 1
        else:
            runs.append([int(i), int(i) + 1])
    return [(a, b) for a, b in runs]





register(HandwrittenQuestion())
register(HandwrittenAnswer())
register(HandwrittenWorking())
