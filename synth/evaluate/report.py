"""Reports of an evaluation folder: report.md and report.html (with plots) from results.json, and Cohen's
kappa against other evaluations of the same run."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import UndefinedError

from synth.errors import ConfigError, RunError
from synth.evaluate.cache import strict_json
from synth.evaluate.metrics import MIN_BASES, kappa, majority_correct
from synth.evaluate.plots import confusion_plot, group_bars, severity_plot
from synth.evaluate.results import EVAL_KIND, RESULTS_FILE, is_results, write_atomic
from synth.evaluate.viewer import embedded_json, viewer_entries
from synth.safepath import read_marker
from synth.templating import render_template

REPORT_FILE = "report.md"
HTML_FILE = "report.html"
SMALL_MARK = "†"   # a number from fewer than MIN_BASES base problems
Progress = Callable[[str, int, int], None]


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


def _interval(pair: Sequence[float] | None, sign: str = "") -> str:
    return "—" if not pair else f"[{pair[0]:{sign}.3f}, {pair[1]:{sign}.3f}]"


def _flag(n_bases: int | None) -> str:
    """The mark of a cell resting on fewer than MIN_BASES base problems (explained in the report's text)."""
    return SMALL_MARK if n_bases is not None and n_bases < MIN_BASES else ""


def _headline_view(h: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not h:
        return None
    return {"metric": h["metric"], "value": _fmt(h["value"]), "ci": _interval(h.get("ci95")),
            "better": "higher" if h.get("higher_is_better", True) else "lower", "n": h.get("n"),
            "n_bases": h.get("n_bases"), "flag": _flag(h.get("n_bases"))}


def _task_view(task_id: str, t: Mapping[str, Any]) -> dict[str, Any]:
    """One task's numbers, formatted once for both report templates."""
    m = t["metrics"]
    worst = m.get("worst_case") or {}
    counts = dict(t["counts"])
    counts["cost_s"] = None if counts.get("cost") is None else f"${counts['cost']:.4f}"
    bases = m.get("bases", {})
    return {
        "id": task_id,
        "counts": counts,
        "headline": _headline_view(t.get("headline")),
        "metrics": [(k, _fmt(m[k])) for k in _HEADLINES if k in m],
        "per_class": [(label, {k: _fmt(v) for k, v in row.items()}) for label, row in m.get("per_class", {}).items()],
        "presence": [(k, _fmt(m["presence"][k])) for k in ("accuracy", "balanced_accuracy") if "presence" in m],
        "groups": [(title, [(k, _fmt(v), bases.get(key, {}).get(k, "—"), _flag(bases.get(key, {}).get(k)))
                            for k, v in m.get(key, {}).items()])
                   for title, key in (("variant", "by_variant"), ("problem family", "by_family"),
                                      ("error family", "by_error_family")) if m.get(key)],
        "by_image_role": [(role, [_fmt(r.get(k)) for k in _RATES]) for role, r in m.get("by_image_role", {}).items()],
        "worst_case": None if not worst.get("n_bases") else {
            "accuracy": _fmt(worst["accuracy"]), "n_bases": worst["n_bases"], "flag": _flag(worst["n_bases"]),
            "per_base": _fmt(worst["mean_items_per_base"], 1)},
        "confusion": m.get("confusion"),
        "deltas": [{**d, "name": _condition_name(d), "clean": _fmt(d["clean_accuracy"]),
                    "variant": _fmt(d["variant_accuracy"]), "variant_ci": _interval(d.get("variant_ci95")),
                    "delta_s": f"{d['delta']:+.3f}", "ci": _interval(d["ci95"], "+"), "flag": _flag(d["n_bases"])}
                   for d in t["deltas"]],
        "stability": {k: _fmt(v) for k, v in (t.get("stability") or {}).items()},
        "settings": t.get("settings", {}),
        "capture": [_capture_view(c) for c in t.get("capture", [])],
    }


def _capture_view(c: Mapping[str, Any]) -> dict[str, Any]:
    """One capture's row of the capture x content table (errors under capture conditions)."""
    return {"name": _condition_name(c), "capture": c["capture"], "n_bases": c["n_bases"], "flag": _flag(c["n_bases"]),
            "error": f"{_fmt(c['error_unphotographed'])} → {_fmt(c['error_photographed'])}",
            "clean": f"{_fmt(c['clean_unphotographed'])} → {_fmt(c['clean_photographed'])}",
            "error_drop": f"{c['error_drop']:+.3f}", "error_drop_ci": _interval(c["error_drop_ci95"], "+"),
            "clean_drop": f"{c['clean_drop']:+.3f}", "clean_drop_ci": _interval(c["clean_drop_ci95"], "+"),
            "interaction": f"{c['interaction']:+.3f}", "interaction_ci": _interval(c["interaction_ci95"], "+")}


def _condition_name(d: Mapping[str, Any]) -> str:
    """`degradation:blur:2` -> `blur 2`, `profile:desk_lamp_tilted` -> `desk_lamp_tilted (profile)`."""
    kind, detail = d.get("kind", ""), d.get("detail", "")
    if kind == "profile":
        return f"{detail} (profile)"
    if kind == "degradation":
        return " + ".join(part.replace(":", " ") for part in detail.split("+"))
    return f"{kind}: {detail}" if detail else str(d.get("condition"))


def _context(results: Mapping[str, Any]) -> dict[str, Any]:
    comparisons = [{**c, "kappa_s": _fmt(c["kappa"]), "agreement_s": _fmt(c.get("agreement")),
                    "contingency": c.get("contingency")} for c in results.get("comparisons", [])]
    ocr = results["model"].get("ocr_pages")
    tasks = [_task_view(k, t) for k, t in sorted(results.get("tasks", {}).items())]
    small = any(t["headline"] and t["headline"]["flag"] or any(d["flag"] for d in t["deltas"] + t["capture"])
                or any(row[3] for _, rows in t["groups"] for row in rows) for t in tasks)
    return {"model": results["model"], "run_dir": results.get("run_dir"),
            "manifest_sha256": results.get("manifest_sha256"), "version": results.get("mathstress"),
            "updated_at": results.get("updated_at"), "comparisons": comparisons, "prices": results.get("prices"),
            "ocr": None if not ocr else {"n": ocr["n"], "mean": _fmt(ocr["mean_seconds"], 2),
                                         "median": _fmt(ocr["median_seconds"], 2)},
            "small": small, "small_mark": SMALL_MARK, "min_bases": MIN_BASES, "tasks": tasks}


def render_report(results: Mapping[str, Any]) -> str:
    """report.md text for a results.json mapping."""
    text = render_template("report/report.md.j2", **_context(results))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


SEVERITY_CAPTION = ("Top: accuracy per degradation subtype and severity with its own 95 % CI (clustered by base "
                    "problem), subtypes side by side; capture profiles by name on the right. Bottom: the paired "
                    "delta against the clean twins with its 95 % CI. Hollow markers: fewer than 30 base problems.")


def figures(results: Mapping[str, Any], progress: Progress | None = None) -> dict[str, list[tuple[str, bytes]]]:
    """Per task: (caption, PNG bytes) for accuracy vs severity, the confusion matrix and group bars."""
    out: dict[str, list[tuple[str, bytes]]] = {}
    tasks = sorted(results.get("tasks", {}).items())
    for done, (task_id, t) in enumerate(tasks):
        if progress is not None:
            progress(f"figures {task_id}", done, len(tasks) + 2)
        m = t["metrics"]
        made = [
            (SEVERITY_CAPTION, severity_plot(t.get("deltas", []), f"{task_id}: accuracy vs severity")),
            ("Confusion matrix (rows gold, columns predicted; colour = share of the row)",
             confusion_plot(m["confusion"], f"{task_id}: confusion") if m.get("confusion") else None),
            ("Accuracy per problem family and per error family",
             group_bars({"problem family": m.get("by_family", {}), "error family": m.get("by_error_family", {})},
                              f"{task_id}: accuracy by family")),
        ]
        out[task_id] = [(caption, png) for caption, png in made if png is not None]
    return out


def render_html(results: Mapping[str, Any], figs: Mapping[str, list[tuple[str, bytes]]] | None = None, *,
                entries: Sequence[Mapping[str, Any]] = ()) -> str:
    """report.html: the Markdown report's tables plus the figures, embedded as base64 PNGs, and the per-item
    viewer over ``entries`` (see ``synth.evaluate.viewer``); the page images stay in the run folder."""
    figs = figures(results) if figs is None else figs
    embedded = {task: [(caption, base64.b64encode(png).decode("ascii")) for caption, png in pngs]
                for task, pngs in figs.items()}
    return render_template("report/report.html.j2", figures=embedded, items_json=embedded_json(list(entries)),
                           n_items=len(entries), **_context(results))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise RunError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RunError(f"{path} holds JSON {json.dumps(data)[:40]}, not the object an evaluation writes")
    return data


def _records(eval_dir: Path, key: str) -> list[dict[str, Any]]:
    path = eval_dir / "responses" / f"{key}.jsonl"
    if not path.is_file():
        return []
    rows = []
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise RunError(f"{path} line {number} is not JSON ({exc}): the file is cut or was edited; re-run "
                               "the same `mathstress eval` command, which writes it again from its cache") from None
            if not isinstance(row, dict):
                raise RunError(f"{path} line {number} holds JSON {json.dumps(row)[:40]}, not a response record; re-run "
                               "the same `mathstress eval` command, which writes it again from its cache")
            rows.append(row)
    return rows


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


def apply_prices(results: dict[str, Any], price_in: float, price_out: float) -> None:
    """Recompute every task's cost from its stored token usage at these prices (US dollars per million tokens);
    a task whose answers carry no usage keeps no cost."""
    if min(price_in, price_out) < 0:
        raise ConfigError(f"--price-in and --price-out must be >= 0, got {price_in}, {price_out}")
    for t in results.get("tasks", {}).values():
        c = t["counts"]
        used = (c.get("prompt_tokens") or 0) + (c.get("completion_tokens") or 0)
        c["cost"] = None if not used else ((c.get("prompt_tokens") or 0) * price_in
                                           + (c.get("completion_tokens") or 0) * price_out) / 1e6
    results["prices"] = {"in_per_million": price_in, "out_per_million": price_out}


def write_report(eval_dir: str | Path, *, compare: Sequence[str | Path] = (), price_in: float | None = None,
                 price_out: float | None = None, progress: Progress | None = None) -> Path:
    """Render EVAL_DIR/results.json as report.md and report.html (with plots and the per-item viewer); with
    ``compare``, add Cohen's kappa against the other evaluation folders to both and to results.json; with
    ``price_in`` and ``price_out``, recompute each task's cost from the stored usage (also into results.json).
    ``progress(step, done, total)`` is told as each step starts."""
    eval_dir = Path(eval_dir)
    path = eval_dir / RESULTS_FILE
    if not path.is_file():
        raise RunError(f"{eval_dir} has no {RESULTS_FILE}; run `mathstress eval` first")
    if (price_in is None) != (price_out is None):
        raise ConfigError("give both --price-in and --price-out (US dollars per million tokens), or neither")
    marker = read_marker(eval_dir)
    if marker is not None and marker["kind"] != EVAL_KIND:
        raise RunError(f"{eval_dir} holds mathstress output of another kind ({marker['kind']}), not an evaluation; "
                       "pass the folder `mathstress eval` wrote (RUN/eval/<model> by default)")
    results = _read_json(path)
    if not is_results(results):
        raise RunError(f"{path} is not the results.json of an evaluation (no tasks); pass the folder `mathstress eval` "
                       "wrote, or re-run `mathstress eval` to write it again from its cache")
    changed = False
    if compare:
        results["comparisons"] = compare_models(eval_dir, compare)
        changed = True
    if price_in is not None and price_out is not None:
        apply_prices(results, price_in, price_out)
        changed = True
    try:
        figs = figures(results, progress)
        steps = len(results.get("tasks", {})) + 2
        if progress is not None:
            progress("viewer and report.html", steps - 2, steps)
        records = {key: _records(eval_dir, key) for key in results.get("tasks", {})}
        entries = viewer_entries(eval_dir, results.get("run_dir"), records)
        html = render_html(results, figs, entries=entries)
        if progress is not None:
            progress("report.md", steps - 1, steps)
        text = render_report(results)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError, UndefinedError) as exc:
        # A hand-edited results.json or responses line (a task without its metrics, a row without its item id)
        raise RunError(f"{eval_dir}: results.json or responses/*.jsonl is not what `mathstress eval` writes "
                       f"({type(exc).__name__}: {str(exc)[:160]}); re-run the same `mathstress eval` command to "
                       "write them again from its cache") from None
    # results.json takes the comparisons and prices only once the report renders with them: a row it cannot show
    # (a comparison with nothing in common) was saved first, and every later report failed on it.
    if changed:
        write_atomic(path, strict_json(results, indent=2, default=str) + "\n")
    write_atomic(eval_dir / HTML_FILE, html)
    report = eval_dir / REPORT_FILE
    write_atomic(report, text)
    if progress is not None:
        progress("done", steps, steps)
    return report
