"""Render speed per page style, our typesetter against matplotlib mathtext, and OCR read-back CER.

Run: python benchmarks/render_speed.py [--pages 40] [--ocr 100] [--dpi 150]
Writes benchmarks/results_render.md. All timings are single-threaded (OpenCV set to one thread)
wall times of one process; each figure is a median over the sample.

- ms per page: the same problems (all registered families, hard difficulty) rendered as printed A4,
  handwritten A4 at neatness 1/2/3 (lined paper), the exam sheet, and phone pages.
- math engines: one step line (parse, layout, draw to pixels) with ``render.typeset`` against
  ``MathTextParser("agg").parse`` (mathtext's own layout straight to a bitmap, no figure) and
  ``MathTextParser("path").parse`` (layout only, no pixels).
- OCR: rapidocr (settings of ``synth.evaluate.ocr``) reads each page's solution area once; each
  detection goes to the step box holding its centre, and the step's printed number is dropped.
  A line OCR has no single reading order for stacked fractions (it returns a small fraction as one
  token, a wide one as separate numerator and denominator rows), so each step's CER
  (``synth.evaluate.textdist.cer``) is the lower of two readings of the detections (row by row;
  left to right) against two readings of the step (row by row, ``typeset.reading_rows``; numerator
  then denominator, ``typeset.reading``). It measures whether glyphs are legible, not 2-D structure.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import re
import statistics
import time
from pathlib import Path

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from perturb.reasoning.base import clean_variant  # noqa: E402
from render.handwriting import sample_writer  # noqa: E402
from render.page import compose_page, render_page  # noqa: E402
from render.typeset import PrintedFace, layout, layout_lines, parse, reading, reading_rows  # noqa: E402
from synth.generators import REGISTRY, get_family  # noqa: E402
from synth.records import Problem  # noqa: E402

OUT = Path(__file__).with_name("results_render.md")
STYLES = {  # label -> (style, neatness, paper, page)
    "printed A4 plain": ("printed", 0, "plain", "a4"),
    "printed A4 exam": ("printed", 0, "exam", "a4"),
    "printed phone": ("printed", 0, "plain", "phone"),
    "handwritten A4 lined, neatness 1": ("handwritten", 1, "lined", "a4"),
    "handwritten A4 lined, neatness 2": ("handwritten", 2, "lined", "a4"),
    "handwritten A4 lined, neatness 3": ("handwritten", 3, "lined", "a4"),
    "handwritten phone grid, neatness 2": ("handwritten", 2, "grid", "phone"),
}


def problems(n: int) -> list[Problem]:
    """``n`` problems cycling over every family that builds (hard, its first question type) and whose
    figure kind has a drawer."""
    from render.figures import DRAWERS, _load

    _load()
    out: list[Problem] = []
    families = sorted(REGISTRY)
    seed = 0
    while len(out) < n and seed < 50 * n:
        fid = families[seed % len(families)]
        family = get_family(fid)
        try:
            p = family.build(np.random.default_rng(seed), difficulty="hard",
                             question_type=family.question_types[0], problem_id=f"bench-{seed:06d}")
        except Exception:  # noqa: BLE001 - a family under construction elsewhere is skipped, not timed
            p = None
        if p is not None and (p.figure is None or p.figure.kind in DRAWERS):
            out.append(p)
        seed += 1
    return out


def time_styles(items: list[Problem], dpi: int) -> dict[str, tuple[float, float]]:
    """Median (wall ms, CPU ms) per page; CPU time is the steadier figure on a shared machine."""
    result = {}
    for label, (style, neat, paper, page) in STYLES.items():
        wall, cpu = [], []
        for n, p in enumerate(items):
            writer = sample_writer(np.random.default_rng(n), neatness=neat) if style == "handwritten" else None
            v = clean_variant(p)
            if n == 0:
                render_page(p, v, page=page, paper=paper, dpi=dpi, style=style, writer=writer, seed=n)  # warm-up
            t0, c0 = time.perf_counter(), time.process_time()
            render_page(p, v, page=page, paper=paper, dpi=dpi, style=style, writer=writer, seed=n)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
        result[label] = (statistics.median(wall), statistics.median(cpu))
        print(f"{label:38s} {result[label][0]:7.1f} ms/page wall {result[label][1]:7.1f} ms CPU")
    return result


def time_engines(items: list[Problem], dpi: int) -> dict[str, float]:
    from matplotlib.mathtext import MathTextParser

    from render.typeset import InkLayer

    face = PrintedFace()
    size = 12 * dpi / 72
    lines = [s.latex for p in items for s in p.steps][:150]
    agg, path = MathTextParser("agg"), MathTextParser("path")

    def ours(tex: str) -> None:
        laid = layout(parse(tex), face, size)
        layer = InkLayer(int(laid.ascent + laid.descent) + 4, int(laid.width) + 4)
        for mark in face.marks(laid.ops, 2, laid.ascent + 2):
            layer.draw("x", mark)

    def mt(engine, tex: str) -> None:
        engine.parse("$" + tex.replace(r"\text{", r"\mathrm{") + "$", dpi=dpi)

    out = {}
    for label, fn in (("render.typeset (parse + layout + pixels)", ours),
                      ("mathtext agg (layout + pixels)", lambda t: mt(agg, t)),
                      ("mathtext path (layout only)", lambda t: mt(path, t))):
        times = []
        for tex in lines:
            t0 = time.perf_counter()
            fn(tex)
            times.append((time.perf_counter() - t0) * 1000)
        out[label] = statistics.median(times)
        print(f"{label:42s} {out[label]:7.2f} ms/line (median of {len(lines)})")
    return out


def ocr_rows(dets: list[tuple[str, tuple[float, float, float, float]]]) -> str:
    dets = sorted(dets, key=lambda d: (d[1][1] + d[1][3]) / 2)
    rows: list[list[tuple[str, tuple[float, float, float, float]]]] = []
    for d in dets:
        cy, h = (d[1][1] + d[1][3]) / 2, d[1][3] - d[1][1]
        if rows:
            r0 = rows[-1][0][1]
            if abs(cy - (r0[1] + r0[3]) / 2) < 0.5 * min(h, r0[3] - r0[1]):
                rows[-1].append(d)
                continue
        rows.append([d])
    return "".join(t for row in rows for t, _ in sorted(row, key=lambda d: d[1][0]))


def ocr_cer(items: list[Problem], dpi: int) -> dict[str, list[float]]:
    from rapidocr import RapidOCR

    from synth.evaluate.ocr import RAPIDOCR_PARAMS
    from synth.evaluate.textdist import cer

    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    engine = RapidOCR(params=RAPIDOCR_PARAMS)
    face = PrintedFace()
    out: dict[str, list[float]] = {"printed": [], "handwritten neatness 1": []}
    for n, p in enumerate(items):
        v = clean_variant(p)
        for label in out:
            style = "printed" if label == "printed" else "handwritten"
            writer = sample_writer(np.random.default_rng(n), neatness=1) if style == "handwritten" else None
            draft = compose_page(p, v, dpi=dpi, style=style, writer=writer, seed=n)
            page = draft.rasterize()
            steps = {b.ref: b for b in page.page.layout if b.kind == "step"}
            top = int(min(b.y0 for b in steps.values())) - 8
            bottom = int(max(b.y1 for b in steps.values())) + 8
            crop = page.pixels[top:bottom]
            res = engine(crop)
            found: dict[str, list] = {ref: [] for ref in steps}
            for text, quad in zip(res.txts or (), res.boxes if res.boxes is not None else ()):
                xs, ys = quad[:, 0], quad[:, 1] + top
                cx, cy = float(xs.mean()), float(ys.mean())
                for ref, b in steps.items():
                    if b.x0 - 4 <= cx <= b.x1 + 4 and b.y0 - 4 <= cy <= b.y1 + 4:
                        found[ref].append((text, (float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()))))
                        break
            width = draft.width - 2 * draft.margin - 12 * dpi / 72 * 2.2
            for s in v.steps:
                lines = layout_lines(parse(s.latex), face, 12 * dpi / 72, width)
                golds = ("".join(reading_rows(line.ops) for line in lines), reading(parse(s.latex)))
                dets = found[str(s.index)]
                reads = (ocr_rows(dets), "".join(t for t, _ in sorted(dets, key=lambda d: d[1][0])))
                reads = tuple(re.sub(rf"^\s*{s.index}\s*[.,]\s*", "", r) for r in reads)  # the step's number
                out[label].append(min(cer(r, g) for r in reads for g in golds))
        if (n + 1) % 10 == 0:
            print(f"  ocr {n + 1}/{len(items)} pages; median CER so far "
                  + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in out.items()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40, help="problems timed per style")
    parser.add_argument("--ocr", type=int, default=0, help="problems read back with rapidocr (0 = skip)")
    parser.add_argument("--dpi", type=int, default=150)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    items = problems(args.pages)
    styles = time_styles(items, args.dpi)
    engines = time_engines(items, args.dpi)
    cers = ocr_cer(problems(args.ocr), args.dpi) if args.ocr else {}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Page rendering: speed per style, math engines, OCR read-back",
        "",
        f"Re-run: `python benchmarks/render_speed.py --pages {args.pages} --ocr {args.ocr} --dpi {args.dpi}`.",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs shared with other jobs (load average {load:.2f}"
        f" at the end), Python {platform.python_version()}, OpenCV {cv2.__version__} (1 thread).",
        f"{len(items)} problems cycling over {len(REGISTRY)} registered families (hard), {args.dpi} dpi;"
        " median wall time per page including layout, handwriting sampling and rasterising.",
        "Wall time includes waiting for a core when other jobs run; CPU ms is this process's own CPU time"
        " (`time.process_time`), the figure to compare with the one-core targets (60 ms printed, 120 ms handwritten).",
        "",
        "| style | wall ms / page | CPU ms / page |",
        "|---|---:|---:|",
        *[f"| {k} | {w:.1f} | {c:.1f} |" for k, (w, c) in styles.items()],
        "",
        "## One step line: our typesetter vs matplotlib mathtext",
        "",
        "| engine | ms / line |",
        "|---|---:|",
        *[f"| {k} | {v:.2f} |" for k, v in engines.items()],
        "",
    ]
    if cers:
        lines += [
            "## OCR read-back (rapidocr, whole solution area per page, steps matched by box)",
            "",
            f"{args.ocr} problems; per step, the lower CER of two readings of the OCR detections against two"
            " readings of the step's layout (see the module docstring); the step number is dropped.",
            "",
            "| style | steps | median CER | mean CER | steps with CER 0 |",
            "|---|---:|---:|---:|---:|",
            *[f"| {k} | {len(v)} | {statistics.median(v):.3f} | {statistics.fmean(v):.3f} |"
              f" {sum(c == 0 for c in v) / len(v):.0%} |" for k, v in cers.items()],
            "",
        ]
    OUT.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
