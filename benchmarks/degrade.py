"""Time every photographic op per severity on an A4 page at 150 dpi; writes results_degrade.md.

Run: python benchmarks/degrade.py [--runs 5]
Each figure is the median wall time of ``--runs`` calls of ``degrade`` (sampling, applying and
measuring), after one warm-up call, with a fixed seed per run.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import cv2
import numpy as np

from perturb.photo import REGISTRY, degrade
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.generators import get_family

OUT = Path(__file__).with_name("results_degrade.md")


def page():
    p = get_family("arithmetic.order_of_operations").build(np.random.default_rng(0), difficulty="hard",
                                                            question_type="free", problem_id="bench")
    return render_page(p, clean_variant(p), dpi=150)


def time_op(image: np.ndarray, layout, op: str, severity: int, runs: int) -> float:
    degrade(image, layout, op, severity, np.random.default_rng(0))
    times = []
    for run in range(runs):
        rng = np.random.default_rng(run + 1)
        t0 = time.perf_counter()
        degrade(image, layout, op, severity, rng)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rendered = page()
    h, w = rendered.pixels.shape[:2]
    rows = []
    for op in sorted(REGISTRY):
        ms = [time_op(rendered.pixels, rendered.page, op, s, args.runs) for s in (1, 2, 3)]
        rows.append((op, ms))
        print(f"{op:18s}" + "".join(f"{m:9.1f}" for m in ms))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Photographic degradation ops: time per A4 page at 150 dpi",
        "",
        f"Page {w}x{h} RGB. Median of {args.runs} calls after a warm-up; each call is sample + apply + measure.",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, load average {load:.2f} at the end,"
        f" Python {platform.python_version()}, numpy {np.__version__}, OpenCV {cv2.__version__}"
        f" ({cv2.getNumThreads()} threads).",
        "Re-run: `python benchmarks/degrade.py`.",
        "",
        "| op | severity 1 (ms) | severity 2 (ms) | severity 3 (ms) |",
        "|---|---:|---:|---:|",
        *[f"| {op} | " + " | ".join(f"{m:.1f}" for m in ms) + " |" for op, ms in rows],
        "",
    ]
    OUT.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
