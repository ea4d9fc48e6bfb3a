"""Question marking: a student's pen underlining, circling, striking or scribbling over words of the question."""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.photo import register
from perturb.photo.base import DegradationError, Op, Rubric
from perturb.photo.functional.ink import mark_question, question_token_lines
from synth.records import Box, RenderedPage

# Number of marked question tokens: 1 a few marks; 2 frequent; 3 most of the text heavily marked.
BINS = {1: (1, 1), 2: (2, 3), 3: (4, 10_000)}
PENS = {"blue": (30, 60, 175), "red": (200, 35, 45)}
KINDS = ("underline", "circle", "strike", "scribble")
# What the pen does, by severity: a few underlines or circles (1); frequent marks that begin to cross
# the words (2); most of the text heavily marked, struck through and scribbled over (3).
KIND_WEIGHTS = {1: (0.7, 0.3, 0.0, 0.0), 2: (0.35, 0.3, 0.35, 0.0), 3: (0.0, 0.1, 0.4, 0.5)}
# Pen width in mm: a student pressing harder (or going over a mark twice) when marking heavily.
PEN_MM = {1: (0.35, 0.5), 2: (0.4, 0.6), 3: (0.55, 0.8)}
# A token counts as marked when pen ink spans at least this share of its columns near its line.
_MARKED_SPAN = 0.5


def _groups(rng: np.random.Generator, tokens: list[tuple[Box, Box]], count: int) -> list[list[int]]:
    """Runs of consecutive tokens on one line, ``count`` tokens in all."""
    free = set(range(len(tokens)))
    groups: list[list[int]] = []
    while count > 0 and free:
        start = int(rng.choice(sorted(free)))
        run = [start]
        want = min(count, int(rng.integers(1, 5)))
        while len(run) < want and run[-1] + 1 in free and tokens[run[-1] + 1][1] == tokens[start][1]:
            run.append(run[-1] + 1)
        free -= set(range(run[0] - 1, run[-1] + 2))  # keep a gap so marks stay attributable
        groups.append(run)
        count -= len(run)
    return groups


class QuestionMarking(Op):
    subtype = "question_marking"
    family = "interference"
    rubric = Rubric("marked_tokens", BINS, "marked question tokens")
    stage = "marks"
    requirement = "needs question_token boxes in the page layout"

    def applies(self, page: RenderedPage) -> bool:
        return any(b.kind == "question_token" for b in page.layout)

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        tokens = question_token_lines(page)
        if not tokens:
            raise DegradationError("question_marking needs question_token boxes in the page layout; got none")
        n = len(tokens)
        count = {1: 1, 2: int(rng.integers(2, 4)), 3: max(4, int(round(rng.uniform(0.5, 0.8) * n)))}[severity]
        if count > n:
            raise DegradationError(f"question_marking severity {severity} needs {count} question tokens,"
                                   f" the page has {n}")
        pen = str(rng.choice(list(PENS)))
        marks = []
        for run in _groups(rng, tokens, count):
            marks.append({"kind": str(rng.choice(KINDS, p=KIND_WEIGHTS[severity])),
                          "tokens": [tokens[i][0].ref for i in run], "seed": int(rng.integers(2**31 - 1))})
        return {"pen": pen, "rgb": [int(c) for c in np.clip(np.array(PENS[pen]) + rng.integers(-15, 16, 3), 0, 255)],
                "width_px": round(float(rng.uniform(*PEN_MM[severity])) * page.dpi / 25.4, 3), "marks": marks}

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
        sx, sy = before.shape[1] / page.width, before.shape[0] / page.height
        marked = []
        for t, line in question_token_lines(page):
            lh = line.y1 - line.y0
            band = pen[max(0, int((line.y0 - 0.25 * lh) * sy)):int((line.y1 + 0.3 * lh) * sy) + 1,
                       int(t.x0 * sx):max(int(t.x0 * sx) + 1, int(t.x1 * sx))]
            if band.size and band.any(axis=0).mean() >= _MARKED_SPAN:
                marked.append(t.ref)
        return {"marked_tokens": len(marked), "marked_refs": marked,
                "pen_pixel_frac": round(float(pen.mean()), 6)}


register(QuestionMarking())
