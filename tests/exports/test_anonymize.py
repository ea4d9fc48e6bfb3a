"""export --anonymize: no file name or field tells a clean control from an error, a control or a photo, the order is
shuffled the same way each time, and the key beside the export maps every opaque id back to ours."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.evaluate import get_task
from synth.exports import EXPORTS, export_run, load_export, task_gold
from synth.exports._anonymize import key_path, read_key
from synth.manifest import from_row, read_manifest
from synth.pipeline import run
from tests.conftest import tiny_config

OURS = re.compile(r"tiny-\d{6}")                 # a base id, alone or with a variant or photo suffix
SUFFIX = re.compile(r"-\d{6,9}-[esdp]\d|-[esdp]\d+(?:-[dp]\d+)?\.(?:png|jpg)")
FORMATS = sorted(EXPORTS)


@pytest.fixture(scope="module")
def photo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("anon") / "run"
    families = {"arithmetic.order_of_operations": 1.0, "geometry.triangle.angle_sum": 1.0}
    inject = {"variants_per_base": 2, "subtypes": {"final_number": 1.0, "step_omission": 1.0}}
    run(tiny_config(count=4, generate={"families": families}, inject=inject,
                    degrade={"ops": [{"subtype": "blur", "severities": [2]},
                                     {"subtype": "bleed_through", "severities": [1]}]}), out)   # names its reverse
    return out


def _texts(folder: Path) -> dict[str, str]:
    """Every file of an export as text to search: data files decoded, tables as their rows (images left out)."""
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = str(path.relative_to(folder))
        if path.suffix in (".png", ".jpg"):
            out[rel] = ""
            continue
        if path.suffix == ".parquet":
            table = pq.read_table(path)
        elif path.suffix == ".arrow":
            table = pa.ipc.open_stream(path).read_all()
        else:
            out[rel] = path.read_text(encoding="utf-8", errors="replace")
            continue
        keep = [c for c in table.column_names if c != "image"]
        out[rel] = json.dumps(table.select(keep).to_pylist(), default=str, ensure_ascii=False)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_exported_name_or_field_reveals_our_ids(photo_run: Path, tmp_path: Path, fmt: str) -> None:
    dest = export_run(photo_run, fmt, tmp_path / fmt, anonymize=True)
    texts = _texts(dest)
    assert texts, fmt
    for rel, text in texts.items():
        assert not OURS.search(rel) and not SUFFIX.search(rel), rel
        assert not OURS.search(text), (rel, OURS.search(text))
        assert not SUFFIX.search(text), (rel, SUFFIX.search(text))
    key = read_key(key_path(dest))
    ids = {row["id"] for row in read_manifest(photo_run)}
    assert {v for k, v in key.items() if k.startswith("item-")} == ids
    if EXPORTS[fmt].load is not None:
        records = load_export(dest, fmt)
        assert records and all(r.id in key for r in records)
        rows = {row["id"]: row for row in read_manifest(photo_run)}
        for r in records:   # the key gives back the item whose labels the record carries
            gold = task_gold(r, fmt, "detect")
            if gold is not None:
                assert gold == get_task("detect").gold(from_row(rows[key[r.id]])), (fmt, r.id)


def test_the_order_is_shuffled_the_same_way_each_time(photo_run: Path, tmp_path: Path) -> None:
    first = export_run(photo_run, "processbench", tmp_path / "a", anonymize=True)
    again = export_run(photo_run, "processbench", tmp_path / "b", anonymize=True)
    digest = {p.relative_to(first): hashlib.sha256(p.read_bytes()).hexdigest() for p in first.rglob("*.json")
              if p.name != "summary.json"}
    assert digest == {p.relative_to(again): hashlib.sha256(p.read_bytes()).hexdigest()
                      for p in again.rglob("*.json") if p.name != "summary.json"}
    assert key_path(first).read_text() == key_path(again).read_text()
    key = read_key(key_path(first))
    ours = [key[r.id] for r in load_export(first, "processbench")]
    in_manifest = [row["id"] for row in read_manifest(photo_run) if row["id"] in set(ours)]
    assert sorted(ours) == sorted(in_manifest) and ours != in_manifest


def test_the_cli_names_the_key_and_a_plain_export_removes_a_stale_one(photo_run: Path, tmp_path: Path) -> None:
    dest = tmp_path / "pb"
    result = CliRunner().invoke(app, ["export", str(photo_run), "--format", "processbench", "--out", str(dest),
                                      "--anonymize"])
    assert result.exit_code == 0, result.output
    assert "pb.key.csv" in result.output and key_path(dest).is_file()
    assert json.loads((dest / "summary.json").read_text())["anonymized"] == {"key": "pb.key.csv"}
    plain = CliRunner().invoke(app, ["export", str(photo_run), "--format", "processbench", "--out", str(dest)])
    assert plain.exit_code == 0, plain.output
    assert not key_path(dest).exists()


def test_a_file_that_is_not_our_key_is_never_overwritten(photo_run: Path, tmp_path: Path) -> None:
    dest = tmp_path / "pb"
    key_path(dest).write_text("my notes\n")
    result = CliRunner().invoke(app, ["export", str(photo_run), "--format", "processbench", "--out", str(dest),
                                      "--anonymize"])
    assert result.exit_code == 2 and "something else is there" in result.output
    assert key_path(dest).read_text() == "my notes\n" and not dest.exists()
