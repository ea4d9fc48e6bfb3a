"""MMErroR's own loader and scorer read our export unchanged.

The functions prefixed ``their_`` re-implement, from reading them, the files of
github.com/code-here-in/MMerroR-Evaluation at commit b5fc9f829e2005cd68f88b648f4252931a4cae22:
``mmerror_eval/dataset.py`` (glob ``MMErroR_*.json`` but ``MMErroR_all.json``, sorted; skip items
without a label; image ``images/<question_id>`` with .png, .jpg, .jpeg, .webp tried in turn),
``mmerror_eval/labels.py`` (``build_label_spec``, ``normalize_label`` for gold labels and for
predictions, ``normalize_presence_decision``), the decision logic of ``mmerror_eval/runner.py``
(ETC: one letter; EPD: presence P/N, then the type for P; an unsupported gold label is a failed
item) and ``compute_model_metrics`` in ``mmerror_eval/reporting.py``. The model is a mock that
answers from a table, as their smoke test's MockProvider does.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from synth.exports import export, read_summary
from synth.manifest import read_manifest
from tests.exports.conftest import evaluate

BASE = [("A", "A_Visual_Perception_Error"), ("B", "B_Reasoning_Error"), ("C", "C_Question_Comprehension_Error"),
        ("D", "D_Knowledge_Deployment_Error")]


def their_label_spec(task_mode: str) -> dict[str, Any]:
    categories = BASE + ([("E", "E_NoError")] if task_mode == "epd" else [])
    return {"letters": [c for c, _ in categories], "pred_map": dict(categories),
            "reverse_pred_map": {n: c for c, n in categories}, "allow_noerror": task_mode == "epd"}


def their_normalize_label(label: str, spec: dict[str, Any], is_prediction: bool = False) -> str | None:
    text = str(label).strip()
    if not text:
        return None
    letters = "".join(spec["letters"])
    if is_prediction:
        candidate = re.sub(r"</?think>", "", text, flags=re.IGNORECASE).strip()
        candidate = re.sub(r"<\|\s*begin_of_box\s*\|>|<\|\s*end_of_box\s*\|>", "", candidate,
                           flags=re.IGNORECASE).strip()
        if not candidate:
            return None

        def simple(s: str) -> str | None:
            m = re.fullmatch(rf"\s*[*_`~$]*\(?\s*([{letters}])\s*\)?[*_`~$]*[.!?:]*\s*", s, re.IGNORECASE)
            return m.group(1).upper() if m else None

        boxed_pattern = re.compile(
            rf"\\boxed\s*\{{\s*(?:\\mathbf|\\mathrm|\\text)?\s*\{{?\s*([{letters}])\s*\}}?\s*\}}", re.IGNORECASE)

        def boxed(s: str) -> str | None:
            found = [m.group(1).upper() for m in boxed_pattern.finditer(s)]
            return found[0] if len(set(found)) == 1 else None

        for got in (simple(candidate), boxed(candidate)):
            if got:
                return spec["pred_map"][got]
        lines = [ln.strip() for ln in candidate.splitlines() if ln.strip()]
        line_matches = [m for m in (simple(ln) for ln in lines) if m]
        if len(set(line_matches)) == 1:
            return spec["pred_map"][line_matches[0]]
        answers = []
        for line in lines:
            m = re.match(r"^\s*(?:final\s*answer|answer|output)\b\s*[:\-]?\s*(.+)$", line, re.IGNORECASE)
            if m:
                got = simple(m.group(1).strip()) or boxed(m.group(1).strip())
                if got:
                    answers.append(got)
        if answers and len(set(answers)) == 1:
            return spec["pred_map"][answers[0]]
        return text if text in spec["reverse_pred_map"] else None
    lowered = text.lower()
    start = re.match(rf"^\s*([{letters.lower()}])\b", lowered)
    if start:
        return spec["pred_map"].get(start.group(1).upper())
    if spec["allow_noerror"] and ("noerror" in lowered or "no error" in lowered):
        return spec["pred_map"].get("E")
    for words, name in ((("visual", "perception"), "A_Visual_Perception_Error"), (("reasoning",), "B_Reasoning_Error"),
                        (("question", "comprehension"), "C_Question_Comprehension_Error"),
                        (("knowledge",), "D_Knowledge_Deployment_Error")):
        if any(w in lowered for w in words):
            return name
    return None


def their_presence(value: str) -> str | None:
    text = str(value).strip()
    m = re.fullmatch(r"\s*([PN])\s*[.!?:]?\s*", text, re.IGNORECASE)
    if m:
        return m.group(1).upper()
    lowered = text.lower()
    if "no error" in lowered or lowered == "none":
        return "N"
    if "error present" in lowered or lowered == "error":
        return "P"
    return None


def their_load(json_dir: Path) -> list[dict[str, Any]]:
    image_dir = json_dir.parent / "images" if json_dir.name == "jsons" else json_dir / "images"
    records = []
    for path in sorted(p for p in json_dir.glob("MMErroR_*.json") if p.name != "MMErroR_all.json"):
        content = json.loads(path.read_text(encoding="utf-8"))
        if not content.get("label"):
            continue
        qid = str(content.get("question_id", ""))
        image = next((image_dir / f"{qid}{s}" for s in (".png", ".jpg", ".jpeg", ".webp")
                      if qid and (image_dir / f"{qid}{s}").exists()), None)
        records.append({k: str(content.get(k, "")) for k in ("question_id", "question", "correct_answer",
                                                               "error_reason", "domain", "subdomain")}
                       | {"label": str(content["label"]), "image_path": image})
    return records


def their_run(records: list[dict[str, Any]], task_mode: str,
              provider: Callable[[dict[str, Any], str], str]) -> list[dict[str, Any]]:
    """One result per record, as runner.py makes them; ``provider(record, stage)`` is the mock model."""
    spec, type_spec = their_label_spec(task_mode), their_label_spec("etc")
    results = []
    for rec in records:
        gt = their_normalize_label(rec["label"], spec)
        if not gt:
            results.append({"question_id": rec["question_id"], "status": "error",
                            "error": f"Unsupported ground-truth label: {rec['label']}"})
            continue
        if task_mode == "etc":
            pred = their_normalize_label(provider(rec, "type"), spec, is_prediction=True)
        else:
            decision = their_presence(provider(rec, "presence"))
            pred = None
            if decision == "N":
                pred = "E_NoError"
            elif decision == "P":
                pred = their_normalize_label(provider(rec, "type"), type_spec, is_prediction=True)
        if pred is None:
            results.append({"question_id": rec["question_id"], "status": "error", "error": "invalid response"})
            continue
        results.append({"question_id": rec["question_id"], "status": "ok", "gt_label": gt, "pred_label": pred,
                        "correct": pred == gt, "domain": rec["domain"], "subdomain": rec["subdomain"]})
    return results


def their_metrics(results: list[dict[str, Any]], dataset_total: int) -> dict[str, Any]:
    ok = [r for r in results if r.get("status") == "ok"]
    correct = sum(1 for r in ok if r.get("correct"))
    domains: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in ok:
        domains[r.get("domain") or "Unknown"][0] += bool(r["correct"])
        domains[r.get("domain") or "Unknown"][1] += 1
    per_domain = {d: c / t for d, (c, t) in domains.items()}
    return {"accuracy": correct / len(ok) if ok else 0.0, "strict_accuracy": correct / dataset_total,
            "coverage": len(ok) / dataset_total, "macro_accuracy": sum(per_domain.values()) / len(per_domain),
            "failures": [r["error"] for r in results if r.get("status") != "ok"]}


def _gold_letter(rec: dict[str, Any]) -> str:
    return {n: c for c, n in BASE}.get(rec["label"], "E")


@pytest.fixture(scope="module")
def mm_export(text_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(text_run, tmp_path_factory.mktemp("mm") / "export", "mmerror").path


def test_their_loader_finds_every_item_with_its_image_in_both_folders(text_run: Path, mm_export: Path) -> None:
    rows = {r["id"]: r for r in read_manifest(text_run)}
    errors = {i for i, r in rows.items() if r["error"] and r["error"]["projections"]["mmerror"]}
    no_errors = {i for i, r in rows.items() if r["error"] is None}
    assert errors and no_errors and all(rows[i]["error"]["answer_changed"] for i in errors)
    for folder, expected in (("ETC", errors), ("EPD", errors | no_errors)):
        records = their_load(mm_export / folder / "jsons")
        assert {r["question_id"] for r in records} == {f"MMErroR_{i}" for i in expected}
        for rec in records:
            assert rec["image_path"] is not None and Image.open(rec["image_path"]).format == "PNG"
            row = rows[rec["question_id"].removeprefix("MMErroR_")]
            assert rec["correct_answer"] == row["answer"]["text"] and rec["question"] == row["question"]["text"]
            assert rec["error_reason"].splitlines()[0].startswith("Step 1: ")
            assert (rec["domain"], rec["subdomain"]) == ("Mathematics & Logic", row["subdomain"])


def test_perfect_answers_score_accuracy_and_coverage_1_in_etc_and_epd(mm_export: Path) -> None:
    def provider(rec: dict[str, Any], stage: str) -> str:
        letter = _gold_letter(rec)
        if stage == "presence":
            return "N" if letter == "E" else "P"
        return f"The chain misreads nothing else.\nFinal answer: {letter}"

    for folder in ("ETC", "EPD"):
        records = their_load(mm_export / folder / "jsons")
        m = their_metrics(their_run(records, folder.lower(), provider), len(records))
        assert (m["accuracy"], m["strict_accuracy"], m["coverage"], m["failures"]) == (1.0, 1.0, 1.0, []), folder


def test_no_error_items_in_the_etc_folder_would_fail_as_unsupported(mm_export: Path) -> None:
    # Why ETC holds the error items only: their ETC run rejects a no-error gold label in either spelling.
    records = [{"question_id": "x", "label": label, "domain": "", "subdomain": ""} for label in ("E_NoError",
                                                                                                 "No Error")]
    results = their_run(records, "etc", lambda rec, stage: "A")
    assert [r["error"] for r in results] == ["Unsupported ground-truth label: E_NoError",
                                             "Unsupported ground-truth label: No Error"]
    assert read_summary(mm_export)["labels"]["E_NoError"] == "E (EPD only)"


@pytest.mark.parametrize(("task", "folder"), [("categorize-mmerror", "ETC"), ("presence", "EPD")])
def test_random_predictions_score_what_mathstress_eval_reports(text_run: Path, mm_export: Path, tmp_path: Path,
                                                               task: str, folder: str) -> None:
    metrics, ours = evaluate(text_run, task, "random", tmp_path / "eval")
    records = their_load(mm_export / folder / "jsons")
    assert {r["question_id"] for r in records} == {f"MMErroR_{i}" for i in ours}

    def provider(rec: dict[str, Any], stage: str) -> str:   # our prediction, in their answer format
        pred = ours[rec["question_id"].removeprefix("MMErroR_")]["pred"]
        if stage == "presence":
            return "N" if pred == "no_error" else "P"
        return f"\\boxed{{{pred}}}"

    m = their_metrics(their_run(records, folder.lower(), provider), len(records))
    assert 0 < metrics["accuracy"] < 1
    assert m["accuracy"] == pytest.approx(metrics["accuracy"]) and m["coverage"] == 1.0


def test_chart_problems_go_to_the_named_charts_subdomain_and_the_rest_keep_ours() -> None:
    from synth.exports.mmerror import mmerror_domain

    assert mmerror_domain({"figure": {"kind": "bar_chart"}, "subdomain": "averages"}) == (
        "Data & Analytics", "Charts & Data Interpretation")
    assert mmerror_domain({"figure": {"kind": "plane_geometry"}, "subdomain": "circles"}) == (
        "Mathematics & Logic", "circles")
    assert mmerror_domain({"figure": None, "subdomain": "linear_equations"}) == ("Mathematics & Logic",
                                                                                  "linear_equations")
