"""MathReal's own scoring scripts read our export unchanged.

The functions prefixed ``their_`` re-implement, from reading them, ``evaluate/extract_answer_1.py``
(every balanced ``\\boxed{}``, joined with ``"; "``), ``evaluate/evaluation_answer_2.py``
(``load_json_data`` keyed by ``idx`` only when every record has one; the intersection of the two
files' idx; ``AnswerCN`` and ``QuestionType`` read from the gold file; ``acc_str`` is 1 only for a
score of exactly 1.0) and ``evaluate/calculate_answer_3.py`` (the five full category names; items of
any other category left out of every score) of github.com/junfeng0288/MathReal at commit
4db6bbcf1c8aa1fc581d69cf4beebafd83c1857b. Their judge is gpt-4.1-nano with a grading rubric; here a
deterministic judge applies the rubric's rules that our answers need (multiple choice: the gold
letter and no other; otherwise each ``;``-separated part equal in value, a missing unit allowed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from synth.exports import export, read_summary
from synth.manifest import read_manifest
from synth.mathparse import equivalent, try_parse
from synth.pipeline import run
from tests.conftest import tiny_config
from tests.exports.conftest import evaluate

CATEGORY_MAP = {"Plane Geometry": "PG", "Solid Geometry": "SG", "Logical Reasoning": "LR", "Function Graphs": "FG",
                "Statistical Charts": "SC"}
KEYS = {  # every record's 17 keys and their JSON types, as in testmini.json
    "idx": int, "ImgReal": str, "ImgClean": (str, type(None)), "QuestionCN": str, "QuestionEN": str,
    "DescriptionCN": str, "DescriptionEN": (str, type(None)), "AnswerCN": str, "AnswerEN": str, "Table": int,
    "EducationalStage": str, "QuestionType": str, "Category": (str, type(None)), "Difficulty": str,
    "ImageQualityDegradation": dict, "ImagePerspectiveVariation": dict, "ContentInterference": dict}
GROUPS = {
    "ImageQualityDegradation": ["blur", "underexposure/overexposure", "shadow coverage", "glare"],
    "ImagePerspectiveVariation": ["rotation", "in-plane tilt", "non-planar capture", "background distortion"],
    "ContentInterference": ["handwritten questions", "reverse side content", "question marking", "figure marking",
                            "handwritten answer for multiple-choice questions",
                            "handwritten process for constructed-response questions"]}
ROTATIONS = {"Upright", "Clockwise90°", "Counterclockwise90°", "180°"}
PHOTO_RUN = {"count": 6, "generate": {"families": {"geometry.circle.area": 1.0, "statistics.mean.bar_chart": 1.0,
                                                   "algebra.linear.two_step": 1.0}},
             "inject": {"variants_per_base": 0},
             "degrade": {"ops": [{"subtype": "rotation", "severities": [1]}, {"subtype": "blur", "severities": [2]},
                                 {"subtype": "jpeg", "severities": [2]}]}}


def their_load_json_data(path: Path, key_by_field: str | None = None) -> Any:
    data = json.loads(path.read_text(encoding="utf-8"))
    if key_by_field:
        if isinstance(data, list) and all(key_by_field in item for item in data if isinstance(item, dict)):
            return {item[key_by_field]: item for item in data if isinstance(item, dict) and key_by_field in item}
        return {}
    return data


def their_extract(raw_output: str) -> str:
    found, start = [], 0
    while (at := raw_output.find("\\boxed{", start)) >= 0:
        i, depth = at + len("\\boxed{"), 1
        while i < len(raw_output) and depth:
            depth += {"{": 1, "}": -1}.get(raw_output[i], 0)
            i += 1
        found.append(raw_output[at + len("\\boxed{"):i - 1].strip())
        start = i
    return "; ".join(found)   # no box: their script asks an LLM; every answer here is boxed


def judge(model_answer: str, reference: str, question_type: str) -> float:
    """A deterministic stand-in for their gpt-4.1-nano judge, applying the rubric's rules."""
    if question_type == "MultipleChoice":
        letters = set(re.findall(r"\b[A-D]\b", model_answer))
        return float(letters == {reference.strip()})

    def value(text: str) -> Any:
        text = text.replace("\u2212", "-").rsplit("=", 1)[-1].strip()
        text = re.sub(r"\s+[A-Za-z]{1,3}[²³]?$", "", text)   # a missing unit is not an error
        return try_parse(text)

    gold = [p for p in re.split(r";|\n", reference) if p.strip()]
    pred = [p for p in re.split(r";|\n", model_answer) if p.strip()]
    right = sum(1 for g, p in zip(gold, pred) if (a := value(p)) is not None and (b := value(g)) is not None
                and equivalent(a, b))
    return right / max(len(gold), len(pred)) if gold and pred else 0.0


def their_evaluate(gt_file: Path, extracted: list[dict[str, Any]], tmp: Path) -> tuple[float, float, list[dict]]:
    (tmp / "extracted.json").write_text(json.dumps(extracted), encoding="utf-8")
    gt_map = their_load_json_data(gt_file, "idx")
    ext_map = their_load_json_data(tmp / "extracted.json", "idx")
    assert gt_map and ext_map   # else their script stops with "Failed to load ..."
    results = []
    for idx in set(gt_map) & set(ext_map):
        gt, ext = gt_map[idx], ext_map[idx]
        score = judge(ext.get("extracted_answer", ""), gt.get("AnswerCN", ""), gt.get("QuestionType", ""))
        results.append({"idx": idx, "acc": score, "acc_str": 1.0 if score == 1.0 else 0.0})
    n = len(results)
    return sum(r["acc"] for r in results) / n, sum(r["acc_str"] for r in results) / n, results


def their_categories(gt_file: Path, results: list[dict[str, Any]]) -> tuple[dict[str, float], float, int]:
    idx2cat = {item["idx"]: CATEGORY_MAP[item["Category"]] for item in json.loads(gt_file.read_text())
               if "Category" in item and item["Category"] in CATEGORY_MAP}
    per: dict[str, list[float]] = {}
    for r in results:
        if r["idx"] in idx2cat:
            per.setdefault(idx2cat[r["idx"]], []).append(r["acc_str"])
    counted = [v for values in per.values() for v in values]
    return {c: float(np.mean(v)) for c, v in per.items()}, float(np.mean(counted)), len(counted)


@pytest.fixture(scope="module")
def photo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mathreal") / "run"
    run(tiny_config(**PHOTO_RUN), out)
    return out


@pytest.fixture(scope="module")
def mr_export(photo_run: Path) -> Path:
    return export(photo_run, photo_run.parent / "export", "mathreal").path


def test_every_photo_is_a_record_with_their_17_keys_levels_and_images(photo_run: Path, mr_export: Path) -> None:
    rows = {r["id"]: r for r in read_manifest(photo_run)}
    data = json.loads((mr_export / "json" / "mathstress.json").read_text(encoding="utf-8"))
    assert sorted(r["id"] for r in data) == sorted(i for i, r in rows.items() if r["variant"] == "degraded")
    assert [r["idx"] for r in data] == list(range(1, len(data) + 1))
    for rec in data:
        row = rows[rec["id"]]
        assert list(rec)[:17] == list(KEYS) and all(isinstance(rec[k], t) for k, t in KEYS.items()), rec["idx"]
        assert {g: list(rec[g]) for g in GROUPS} == GROUPS
        assert rec["ImagePerspectiveVariation"]["rotation"] in ROTATIONS
        assert Image.open(mr_export / "img" / rec["ImgReal"]).size[0] > 0
        assert (mr_export / "img" / rec["ImgClean"]).read_bytes() == (photo_run / row["clean_image"]).read_bytes()
        assert rec["AnswerCN"] == rec["AnswerEN"] == row["answer"]["text"]
        (deg,) = row["degradations"]
        if deg["subtype"] == "rotation":
            assert rec["ImagePerspectiveVariation"]["rotation"] == {"90cw": "Clockwise90°", "90ccw":
                                                                    "Counterclockwise90°", "180": "180°"}[
                deg["measured"]["rotation"]]
        elif deg["subtype"] == "blur":
            assert rec["ImageQualityDegradation"]["blur"] == 2
        else:
            assert rec["ExtraDegradations"] == [{"subtype": "jpeg", "severity": 2}]
        fig = row["figure"]
        assert rec["Category"] == {None: None, "plane_geometry": "Plane Geometry",
                                   "bar_chart": "Statistical Charts"}[fig and fig["kind"]]


def test_perfect_answers_score_100_and_every_categorised_photo_is_counted(mr_export: Path, tmp_path: Path) -> None:
    gt = mr_export / "json" / "mathstress.json"
    data = json.loads(gt.read_text(encoding="utf-8"))
    extracted = [{"idx": r["idx"], "extracted_answer": their_extract(f"So \\boxed{{{r['AnswerCN']}}}.")} for r in data]
    loose, strict, results = their_evaluate(gt, extracted, tmp_path)
    assert (loose, strict, len(results)) == (1.0, 1.0, len(data))
    per_category, overall, counted = their_categories(gt, results)
    uncategorised = sum(n for note, n in read_summary(mr_export)["notes"].items() if "no MathReal category" in note)
    assert set(per_category) == {CATEGORY_MAP[r["Category"]] for r in data if r["Category"]}
    assert overall == 1.0 and 0 < counted == len(data) - uncategorised < len(data)


def test_random_answers_score_what_mathstress_eval_reports(photo_run: Path, mr_export: Path, tmp_path: Path,
                                                           replay) -> None:
    data = json.loads((mr_export / "json" / "mathstress.json").read_text(encoding="utf-8"))
    rng = np.random.default_rng(11)
    right = {r["id"]: bool(rng.integers(2)) for r in data}
    assert 0 < sum(right.values()) < len(right)

    def answer(task: Any, item: Any) -> str:
        value = item.problem.answer_value if right.get(item.id, True) else "1000003"
        return f"The answer is \\boxed{{{value}}}"
    _, ours = evaluate(photo_run, "solve", replay(answer, "mathreal-11"), tmp_path / "eval")
    extracted = [{"idx": r["idx"], "extracted_answer": their_extract(ours[r["id"]]["response"])} for r in data]
    loose, strict, _ = their_evaluate(mr_export / "json" / "mathstress.json", extracted, tmp_path)
    assert strict == pytest.approx(np.mean([ours[r["id"]]["correct"] for r in data]))
    assert loose == pytest.approx(np.mean([ours[r["id"]]["credit"] for r in data]))
    assert strict == pytest.approx(np.mean(list(right.values())))


def test_multiple_choice_answers_are_letters_with_the_options_in_the_question(tmp_path: Path) -> None:
    config = tiny_config(count=2, generate={"families": {"algebra.linear.one_step": 1.0},
                                            "question_types": {"mcq": 1.0}},
                         inject={"variants_per_base": 0}, degrade={"ops": [{"subtype": "blur", "severities": [1]}]})
    run(config, tmp_path / "run")
    rows = {r["id"]: r for r in read_manifest(tmp_path / "run")}
    dest = export(tmp_path / "run", tmp_path / "mr", "mathreal").path
    for rec in json.loads((dest / "json" / "mathstress.json").read_text(encoding="utf-8")):
        row = rows[rec["id"]]
        letter = row["params"]["answer_choice"]
        assert rec["QuestionType"] == "MultipleChoice" and rec["AnswerCN"] == rec["AnswerEN"] == letter
        options = rec["QuestionEN"].splitlines()[1:]
        assert options == [f"{c}. {text}" for c, text in zip("ABCD", row["question"]["choices"])]
        assert judge(f"The answer is {letter}.", rec["AnswerCN"], rec["QuestionType"]) == 1.0
