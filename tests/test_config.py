"""Config validation: every malformed config fails with one readable, field-naming error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from synth.cli import app
from synth.config import load_config
from synth.errors import ConfigError
from tests.conftest import tiny_config_data


def _with(path: str, value: Any) -> dict[str, Any]:
    data = tiny_config_data()
    keys = path.split(".")
    node = data
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value
    return data


def _without(path: str) -> dict[str, Any]:
    data = tiny_config_data()
    keys = path.split(".")
    node = data
    for k in keys[:-1]:
        node = node[k]
    del node[keys[-1]]
    return data


MALFORMED: list[tuple[str, Any, str]] = [
    ("count is a string", _with("count", "many"), "count"),
    ("negative count", _with("count", -3), "count"),
    ("zero count", _with("count", 0), "count"),
    ("seed negative", _with("seed", -1), "seed"),
    ("seed is a float", _with("seed", 1.5), "seed"),
    ("unknown top-level key", {**tiny_config_data(), "colour": "red"}, "colour"),
    ("unknown nested key", _with("render.colour", "red"), "render.colour"),
    ("missing name", _without("name"), "name"),
    ("missing generate", _without("generate"), "generate"),
    ("name with a slash", _with("name", "../escape"), "name"),
    ("unknown family", _with("generate.families", {"algebra.quartic.magic": 1.0}), "generate.families"),
    ("empty families", _with("generate.families", {}), "generate.families"),
    ("negative family weight", _with("generate.families", {"algebra.linear.two_step": -1}), "generate.families"),
    ("unknown difficulty", _with("generate.difficulties", ["insane"]), "generate.difficulties"),
    ("unoffered question type", _with("generate.question_types", ["mcq"]), "generate"),
    ("severity 7", _with("degrade.ops", [{"subtype": "blur", "severities": [7]}]), "degrade.ops.0.severities.0"),
    ("unknown degradation", _with("degrade.ops", [{"subtype": "smudge"}]), "degrade.ops.0.subtype"),
    ("unknown error subtype", _with("inject.subtypes", {"telepathy": 1.0}), "inject.subtypes"),
    ("variants per base negative", _with("inject.variants_per_base", -1), "inject.variants_per_base"),
    ("placement word", _with("inject.placement", "sideways"), "inject.placement"),
    ("dpi too low", _with("render.dpi", 5), "render.dpi"),
    ("unknown paper", _with("render.paper", "papyrus"), "render.paper"),
    ("shard size zero", _with("output.shard_size", 0), "output.shard_size"),
    ("degrade without render", _with("render.enabled", False), "degrade"),
    ("top level is a list", [1, 2, 3], "top level"),
]


@pytest.mark.parametrize(("label", "data", "field"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_config_exits_2_naming_the_field_and_writes_nothing(
        tmp_path: Path, label: str, data: Any, field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["generate", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "error:" in result.output
    assert field in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_missing_config_file_names_the_path(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["generate", str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "nope.yaml" in result.output and "does not exist" in result.output


def test_invalid_yaml_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\ncount: [1,\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line"):
        load_config(path)


def test_unwritable_output_folder_is_rejected_before_anything_is_written(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump(tiny_config_data()), encoding="utf-8")
    result = CliRunner().invoke(app, ["generate", str(path), "--out", str(blocker / "run")])
    assert result.exit_code == 2
    assert "--out" in result.output


def test_yaml_tags_are_not_executed(tmp_path: Path) -> None:
    path = tmp_path / "evil.yaml"
    path.write_text("name: !!python/object/apply:os.system ['echo hi']\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)


def test_quickstart_is_packaged_and_valid() -> None:
    cfg = load_config("quickstart")
    assert cfg.name == "quickstart" and cfg.count > 0
