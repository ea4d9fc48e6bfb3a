"""Evaluation outputs: per-item response records, results.json, and report.md rendered from templates/report/."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth import __version__
from synth.errors import RunError
from synth.evaluate.metrics import Scored, paired_deltas, run_stability, score, summarize
from synth.evaluate.tasks import Task
from synth.templating import render_template

RESULTS_FILE = "results.json"
REPORT_FILE = "report.md"
# How much of each response the per-item records keep (the full bounded text is in cache.sqlite).
_RECORD_CHARS = 2_000


def score_outcomes(task: Task, outcomes: Sequence[Any]) -> tuple[list[Scored], list[dict[str, Any]]]:
    """Scores for the answered outcomes and one record per outcome; failures get a record and no score."""
    scored: list[Scored] = []
    records: list[dict[str, Any]] = []
    for o in outcomes:
        item = o.request.item
        rec: dict[str, Any] = {"item_id": item.id, "base_id": item.base_id, "run_index": o.request.run_index,
                               "status": o.status, "cached": o.cached, "gold": task.gold(item)}
        if o.status == "ok" and o.response is not None:
            s = score(task, item, o.request.run_index, o.response)
            scored.append(s)
            rec |= {"variant": s.variant, "pred": s.pred, "correct": s.correct,
                    "response": o.response[-_RECORD_CHARS:]}
        else:
            rec |= {"error": o.error}
        records.append(rec)
    return scored, records


def _sha256(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_results(out_dir: Path, *, run_dir: Path, model: Any,
                  scored_by_task: Mapping[str, tuple[list[Scored], list[dict[str, Any]]]],
                  counts: Mapping[str, Any], settings: dict[str, Any], seed: int, n_boot: int) -> dict[str, Any]:
    """Write responses/<task>.jsonl and merge this evaluation's tasks into results.json."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "responses").mkdir(exist_ok=True)
    manifest_hash = _sha256(run_dir / "manifest.jsonl")
    header = {"model": {"id": model.id, "endpoint": model.endpoint, "params": model.params},
              "run_dir": str(run_dir.resolve()), "manifest_sha256": manifest_hash}
    results: dict[str, Any] = {}
    path = out_dir / RESULTS_FILE
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("model", {}).get("id") == model.id and old.get("manifest_sha256") == manifest_hash:
            results = old
    results |= header | {"mathstress": __version__, "updated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    results.setdefault("tasks", {})
    for task_id, (scored, records) in scored_by_task.items():
        lines = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records)
        _write_atomic(out_dir / "responses" / f"{task_id}.jsonl", lines)
        c = counts[task_id]
        results["tasks"][task_id] = {
            "settings": settings,
            "counts": {"requests": c.total, "answered": c.total - c.failed, "failed": c.failed,
                       "cached": c.cached, "called": c.called},
            "metrics": summarize_task(task_id, scored),
            "deltas": paired_deltas(scored, seed=seed, n_boot=n_boot),
            "stability": run_stability(scored),
        }
    _write_atomic(path, json.dumps(results, indent=2, ensure_ascii=False, default=str) + "\n")
    return results


def summarize_task(task_id: str, scored: Sequence[Scored]) -> dict[str, Any]:
    from synth.evaluate.tasks import get_task

    return summarize(get_task(task_id), scored)


# -- report.md ------------------------------------------------------------------------------
def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


_HEADLINES = ("accuracy", "balanced_accuracy", "macro_f1", "error_f1", "f1", "accuracy_error_items",
              "accuracy_no_error_items", "unparsed", "n")


def render_report(results: Mapping[str, Any]) -> str:
    """report.md text for a results.json mapping."""
    tasks = []
    for task_id, t in sorted(results.get("tasks", {}).items()):
        m = t["metrics"]
        tasks.append({
            "id": task_id,
            "counts": t["counts"],
            "metrics": [(k, _fmt(m[k])) for k in _HEADLINES if k in m],
            "by_variant": [(k, _fmt(v)) for k, v in m.get("by_variant", {}).items()],
            "confusion": m.get("confusion"),
            "deltas": [{**d, "clean": _fmt(d["clean_accuracy"]), "variant": _fmt(d["variant_accuracy"]),
                        "delta_s": f"{d['delta']:+.3f}", "ci": f"[{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]"}
                       for d in t["deltas"]],
            "stability": {k: _fmt(v) for k, v in (t.get("stability") or {}).items()},
            "settings": t.get("settings", {}),
        })
    text = render_template("report/report.md.j2", model=results["model"], run_dir=results.get("run_dir"),
                           manifest_sha256=results.get("manifest_sha256"), version=results.get("mathstress"),
                           updated_at=results.get("updated_at"), tasks=tasks)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def write_report(eval_dir: str | Path) -> Path:
    """Render EVAL_DIR/results.json as EVAL_DIR/report.md."""
    eval_dir = Path(eval_dir)
    path = eval_dir / RESULTS_FILE
    if not path.is_file():
        raise RunError(f"{eval_dir} has no {RESULTS_FILE}; run `mathstress eval` first")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunError(f"{path} is not valid JSON ({exc})") from None
    report = eval_dir / REPORT_FILE
    _write_atomic(report, render_report(results))
    return report
