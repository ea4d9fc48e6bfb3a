"""Export to Hugging Face datasets (offline loadable), contact sheets, taxonomy and version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from synth import __version__
from synth.cli import app
from synth.manifest import read_manifest


@pytest.fixture(scope="module")
def hf_export(tiny_run: Path) -> Path:
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--format", "hf"])
    assert result.exit_code == 0, result.output
    return tiny_run / "hf"


def test_hf_export_loads_from_disk_with_one_split_per_variant_images_and_labels(tiny_run: Path,
                                                                                hf_export: Path) -> None:
    from datasets import load_from_disk

    data = load_from_disk(str(hf_export / "dataset"))
    rows = {r["id"]: r for r in read_manifest(tiny_run)}
    assert list(data) == ["clean", "error", "degraded"]   # the tiny run has no superficial controls
    assert sorted(i for ds in data.values() for i in ds["id"]) == sorted(rows)
    first = data["clean"][0]
    assert isinstance(first["image"], Image.Image) and first["image"].size[0] > 100
    for split, ds in data.items():
        variant = ds.features["variant"]
        for rec in ds.select_columns(["id", "variant", "first_error_step", "is_correct", "row"]):
            row = rows[rec["id"]]
            assert variant.int2str(rec["variant"]) == split == row["variant"]
            assert json.loads(rec["row"]) == row
            assert rec["is_correct"] == row["is_correct"]
            assert rec["first_error_step"] == (row["error"]["first_error_step"] if row["error"] else -1)


def test_hf_labels_are_class_labels_and_the_clean_twin_is_stored_once(tiny_run: Path, hf_export: Path) -> None:
    import pyarrow.parquet as pq
    from datasets import load_from_disk

    data = load_from_disk(str(hf_export / "dataset"))
    features = data["error"].features
    for column in ("variant", "family", "domain", "difficulty", "question_type", "image_role", "error_family",
                   "error_subtype", "errorradar", "fermat", "mmerror", "control_subtype", "degradation",
                   "render_style"):
        assert type(features[column]).__name__ == "ClassLabel", column
    rec = data["error"][0]
    row = json.loads(rec["row"])
    assert features["error_subtype"].int2str(rec["error_subtype"]) == row["error"]["subtype"]
    assert "clean_image" not in features
    clean = {r["id"]: r["image"] for r in data["clean"]}
    assert clean[row["base_id"]].tobytes() == Image.open(tiny_run / row["clean_image"]).tobytes()
    # Each run image is in the parquet files once: their image bytes add up to the run's.
    stored = sum(len(cell["bytes"]) for path in (hf_export / "data").glob("*.parquet")
                 for cell in pq.read_table(path, columns=["image"]).column("image").to_pylist())
    assert stored == sum((tiny_run / r["image"]).stat().st_size for r in read_manifest(tiny_run))


def test_hf_export_loads_as_parquet_offline(hf_export: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets import load_dataset

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    data = load_dataset(str(hf_export), cache_dir=str(hf_export.parent / ".hf-cache"))   # the card's splits
    assert list(data) == ["clean", "error", "degraded"]
    assert data["error"].features["image"].__class__.__name__ == "Image"
    assert sum(len(ds) for ds in data.values()) == sum(1 for _ in (hf_export.parent / "manifest.jsonl").open())


def test_dataset_card_states_counts_config_taxonomy_and_index_conventions(tiny_run: Path, hf_export: Path) -> None:
    card = (hf_export / "README.md").read_text()
    total = sum(1 for _ in read_manifest(tiny_run))
    assert f"{total} items" in card
    assert "intermediate_propagated" in card and "ErrorRadar" in card
    assert "seed: 7" in card
    assert "Steps are numbered from 1" in card and "numbers the same step from 0" in card
    assert "- split: degraded\n    path: data/degraded-*.parquet" in card
    assert "http" not in card and "example" not in card   # no placeholder links


def test_export_of_an_unfinished_run_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("name: x\n")
    result = CliRunner().invoke(app, ["export", str(tmp_path)])
    assert result.exit_code == 2 and "--resume" in result.output


def test_show_writes_a_contact_sheet_with_the_clean_twin(tiny_run: Path, tmp_path: Path) -> None:
    row = next(r for r in read_manifest(tiny_run) if r["variant"] == "error")
    out = tmp_path / "sheet.png"
    result = CliRunner().invoke(app, ["show", str(tiny_run), row["id"], "--out", str(out)])
    assert result.exit_code == 0, result.output
    sheet = Image.open(out)
    item = Image.open(tiny_run / row["image"])
    assert sheet.width > 2 * item.width * 900 / item.height * 0.9  # two panels side by side


def test_show_unknown_item_names_it(tiny_run: Path) -> None:
    result = CliRunner().invoke(app, ["show", str(tiny_run), "nope-1"])
    assert result.exit_code == 2 and "nope-1" in result.output


def test_taxonomy_lists_every_subtype_with_projections() -> None:
    result = CliRunner().invoke(app, ["taxonomy"])
    assert result.exit_code == 0
    for word in ("misread_scale", "reorder_terms", "KNOW", "SU"):
        assert word in result.output


def test_taxonomy_families_lists_examples() -> None:
    result = CliRunner().invoke(app, ["taxonomy", "--families"], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    for family_id in ("algebra.linear.two_step", "arithmetic.order_of_operations"):
        assert family_id in result.output
    assert "not_required" in result.output


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_processbench_export_labels_the_first_wrong_step_zero_based(tiny_run: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--format", "processbench", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "skipped 12: photo of a page" in result.output and "--configs gsm8k" in result.output
    rows = {r["id"]: r for r in read_manifest(tiny_run)}
    exported = json.loads((tmp_path / "Qwen" / "ProcessBench" / "gsm8k.json").read_text(encoding="utf-8"))
    assert {e["id"] for e in exported} == {i for i, r in rows.items() if not r["degradations"]}
    for e in exported:
        row = rows[e["id"]]
        assert e["steps"] == [s["text"] for s in row["steps"]]
        if row["error"]:
            assert e["label"] == row["error"]["first_error_step"] - 1
            assert e["final_answer_correct"] == (not row["error"]["answer_changed"])
        else:
            assert e["label"] == -1 and e["final_answer_correct"]


def test_check_families_reports_each_family_and_refuses_unknown_ids() -> None:
    result = CliRunner().invoke(app, ["check-families", "--family", "probability.simple", "--seeds", "3"],
                                env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "probability.simple" in result.output and "1 family, 0 with findings" in result.output
    bad = CliRunner().invoke(app, ["check-families", "--family", "no.such.family"])
    assert bad.exit_code == 2 and "no.such.family" in bad.output and "Traceback" not in bad.output


def test_a_superficial_control_is_fermat_s_su_class_in_the_hf_rows() -> None:
    # FERMAT's no-error items are superficial edits: fermat.csv calls them SU, the hf column held None.
    from synth.exports.hf import hf_record

    row = {"id": "b-s1", "base_id": "b", "variant": "superficial", "family": "f", "domain": "d", "difficulty": "easy",
           "question_type": "free", "image_role": "none", "question": {"text": "q"}, "answer": {"text": "1"},
           "steps": [{"text": "1"}], "is_correct": True, "error": None, "control": {"subtype": "step_omission"},
           "shown_answer": "1", "degradations": [], "render": None, "image": None, "clean_image": None}
    record = hf_record(Path("."), row)
    assert record["fermat"] == "SU" and record["control_subtype"] == "step_omission"


def test_a_profile_photo_is_named_by_its_profile_not_its_first_op() -> None:
    # A desk_lamp_tilted photo (5 ops) was exported as degradation tilt, severity 1: an ablation of tilt alone
    # that filtered on it took every profile photo too.
    from synth.exports.hf import hf_record

    ops = [{"subtype": s, "severity": 1, "family": "geometry", "params": {}, "measured": {}}
           for s in ("tilt", "background", "shadow", "glare", "jpeg")]
    row = {"id": "b-p1", "base_id": "b", "variant": "degraded", "family": "f", "domain": "d", "difficulty": "easy",
           "question_type": "free", "image_role": "none", "question": {"text": "q"}, "answer": {"text": "1"},
           "steps": [{"text": "1"}], "is_correct": True, "error": None, "control": None, "shown_answer": "1",
           "degradations": ops, "profile": "desk_lamp_tilted", "render": None, "image": None, "clean_image": None}
    record = hf_record(Path("."), row)
    assert record["degradation"] is None and record["severity"] == 0 and record["profile"] == "desk_lamp_tilted"
    single = hf_record(Path("."), {**row, "id": "b-d1", "degradations": ops[:1], "profile": None})
    assert single["degradation"] == "tilt" and single["severity"] == 1
