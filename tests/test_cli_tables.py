"""CLI listings read at 80 columns and come as JSON too; help texts keep their brackets; generate refuses early."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.generators import REGISTRY
from synth.resources import packaged_configs
from synth.safepath import write_marker
from synth.taxonomy import ERROR_SUBTYPES


def _fits(text: str, width: int = 80) -> bool:
    return all(len(line.rstrip()) <= width for line in text.splitlines()) and "…" not in text


@pytest.mark.parametrize("args", [["taxonomy"], ["taxonomy", "--degradations"], ["configs"]])
def test_listings_fit_80_columns_without_cutting_a_name(args: list[str]) -> None:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert _fits(result.output), result.output


def test_family_ids_are_never_split_across_lines() -> None:
    result = CliRunner().invoke(app, ["taxonomy", "--families"], env={"COLUMNS": "80"})
    assert result.exit_code == 0 and _fits(result.output)
    lines = result.output.splitlines()
    for fid in REGISTRY:
        assert any(line.startswith(fid + " ") for line in lines), fid


def test_taxonomy_and_configs_as_json_hold_every_row() -> None:
    subtypes = json.loads(CliRunner().invoke(app, ["taxonomy", "--json"]).stdout)["subtypes"]
    assert [r["subtype"] for r in subtypes] == [s.subtype for s in ERROR_SUBTYPES]
    families = json.loads(CliRunner().invoke(app, ["taxonomy", "--families", "--json"]).stdout)
    assert sorted(r["family"] for r in families) == sorted(REGISTRY) and all(r["example"] for r in families)
    configs = json.loads(CliRunner().invoke(app, ["configs", "--json"]).stdout)
    assert [c["name"] for c in configs] == packaged_configs()
    quickstart = next(c for c in configs if c["name"] == "quickstart")
    assert quickstart["purpose"].startswith("The default run") and Path(quickstart["path"]).is_file()
    assert all("arXiv" not in c["purpose"] and ".md" not in c["purpose"] for c in configs)


def test_generate_help_shows_the_dask_extra_in_brackets() -> None:
    result = CliRunner().invoke(app, ["generate", "--help"], env={"COLUMNS": "200"})
    assert "mathstress[dask]" in result.output


def test_generate_on_an_existing_run_says_so_before_any_progress(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("name: earlier\n")
    write_marker(tmp_path / "run", "run")
    result = CliRunner().invoke(app, ["generate", "quickstart", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert result.output.startswith("error:") and "already holds a run; pass --resume" in result.output
    assert (tmp_path / "run" / "config.yaml").read_text() == "name: earlier\n"
    # a user's folder with a config.yaml of their own is not a run: said so, as early, whatever was asked
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "config.yaml").write_text("camera: mine\n")
    for flags in ([], ["--resume"], ["--overwrite"]):
        result = CliRunner().invoke(app, ["generate", "quickstart", "--out", str(tmp_path / "mine"), *flags])
        assert result.exit_code == 2 and result.output.startswith("error:"), result.output
        assert "not written by mathstress" in result.output
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["config.yaml"]


def test_taxonomy_with_both_listings_asked_says_so() -> None:
    # It printed the families alone and exited 0.
    result = CliRunner().invoke(app, ["taxonomy", "--families", "--degradations"])
    assert result.exit_code == 2 and "not both" in result.output
