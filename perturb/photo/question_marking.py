"""Question marking: a student's pen on the question, where students put it, and what it hides when it does.

Marks go where people make them: words and numbers underlined or circled with clearance round the
glyphs, ticks and stars in the margin beside a line, a number copied out in blank space. None of
these touch a glyph. The one mark that does is a ``scribble``: at severity 3, and only when the
page's words say which tokens are givens (``degrade(..., text=page_text(...))``), a share of the
photos get one given blotted out by the student's pen, and the row says so.

Hidden rule (recorded as ``measured.hidden_givens``): a question token is *hidden* when more than
30 % of its glyph pixels (luma < 128 in its box before marking) lie under opaque pen ink (pen
coverage >= 50 %, redrawn from the params, since pen over black print leaves no trace in the
pixels). A hidden token that is a given (a number, a math symbol, a point or side name such as
``LN``) is a hidden given, and a photo with any hidden given is not solvable
(``synth.manifest``: ``solvable: false`` and ``hidden_givens``). Severities 1 and 2 never hide a given.
"""

from __future__ import annotations

import re
from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import DegradationError, Op, PageText, Rubric
from perturb.photo.functional.ink import mark_question, question_pen, question_token_lines
from perturb.photo.handwritten import _Free
from perturb.photo.measure import luma
from synth.records import Box, RenderedPage

# Number of marked question tokens: 1 a few marks; 2 frequent; 3 most of the text heavily marked.
BINS = {1: (1, 1), 2: (2, 3), 3: (4, 10_000)}
PENS = {"blue": (30, 60, 175), "red": (200, 35, 45)}
KINDS = ("underline", "circle", "double_underline")
# What the pen does to a run of tokens, by severity: a word underlined or circled (1); several (2); most of
# the question underlined, double underlined and circled (3).
KIND_WEIGHTS = {1: (0.6, 0.4, 0.0), 2: (0.45, 0.4, 0.15), 3: (0.35, 0.35, 0.3)}
# Pen width in mm: a student pressing harder (or going over a mark twice) when marking heavily.
PEN_MM = {1: (0.35, 0.5), 2: (0.4, 0.55), 3: (0.45, 0.65)}
# Chance of margin ticks or stars, and of a given copied out in blank space, by severity.
_MARGIN = {1: 0.0, 2: 0.4, 3: 0.8}
_NOTE = {1: 0.0, 2: 0.25, 3: 0.6}
# Share of severity-3 photos (with known givens) in which one given is blotted out: unsolvable rows.
BLOT_SHARE = 0.3
HIDDEN_GLYPH_SHARE = 0.3  # a token is hidden when more than this share of its glyph pixels is under the pen
# A token counts as marked when pen ink spans at least this share of its columns near its line.
_MARKED_SPAN = 0.5
_NEAR_LINE = 0.5  # ... within this many line heights above or below the token
_MATH = re.compile(r"[0-9=+\-−×÷^/√π°<>≤≥%]")


def given_tokens(text: PageText | None, count: int) -> list[bool] | None:
    """Which of ``count`` question tokens carry a given: a number or math symbol, or a point or side name
    (``LN``, ``A`` after the first word). None when the words are unknown or are not this page's."""
    if text is None or len(text.question_tokens) != count:
        return None
    out = []
    for i, token in enumerate(text.question_tokens):
        word = token.strip(".,;:?!()\"'")
        out.append(bool(_MATH.search(word)) or (i > 0 and 1 <= len(word) <= 3 and word.isalpha() and word.isupper()))
    return out


def _groups(rng: np.random.Generator, tokens: list[tuple[Box, Box]], count: int,
            first: list[int]) -> list[list[int]]:
    """Runs of consecutive tokens on one line, ``count`` tokens in all, starting from ``first`` where it can."""
    free = set(range(len(tokens)))
    groups: list[list[int]] = []
    while count > 0 and free:
        preferred = [i for i in first if i in free]
        start = preferred[0] if preferred else int(rng.choice(sorted(free)))
        run = [start]
        want = min(count, int(rng.integers(1, 4)))
        while len(run) < want and run[-1] + 1 in free and tokens[run[-1] + 1][1] == tokens[start][1]:
            run.append(run[-1] + 1)
        free -= set(range(run[0] - 1, run[-1] + 2))  # keep a gap so marks stay attributable
        groups.append(run)
        count -= len(run)
    return groups


def _line_height(tokens: list[tuple[Box, Box]]) -> float:
    return float(np.median([line.y1 - line.y0 for _, line in tokens]))


def _margin_marks(rng: np.random.Generator, tokens: list[tuple[Box, Box]], page: RenderedPage) -> list[dict]:
    """A tick or a star in the left margin beside one or two question lines."""
    lines = sorted({line for _, line in tokens}, key=lambda b: b.y0)
    lh = _line_height(tokens)
    x_left = min(t.x0 for t, _ in tokens)
    size = 0.9 * lh
    x = x_left - 0.5 * lh - size
    if x < 0.1 * page.dpi:
        return []
    out = []
    for line in lines[:int(rng.integers(1, min(2, len(lines)) + 1))]:
        out.append({"kind": str(rng.choice(["tick", "star"], p=[0.7, 0.3])), "tokens": [],
                    "at": [round(x, 2), round((line.y0 + line.y1 - size) / 2, 2), round(size, 2)],
                    "seed": int(rng.integers(2**31 - 1))})
    return out


def _note(rng: np.random.Generator, tokens: list[tuple[Box, Box]], page: RenderedPage,
          text: PageText | None, givens: list[bool] | None) -> list[dict]:
    """A given copied out (``= 66``, ``14?``) in blank space near the question, clear of every box."""
    nums = [re.sub(r"[^0-9.]", "", t) for t, g in zip(text.question_tokens, givens or []) if g] if text else []
    nums = [n.strip(".") for n in nums if n.strip(".")]
    words = f"{rng.choice(nums)}{rng.choice(['', '?', ' !'])}" if nums else str(rng.choice(["?", "!!", "why?"]))
    lh = _line_height(tokens)
    size = 0.9 * lh
    width = 0.55 * size * (len(words) + 1)
    free = _Free(page)
    spots = free.fits(width, 1.4 * size)
    if not len(spots):
        return []
    q_top = min(line.y0 for _, line in tokens)
    y = spots[:, 0] * free.cell
    near = spots[np.argsort(np.abs(y - q_top), kind="stable")[:12]]  # beside or under the question
    r, c = near[int(rng.integers(len(near)))]
    return [{"kind": "note", "tokens": [], "text": words,
             "at": [round(float(c * free.cell + free.cell), 2), round(float(r * free.cell + free.cell), 2),
                    round(size, 2)], "seed": int(rng.integers(2**31 - 1))}]


def _marked(pen: np.ndarray, tokens: list[tuple[Box, Box]], sx: float, sy: float) -> list[str]:
    """Refs of the tokens the pen marked: each pen pixel belongs to the nearest token box (within
    ``_NEAR_LINE`` line heights) of its stroke's line, and a token is marked when its pixels span half its columns.

    A mark is drawn on one line (a circle round a run of its tokens, a line under them), and its stroke keeps to
    that line (``_on_stroke_line``). By distance alone, the top of a circle round "M, is" beyond those two words'
    ends was nearer to "KLM" on the line above, and marked it too (150 dpi: 6 of 200 records over their bin)."""
    ys, xs = np.nonzero(pen)
    if not xs.size or not tokens:
        return []
    px, py = xs / sx, ys / sy
    # Each token as tall as its line, so the pen under a short "=" is nearer it than its taller neighbours.
    boxes = np.array([[t.x0, min(t.y0, ln.y0), t.x1, max(t.y1, ln.y1), ln.y1 - ln.y0] for t, ln in tokens])
    dx = np.maximum(np.maximum(boxes[None, :, 0] - px[:, None], px[:, None] - boxes[None, :, 2]), 0)
    dy = np.maximum(np.maximum(boxes[None, :, 1] - py[:, None], py[:, None] - boxes[None, :, 3]), 0)
    dist = np.hypot(dx, dy)
    dist[~_on_stroke_line(pen, xs, ys, py, tokens)] = np.inf
    near = dist.argmin(axis=1)
    close = dist[np.arange(near.size), near] <= _NEAR_LINE * boxes[near, 4]
    out = []
    for i, (t, _) in enumerate(tokens):
        c0, c1 = int(t.x0 * sx), max(int(t.x0 * sx) + 1, int(t.x1 * sx))
        cols = np.unique(xs[close & (near == i)])
        if ((cols >= c0) & (cols < c1)).sum() >= _MARKED_SPAN * (c1 - c0):
            out.append(t.ref)
    return out


def _on_stroke_line(pen: np.ndarray, xs: np.ndarray, ys: np.ndarray, py: np.ndarray,
                    tokens: list[tuple[Box, Box]]) -> np.ndarray:
    """(pen pixels at ``xs``, ``ys``; page row ``py``) x tokens: whether the token is on the line of the pixel's
    stroke (``_marked``). Strokes are the pen's 8-connected pieces; a stroke's line is the one whose band holds the
    middle of the stroke's height (a circle round words, a tick or star beside them), else the nearest line above that
    middle (a line drawn under words, between two lines of writing, whose lower edge may touch the next line's band),
    or the first line."""
    lines = sorted({(ln.y0, ln.y1) for _, ln in tokens})
    band = np.array(lines, float)
    n, labels = cv2.connectedComponents(pen.astype(np.uint8), connectivity=8)
    label = labels[ys, xs]
    top, bottom = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(top, label, py)
    np.maximum.at(bottom, label, py)
    middle = np.zeros(n)
    present = np.isfinite(top)  # (the background's label holds no pen pixel)
    middle[present] = (top[present] + bottom[present]) / 2
    line_of = np.maximum((band[None, :, 0] <= middle[:, None]).sum(axis=1) - 1, 0)  # the last line starting above
    token_line = np.array([lines.index((ln.y0, ln.y1)) for _, ln in tokens])
    return line_of[label][:, None] == token_line[None, :]


class QuestionMarking(Op):
    subtype = "question_marking"
    family = "interference"
    rubric = Rubric("marked_tokens", BINS, "marked question tokens")
    stage = "marks"
    reads_text = True
    requirement = "needs question_token boxes in the page layout"

    def applies(self, page: RenderedPage) -> bool:
        return any(b.kind == "question_token" for b in page.layout)

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                      text: PageText | None = None) -> dict[str, Any]:
        tokens = question_token_lines(page)
        if not tokens:
            raise DegradationError("question_marking needs question_token boxes in the page layout; got none")
        n = len(tokens)
        count = {1: 1, 2: int(rng.integers(2, 4)), 3: max(4, int(round(rng.uniform(0.5, 0.8) * n)))}[severity]
        if count > n:
            raise DegradationError(f"question_marking severity {severity} needs {count} question tokens,"
                                   f" the page has {n}")
        givens = given_tokens(text, n)
        pen = str(rng.choice(list(PENS)))
        # Students mark the numbers first: runs start on givens (in a random order) when the words are known.
        first = [int(i) for i in rng.permutation(n) if givens and givens[int(i)]]
        marks = []
        for run in _groups(rng, tokens, count, first):
            kind = str(rng.choice(KINDS, p=KIND_WEIGHTS[severity]))
            marks.append({"kind": kind, "tokens": [tokens[i][0].ref for i in run],
                          "seed": int(rng.integers(2**31 - 1))})
        if rng.random() < _MARGIN[severity]:
            marks.extend(_margin_marks(rng, tokens, page))
        if rng.random() < _NOTE[severity]:
            marks.extend(_note(rng, tokens, page, text, givens))
        blot = rng.random() < BLOT_SHARE
        if severity == 3 and blot and givens and any(givens):
            target = int(rng.choice([i for i, g in enumerate(givens) if g]))
            ref = tokens[target][0].ref
            for m in marks:  # the blotted given is scribbled over instead of underlined
                if ref in m["tokens"]:
                    m["tokens"] = [r for r in m["tokens"] if r != ref]
            marks = [m for m in marks if m["tokens"] or m["kind"] in ("tick", "star", "note")]
            marks.append({"kind": "scribble", "tokens": [ref], "seed": int(rng.integers(2**31 - 1))})
        out: dict[str, Any] = {
            "pen": pen, "rgb": [int(c) for c in np.clip(np.array(PENS[pen]) + rng.integers(-15, 16, 3), 0, 255)],
            "width_px": round(float(rng.uniform(*PEN_MM[severity])) * page.dpi / 25.4, 3), "marks": marks}
        if givens is not None:  # recorded so measuring (and replaying) needs no text
            out["givens"] = {tokens[i][0].ref: text.question_tokens[i] for i in range(n) if givens[i]}
        return out

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return mark_question(image, params, page), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        # Pen ink: pixels that got darker and coloured. Only rows that changed are examined.
        changed_rows = np.nonzero((before != after).any(axis=(1, 2)))[0]
        pen = np.zeros(before.shape[:2], bool)
        if changed_rows.size:
            rows = np.s_[changed_rows[0]:changed_rows[-1] + 1]
            b, a = before[rows].astype(np.int16), after[rows].astype(np.int16)
            pen[rows] = ((b - a).sum(axis=2) > 40) & (a.max(axis=2) - a.min(axis=2) > 30)
        h, w = before.shape[:2]
        sx, sy = w / page.width, h / page.height
        opaque = question_pen((h, w), params, page) >= 128
        dark = luma(before) < 128
        givens = params.get("givens")
        tokens = question_token_lines(page)
        marked = _marked(pen, tokens, sx, sy)
        hidden, hidden_givens, covered = [], [], {}
        for t, _ in tokens:
            xs = np.s_[int(t.x0 * sx):max(int(t.x0 * sx) + 1, int(t.x1 * sx))]
            box = np.s_[int(t.y0 * sy):max(int(t.y0 * sy) + 1, int(np.ceil(t.y1 * sy))), xs]
            glyph = int(dark[box].sum())
            share = float((dark[box] & opaque[box]).sum() / glyph) if glyph else 0.0
            if share > HIDDEN_GLYPH_SHARE:
                hidden.append(t.ref)
                covered[t.ref] = round(share, 3)
                # Without the page's words every hidden token may be a given: say so rather than guess.
                if givens is None or t.ref in givens:
                    hidden_givens.append(givens[t.ref] if givens else f"question_token:{t.ref}")
        return {"marked_tokens": len(marked), "marked_refs": marked, "hidden_tokens": hidden,
                "hidden_glyph_share": covered, "hidden_givens": hidden_givens, "givens_known": givens is not None,
                "pen_pixel_frac": round(float(pen.mean()), 6)}


register(QuestionMarking())
