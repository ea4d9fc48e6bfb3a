"""OCR character error rate (rapidocr) against degradation severity, per subtype; writes results_cer.md.

Run: python benchmarks/cer_severity.py [--pages 24] [--dpi 100] [--ops blur,shadow,...]
The pages are rendered worksheets (question and worked solution): alternately printed and
handwritten (neat and irregular writers), and every other pair of pages comes from a family that
draws a figure (triangle, bar chart). Each op in ``--ops`` (by default the ones that touch
legibility) is applied at severities 1-3 with seed = page index, read by rapidocr with the
settings of reference/offline-components.md §1b (no angle classifier, one thread), and scored with
synth.evaluate.textdist.cer (whitespace-free, NFKC) against what rapidocr read on the same page
undegraded, so the table isolates what the degradation costs the reader; severity 0 is that clean
reading itself (CER 0 by construction). A second table scores the same readings against the
problem text, where severity 0 is the clean page's own CER. Both report the MEAN over pages (a
median hides harm that hits some pages hard and leaves others alone) and the median beside it, and
say per op whether CER rises monotonically (s0 <= s1 <= s2 <= s3 and s3 > s0).

OCR takes seconds a page on a loaded machine, so every reading is cached on disk under
outputs/.cache/cer_severity/, keyed by the image's bytes: a re-run after changing one op reads
only that op's pages again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perturb.photo import REGISTRY, degrade  # noqa: E402
from perturb.photo.base import ReversePage  # noqa: E402
from perturb.reasoning.base import clean_variant  # noqa: E402
from render import render_page  # noqa: E402
from render.handwriting import sample_writer  # noqa: E402
from synth.evaluate.ocr import RAPIDOCR_PARAMS, OcrLine, rows  # noqa: E402
from synth.evaluate.textdist import cer  # noqa: E402
from synth.generators import get_family  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).with_name("results_cer.md")
CACHE = ROOT / "outputs" / ".cache" / "cer_severity"
# Pages cycle through these four families two by two, so printed and handwritten pages both get figures.
FAMILIES = ("arithmetic.order_of_operations", "algebra.linear.two_step", "geometry.triangle.angle_sum",
            "statistics.mean.bar_chart")
# The subtypes whose rubric is about reading the content; rotation, jpeg, noise, resolution, background and
# the marking / handwriting ops can be chosen with --ops.
LEGIBILITY = ("blur", "exposure", "shadow", "glare", "tilt", "keystone", "paper_warp", "bleed_through",
              "question_marking")
SEVERITIES = (1, 2, 3)


def worksheet(index: int, dpi: int):
    """Page ``index``: printed on even indices, handwritten (neat or irregular) on odd ones."""
    rng = np.random.default_rng(index)
    difficulty = ("easy", "medium", "hard")[index % 3]
    family = FAMILIES[(index // 2) % len(FAMILIES)]
    p = get_family(family).build(rng, difficulty=difficulty, question_type="free", problem_id=f"cer{index}")
    variant = clean_variant(p)
    truth = "\n".join([p.question_text, "Solution", *[f"{s.index}. {s.text}" for s in variant.steps], "Answer:"])
    if index % 2:
        writer = sample_writer(np.random.default_rng(500 + index), neatness=1 + (index // 2) % 2)
        page = render_page(p, variant, dpi=dpi, style="handwritten", writer=writer, seed=index)
    else:
        page = render_page(p, variant, dpi=dpi, seed=index)
    return page, truth, "handwritten" if index % 2 else "printed", family


class Reader:
    """rapidocr with a disk cache keyed by the image bytes (and the reader settings)."""

    def __init__(self) -> None:
        self.engine = None
        self.fresh = 0
        self.key_salt = json.dumps(RAPIDOCR_PARAMS, sort_keys=True).encode()
        CACHE.mkdir(parents=True, exist_ok=True)

    def __call__(self, pixels: np.ndarray) -> str:
        h = hashlib.sha256(self.key_salt)
        h.update(str(pixels.shape).encode())
        h.update(np.ascontiguousarray(pixels).tobytes())
        path = CACHE / f"{h.hexdigest()[:32]}.txt"
        if path.exists():
            return path.read_text()
        text = self._read(pixels)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
        self.fresh += 1
        return text

    def _read(self, pixels: np.ndarray) -> str:
        if self.engine is None:
            from rapidocr import RapidOCR

            logging.getLogger("RapidOCR").setLevel(logging.WARNING)
            self.engine = RapidOCR(params=dict(RAPIDOCR_PARAMS))
        result = self.engine(cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR))
        if result.boxes is None or result.txts is None:
            return ""
        lines = [OcrLine(str(t), (min(p[0] for p in q), min(p[1] for p in q), max(p[0] for p in q),
                                  max(p[1] for p in q)), float(s))
                 for q, t, s in zip(result.boxes, result.txts, result.scores)]
        return "\n".join(ln.text for ln in rows(lines))


def monotone(means: list[float]) -> bool:
    """s0 <= s1 <= s2 <= s3 with s3 > s0, on the values as printed (3 decimals)."""
    m = [round(x, 3) for x in means]
    return all(a <= b for a, b in zip(m, m[1:])) and m[-1] > m[0]


def parse_ops(text: str) -> list[str]:
    ops = [o.strip() for o in text.split(",") if o.strip()]
    unknown = [o for o in ops if o not in REGISTRY]
    if unknown or not ops:
        raise SystemExit(f"--ops: unknown subtype(s) {unknown or text!r}; choose from {sorted(REGISTRY)}")
    bad = [o for o in ops if REGISTRY[o].uses_text]
    if bad:
        raise SystemExit(f"--ops: {bad} write the page's words by hand and are not measured here")
    return ops


def table(title: str, note: str, results: dict[str, list[list[float]]]) -> list[str]:
    head = ["| op | " + " | ".join(f"s{s} mean" for s in (0, *SEVERITIES)) + " | "
            + " | ".join(f"s{s} median" for s in (0, *SEVERITIES)) + " | pages | rises monotonically |",
            "|---|" + "---:|" * 8 + "---:|---|"]
    body = []
    for op, per_sev in results.items():
        means = [statistics.fmean(x) for x in per_sev]
        meds = [statistics.median(x) for x in per_sev]
        body.append(f"| {op} | " + " | ".join(f"{m:.3f}" for m in means) + " | "
                    + " | ".join(f"{m:.3f}" for m in meds) + f" | {len(per_sev[1])} | "
                    + ("yes" if monotone(means) else "**no**") + " |")
    return [f"## {title}", "", note, "", *head, *body, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=24)
    parser.add_argument("--dpi", type=int, default=100)
    parser.add_argument("--ops", default=",".join(LEGIBILITY),
                        help=f"comma-separated subtypes (default: {','.join(LEGIBILITY)})")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the Markdown table")
    args = parser.parse_args()
    if args.pages < 1:
        raise SystemExit(f"--pages must be at least 1, got {args.pages}")
    ops = parse_ops(args.ops)
    read = Reader()
    sheets = [worksheet(i, args.dpi) for i in range(args.pages + 1)]  # the last one is only a reverse side
    pages = sheets[:-1]
    t0 = time.perf_counter()
    clean_reads = [read(r.pixels) for r, *_ in pages]
    clean_truth = [cer(text, truth) for text, (_, truth, *_) in zip(clean_reads, pages, strict=True)]
    vs_clean: dict[str, list[list[float]]] = {}
    vs_truth: dict[str, list[list[float]]] = {}
    skipped: dict[str, int] = {}
    total, done = len(ops) * len(SEVERITIES) * len(pages), 0
    for op in ops:
        live = [i for i, (r, *_) in enumerate(pages) if REGISTRY[op].applies(r.page)]
        skipped[op] = len(pages) - len(live)
        vs_clean[op] = [[0.0] * len(live)]
        vs_truth[op] = [[clean_truth[i] for i in live]]
        for s in SEVERITIES:
            a, b = [], []
            for i in live:
                r = pages[i][0]
                back = ReversePage(sheets[i + 1][0].pixels, f"cer{i + 1}")  # the next worksheet is the reverse side
                out, _, _ = degrade(r.pixels, r.page, op, s, np.random.default_rng(i), reverse=back)
                text = read(out)
                a.append(cer(text, clean_reads[i]))
                b.append(cer(text, pages[i][1]))
            done += len(pages)
            vs_clean[op].append(a)
            vs_truth[op].append(b)
            el = time.perf_counter() - t0
            print(f"[{done}/{total}] {op:18s} s{s} mean CER {statistics.fmean(a):.3f}"
                  f" ({read.fresh} fresh readings, {el / 60:.1f} min)", file=sys.stderr, flush=True)
        means = [statistics.fmean(x) for x in vs_clean[op]]
        print(f"{op:18s} " + " ".join(f"{m:6.3f}" for m in means) + ("  rises" if monotone(means) else "  FLAT/NOT"),
              flush=True)
    minutes = (time.perf_counter() - t0) / 60
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    styles = [st for _, _, st, _ in pages]
    figures = sum(f in FAMILIES[2:] for *_, f in pages)
    skip_note = "; ".join(f"{op} skips {n} page(s) it does not apply to" for op, n in skipped.items() if n)
    lines = [
        "# OCR character error rate vs degradation severity (rapidocr)",
        "",
        f"{len(pages)} worksheets at {args.dpi} dpi (question + worked solution): {styles.count('printed')} printed,"
        f" {styles.count('handwritten')} handwritten (neat and irregular writers); {figures} of them draw a figure"
        f" (triangle, bar chart). Families: {', '.join(FAMILIES)}. Each page is degraded with seed = page index;"
        " bleed_through shows the next worksheet as the reverse side. rapidocr 3.10 with"
        " `Det.limit_type=max, limit_side_len=960, use_cls=False`, one thread. CER = edit distance / reference"
        " characters, whitespace removed (synth.evaluate.textdist.cer). Mean and median over pages."
        + (f" {skip_note}." if skip_note else ""),
        f"OCR took {minutes:.1f} min ({read.fresh} readings, the rest from the cache); load average {load:.2f} at"
        " the end. \"rises monotonically\": mean s0 <= s1 <= s2 <= s3 and s3 > s0 (to 3 decimals).",
        f"Re-run: `python benchmarks/cer_severity.py --pages {args.pages} --dpi {args.dpi}"
        + ("" if ops == list(LEGIBILITY) else f" --ops {','.join(ops)}") + "`.",
        "",
        *table("Against the clean page's reading", "What the degradation costs the reader: the reference is"
               " rapidocr's reading of the same page undegraded, so severity 0 is 0 by construction.", vs_clean),
        *table("Against the problem text", "The same readings scored against the page's text (question,"
               " 'Solution', numbered steps, 'Answer:'); severity 0 is the clean page's own CER, which includes"
               " what the reader gets wrong on clean pages (maths layout, handwriting).", vs_truth),
    ]
    args.out.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
