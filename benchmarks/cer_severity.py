"""OCR character error rate (rapidocr) against degradation severity, per subtype; writes results_cer.md.

Run: python benchmarks/cer_severity.py [--pages 20] [--dpi 100]
Each page is a rendered worksheet (question and worked solution). Every subtype is applied at
severities 1-3 with seed = page index, read by rapidocr with the settings of
reference/offline-components.md §1b (no angle classifier, one thread), and scored with
synth.evaluate.textdist.cer (whitespace-free, NFKC) against what rapidocr read on the same page
undegraded, so the table isolates what the degradation costs the reader (the clean pages' own CER
against the problem text is reported beside it). The table reports the median CER over the pages.
figure_marking needs a figure and is left out until worksheets carry figures.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path and benchmarks/render.py would hide the `render` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perturb.photo import REGISTRY, degrade  # noqa: E402
from perturb.photo.base import ReversePage  # noqa: E402
from perturb.reasoning.base import clean_variant  # noqa: E402
from render import render_page  # noqa: E402
from synth.evaluate.ocr import RAPIDOCR_PARAMS, OcrLine, rows  # noqa: E402
from synth.evaluate.textdist import cer  # noqa: E402
from synth.generators import get_family  # noqa: E402

OUT = Path(__file__).with_name("results_cer.md")
FAMILIES = ("arithmetic.order_of_operations", "algebra.linear.two_step")
SKIP = {"figure_marking"}


def worksheet(index: int, dpi: int):
    difficulty = ("easy", "medium", "hard")[index % 3]
    p = get_family(FAMILIES[index % 2]).build(np.random.default_rng(index), difficulty=difficulty,
                                              question_type="free", problem_id=f"cer{index}")
    variant = clean_variant(p)
    truth = "\n".join([p.question_text, "Solution",
                       *[f"{s.index}. {s.text}" for s in variant.steps], "Answer:"])
    return render_page(p, variant, dpi=dpi), truth


def read(engine, pixels: np.ndarray) -> str:
    result = engine(cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR))
    if result.boxes is None or result.txts is None:
        return ""
    lines = [OcrLine(str(t), (min(p[0] for p in q), min(p[1] for p in q), max(p[0] for p in q), max(p[1] for p in q)),
                     float(s)) for q, t, s in zip(result.boxes, result.txts, result.scores)]
    return "\n".join(ln.text for ln in rows(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--dpi", type=int, default=100)
    args = parser.parse_args()
    from rapidocr import RapidOCR

    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    engine = RapidOCR(params=dict(RAPIDOCR_PARAMS))
    sheets = [worksheet(i, args.dpi) for i in range(args.pages + 1)]
    t0 = time.perf_counter()
    clean_reads = [read(engine, r.pixels) for r, _ in sheets[:-1]]
    clean = [cer(text, truth) for text, (_, truth) in zip(clean_reads, sheets[:-1], strict=True)]
    table = []
    for op in sorted(set(REGISTRY) - SKIP):
        meds = []
        for s in (1, 2, 3):
            scores = []
            for i, (r, _) in enumerate(sheets[:-1]):
                back = ReversePage(sheets[i + 1][0].pixels, f"cer{i + 1}")  # the next worksheet is the reverse side
                out, _, _ = degrade(r.pixels, r.page, op, s, np.random.default_rng(i), reverse=back)
                scores.append(cer(read(engine, out), clean_reads[i]))
            meds.append(statistics.median(scores))
        table.append((op, meds))
        print(f"{op:18s} " + " ".join(f"{m:6.3f}" for m in meds), flush=True)
    minutes = (time.perf_counter() - t0) / 60
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# OCR character error rate vs degradation severity (rapidocr)",
        "",
        f"{args.pages} worksheets at {args.dpi} dpi (question + worked solution, printed), each degraded with seed ="
        " page index; bleed_through shows the next worksheet as the reverse side. rapidocr 3.10 with"
        " `Det.limit_type=max, limit_side_len=960, use_cls=False`, one thread. CER = edit distance /"
        " characters of rapidocr's reading of the same page undegraded, whitespace removed"
        " (synth.evaluate.textdist.cer); median over pages.",
        f"Clean pages against the problem text (question, 'Solution', numbered steps, 'Answer:'): median CER"
        f" {statistics.median(clean):.3f}. OCR took {minutes:.1f} min; load average"
        f" {load:.2f} at the end. figure_marking is left out (these worksheets have no figure).",
        "Re-run: `python benchmarks/cer_severity.py`.",
        "",
        "| op | severity 1 | severity 2 | severity 3 |",
        "|---|---:|---:|---:|",
        *[f"| {op} | " + " | ".join(f"{m:.3f}" for m in meds) + " |" for op, meds in table],
        "",
    ]
    OUT.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
