"""Handwriting kernels: the question copied out by hand, an answer written in, lines of working, as ink.

Every word and the writer are in the params (``perturb.photo.handwritten`` samples them), so writing is
a pure function of params and page: the same marks are laid out for sampling (does it fit?), applying
and measuring (where should ink be?).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from perturb.photo.base import DegradationError, strip_private
from perturb.photo.measure import luma
from render.handwriting import Hand, Writer, sample_line, stroked
from render.typeset import (
    GlyphOp,
    InkGlyph,
    InkLayer,
    InkMark,
    InkRect,
    InkStroke,
    Laid,
    Row,
    Sym,
    TypesetError,
    lay_ink,
    layout,
    mark_bounds,
    moved,
    parse,
    parse_inline,
)
from synth.records import Box, RenderedPage

LINE_GAP_EM = 0.7  # clear ink-free rows between lines of working, so lines can be counted back


def writer_of(params: dict[str, Any]) -> Writer:
    return Writer(neatness=int(params["neatness"]), **params["writer"])


# Symbols no writer font has and the hand does not draw, written the way students write them.
_BY_HAND = str.maketrans({"∥": "||"})


def _laid_token(token: str, hand: Hand, size: float) -> Laid:
    """A question token as the page lays it out: keyboard math (``t^2``, ``3/4``, ``√2``) as math."""
    token = token.translate(_BY_HAND)
    try:
        row = parse_inline(token)
    except TypesetError:
        row = None
    return layout(row if row is not None else Row((Sym(token, "text"),)), hand.face, size)


def laid_latex(latex: str, hand: Hand, size: float) -> Laid:
    try:
        return layout(parse(latex), hand.face, size)
    except TypesetError as exc:
        raise DegradationError(f"cannot write {latex!r} by hand: {exc}") from None


def _place(marks: list[tuple[str, InkMark]], x: float, y_top: float) -> tuple[list[tuple[str, InkMark]], float]:
    """Marks drawn at baseline 0 moved so their ink starts at ``y_top`` (and by ``x``); returns the ink bottom."""
    bounds = [mark_bounds(m) for _, m in marks]
    top, bottom = min(b[1] for b in bounds), max(b[3] for b in bounds)
    dy = float(math.ceil(y_top - top))
    return [(k, moved(m, x, dy)) for k, m in marks], dy + bottom + 1


def extent(marks: list[tuple[str, InkMark]]) -> tuple[float, float, float, float]:
    b = np.array([mark_bounds(m) for _, m in marks])
    return float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()), float(b[:, 3].max())


def _scaled(mark: InkMark, s: float) -> InkMark:
    if s == 1.0:
        return mark
    if isinstance(mark, InkGlyph):
        return replace(mark, x=mark.x * s, y=mark.y * s, size=mark.size * s)
    if isinstance(mark, InkStroke):
        return replace(mark, points=tuple((x * s, y * s) for x, y in mark.points), width=mark.width * s)
    assert isinstance(mark, InkRect)
    return replace(mark, x0=mark.x0 * s, y0=mark.y0 * s, x1=mark.x1 * s, y1=mark.y1 * s)


def _draw(image: np.ndarray, marks: list[tuple[str, InkMark]], writer: Writer,
          page: RenderedPage) -> tuple[np.ndarray, dict[str, tuple[float, float, float, float]]]:
    """Ink the marks (page px) onto ``image`` (any raster of the page); boxes of each key in page px."""
    h, w = image.shape[:2]
    s = w / page.width
    layer = InkLayer(h, w)
    for key, mark in marks:
        layer.draw(key, _scaled(mark, s))
    boxes = {k: tuple(round(v / s, 2) for v in ext) for k, ext in layer.boxes().items()}
    return lay_ink(image, layer.a, writer.rgb), boxes  # type: ignore[return-value]


def _with_boxes(page: RenderedPage, drop: set[str],
                boxes: dict[str, tuple[float, float, float, float]]) -> RenderedPage:
    keep = tuple(b for b in page.layout if b.kind not in drop)
    new = tuple(Box(*key.split(":", 1), *ext) for key, ext in boxes.items())
    return replace(page, layout=keep + new)


def paper_under(image: np.ndarray, rects: list[tuple[int, int, int, int]]) -> np.ndarray:
    """``image`` with ``rects`` painted as the bare sheet: per row the median across the page (ruled
    lines), per column the median over ink-free rows (grid lines), the darker of the two.

    Ink covers far less than half of any row, so the medians see only paper and rules."""
    small = cv2.resize(luma(image), None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    blank_rows = np.flatnonzero(small.min(axis=1) >= 150) * 4
    out = image.copy()
    for x0, y0, x1, y1 in rects:
        x0, y0 = max(0, x0), max(0, y0)
        row = np.median(image[y0:y1], axis=1)
        col = (np.median(image[blank_rows, x0:x1], axis=0) if blank_rows.size >= 8
               else np.full((x1 - x0, 3), 255.0))
        out[y0:y1, x0:x1] = np.minimum(row[:, None, :], col[None, :, :]).astype(np.uint8)
    return out


def cover_px(params: dict[str, Any], s: float) -> list[tuple[int, int, int, int]]:
    return [(int(x0 * s), int(y0 * s), int(math.ceil(x1 * s)), int(math.ceil(y1 * s)))
            for x0, y0, x1, y1 in params["cover"]]


# A glyph keeps its baseline role: it strays at most this far (em of the line) from the baseline it is
# read on, and is written at no less than this share of its size, so a jittered "(14" never reads as an
# exponent and a digit never as an index, however messy the hand.
ROLE_SHIFT_EM = 0.08
ROLE_SCALE = (0.88, 1.15)
# What a messy hand (neatness 3) adds on top of the writer's jitter when copying the question, none of it
# vertical: letters turned and leaned further, crowded into their neighbours, pressed unevenly.
_MESSY = {"rotate_deg": 6.0, "shear": 0.22, "crowd_em": 0.12, "pressure": (0.55, 1.0)}


def marks_in_role(hand: Hand, ops: tuple[Any, ...], x: float, y: float, size: float, line: Any,
                  messy: np.random.Generator | None = None) -> list[InkMark]:
    """``hand.marks``, with every glyph kept in its baseline role (``ROLE_SHIFT_EM``, ``ROLE_SCALE``) and, with
    ``messy``, a messy hand's extra turn, lean, crowding and uneven pressure (from that rng)."""
    out: list[InkMark] = []
    for op in ops:
        marks = hand.marks((op,), x, y, size, line)  # the same draws as one call over all ops
        if not isinstance(op, GlyphOp):
            out.extend(marks)
            continue
        expected, cx = [], op.x
        for ch in op.text:
            if ch != " " and not stroked(hand.face.path, ch):
                expected.append(y + op.y + line.offset(cx / size) * size)
            cx += hand.face.metrics(ch, op.kind)[0] * op.size
        glyphs = iter(expected)
        nominal = op.size * hand.face.norm
        for mark in marks:
            if isinstance(mark, InkGlyph):
                base = next(glyphs, mark.y)
                limit = ROLE_SHIFT_EM * size
                mark = replace(mark, y=min(max(mark.y, base - limit), base + limit),
                               size=min(max(mark.size, ROLE_SCALE[0] * nominal), ROLE_SCALE[1] * nominal))
                if messy is not None:
                    mark = replace(mark, x=mark.x + float(messy.normal(0, _MESSY["crowd_em"])) * size,
                                   rotate=mark.rotate + float(messy.normal(0, _MESSY["rotate_deg"])),
                                   shear=mark.shear + float(messy.normal(0, _MESSY["shear"])),
                                   alpha=mark.alpha * float(messy.uniform(*_MESSY["pressure"])))
            out.append(mark)
    return out


def question_marks(params: dict[str, Any]) -> list[tuple[str, InkMark]]:
    """The handwritten question: tokens wrapped between left and right, then one line per option."""
    return list(_question_marks_of(json.dumps(strip_private(params), sort_keys=True)))


@lru_cache(maxsize=8)  # sample, apply and measure of one application ask for the same marks
def _question_marks_of(key: str) -> tuple[tuple[str, InkMark], ...]:
    params = json.loads(key)
    writer = writer_of(params)
    hand = Hand(writer, np.random.default_rng(int(params["seed"])))
    messy = np.random.default_rng(int(params["seed"]) + 1) if writer.neatness >= 3 else None
    size = float(params["size_px"])
    space = hand.face.metrics(" ", "text")[0] * size * 1.15
    left, right = float(params["left"]), float(params["right"])
    lines: list[list[tuple[int, Laid, float]]] = [[]]
    x = left
    for i, token in enumerate(params["tokens"]):
        laid = _laid_token(token, hand, size)
        if lines[-1] and x + laid.width > right:
            lines.append([])
            x = left
        lines[-1].append((i, laid, x))
        x += laid.width + space
    out: list[tuple[str, InkMark]] = []
    y = float(params["top"])
    gap = 0.22 * size
    for n, line in enumerate(lines, start=1):
        drift = sample_line(hand.rng, writer)
        marks = [(f"question_token:{i}|question_line:{n}", m)
                 for i, laid, x0 in line for m in marks_in_role(hand, laid.ops, x0, 0.0, size, drift, messy)]
        placed, y = _place(marks, 0.0, y + (gap if n > 1 else 0.0))
        out.extend(placed)
    for letter, choice in zip("ABCDE", params["choices"]):
        drift = sample_line(hand.rng, writer)
        x = left + size
        marks = []
        for token in (f"({letter})", *choice.split()):  # keyboard math (4m^3) written as a student writes it
            laid = _laid_token(token, hand, size)
            marks.extend((f"choice:{letter}", m) for m in marks_in_role(hand, laid.ops, x, 0.0, size, drift, messy))
            x += laid.width + space
        placed, y = _place(marks, 0.0, y + gap)
        out.extend(placed)
    return tuple(out)


def answer_marks(params: dict[str, Any]) -> list[tuple[str, InkMark]]:
    writer = writer_of(params)
    hand = Hand(writer, np.random.default_rng(int(params["seed"])))
    size = float(params["size_px"])
    if params["placement"] == "tick":
        x0, y0, x1, y1 = params["tick"]
        r = hand.rng
        low = np.array([x0 + 0.38 * size, y1 - 0.12 * size]) + np.clip(r.normal(0, 0.04 * size, 2), -0.1 * size,
                                                                       0.1 * size)
        t = np.linspace(0, 1, 6)[:, None]
        down = np.array([x0 + 0.08 * size, y0 + 0.7 * size]) * (1 - t) + low * t  # short stroke down
        up = low * (1 - t) + np.array([x1 - 0.05 * size, y0 + 0.05 * size + abs(r.normal(0, 0.06 * size))]) * t
        pts = np.vstack([down, up[1:]])
        pts[:, 1] += 0.05 * size * np.sin(np.linspace(0, np.pi, len(pts)) * r.uniform(0.5, 1.5))  # a hand's curve
        stroke = InkStroke(tuple(map(tuple, pts.tolist())), max(1.2, writer.pen * size), writer.pressure)
        return [("handwritten_answer:tick", stroke)]
    content = str(params["written"])
    laid = (laid_latex(content, hand, size) if params.get("choice") is None
            else layout(Row((Sym(content, "text"),)), hand.face, size))
    marks = hand.marks(laid.ops, float(params["x"]), float(params["baseline"]), size, sample_line(hand.rng, writer))
    return [("handwritten_answer:answer", m) for m in marks]


def working_marks(params: dict[str, Any]) -> list[tuple[str, InkMark]]:
    """Lines of working stacked with clear rows between them, the block's origin at (x, y)."""
    writer = writer_of(params)
    hand = Hand(writer, np.random.default_rng(int(params["seed"])))
    size = float(params["size_px"])
    out: list[tuple[str, InkMark]] = []
    y = float(params["y"])
    for n, latex in enumerate(params["lines"], start=1):
        laid = laid_latex(latex, hand, size)
        indent = float(hand.rng.normal(0, 0.15 * writer.neatness)) * size
        marks = [(f"handwritten_working:{n}", m) for m in hand.marks(laid.ops, float(params["x"]) + indent, 0.0,
                                                                       size, sample_line(hand.rng, writer))]
        placed, y = _place(marks, 0.0, y + (LINE_GAP_EM * size if n > 1 else 0.0))
        out.extend(placed)
    return out


def write_question(image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
    """The printed question covered with the bare sheet and written out by hand; its boxes become the ink's."""
    covered = paper_under(image, cover_px(params, image.shape[1] / page.width))
    out, boxes = _draw(covered, question_marks(params), writer_of(params), page)
    new = _with_boxes(page, {"question_token", "question_line", "choice"}, boxes)
    return out, replace(new, handwritten_question=True) if hasattr(new, "handwritten_question") else new


def write_answer(image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
    """The final answer written in the blank, or a tick beside the chosen option."""
    out, boxes = _draw(image, answer_marks(params), writer_of(params), page)
    return out, _with_boxes(page, set(), boxes)


def write_working(image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
    """Lines of working in free space on the page."""
    out, boxes = _draw(image, working_marks(params), writer_of(params), page)
    return out, _with_boxes(page, set(), boxes)
