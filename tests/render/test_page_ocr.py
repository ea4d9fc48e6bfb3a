"""OCR reads rendered steps back: rapidocr on printed and neat handwritten pages (slow: loads the OCR model)."""

from __future__ import annotations

import logging
import re
import statistics

import numpy as np
import pytest

from perturb.reasoning.base import clean_variant
from render.handwriting import sample_writer
from render.page import render_page
from render.typeset import PrintedFace, layout, parse, reading, reading_rows
from synth.generators import get_family

FAMILIES = ("arithmetic.fractions.add_unlike", "algebra.linear.brackets", "algebra.exponents.simplify",
            "trig.exact_values")


def _step_cers(engine, style: str) -> list[float]:
    from synth.evaluate.textdist import cer

    face = PrintedFace()
    out = []
    for n, fid in enumerate(FAMILIES):
        problem = get_family(fid).build(np.random.default_rng(n), difficulty="medium", question_type="free",
                                        problem_id=f"ocr-{n}")
        writer = sample_writer(np.random.default_rng(n), neatness=1) if style == "handwritten" else None
        page = render_page(problem, clean_variant(problem), dpi=150, style=style, writer=writer, seed=n)
        for step in problem.steps:
            b = next(b for b in page.page.layout if b.kind == "step" and b.ref == str(step.index))
            crop = page.pixels[int(b.y0) - 6:int(b.y1) + 6, int(b.x0) - 6:int(b.x1) + 6]
            res = engine(crop)
            dets = sorted(zip(res.txts or (), res.boxes if res.boxes is not None else ()),
                          key=lambda d: float(d[1][:, 0].min()))
            read = re.sub(r"\s", "", "".join(t for t, _ in dets))
            tree = parse(step.latex)
            golds = (reading(tree), reading_rows(layout(tree, face, 25.0).ops))
            out.append(min(cer(read, g) for g in golds))
    return out


@pytest.mark.slow
def test_rapidocr_reads_printed_and_neat_handwritten_steps_back() -> None:
    rapidocr = pytest.importorskip("rapidocr")
    from synth.evaluate.ocr import RAPIDOCR_PARAMS

    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    engine = rapidocr.RapidOCR(params=RAPIDOCR_PARAMS)
    printed, hand = _step_cers(engine, "printed"), _step_cers(engine, "handwritten")
    assert statistics.median(printed) <= 0.05, printed
    assert statistics.median(hand) <= 0.10, hand
