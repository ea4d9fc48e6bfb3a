"""FERMAT's own pipeline reads our export unchanged, and our ED/EL/EC scorer agrees with `mathstress eval`.

The functions prefixed ``their_`` re-implement, from reading them, the files of
github.com/AI4Bharat/FERMAT at commit ec1d8ac4d5c251d7105e76c47d8c4a5a36824f56: ``main.py``'s
``load_images`` (basenames of the ``.png`` files under ``--dir_name``) and ``VLMStep.encode_image``
(``../benchmark_images/<name>`` from the repository folder), the output parsers of
``steps/Step_1_1_2.py`` (ED), ``steps/Step_2_1.py`` (EL) and ``steps/Step_3_1.py`` (EC), and
``fill_in_csv.py`` (each image's row found by ``annotation_url.str.contains(name)``, exactly one;
the step outputs written into ``pred_*`` columns; only matched rows saved). The repository has no
scorer: ``synth.exports.fermat.score_fermat`` is ours, run on the CSV their ``fill_in_csv.py`` writes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from synth.cli import app
from synth.evaluate import classification_metrics
from synth.exports import export
from synth.exports.fermat import ec_correct, el_correct, named_steps, score_fermat, score_lines
from synth.fermat_score import main as fermat_main
from synth.manifest import read_manifest
from tests.exports.conftest import evaluate

ROOT = Path(__file__).resolve().parents[2]


def their_load_images(dir_name: Path) -> list[str]:
    return [f for _, _, files in os.walk(dir_name) for f in files if f.endswith(".png")]


def their_parse_ed(output: str) -> dict[str, Any]:
    text = output.strip()
    reasoning = re.search(r"\*\*Reasoning:\*\*\s*(.*?)\s*\*\*Error:", text, re.DOTALL)
    error = re.search(r"\*\*Error:\*\*\s*(\d+)", text)
    if not reasoning or not error:
        raise ValueError("not parsed")
    return {"reasoning": reasoning.group(1).strip(), "error": int(error.group(1)), "output": output}


def their_parse_el(output: str) -> dict[str, Any]:
    text = output.strip()
    reasoning = re.search(r"\*\*Reasoning:\*\*\s*(.*?)\s*\*\*Error Localization:", text, re.DOTALL)
    loc = re.search(r"\*\*Error Localization:\*\*\s*(.*)$", text, re.DOTALL)
    if not reasoning or not loc:
        raise ValueError("not parsed")
    return {"reasoning": reasoning.group(1).strip(), "error_localization": loc.group(1).strip(), "output": output}


def their_parse_ec(output: str) -> dict[str, Any]:
    text = output.strip()
    reasoning = re.search(r"\*\*Reasoning:\*\*\s*(.*?)\s*\*\*Corrected Answer LaTeX:", text, re.DOTALL)
    answer = re.search(r"\*\*Corrected Answer LaTeX:\*\*\s*(.*)$", text, re.DOTALL)
    if not reasoning or not answer:
        raise ValueError("not parsed")
    return {"reasoning": reasoning.group(1).strip(), "corrected_answer_latex": answer.group(1).strip(),
            "output": output}


def their_fill_in_csv(csv_file: Path, state: dict[str, Any], out: Path) -> Path:
    csv = pd.read_csv(csv_file, dtype={"annotation_url": str})
    updated = []
    for image in state["images"]:
        result = state.get(image)
        if result is None:
            continue
        rows = csv[csv["annotation_url"].str.contains(image)].index
        if len(rows) != 1:
            continue   # "No row found" / "Multiple rows found"
        row = csv.loc[rows[0]].copy()
        if "1.1.2" in result:
            row["err_reasoning_1.1.2"] = result["1.1.2"]["reasoning"]
            row["pred_err_1.1.2"] = result["1.1.2"]["error"]
        if "2.1" in result:
            row["pred_reasoning_2.1"] = result["2.1"]["reasoning"]
            row["pred_eloc_2.1"] = result["2.1"]["error_localization"]
        if "3.1" in result:
            row["pred_reasoning_3.1"] = result["3.1"]["reasoning"]
            row["pred_corr_a_3.1"] = result["3.1"]["corrected_answer_latex"]
        updated.append(row)
    pd.DataFrame(updated).to_csv(out, index=False)
    return out


def their_state(images: list[str], outputs: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The pipeline's state after steps 1.1.2, 2.1 and 3.1, from each image's raw model outputs."""
    parsers = {"1.1.2": their_parse_ed, "2.1": their_parse_el, "3.1": their_parse_ec}
    state: dict[str, Any] = {"images": images, "not_parsed": []}
    for image in images:
        for step, parse in parsers.items():
            try:
                state.setdefault(image, {})[step] = parse(outputs[image][step])
            except ValueError:
                state["not_parsed"].append(image)
    return state


@pytest.fixture(scope="module")
def fe_export(text_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(text_run, tmp_path_factory.mktemp("fe") / "export", "fermat").path


def _clone(export_dir: Path) -> Path:
    repo = export_dir / "FERMAT"   # where the README tells the user to clone it
    repo.mkdir(exist_ok=True)
    return repo


def test_their_pipeline_finds_every_image_and_exactly_one_row_for_each(text_run: Path, fe_export: Path) -> None:
    rows = {r["id"]: r for r in read_manifest(text_run)}
    expected = {i for i, r in rows.items() if r["variant"] in ("error", "superficial")}
    repo = _clone(fe_export)
    images = their_load_images(repo / ".." / "benchmark_images")
    assert {name.removesuffix(".png") for name in images} == expected
    csv = pd.read_csv(fe_export / "fermat.csv", dtype={"annotation_url": str})
    for name in images:
        with Image.open(repo / ".." / "benchmark_images" / name) as im:   # encode_image's path
            assert im.format == "PNG"
        assert len(csv[csv["annotation_url"].str.contains(name)]) == 1
    assert list(csv.columns[:10]) == ["new_custom_id", "orig_q", "orig_a", "pert_a", "pert_reasoning", "has_error",
                                      "grade", "domain_code", "handwriting_style", "image_quality"]
    assert set(csv["grade"]) <= {f"c{g:02d}" for g in range(13)} and set(csv["domain_code"]) <= {
        "alg", "apt", "art", "clc", "mgm", "pst", "trg"}
    assert csv["handwriting_style"].dtype == bool and csv["image_quality"].dtype == bool
    for _, rec in csv.iterrows():
        row = rows[rec["new_custom_id"]]
        assert rec["has_error"] == (1 if row["error"] else 0)
        assert rec["pert_reasoning"] == (row["error"]["explanation"] if row["error"] else rec["pert_reasoning"])


def _outputs(gold: pd.DataFrame, ed: dict[str, int], el: dict[str, str], ec: dict[str, str]) -> dict[str, Any]:
    return {f"{i}.png": {"1.1.2": f"**Reasoning:** I checked each line.\n**Error:** {ed[i]}",
                         "2.1": f"**Reasoning:** Line by line.\n**Error Localization:** {el[i]}",
                         "3.1": f"**Reasoning:** Redone.\n**Corrected Answer LaTeX:** {ec[i]}"}
            for i in gold["new_custom_id"]}


def test_perfect_outputs_score_100_on_ed_el_and_ec(fe_export: Path, tmp_path: Path) -> None:
    gold = pd.read_csv(fe_export / "fermat.csv", dtype=str, keep_default_na=False)
    ed = {r.new_custom_id: int(r.has_error) for r in gold.itertuples()}
    el = {r.new_custom_id: f"Step {r.first_error_step}" if r.has_error == "1" else "NA" for r in gold.itertuples()}
    ec = {r.new_custom_id: r.orig_a if r.has_error == "1" else "NA" for r in gold.itertuples()}
    images = their_load_images(fe_export / "benchmark_images")
    filled = their_fill_in_csv(fe_export / "fermat.csv", their_state(images, _outputs(gold, ed, el, ec)),
                               tmp_path / "model_20250101_000000.csv")
    scores = score_fermat(filled, fe_export / "fermat.csv")
    assert scores["matched"] == scores["items"] == len(gold)
    assert scores["ED"]["1.1.2"]["balanced_accuracy"] == 1.0 and scores["ED"]["1.1.2"]["error_f1"] == 1.0
    assert scores["EL"]["2.1"]["accuracy"] == 1.0 and scores["EC"]["3.1"]["accuracy"] == 1.0


def test_random_predictions_score_what_mathstress_eval_reports(text_run: Path, fe_export: Path, tmp_path: Path,
                                                               replay) -> None:
    gold = pd.read_csv(fe_export / "fermat.csv", dtype=str, keep_default_na=False)
    ids = set(gold["new_custom_id"])
    _, detect = evaluate(text_run, "detect", "random", tmp_path / "detect")
    _, localize = evaluate(text_run, "localize", "random", tmp_path / "localize")
    rng = np.random.default_rng(5)
    guesses = {i: ["NA", "1000003", None][int(rng.integers(3))] for i in sorted(ids)}   # None: the right answer

    def corrected(task: Any, item: Any) -> str:
        guess = guesses.get(item.id, "NA")
        return f"Corrected Answer: {item.problem.answer_value if guess is None else guess}"
    _, correct = evaluate(text_run, "correct", replay(corrected, "fermat-ec-5"), tmp_path / "correct")

    ed = {i: 1 if detect[i]["pred"] == "incorrect" else 0 for i in ids}
    el = {i: "NA" if localize[i]["pred"] == -1 else f"Step {localize[i]['pred']}" for i in ids}
    ec = {i: str(correct[i]["pred"]) for i in ids}
    images = their_load_images(fe_export / "benchmark_images")
    filled = their_fill_in_csv(fe_export / "fermat.csv", their_state(images, _outputs(gold, ed, el, ec)),
                               tmp_path / "model_20250101_000000.csv")
    scores = score_fermat(filled, fe_export / "fermat.csv")

    ours = classification_metrics([detect[i]["gold"] for i in sorted(ids)], [detect[i]["pred"] for i in sorted(ids)],
                                  ["correct", "incorrect"])
    assert 0 < ours["balanced_accuracy"] < 1
    assert scores["ED"]["1.1.2"]["balanced_accuracy"] == pytest.approx(ours["balanced_accuracy"])
    assert scores["ED"]["1.1.2"]["accuracy"] == pytest.approx(ours["accuracy"])
    for step, records in (("2.1", localize), ("3.1", correct)):
        task = "EL" if step == "2.1" else "EC"
        expected = np.mean([records[i]["correct"] for i in ids])
        assert 0 < expected < 1 and scores[task][step]["accuracy"] == pytest.approx(expected), task


def test_the_scorer_runs_as_a_plain_script(fe_export: Path, tmp_path: Path) -> None:
    gold = pd.read_csv(fe_export / "fermat.csv", dtype=str, keep_default_na=False)
    filled = tmp_path / "model.csv"
    gold.assign(**{"pred_err_1.1.2": 1}).to_csv(filled, index=False)   # "every solution has an error"
    done = subprocess.run([sys.executable, "-m", "synth.fermat_score", str(filled), "--gold",
                           str(fe_export / "fermat.csv"), "--json"], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == score_fermat(filled, fe_export / "fermat.csv")
    assert json.loads(done.stdout)["ED"]["1.1.2"]["balanced_accuracy"] == 0.5


def test_the_script_refuses_a_missing_or_foreign_csv_with_one_line(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert fermat_main([str(tmp_path / "nope.csv")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nope.csv'} is not a file\n"
    (tmp_path / "other.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    assert fermat_main([str(tmp_path / "other.csv")]) == 2
    assert "is not a FERMAT CSV of this export" in capsys.readouterr().err


def test_the_export_s_own_csv_as_the_filled_one_is_refused(fe_export: Path, capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    # It printed "164 of 164 items have predictions", no score, and exited 0.
    assert fermat_main([str(fe_export / "fermat.csv"), "--gold", str(fe_export / "fermat.csv")]) == 2
    assert "none of FERMAT's prediction columns" in capsys.readouterr().err


@pytest.mark.parametrize(("answer", "right"), [
    ("NA", False), ("Step 2", True), ("steps 2 and 3", True), ("Line 2, step 4", False), ("Step 3", False),
    ("The slip is somewhere", False), ("", False)])
def test_el_needs_the_first_wrong_step_and_no_step_that_is_right(answer: str, right: bool) -> None:
    assert el_correct(answer, True, 2, (2, 3)) is right
    assert named_steps("Steps 2, 3 and 5") == {2, 3, 5}
    assert el_correct("N/A", False, None, ()) and not el_correct("Step 1", False, None, ())


@pytest.mark.parametrize(("correction", "gold", "form", "right"), [
    # Seed 6021023's fermat_like: FERMAT's own gold solution (orig_a) as the correction scored wrong on 90 of 207
    # error rows: a LaTeX unit, a text label, a root set held as the verifier's polynomial, "or" inside a label.
    ("\\frac{3626 \\times \\pi}{3}\\ \\mathrm{ft}^3", "3626*pi/3", None, True),
    ("1444\\pi\\ \\mathrm{ft}^2", "1444π ft²", None, True),
    ("1444\\pi\\ \\mathrm{ft}", "1444π ft²", None, False),  # a length's unit for an area is no correction
    ("500 + 500 + 118 \\\\\n\\text{Sum:}\\ 1118", "1118", None, True),
    ("m^2 + 13m + 40 = 0 \\\\\nm = -5 \\text{ or } m = -8", "m = −5 or m = −8", None, True),
    ("m = -5", "m = −5 or m = −8", None, False),
    ("44 \\div 73 \\\\\n\\text{P(Boys or Football)} = \\frac{44}{73}", "44/73", None, True),
    ("\\frac{3}{48} \\\\\n\\text{Product:}\\ 0.0625", "1/16", "fraction", False),  # the form asked for
    ("\\text{Product:}\\ \\frac{1}{16}", "1/16", "fraction", True),
])
def test_ec_scores_a_correction_by_its_value_unit_and_form(correction: str, gold: str, form: str | None,
                                                           right: bool) -> None:
    assert ec_correct(correction, True, gold, form) is right


def test_mathstress_report_prints_the_same_scores_as_the_script(fe_export: Path, tmp_path: Path) -> None:
    gold = pd.read_csv(fe_export / "fermat.csv", dtype=str, keep_default_na=False)
    filled = tmp_path / "model.csv"
    gold.assign(**{"pred_err_1.1.2": 1}).to_csv(filled, index=False)   # "every solution has an error"
    result = CliRunner().invoke(app, ["report", "--fermat", str(filled), "--gold", str(fe_export / "fermat.csv")])
    assert result.exit_code == 0, result.output
    scores = score_fermat(filled, fe_export / "fermat.csv")
    assert result.output.split() == "\n".join(score_lines(scores)).split()
    assert "ED 1.1.2: balanced accuracy 50.0" in " ".join(result.output.split())
    missing = CliRunner().invoke(app, ["report", "--fermat", str(tmp_path / "nope.csv")])
    assert missing.exit_code == 2 and "is not a file" in missing.output
