"""Benchmark-form exports (ErrorRadar, FERMAT, MMErroR, MathReal, Seeing Is Solving, ProcessBench): round trips and
skip counts. Whether each benchmark's own code reads them is tested in tests/exports/."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from render.describe import describe_figure
from render.figures import DRAWERS, FigureImage
from render.figures import _load as load_drawers
from synth.cli import app
from synth.evaluate import get_task
from synth.exports.mmerror import E_NO_ERROR
from synth.forms import FORMS, export_form, form_items, load_form, read_summary, task_gold
from synth.manifest import read_manifest
from synth.pipeline import run
from tests.conftest import tiny_config

FIGURE_KIND = "forms_test_triangle"
FIGURE = {"kind": FIGURE_KIND, "bbox": None, "spec": {"size_in": [1.0, 0.8], "elements": [
    {"id": "side_AB", "type": "segment", "from": "A", "to": "B", "value": 5, "unit": "cm"}]}}


def _triangle(figure, dpi: int) -> FigureImage:
    w, h = (int(v * dpi) for v in figure.spec["size_in"])
    pixels = np.full((h, w, 3), 255, np.uint8)
    pixels[h // 2, :] = 0
    return FigureImage(pixels, ())


@pytest.fixture(scope="module")
def form_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small run with errors, superficial controls and photos; base 0 gets a drawable figure
    (required to solve), base 1 a figure of a kind nobody can draw."""
    out = tmp_path_factory.mktemp("forms") / "run"
    config = tiny_config(
        count=4,
        inject={"variants_per_base": 3, "subtypes": {"intermediate_propagated": 1.0, "intermediate_corrected": 1.0,
                                                     "sign_error": 1.0, "step_omission": 1.0}},
        degrade={"ops": [{"subtype": "blur", "severities": [3]}, {"subtype": "rotation", "severities": [1]},
                         {"subtype": "jpeg", "severities": [2]}]})
    run(config, out)
    rows = []
    for row in read_manifest(out):
        if row["index"] == 0:
            row = {**row, "figure": FIGURE, "figure_description": describe_figure(FIGURE), "image_role": "required",
                   "givens": [*row["givens"], {"name": "AB", "value": "5", "source": "figure:side_AB", "unit": "cm"}]}
        elif row["index"] == 1:
            fig = {**FIGURE, "kind": "forms_test_undrawable"}
            row = {**row, "figure": fig, "figure_description": describe_figure(fig), "image_role": "useful"}
        rows.append(json.dumps(row, ensure_ascii=False))
    (out / "manifest.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def exports(form_run: Path) -> dict[str, Path]:
    load_drawers()
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(DRAWERS, FIGURE_KIND, _triangle)
        return {fmt: export_form(form_run, form_run.parent / fmt, fmt).path for fmt in FORMS}


def _rows(run_dir: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in read_manifest(run_dir)}


def test_errorradar_keeps_only_wrong_answers_with_first_step_and_category(form_run: Path, exports) -> None:
    rows = _rows(form_run)
    records = load_form(exports["errorradar"], "errorradar")
    # A wrong answer as asked (issue 18: answer_correct counts the unit and the requested form too), on the page
    # itself: ErrorRadar skips every photo (a photographed variant's text is its source's).
    expected = {i for i, r in rows.items() if r["error"] and not r["error"]["answer_correct"] and not r["degradations"]}
    assert any(r["error"] and r["degradations"] for r in rows.values())  # photographed errors exist and are left out
    assert expected and {r.id for r in records} == expected
    for rec in records:
        err = rows[rec.id]["error"]
        assert rec.labels == {"error_step": err["first_error_step"], "category": err["projections"]["errorradar"]}
        assert rec.raw["gold_step_response"] == f"Error Step: Step {err['first_error_step']}"
        assert rec.raw["gold_category_response"] == "Error Category: Calculation Error"
        # the student's answer as the page writes it (the last step's claim), not the verifier's value of it
        last = rows[rec.id]["steps"][-1]
        assert rec.raw["user_answer"] == (last.get("math") or last["text"]) != rows[rec.id]["answer"]["text"]
        assert rec.raw["user_answer"] in rec.raw["user_answer_steps"][-1]
        assert rec.raw["problem_type"] in ("Plane Geometry", "Solid Geometry", "Diagram", "Algebra", "Math Commonsense")
        assert rec.image.is_file()


def test_errorradar_shows_the_figure_when_one_can_be_drawn(form_run: Path, exports) -> None:
    sources = {r.id: r.raw["image_source"] for r in load_form(exports["errorradar"], "errorradar")}
    assert {s for i, s in sources.items() if i.startswith("tiny-000000")} <= {"figure"}
    assert {s for i, s in sources.items() if not i.startswith("tiny-000000")} <= {"page"}


def test_fermat_labels_errors_1_and_superficial_edits_0_with_na(form_run: Path, exports) -> None:
    rows = _rows(form_run)
    records = load_form(exports["fermat"], "fermat")
    assert {r.id for r in records} == {i for i, r in rows.items() if r["variant"] in ("error", "superficial")}
    assert {r.labels["axis"] for r in records} == {"CO", "SU"}
    for rec in records:
        row = rows[rec.id]
        if row["error"]:
            assert rec.labels["error"] == 1 and rec.labels["axis"] == "CO"
            assert rec.labels["error_steps"] == tuple(row["error"]["error_steps"])
            assert rec.labels["location"] == rec.raw["pert_reasoning"] == row["error"]["explanation"]
            assert rec.raw["has_error"] == "1" and rec.raw["orig_a"] != rec.raw["pert_a"]
        else:
            assert rec.labels == {"error": 0, "axis": "SU", "first_error_step": None, "error_steps": (),
                                  "location": "NA"}
            assert rec.raw["has_error"] == "0" and rec.raw["perturbation_type"] == "Step Omission"
        assert rec.image.name == f"{rec.id}.png" and rec.raw["annotation_url"] == f"benchmark_images/{rec.id}.png"


def test_mmerror_labels_single_error_chains_for_etc_and_no_error_items_for_epd(form_run: Path, exports) -> None:
    rows = _rows(form_run)
    records = load_form(exports["mmerror"], "mmerror")
    for rec in records:
        row = rows[rec.id]
        assert rec.raw["question_id"] == f"MMErroR_{rec.id}" and rec.image.name == f"MMErroR_{rec.id}.png"
        if row["error"]:
            assert row["error"]["answer_changed"] and row["error"]["projections"]["mmerror"] == "B"
            assert rec.labels == {"label": "B_Reasoning_Error", "tasks": ("ETC", "EPD")}
        else:
            assert row["variant"] in ("clean", "superficial")
            assert rec.labels == {"label": E_NO_ERROR, "tasks": ("EPD",)}
    assert {r.labels["label"] for r in records} == {"B_Reasoning_Error", E_NO_ERROR}


def test_mathreal_levels_come_from_each_photos_degradation_records(form_run: Path, exports) -> None:
    rows = _rows(form_run)
    records = load_form(exports["mathreal"], "mathreal")
    assert {r.id for r in records} == {i for i, r in rows.items() if r["variant"] == "degraded"}
    for rec in records:
        (deg,) = rows[rec.id]["degradations"]
        levels = rec.labels["levels"]
        if deg["subtype"] == "blur":
            assert levels["blur"] == 3 and levels["rotation"] == "Upright"
        elif deg["subtype"] == "rotation":
            turned = {"90cw": "Clockwise90°", "90ccw": "Counterclockwise90°", "180": "180°"}
            assert levels["rotation"] == turned[deg["measured"]["rotation"]] and levels["blur"] == 0
        else:  # jpeg is a camera extra, not one of MathReal's 14
            assert rec.labels["extra"] == (("jpeg", 2),) and set(levels.values()) <= {0, "Upright"}
        assert len(levels) == 14


def test_mathreal_links_each_photo_to_its_clean_twin(form_run: Path, exports) -> None:
    rows = _rows(form_run)
    for rec in load_form(exports["mathreal"], "mathreal"):
        row = rows[rec.id]
        twin = exports["mathreal"] / "img" / rec.labels["clean_image"]
        assert twin.read_bytes() == (form_run / row["clean_image"]).read_bytes()
        assert rec.image.read_bytes() == (form_run / row["image"]).read_bytes()
        assert rec.raw["QuestionEN"] == row["question"]["text"]
        assert rec.raw["DescriptionEN"] == row["figure_description"]


def test_seeing_is_solving_poses_each_figure_problem_with_and_without_its_image(exports) -> None:
    records = load_form(exports["seeing"], "seeing")
    assert {(r.id, r.labels["condition"]) for r in records} == {
        ("tiny-000000", "with_image"), ("tiny-000000", "without_image")}
    by_condition = {r.labels["condition"]: r for r in records}
    with_image, without = by_condition["with_image"], by_condition["without_image"]
    assert with_image.labels["image_role"] == "REQUIRED" and with_image.labels["isSolvable"] is True
    assert with_image.image.is_file() and without.image is None
    assert without.labels["isSolvable"] is False
    solution = without.raw["reference_response"]["solution"]
    assert solution["answer"] is None and solution["steps"] == []
    assert solution["required_information"] == ["AB (shown in the figure)"]


def test_every_item_is_written_or_counted_as_skipped(exports) -> None:
    for fmt, dest in exports.items():
        summary = read_summary(dest)
        per_item = 2 if fmt == "seeing" else 1
        kept = summary["written"] // per_item
        assert kept + sum(summary["skipped"].values()) == summary["items"], fmt
        assert len(load_form(dest, fmt)) == summary["written"]
    skipped = read_summary(exports["seeing"])["skipped"]
    assert skipped["figure could not be drawn (no drawer for its kind)"] == 1


def test_export_is_byte_identical_when_repeated(form_run: Path, exports, tmp_path: Path) -> None:
    def digest(folder: Path) -> dict[str, str]:
        return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(folder.rglob("*")) if p.is_file()}

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(DRAWERS, FIGURE_KIND, _triangle)
        again = export_form(form_run, tmp_path / "seeing", "seeing").path
    assert digest(again) == digest(exports["seeing"])


def test_loaded_records_state_the_evaluation_tasks_gold_labels(form_run: Path, exports) -> None:
    for fmt in ("errorradar", "fermat", "mmerror", "processbench"):
        records = load_form(exports[fmt], fmt)
        items = {item.id: item for item in form_items(form_run, records)}
        assert list(items) == [r.id for r in records]
        for rec in records:
            for task_id in ("detect", "localize", "categorize"):
                task, gold = get_task(task_id), task_gold(rec, fmt, task_id)
                if gold is not None:
                    assert task.applies(items[rec.id]) and gold == task.gold(items[rec.id]), (fmt, task_id, rec.id)


def test_cli_export_prints_what_it_skipped(form_run: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["export", str(form_run), "--format", "fermat", "--out", str(tmp_path / "f")])
    assert result.exit_code == 0, result.output
    assert "skipped" in result.output and "unperturbed solution" in result.output
    assert (tmp_path / "f" / "fermat.csv").is_file() and "run: python main.py" in result.output


def test_loading_a_folder_without_the_export_names_the_command(tmp_path: Path) -> None:
    from synth.errors import RunError

    with pytest.raises(RunError, match="mathstress export RUN --format mathreal"):
        load_form(tmp_path, "mathreal")


def test_records_pointing_outside_the_export_are_refused(exports, tmp_path: Path) -> None:
    from synth.errors import RunError

    copy = tmp_path / "er"
    shutil.copytree(exports["errorradar"], copy)
    data = copy / "errorradar.jsonl"
    first = json.loads(data.read_text().splitlines()[0])
    data.write_text(json.dumps({**first, "image": "../../etc/passwd"}) + "\n")
    with pytest.raises(RunError, match="outside the export"):
        load_form(copy, "errorradar")
