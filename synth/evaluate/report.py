"""Reports of an evaluation folder: report.md and report.html (with plots) from results.json, and Cohen's
kappa against other evaluations of the same run."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth.errors import RunError
from synth.evaluate.cache import strict_json
from synth.evaluate.metrics import kappa, majority_correct
from synth.evaluate.plots import confusion_plot, group_bars, severity_plot
from synth.evaluate.results import RESULTS_FILE, write_atomic
from synth.templating import render_template

REPORT_FILE = "report.md"
HTML_FILE = "report.html"


# -- report.md and report.html ---------------------------------------------------------------
def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


_HEADLINES = ("accuracy", "loose_accuracy", "balanced_accuracy", "macro_precision", "macro_recall", "macro_f1",
              "error_f1", "f1", "accuracy_error_items", "accuracy_no_error_items", "cer", "cer_median", "pooled_cer",
              "refusal_rate", "guess_wrong_rate", "lucky_correct_rate", "unparsed", "n")
_RATES = ("n", "refusal_rate", "guess_wrong_rate", "lucky_correct_rate", "unparsed_rate")


def _task_view(task_id: str, t: Mapping[str, Any]) -> dict[str, Any]:
    """One task's numbers, formatted once for both report templates."""
    m = t["metrics"]
    worst = m.get("worst_case") or {}
    counts = dict(t["counts"])
    counts["cost_s"] = None if counts.get("cost") is None else f"${counts['cost']:.4f}"
    return {
        "id": task_id,
        "counts": counts,
        "metrics": [(k, _fmt(m[k])) for k in _HEADLINES if k in m],
        "per_class": [(label, {k: _fmt(v) for k, v in row.items()}) for label, row in m.get("per_class", {}).items()],
        "presence": [(k, _fmt(m["presence"][k])) for k in ("accuracy", "balanced_accuracy") if "presence" in m],
        "groups": [(title, [(k, _fmt(v)) for k, v in m.get(key, {}).items()])
                   for title, key in (("variant", "by_variant"), ("problem family", "by_family"),
                                      ("error family", "by_error_family")) if m.get(key)],
        "by_image_role": [(role, [_fmt(r.get(k)) for k in _RATES]) for role, r in m.get("by_image_role", {}).items()],
        "worst_case": None if not worst.get("n_bases") else {
            "accuracy": _fmt(worst["accuracy"]), "n_bases": worst["n_bases"],
            "per_base": _fmt(worst["mean_items_per_base"], 1)},
        "confusion": m.get("confusion"),
        "deltas": [{**d, "clean": _fmt(d["clean_accuracy"]), "variant": _fmt(d["variant_accuracy"]),
                    "delta_s": f"{d['delta']:+.3f}", "ci": f"[{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]"}
                   for d in t["deltas"]],
        "stability": {k: _fmt(v) for k, v in (t.get("stability") or {}).items()},
        "settings": t.get("settings", {}),
    }


def _context(results: Mapping[str, Any]) -> dict[str, Any]:
    comparisons = [{**c, "kappa_s": _fmt(c["kappa"]), "agreement_s": _fmt(c.get("agreement"))}
                   for c in results.get("comparisons", [])]
    ocr = results["model"].get("ocr_pages")
    return {"model": results["model"], "run_dir": results.get("run_dir"),
            "manifest_sha256": results.get("manifest_sha256"), "version": results.get("mathstress"),
            "updated_at": results.get("updated_at"), "comparisons": comparisons,
            "ocr": None if not ocr else {"n": ocr["n"], "mean": _fmt(ocr["mean_seconds"], 2),
                                         "median": _fmt(ocr["median_seconds"], 2)},
            "tasks": [_task_view(k, t) for k, t in sorted(results.get("tasks", {}).items())]}


def render_report(results: Mapping[str, Any]) -> str:
    """report.md text for a results.json mapping."""
    text = render_template("report/report.md.j2", **_context(results))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def figures(results: Mapping[str, Any]) -> dict[str, list[tuple[str, bytes]]]:
    """Per task: (caption, PNG bytes) for accuracy vs severity, the confusion matrix and group bars."""
    out: dict[str, list[tuple[str, bytes]]] = {}
    for task_id, t in sorted(results.get("tasks", {}).items()):
        m = t["metrics"]
        made = [
            ("Accuracy against severity per degradation subtype (bars: 95 % CI of the paired delta)",
             severity_plot(t.get("deltas", []), f"{task_id}: accuracy vs severity")),
            ("Confusion matrix (rows gold, columns predicted; colour = share of the row)",
             confusion_plot(m["confusion"], f"{task_id}: confusion") if m.get("confusion") else None),
            ("Accuracy per problem family and per error family",
             group_bars({"problem family": m.get("by_family", {}), "error family": m.get("by_error_family", {})},
                              f"{task_id}: accuracy by family")),
        ]
        out[task_id] = [(caption, png) for caption, png in made if png is not None]
    return out


def render_html(results: Mapping[str, Any], figs: Mapping[str, list[tuple[str, bytes]]] | None = None) -> str:
    """report.html: the Markdown report's tables plus the figures, embedded as base64 PNGs (one file)."""
    figs = figures(results) if figs is None else figs
    embedded = {task: [(caption, base64.b64encode(png).decode("ascii")) for caption, png in pngs]
                for task, pngs in figs.items()}
    return render_template("report/report.html.j2", figures=embedded, **_context(results))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunError(f"{path} is not valid JSON ({exc})") from None


def _records(eval_dir: Path, key: str) -> list[dict[str, Any]]:
    path = eval_dir / "responses" / f"{key}.jsonl"
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def compare_models(eval_dir: str | Path, others: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Cohen's kappa of item-level (majority-over-runs) correctness between this evaluation and others,
    per task both ran, on the items both answered."""
    eval_dir = Path(eval_dir)
    mine = _read_json(eval_dir / RESULTS_FILE)
    rows = []
    for other in others:
        other = Path(other)
        if not (other / RESULTS_FILE).is_file():
            raise RunError(f"--compare {other}: no {RESULTS_FILE} there; run `mathstress eval` into it first")
        theirs = _read_json(other / RESULTS_FILE)
        if theirs.get("manifest_sha256") != mine.get("manifest_sha256"):
            raise RunError(f"--compare {other}: it evaluated a different run folder (manifest hashes differ)")
        for key in sorted(mine.get("tasks", {}).keys() & theirs.get("tasks", {}).keys()):
            k = kappa(majority_correct(_records(eval_dir, key)), majority_correct(_records(other, key)))
            rows.append({"task": key, "model_a": mine["model"]["id"], "model_b": theirs["model"]["id"], **k})
    return rows


def write_report(eval_dir: str | Path, *, compare: Sequence[str | Path] = ()) -> Path:
    """Render EVAL_DIR/results.json as report.md and report.html (with plots); with ``compare``,
    add Cohen's kappa against the other evaluation folders to both and to results.json."""
    eval_dir = Path(eval_dir)
    path = eval_dir / RESULTS_FILE
    if not path.is_file():
        raise RunError(f"{eval_dir} has no {RESULTS_FILE}; run `mathstress eval` first")
    results = _read_json(path)
    if compare:
        results["comparisons"] = compare_models(eval_dir, compare)
        write_atomic(path, strict_json(results, indent=2, default=str) + "\n")
    write_atomic(eval_dir / HTML_FILE, render_html(results))
    report = eval_dir / REPORT_FILE
    write_atomic(report, render_report(results))
    return report
