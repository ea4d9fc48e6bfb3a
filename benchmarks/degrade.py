"""Photographic ops: time per op and severity, fused vs one-by-one geometry, and severity-bin acceptance.

Run: python benchmarks/degrade.py [--runs 5] [--bin-pages 200]
Writes results_degrade.md. Times are the median wall time of ``--runs`` calls (after one warm-up,
a fixed seed per run) on an A4 page at 150 dpi with a real figure (a triangle or a bar chart); each call
samples, applies
and measures. The acceptance table degrades ``--bin-pages`` different pages (60 dpi, params scale
with dpi) per subtype and severity and counts how often the measured effect lands in the bin.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perturb.photo import (  # noqa: E402  # noqa: E402
    REGISTRY,
    background,
    bleed_through,
    degrade,
    exposure,
    figure_marking,
    glare,
    handwritten,
    keystone,
    noise,
    paper_warp,
    question_marking,
    resolution,
    shadow,
    tilt,
)
from perturb.photo.jpeg import QUALITY  # noqa: E402
from perturb.photo.profile import degrade_profile  # noqa: E402
from perturb.reasoning.base import clean_variant  # noqa: E402
from render import render_page  # noqa: E402
from synth.generators import get_family  # noqa: E402

OUT = Path(__file__).with_name("results_degrade.md")
# Figure families, so the figure-marking op has real figure primitives to mark.
FAMILIES = ("geometry.triangle.angle_sum", "statistics.mean.bar_chart")
# subtype -> (bins, measured key, lower edge exclusive)
BINS = {"shadow": (shadow.BINS, "content_coverage", False), "glare": (glare.BINS, "text_under_glare", True),
        "exposure": (exposure.BINS, "contrast_retained", False), "tilt": (tilt.BINS, "abs_angle_deg", True),
        "keystone": (keystone.BINS, "keystone_ratio", False), "paper_warp": (paper_warp.BINS, "line_bow_frac", False),
        "noise": (noise.BINS, "psnr_db", False), "resolution": (resolution.BINS, "scale", False),
        "bleed_through": (bleed_through.BINS, "bleed_contrast", False),
        "question_marking": (question_marking.BINS, "marked_tokens", False), "jpeg": (QUALITY, "quality", False),
        "background": (background.BINS, "page_area_frac", False),
        "figure_marking": (figure_marking.BINS, "marks", False),
        "handwritten_question": (handwritten.QUESTION_BINS, "neatness", False),
        "handwritten_answer": (handwritten.ANSWER_BINS, "written", False),
        "handwritten_working": (handwritten.WORKING_BINS, "lines", False)}
# A handwritten question lands in its bin only when it is also complete: every token written, no print left.
COMPLETE = {"handwritten_question": lambda m: m["tokens_written"] == m["tokens"] and m["printed_ink_left"] == 0}
CHAINS = {"tilt + keystone": [("keystone", 2), ("tilt", 1)],
          "paper_warp + keystone + tilt + background": [("paper_warp", 2), ("keystone", 1), ("tilt", 1),
                                                        ("background", 1)],
          "tilt + background + rotation": [("tilt", 1), ("background", 2), ("rotation", 1)]}


def problem(index: int):
    family = FAMILIES[index % 2]
    return get_family(family).build(np.random.default_rng(index), difficulty=("easy", "medium", "hard")[index % 3],
                                    question_type="free", problem_id=f"bench{index}")


def page(index: int, dpi: int):
    p = problem(index)
    r = render_page(p, clean_variant(p), dpi=dpi)
    return r.pixels, r.page


def text(index: int):
    """The page's words, for the ops that write them by hand."""
    p = problem(index)
    return handwritten.page_text(p, clean_variant(p))


def median_ms(fn, runs: int) -> float:
    fn(0)
    times = []
    for run in range(runs):
        t0 = time.perf_counter()
        fn(run + 1)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def in_bin(op: str, measured: dict, severity: int) -> bool:
    bins, key, open_low = BINS[op]
    lo, hi = bins[severity]
    value = measured[key]
    ok = (lo < value <= hi) if open_low else (lo <= value <= hi)
    return ok and COMPLETE.get(op, lambda m: True)(measured)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bin-pages", type=int, default=200)
    args = parser.parse_args()
    img, layout = page(0, 150)
    h, w = img.shape[:2]
    rows = []
    words = text(0)
    for op in sorted(REGISTRY):
        ms = [median_ms(lambda r, op=op, s=s: degrade(img, layout, op, s, np.random.default_rng(r), text=words),
                        args.runs) if s in REGISTRY[op].levels else float("nan") for s in (1, 2, 3)]
        rows.append((op, ms))
        print(f"{op:18s}" + "".join(f"{m:9.1f}" for m in ms), flush=True)
    fusion = []
    for name, chain in CHAINS.items():
        _, _, recs = degrade_profile(img, layout, chain, np.random.default_rng(0))
        params = [r.params for r in recs]
        fused = median_ms(lambda r, c=chain, p=params: degrade_profile(img, layout, c, None, params=p), args.runs)
        split = median_ms(lambda r, c=chain, p=params: degrade_profile(img, layout, c, None, params=p, fuse=False),
                          args.runs)
        fusion.append((name, split, fused))
        print(f"{name}: one by one {split:.1f} ms, fused {fused:.1f} ms", flush=True)
    bin_pages = [(*page(i, 60), text(i)) for i in range(args.bin_pages)]
    acceptance = []
    for op in sorted(BINS):
        key = BINS[op][1]
        shares = []
        for s in (1, 2, 3):
            if s not in REGISTRY[op].levels:
                shares.append(float("nan"))
                continue
            hits = sum(in_bin(op, degrade(im, lay, op, s, np.random.default_rng(i), text=words)[2].measured, s)
                       for i, (im, lay, words) in enumerate(bin_pages))
            shares.append(100.0 * hits / len(bin_pages))
        acceptance.append((op, key, shares))
        print(f"{op:18s} " + " ".join(f"{x:6.1f}%" for x in shares), flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Photographic degradation ops: time per A4 page at 150 dpi, fusion, severity bins",
        "",
        f"Page {w}x{h} RGB with a real figure (triangle or bar chart). Median of {args.runs} calls after a warm-up;"
        " each call is sample + apply + measure.",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, load average {load:.2f} at the end,"
        f" Python {platform.python_version()}, numpy {np.__version__}, OpenCV {cv2.__version__}"
        f" ({cv2.getNumThreads()} threads).",
        "Re-run: `python benchmarks/degrade.py`.",
        "",
        "| op | severity 1 (ms) | severity 2 (ms) | severity 3 (ms) |",
        "|---|---:|---:|---:|",
        *[f"| {op} | " + " | ".join(f"{m:.1f}" if m == m else "—" for m in ms) + " |" for op, ms in rows],
        "",
        "## Fused geometry",
        "",
        "The same recorded params replayed through `degrade_profile`: one remap per op (each laying the sheet on",
        "its own desk) versus one composed map and one remap for the whole chain. Both include measuring.",
        "",
        "| chain | one by one (ms) | fused (ms) | speed-up |",
        "|---|---:|---:|---:|",
        *[f"| {n} | {a:.1f} | {b:.1f} | {a / b:.2f}x |" for n, a, b in fusion],
        "",
        "## Severity bins",
        "",
        f"Share of {args.bin_pages} different pages (60 dpi, seed = page index) whose measured effect lands in the"
        " rubric bin of the requested severity.",
        "",
        "| op | measured | severity 1 | severity 2 | severity 3 |",
        "|---|---|---:|---:|---:|",
        *[f"| {op} | `{key}` | " + " | ".join(f"{x:.1f}%" if x == x else "—" for x in sh) + " |"
          for op, key, sh in acceptance],
        "",
    ]
    OUT.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
