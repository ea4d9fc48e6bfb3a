"""fermat_like photographs its pages with a phone (FERMAT's core condition) and the FERMAT export keeps those photos."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

from synth.config import load_config, validate_config
from synth.forms import export_form
from synth.manifest import read_manifest
from synth.pipeline import run
from synth.resources import packaged_config
from tests.conftest import tiny_config_data


def test_fermat_like_takes_phone_captures_of_every_kind_from_the_packaged_profiles() -> None:
    config = load_config("fermat_like")
    assert set(config.degrade.apply_to) == {"clean", "error", "superficial"}  # the default: every kind
    packaged = yaml.safe_load(packaged_config("capture_profiles").read_text())["degrade"]["profiles"]
    by_name = {p["name"]: [(s["subtype"], s["severity"]) for s in p["ops"]] for p in packaged}
    assert config.degrade.profiles
    for profile in config.degrade.profiles:  # the same captures as capture_profiles.yaml names them
        assert [(s.subtype, s.severity) for s in profile.ops] == by_name[profile.name]


def test_the_fermat_export_of_fermat_like_keeps_photographed_error_variants(tmp_path: Path) -> None:
    fermat = load_config("fermat_like").model_dump(mode="json")
    # fermat_like's render and capture settings on two small families (its own 300-base plan takes seconds)
    data = tiny_config_data(count=3, render={**fermat["render"], "dpi": 50}, degrade=fermat["degrade"],
                            inject={"variants_per_base": 2, "subtypes": {"final_number": 1, "irrelevant_info": 1}})
    out = run(validate_config(data), tmp_path / "run", workers=1).run_dir
    rows = {r["id"]: r for r in read_manifest(out)}
    export = export_form(out, tmp_path / "fermat", "fermat").path
    with (export / "fermat.csv").open(encoding="utf-8", newline="") as fh:
        table = list(csv.DictReader(fh))
    photos = [t for t in table if rows[t["new_custom_id"]]["degradations"]]
    errors = [i for i, r in rows.items() if r["variant"] == "error" and not r["degradations"]]
    assert errors
    for error in errors:  # each error page and its photo under each profile, all labelled as the error
        taken = [t for t in photos if rows[t["new_custom_id"]]["source_id"] == error]
        assert sorted(rows[t["new_custom_id"]]["profile"] for t in taken) == ["dim_phone_shot", "sideways_snapshot"]
        assert all(t["has_error"] == "1" and t["image_quality"] == "False" for t in taken)
        assert sorted(t["rotation"] for t in taken) == ["default", "right"]  # FERMAT's column: held sideways
        assert all((export / t["annotation_url"]).is_file() for t in taken)
    assert {rows[t["new_custom_id"]]["variant"] for t in table} <= {"error", "superficial"}  # no clean control
    assert len(photos) == 2 * (len(table) - len(photos))  # every exported page twice photographed, shares kept
