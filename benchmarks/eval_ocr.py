"""OCR baselines on a run folder: detect / localize / transcribe scores and seconds per page, before and after.

Generates the quickstart run unless --run is given, evaluates each OCR model into a fresh folder
(so every page is read, none comes from a cache), and prints a Markdown table. One page at a
time, one onnxruntime / OpenMP thread, so the timing is per core. CPU seconds are the steadier
measure on a shared machine: "OCR CPU" is the reading thread's alone, "CPU (all)" this whole process
(the verifier's bounded worker process is not in it); wall seconds per page are what a user waits.

``ocr-verifier (before)`` is rapidocr with the settings before issue 22 (detection at 960 px, recognition in
batches of 6 lines), so the table shows the speed-up of the current settings and that accuracy holds.

    python benchmarks/eval_ocr.py [--run RUN_DIR] [--limit N] [--models ocr-verifier,tesseract-verifier] [--no-before]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import tempfile
import time
from pathlib import Path

from synth.evaluate import evaluate_run, get_model, get_task  # noqa: E402
from synth.evaluate.models.ocr import OcrVerifier  # noqa: E402
from synth.evaluate.ocr import LOGIC_VERSION, RAPIDOCR_PARAMS_BEFORE, RapidEngine  # noqa: E402

TASKS = ("detect", "localize", "transcribe")
BEFORE = "ocr-verifier (before)"


def quickstart(out: Path) -> Path:
    from synth.config import load_config
    from synth.pipeline import run
    from synth.resources import resource_dir

    run(load_config(str(resource_dir("configs") / "quickstart.yaml")), out)
    return out


def model_for(model_id: str) -> OcrVerifier:
    if model_id != BEFORE:
        return get_model(model_id)
    settings = {k: v for k, v in RAPIDOCR_PARAMS_BEFORE.items() if k != "Global.log_level"}
    params = {"engine": "rapidocr", "version": importlib.metadata.version("rapidocr"), "logic": LOGIC_VERSION,
              "settings": settings}
    return OcrVerifier(RapidEngine(RAPIDOCR_PARAMS_BEFORE), "ocr-verifier", params)


def measure(run_dir: Path, model_id: str, out: Path, limit: int | None) -> dict:
    model = model_for(model_id)
    start, cpu = time.perf_counter(), time.process_time()
    result = evaluate_run(run_dir, model, [get_task(t) for t in TASKS], out_dir=out, limit=limit)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    tasks = result.results["tasks"]
    seconds = model.ocr_seconds
    return {
        "model": model_id, "pages": len(seconds), "wall": wall, "cpu_per_page": cpu / max(len(seconds), 1),
        "ocr_cpu_per_page": statistics.mean(model.ocr_cpu_seconds),
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
    parser.add_argument("--limit", type=int, default=None, help="only N base problems (all their items)")
    parser.add_argument("--models", default="ocr-verifier")
    parser.add_argument("--no-before", action="store_true", help="skip the settings before issue 22")
    args = parser.parse_args()
    models = ([] if args.no_before else [BEFORE]) + args.models.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = args.run or quickstart(Path(tmp) / "run")
        rows = [measure(run_dir, m, Path(tmp) / f"eval-{i}", args.limit) for i, m in enumerate(models)]
    print(f"run: {run_dir if args.run else 'quickstart (generated)'}\n")
    print("| model | pages | OCR CPU s/page | CPU s/page (all) | wall s/page (mean) | wall s/page (median) "
          "| detect bal. acc | detect acc | localize acc | localize F1 | CER (mean) | CER (pooled) | failed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['pages']} | {r['ocr_cpu_per_page']:.2f} | {r['cpu_per_page']:.2f} "
              f"| {r['s_per_page']:.2f} "
              f"| {r['s_per_page_median']:.2f} | {r['detect_bal_acc']:.3f} | {r['detect_acc']:.3f} "
              f"| {r['localize_acc']:.3f} | {r['localize_f1']:.3f} | {r['cer']:.4f} | {r['pooled_cer']:.4f} "
              f"| {r['failed']} |")
    by_model = {r["model"]: r for r in rows}
    if BEFORE in by_model and "ocr-verifier" in by_model:
        b, a = by_model[BEFORE], by_model["ocr-verifier"]
        print(f"\nspeed-up of ocr-verifier: {b['ocr_cpu_per_page'] / a['ocr_cpu_per_page']:.2f}x OCR CPU per page, "
              f"{b['cpu_per_page'] / a['cpu_per_page']:.2f}x CPU per page (all of this process), "
              f"{b['s_per_page'] / a['s_per_page']:.2f}x wall per page")
        print("accuracy change (after - before): " + ", ".join(
            f"{k} {a[k] - b[k]:+.3f}" for k in ("detect_bal_acc", "detect_acc", "localize_acc", "localize_f1",
                                               "cer", "pooled_cer")))
    print("\ndetect accuracy by variant:")
    for r in rows:
        print(f"- {r['model']}: " + ", ".join(f"{k} {v:.3f}" for k, v in r["by_variant"].items()))


if __name__ == "__main__":
    main()
