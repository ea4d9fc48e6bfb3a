"""ProcessBench's own loader and scorer read our export unchanged.

The functions prefixed ``their_`` re-implement, from reading it, ``code/run_eval.py`` of
github.com/QwenLM/ProcessBench at commit e8024636bcabdf8bd514440551b531d3f90dd18b: the unmodified
``load_dataset('Qwen/ProcessBench', split=config)`` (run from the folder holding the export's
``Qwen/ProcessBench``; we only add a cache folder), ``extract_answer`` (last ``\\boxed{...}`` without
nested braces) then ``int()``, and the per-config scores: accuracy on items with ``label != -1``,
on items with ``label == -1``, and their harmonic mean, in percent.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from synth.exports import export, load_export, read_summary
from synth.manifest import read_manifest
from tests.exports.conftest import evaluate

CONFIGS = ("gsm8k", "math", "olympiadbench", "omnimath")   # run_eval.py's --configs choices


def their_load(export_dir: Path, config: str, cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    from datasets import load_dataset

    monkeypatch.chdir(export_dir)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    return [dict(r) for r in load_dataset("Qwen/ProcessBench", split=config, cache_dir=str(cache))]


def their_prediction(critique: str) -> int | None:
    matches = re.findall(r"\\boxed\{([^}]*)\}", critique)
    pred = matches[-1].strip() if matches else None
    try:
        return int(pred)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def their_scores(data: list[dict[str, Any]], critiques: dict[str, str]) -> tuple[float, float, float]:
    res = [{**d, "match": their_prediction(critiques[d["id"]]) == d["label"]} for d in data]
    error_data = [e for e in res if e["label"] != -1]
    correct_data = [e for e in res if e["label"] == -1]
    acc1 = np.mean([e["match"] for e in error_data]) * 100
    acc2 = np.mean([e["match"] for e in correct_data]) * 100
    f1 = 2 * acc1 * acc2 / (acc1 + acc2) if acc1 + acc2 else float("nan")
    return float(acc1), float(acc2), float(f1)


@pytest.fixture(scope="module")
def pb_export(text_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(text_run, tmp_path_factory.mktemp("pb") / "export", "processbench").path


def test_their_unchanged_loader_finds_every_text_item_with_their_types(text_run: Path, pb_export: Path,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets import load_dataset

    rows = {r["id"]: r for r in read_manifest(text_run) if r["variant"] != "degraded"}
    splits = read_summary(pb_export)["splits"]
    assert list(splits) == ["gsm8k"]   # every band of the tiny run starts at grade 8 or below
    data = their_load(pb_export, "gsm8k", tmp_path / "cache", monkeypatch)
    assert sorted(d["id"] for d in data) == sorted(rows)
    ds = load_dataset("Qwen/ProcessBench", split="gsm8k", cache_dir=str(tmp_path / "cache"))
    assert {k: str(v) for k, v in ds.features.items()} == {
        "id": "Value('string')", "generator": "Value('string')", "problem": "Value('string')",
        "steps": "List(Value('string'))", "final_answer_correct": "Value('bool')", "label": "Value('int64')"}
    for d in data:
        row = rows[d["id"]]
        assert d["steps"] == [s["text"] for s in row["steps"]] and d["problem"] == row["question"]["text"]
        assert d["label"] == (row["error"]["first_error_step"] - 1 if row["error"] else -1)   # 0-based there


def test_perfect_critiques_score_100_on_both_groups(pb_export: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    data = their_load(pb_export, "gsm8k", tmp_path / "cache", monkeypatch)
    critiques = {d["id"]: f"The earliest error is in paragraph \\boxed{{{d['label']}}}." for d in data}
    assert their_scores(data, critiques) == (100.0, 100.0, 100.0)


def test_random_predictions_score_what_mathstress_eval_reports(text_run: Path, pb_export: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    metrics, records = evaluate(text_run, "localize", "random", tmp_path / "eval")
    data = their_load(pb_export, "gsm8k", tmp_path / "cache", monkeypatch)
    assert set(records) == {d["id"] for d in data}

    def critique(pred: int | None) -> str:   # our 1-based step (or -1) as their 0-based paragraph
        return "No verdict." if pred is None else f"\\boxed{{{pred - 1 if pred != -1 else -1}}}"
    acc1, acc2, f1 = their_scores(data, {i: critique(r["pred"]) for i, r in records.items()})
    assert 0 < metrics["f1"] < 1   # a random guess gets some, not all
    assert (acc1, acc2, f1) == pytest.approx((100 * metrics["accuracy_error_items"],
                                             100 * metrics["accuracy_no_error_items"], 100 * metrics["f1"]))


def _rows(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "manifest.jsonl").read_text().splitlines()]


def _export_edited(run_dir: Path, tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    """A copy of the run whose manifest holds ``rows`` (an unsealed, hand-edited one), exported to ProcessBench."""
    edited = tmp_path / "run"
    shutil.copytree(run_dir, edited)
    (edited / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return export(edited, tmp_path / "pb", "processbench").path


def test_high_school_problems_go_to_the_math_split_and_every_split_has_both_groups(text_run: Path, tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch
                                                                                   ) -> None:
    rows = _rows(text_run)
    high = {rows[0]["base_id"], rows[-1]["base_id"]}
    dest = _export_edited(text_run, tmp_path, [{**r, "grade_band": "9-12"} if r["base_id"] in high else r
                                               for r in rows])
    summary = read_summary(dest)
    assert list(summary["splits"]) == ["gsm8k", "math"]
    assert all(n["error_items"] and n["no_error_items"] for n in summary["splits"].values())
    assert summary["run_their_code"][-1].endswith("--configs gsm8k math")
    card = (dest / "Qwen" / "ProcessBench" / "README.md").read_text(encoding="utf-8")
    assert "- split: math\n    path: math.json" in card
    math = their_load(dest, "math", tmp_path / "cache", monkeypatch)
    assert {d["id"].rsplit("-", 1)[0] if d["id"].count("-") > 1 else d["id"] for d in math} == high
    with pytest.raises(ValueError, match="Unknown split"):
        their_load(dest, "omnimath", tmp_path / "cache", monkeypatch)   # run_eval.py's default: pass --configs
    assert set(CONFIGS) >= set(summary["splits"])


def test_load_export_reads_labels_back_as_our_1_based_steps(text_run: Path, pb_export: Path) -> None:
    from synth.exports import task_gold

    rows = {r["id"]: r for r in read_manifest(text_run)}
    for rec in load_export(pb_export, "processbench"):
        err = rows[rec.id]["error"]
        assert task_gold(rec, "processbench", "localize") == (err["first_error_step"] if err else -1)


def test_figure_only_problems_are_left_out_and_a_wrong_unit_is_a_wrong_final_answer(text_run: Path, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch
                                                                                    ) -> None:
    # Seed 6021023 (round 21): 20 error items whose first error is a misread of a figure ProcessBench never shows
    # (a clock's minute hand "m2 = 25"), and 8 items in a wrong unit ("10 km/h" for 10 m/s) marked
    # final_answer_correct true.
    rows = _rows(text_run)
    figure_only = rows[0]["base_id"]
    unit = next(r["id"] for r in rows if r["error"] and r["base_id"] != figure_only)
    rows = [{**r, "image_role": "required"} if r["base_id"] == figure_only else r for r in rows]
    rows = [{**r, "error": {**r["error"], "answer_changed": False, "answer_correct": False}} if r["id"] == unit
            else r for r in rows]
    dest = _export_edited(text_run, tmp_path, rows)
    data = {d["id"]: d for d in their_load(dest, "gsm8k", tmp_path / "cache", monkeypatch)}
    assert not any(r["base_id"] == figure_only for r in rows if r["id"] in data)
    assert any(r["base_id"] != figure_only and r["variant"] != "degraded" for r in rows)
    assert data[unit]["final_answer_correct"] is False
    summary = read_summary(dest)
    assert any("image_role required" in reason for reason in summary["skipped"])
    assert 'HF_DATASETS_CACHE="$(mktemp -d)"' in summary["run_their_code"][-1]
