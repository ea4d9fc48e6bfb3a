"""Pipeline throughput: items/s per stage and in total, with 1 and 2 workers, and peak RSS.

Each configuration runs in a fresh subprocess (so peak RSS is that run's own) several times;
the table reports medians. Writes benchmarks/results.md.

    python benchmarks/run_all.py [--repeats 3] [--count 48]
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
STAGES = ("plan", "generate", "inject", "verify", "render", "degrade", "write")


def mixes(count: int) -> dict[str, dict]:
    quick = yaml.safe_load((HERE.parent / "configs" / "quickstart.yaml").read_text())
    quick["count"] = count
    text_only = {**quick, "name": "text_only", "render": {"enabled": False}, "degrade": {"ops": [], "profiles": []}}
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
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        stats = json.loads((out / "stats.json").read_text())
        result["stages"] = stats["seconds_per_stage"]
        result["peak_rss_mib"] = max(peak_kib, before) / 1024
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--count", type=int, default=48, help="base problems per run")
    args = parser.parse_args()
    lines = ["| mix | workers | items | items/s (median) | peak RSS MiB (largest process) | "
             + " | ".join(f"{s} ms/item" for s in STAGES) + " |",
             "|---|---|---|---|---|" + "---|" * len(STAGES)]
    for name, config in mixes(args.count).items():
        for workers in (1, 2):
            runs = [run_once(config, workers) for _ in range(args.repeats)]
            items = runs[0]["items"]
            rate = statistics.median(r["items"] / r["seconds"] for r in runs)
            rss = max(r["peak_rss_mib"] for r in runs)
            stage_ms = [statistics.median(r["stages"][s] / r["items"] * 1000 for r in runs) for s in STAGES]
            row = (f"| {name} | {workers} | {items} | {rate:.1f} | {rss:.0f} | "
                   + " | ".join(f"{v:.2f}" for v in stage_ms) + " |")
            print(row, flush=True)
            lines.append(row)
    note = ("\nStage times are summed over worker processes (CPU-side), per item; items/s is wall-clock. "
            f"Medians of {args.repeats} runs of {args.count} base problems each.\n")
    (HERE / "results.md").write_text("# Pipeline throughput\n\n" + "\n".join(lines) + "\n" + note)


if __name__ == "__main__":
    main()
