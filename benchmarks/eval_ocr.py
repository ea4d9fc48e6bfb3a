"""OCR baselines on a run folder: detect / localize / transcribe scores and seconds per page.

Generates the quickstart run unless --run is given, evaluates each OCR model into a fresh folder
(so every page is read, none comes from a cache), and prints a Markdown table. One page at a
time, one onnxruntime / OpenMP thread, so the timing is per core.

    /work/venv/bin/python benchmarks/eval_ocr.py [--run RUN_DIR] [--limit N] [--models ocr-verifier,...]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from synth.evaluate import evaluate_run, get_model, get_task  # noqa: E402

TASKS = ("detect", "localize", "transcribe")


def quickstart(out: Path) -> Path:
    from synth.config import load_config
    from synth.pipeline import run
    from synth.resources import resource_dir

    run(load_config(str(resource_dir("configs") / "quickstart.yaml")), out)
    return out


def measure(run_dir: Path, model_id: str, out: Path, limit: int | None) -> dict:
    model = get_model(model_id)
    start = time.perf_counter()
    result = evaluate_run(run_dir, model, [get_task(t) for t in TASKS], out_dir=out, limit=limit)
    wall = time.perf_counter() - start
    tasks = result.results["tasks"]
    seconds = model.ocr_seconds
    return {
        "model": model_id, "pages": len(seconds), "wall": wall,
        "s_per_page": statistics.mean(seconds), "s_per_page_median": statistics.median(seconds),
        "detect_bal_acc": tasks["detect"]["metrics"]["balanced_accuracy"],
        "detect_acc": tasks["detect"]["metrics"]["accuracy"],
        "localize_acc": tasks["localize"]["metrics"]["accuracy"],
        "localize_f1": tasks["localize"]["metrics"]["f1"],
        "cer": tasks["transcribe"]["metrics"]["cer"],
        "pooled_cer": tasks["transcribe"]["metrics"]["pooled_cer"],
        "by_variant": tasks["detect"]["metrics"]["by_variant"],
        "failed": sum(t["counts"]["failed"] for t in tasks.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a finished run folder (default: generate quickstart)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N items")
    parser.add_argument("--models", default="ocr-verifier,tesseract-verifier")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = args.run or quickstart(Path(tmp) / "run")
        rows = [measure(run_dir, m, Path(tmp) / m, args.limit) for m in args.models.split(",")]
    print(f"run: {run_dir if args.run else 'quickstart (generated)'}\n")
    print("| model | pages | s/page (mean) | s/page (median) | detect bal. acc | detect acc | localize acc "
          "| localize F1 | CER (mean) | CER (pooled) | failed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['pages']} | {r['s_per_page']:.2f} | {r['s_per_page_median']:.2f} "
              f"| {r['detect_bal_acc']:.3f} | {r['detect_acc']:.3f} | {r['localize_acc']:.3f} "
              f"| {r['localize_f1']:.3f} | {r['cer']:.4f} | {r['pooled_cer']:.4f} | {r['failed']} |")
    print("\ndetect accuracy by variant:")
    for r in rows:
        print(f"- {r['model']}: " + ", ".join(f"{k} {v:.3f}" for k, v in r["by_variant"].items()))


if __name__ == "__main__":
    main()
