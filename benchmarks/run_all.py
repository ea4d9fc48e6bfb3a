"""Pipeline throughput: items/s per stage and in total, with 1 and 2 workers, and peak RSS.

Each configuration runs in a fresh subprocess (so peak RSS is that run's own) several times;
the table reports medians. Writes benchmarks/results.md.

    python benchmarks/run_all.py [--repeats 3] [--scale 1.0]

Sizes are chosen so a run lasts long enough for the worker pool's start-up (a second or two
per process) not to dominate: 96 base problems for the image mixes, 6,000 for text only
(``--scale`` multiplies them). Also reported: CPU ms per item (user + system time of the run's
processes divided by items), the per-core cost that does not depend on how busy the machine is.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from synth.stages import STAGES  # noqa: E402 - the stages stats.json times, in their order


def mixes(scale: float) -> dict[str, dict]:
    quick = yaml.safe_load((HERE.parent / "configs" / "quickstart.yaml").read_text())
    quick["count"] = max(2, round(96 * scale))
    text_only = {**quick, "name": "text_only", "count": max(2, round(6000 * scale)), "render": {"enabled": False},
                 "degrade": {"ops": [], "profiles": []}, "output": {"shard_size": 50}}
    # Every photo goes through a whole capture profile (marks, reverse page, lighting, fused geometry,
    # camera) on an A4 page at 150 dpi: the "rendered and fully degraded" mix of the scale-out issue.
    profiles = yaml.safe_load((HERE.parent / "configs" / "capture_profiles.yaml").read_text())
    degraded = {**quick, "name": "a4_degraded", "inject": {**quick["inject"], "variants_per_base": 0},
                "render": {**quick["render"], "page": "a4", "dpi": 150},
                "degrade": {"ops": [], "profiles": profiles["degrade"]["profiles"]}}
    return {"quickstart mix": quick, "text only": text_only, "A4 150 dpi, every photo a capture profile": degraded}


def run_once(config: dict, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "cfg.yaml"
        cfg.write_text(yaml.safe_dump(config))
        out = Path(tmp) / "run"
        code = ("import resource, sys, time, json\n"
                "from synth.config import load_config\nfrom synth.pipeline import run\n"
                f"t=time.perf_counter(); r=run(load_config({str(cfg)!r}), {str(out)!r}, workers={workers})\n"
                "print(json.dumps({'items': r.items, 'seconds': time.perf_counter()-t}))")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_kib = after.ru_maxrss
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        stats = json.loads((out / "stats.json").read_text())
        result["stages"] = stats["seconds_per_stage"]
        result["peak_rss_mib"] = max(peak_kib, before.ru_maxrss) / 1024
        result["cpu_seconds"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every mix's number of base problems")
    args = parser.parse_args()
    lines = ["| mix | workers | items | items/s (median) | ms/item wall | CPU ms/item | speed-up | "
             "peak RSS MiB (largest process) | " + " | ".join(f"{s} ms/item" for s in STAGES) + " |",
             "|---|---|---|---|---|---|---|---|" + "---|" * len(STAGES)]
    for name, config in mixes(args.scale).items():
        one = None
        for workers in (1, 2):
            runs = [run_once(config, workers) for _ in range(args.repeats)]
            items = runs[0]["items"]
            rate = statistics.median(r["items"] / r["seconds"] for r in runs)
            cpu_ms = statistics.median(r["cpu_seconds"] / r["items"] * 1000 for r in runs)
            one = rate if workers == 1 else one
            rss = max(r["peak_rss_mib"] for r in runs)
            stage_ms = [statistics.median(r["stages"][s] / r["items"] * 1000 for r in runs) for s in STAGES]
            # One worker runs in-process; a pool's workers are the forkserver's children, whose CPU time
            # this process cannot see, so CPU ms/item is reported for one worker only.
            cpu = f"{cpu_ms:.0f}" if workers == 1 else "—"
            row = (f"| {name} | {workers} | {items} | {rate:.1f} | {1000 / rate:.0f} | {cpu} | "
                   f"{rate / one:.2f}x | {rss:.0f} | " + " | ".join(f"{v:.2f}" for v in stage_ms) + " |")
            print(row, flush=True)
            lines.append(row)
    note = ("\nStage times are summed over worker processes (CPU-side), per item; items/s and ms/item wall are "
            "wall-clock for the whole run (pool start-up included); CPU ms/item is user + system time of the "
            "one-worker run per item (a worker runs OpenCV on one thread); speed-up is items/s against 1 worker "
            "in the same mix. "
            f"Medians of {args.repeats} runs.\n")
    (HERE / "results.md").write_text("# Pipeline throughput\n\n" + "\n".join(lines) + "\n" + note)


if __name__ == "__main__":
    main()
