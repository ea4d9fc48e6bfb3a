"""An evaluation's outputs from its stored responses: responses/<task>.jsonl records and results.json."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth import __version__
from synth.evaluate.cache import CACHE_FILE, json_ready, strict_json
from synth.evaluate.metrics import Scored, capture_interaction, paired_deltas, run_stability
from synth.evaluate.models import Model
from synth.evaluate.scoring import conditions_of, headline, score, summarize
from synth.evaluate.tasks import Task
from synth.manifest import variant_label
from synth.records import Item
from synth.safepath import MARKER, layout, prepare_output_dir, read_marker, write_marker

RESULTS_FILE = "results.json"
EVAL_KIND = "eval"
# What `mathstress eval` and `report` write in an evaluation folder; one without the marker (an earlier version's)
# is recognised by its response cache and nothing but these names.
EVAL_LAYOUT = layout(
    entries=(CACHE_FILE, f"{CACHE_FILE}-wal", f"{CACHE_FILE}-shm", f"{CACHE_FILE}-journal", RESULTS_FILE,
             f"{RESULTS_FILE}.tmp", "responses", "report.md", "report.md.tmp", "report.html", "report.html.tmp",
             f"{MARKER}.tmp"),
    proof=(CACHE_FILE,))


def check_eval_dir(out: Path) -> Path:
    """Check that ``out`` may hold an evaluation: missing, empty, an evaluation folder (resumed) or an earlier
    version's (its ``cache.sqlite``; or, from ``report --from-inspect``, a ``results.json`` with its tasks); anything
    else (a file, a user's folder, a run, a run's images/) is refused before a call is made or a file written
    (``safepath.prepare_output_dir``). Writes nothing: ``mark_eval_dir`` makes the folder when there is work."""
    if out.is_dir() and read_marker(out) is None and not (out / CACHE_FILE).exists() \
            and all(p.name in EVAL_LAYOUT.entries for p in out.iterdir()) and _our_results(out / RESULTS_FILE):
        write_marker(out, EVAL_KIND)  # an earlier version's `report --from-inspect` folder: ours, adopted
    return prepare_output_dir(out, EVAL_KIND, shape=EVAL_LAYOUT)


def is_results(data: object) -> bool:
    """Whether ``data`` (a parsed results.json) is an evaluation's: an object whose ``tasks`` are objects."""
    return isinstance(data, dict) and isinstance(data.get("tasks"), dict) \
        and all(isinstance(t, dict) for t in data["tasks"].values())


def _our_results(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return is_results(data) and bool(data["tasks"]) and all("metrics" in t for t in data["tasks"].values())


def mark_eval_dir(out: Path) -> Path:
    """Make the evaluation folder ``check_eval_dir`` allowed, and mark it as an evaluation's."""
    out.mkdir(parents=True, exist_ok=True)
    if read_marker(out) is None:
        write_marker(out, EVAL_KIND)
    return out
SUMMARY_SCHEMA = "mathstress.results.summary/1"
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
        rec |= item_facts(item) | {"prompt": o.request.prompt}
        if o.status == "ok" and o.response is not None:
            s = score(task, item, o.request.run_index, o.response)
            scored.append(s)
            rec |= {"pred": s.pred, "correct": s.correct, "credit": round(s.credit, 6),
                    "response": o.response[-_RECORD_CHARS:]}
        else:
            rec |= {"error": o.error}
        records.append(rec)
    return scored, records


def item_facts(item: Item) -> dict[str, Any]:
    """What the per-item viewer filters and shows an item by (beside its answer): family, variant, error
    subtype, capture (each op and severity, or the profile's name) and the image's path in the run folder."""
    error = item.variant.error
    return {"variant": variant_label(item), "family": item.problem.family,
            "error_family": error.family if error else None, "error_subtype": error.subtype if error else None,
            "control": item.variant.control.subtype if item.variant.control else None,
            "degradations": [[d.subtype, d.severity] for d in item.degradations], "profile": item.profile,
            "source_id": item.source_id, "capture_twin": item.capture_twin,
            "conditions": list(conditions_of(item)), "image": item.image}


def _sha256(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary name beside ``path``, then rename it over ``path``."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_results(out_dir: Path, *, run_dir: Path, model: Model,
                  scored_by_task: Mapping[str, tuple[Task, list[Scored], list[dict[str, Any]]]],
                  counts: Mapping[str, Any], settings: dict[str, Any], seed: int, n_boot: int,
                  skipped: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Write responses/<key>.jsonl and merge this evaluation's tasks into results.json.

    ``scored_by_task`` maps a result key (``detect``, ``detect@text``) to the task, its scores and its
    per-outcome records; ``counts`` maps the same keys to the runner's final Counts; ``skipped`` the tasks asked
    for but left out, with why (results.json ``skipped_tasks``).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "responses").mkdir(exist_ok=True)
    manifest_hash = _sha256(run_dir / "manifest.jsonl")
    model_info: dict[str, Any] = {"id": model.id, "endpoint": model.endpoint, "params": model.params}
    model_info |= model.describe()
    header = {"model": model_info,
              "run_dir": str(run_dir.resolve()), "manifest_sha256": manifest_hash}
    results: dict[str, Any] = {}
    path = out_dir / RESULTS_FILE
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("model", {}).get("id") == model.id and old.get("manifest_sha256") == manifest_hash:
            results = old
    results.pop("comparisons", None)   # new answers make old kappas stale; `mathstress report --compare` redoes them
    results |= header | {"mathstress": __version__, "updated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    results.setdefault("tasks", {})
    for key, (task, scored, records) in scored_by_task.items():
        lines = "".join(strict_json(r, default=str) + "\n" for r in records)
        write_atomic(out_dir / "responses" / f"{key}.jsonl", lines)
        c = counts[key]
        metrics = summarize(task, scored)
        results["tasks"][key] = {
            "settings": settings,
            "counts": {"requests": c.total, "answered": c.total - c.failed, "failed": c.failed,
                       "cached": c.cached, "called": c.called, "prompt_tokens": c.prompt_tokens,
                       "completion_tokens": c.completion_tokens, "cost": c.cost},
            "headline": headline(task, scored, metrics, seed=seed, n_boot=min(n_boot, 1000)),
            "metrics": metrics,
            "deltas": paired_deltas(scored, seed=seed, n_boot=n_boot),
            "capture": capture_interaction(scored, seed=seed, n_boot=n_boot),
            "stability": run_stability(scored),
            "failures": failure_reasons(records),
        }
    prior = results.get("skipped_tasks")
    left_out = {k: v for k, v in {**(prior if isinstance(prior, dict) else {}), **(skipped or {})}.items()
                if k not in results["tasks"]}
    results.pop("skipped_tasks", None)
    if left_out:
        results["skipped_tasks"] = dict(sorted(left_out.items()))
    results["summary"] = leaderboard_summary(results)
    results = json_ready(results)   # what is returned is what results.json holds (non-finite numbers as null)
    write_atomic(path, strict_json(results, indent=2, default=str) + "\n")
    return results


def leaderboard_summary(results: Mapping[str, Any]) -> dict[str, Any]:
    """results.json's ``summary``: one number per task with its interval, for a leaderboard to read
    (the fields are documented in README, "results.json")."""
    model = results.get("model", {})
    return {"schema": SUMMARY_SCHEMA, "model": model.get("id"), "endpoint": model.get("endpoint"),
            "params": model.get("params"), "manifest_sha256": results.get("manifest_sha256"),
            "tasks": {key: {**t["headline"], "limit": (t.get("settings") or {}).get("limit")}
                      for key, t in sorted(results.get("tasks", {}).items()) if t.get("headline")}}


def mixed_limits(results: Mapping[str, Any]) -> dict[str, int | None]:
    """Each task's ``--limit`` when results.json holds tasks scored on different items (an evaluation with
    ``--limit`` merged into the folder of one without), else {}: their numbers are not of the same items."""
    limits = {key: (t.get("settings") or {}).get("limit") for key, t in sorted(results.get("tasks", {}).items())}
    return limits if len(set(limits.values())) > 1 else {}


def failure_reasons(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The failed calls' reasons, equal ones grouped, most frequent first."""
    counts = Counter(str(r.get("error")) for r in records if r.get("status") == "error")
    return [{"reason": reason, "count": n} for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
