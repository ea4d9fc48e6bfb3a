"""Print how long the geometry and solid figure drawers take per figure (median and worst, after a warm-up).

    python benchmarks/figures_geometry.py [--dpi 150] [--seeds 12]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from render.figures import draw_figure
from synth.generators import get_family
from synth.generators.base import DIFFICULTIES

FAMILIES = (
    "geometry.triangle.angle_sum", "geometry.pythagoras", "geometry.similar_triangles", "geometry.circle.area",
    "geometry.circle.circumference_arc", "geometry.polygon.area_perimeter", "geometry.angles.parallel_lines",
    "solid.prism.volume_surface", "solid.cylinder.volume_surface", "solid.cone.volume",
    "solid.sphere.volume_surface", "trig.right_triangle.ratios",
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dpi", type=int, default=150)
    parser.add_argument("--seeds", type=int, default=12)
    args = parser.parse_args()
    # CPU time is what a figure costs; wall time also shows how busy the machine is.
    print(f"| family | median cpu ms | max cpu ms | median wall ms | size px |  (dpi {args.dpi}, {args.seeds} each)")
    print("|---|---|---|---|---|")
    for fid in FAMILIES:
        family = get_family(fid)
        figures = [family.figure(family.sample(np.random.default_rng(s), DIFFICULTIES[s % 3]))
                   for s in range(args.seeds)]
        draw_figure(figures[0], args.dpi)  # fonts load once per process
        cpu, wall = [], []
        for fig in figures:
            c0, t0 = time.process_time(), time.perf_counter()
            img = draw_figure(fig, args.dpi)
            cpu.append((time.process_time() - c0) * 1000)
            wall.append((time.perf_counter() - t0) * 1000)
        h, w, _ = img.pixels.shape
        print(f"| {fid} | {statistics.median(cpu):.1f} | {max(cpu):.1f} | {statistics.median(wall):.1f} | {w}x{h} |")


if __name__ == "__main__":
    main()
