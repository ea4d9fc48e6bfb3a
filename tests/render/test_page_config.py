"""The render section of a run config: style, mix, neatness and writers reach the pages and the manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth.config import validate_config
from synth.errors import ConfigError
from synth.pipeline import run
from tests.conftest import tiny_config, tiny_config_data


@pytest.mark.parametrize(("render", "field"), [
    ({"style": "handwritten", "handwritten_share": 0.5}, "handwritten_share"),
    ({"style": "mixed", "neatness": 4}, "render.neatness"),
    ({"style": "handwritten", "neatness": []}, "render.neatness"),
    ({"style": "handwritten", "writers": ["comic_sans"]}, "render.writers.0"),
    ({"style": "handwritten", "writers": []}, "render.writers"),
    ({"paper": "papyrus"}, "render.paper"),
    ({"style": "calligraphy"}, "render.style"),
    ({"style": "printed", "handwritten_question": True}, "handwritten_question needs a writer"),
])
def test_bad_render_settings_name_the_field(render: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        validate_config(tiny_config_data(render={"dpi": 50, **render}))


def test_a_mixed_run_writes_handwritten_and_printed_pages_on_exam_paper(tmp_path: Path) -> None:
    config = tiny_config(count=6, render={"dpi": 50, "style": "mixed", "handwritten_share": 0.5,
                                          "neatness": [1, 2, 3], "writers": ["kalam", "caveat"], "paper": "exam"},
                         degrade={"ops": []}, inject={"variants_per_base": 1,
                                                      "subtypes": {"final_number": 1.0}})
    run(config, tmp_path / "run")
    rows = [json.loads(line) for line in (tmp_path / "run" / "manifest.jsonl").open(encoding="utf-8")]
    by_base: dict[str, set[tuple[str, str, str]]] = {}
    for row in rows:
        r = row["render"]
        assert r["paper"] == "exam"
        assert r["font"] in ("DejaVu Sans", "Kalam", "Caveat")
        assert (r["neatness"] is None) == (r["style"] == "printed")
        assert r["neatness"] in (None, 1, 2, 3)
        by_base.setdefault(row["base_id"], set()).add((r["style"], r["font"], r["ink"], r["neatness"]))
    assert all(len(hands) == 1 for hands in by_base.values()), "a base and its variants must share one hand"
    assert {next(iter(h))[0] for h in by_base.values()} == {"printed", "handwritten"}


def test_question_only_pages_refuse_error_variants_naming_both_settings() -> None:
    with pytest.raises(ConfigError, match=r"show_solution: false .* inject\.variants_per_base: 0"):
        validate_config(tiny_config_data(render={"dpi": 50, "show_solution": False}))


def test_a_question_only_run_records_it_and_has_no_step_boxes(tmp_path: Path) -> None:
    import jsonschema

    from synth.export import hf_record
    from synth.manifest import schema

    config = tiny_config(count=2, render={"dpi": 50, "style": "handwritten", "show_solution": False,
                                          "handwritten_question": True, "neatness": 3},
                         inject={"variants_per_base": 0}, degrade={"ops": [{"subtype": "blur", "severities": [2]}]})
    run(config, tmp_path / "run")
    rows = [json.loads(line) for line in (tmp_path / "run" / "manifest.jsonl").open(encoding="utf-8")]
    validator = jsonschema.Draft202012Validator(schema())
    assert len(rows) == 4  # two clean pages, each photographed once
    for row in rows:
        validator.validate(row)
        assert row["render"]["show_solution"] is False and row["render"]["handwritten_question"] is True
        assert row["render"]["neatness"] == 3
        assert all(step["bbox"] is None for step in row["steps"])
        kinds = {b["kind"] for b in row["layout"]}
        assert {"question_token", "working_area", "answer_area"} <= kinds and "step" not in kinds
        hf = hf_record(tmp_path / "run", row)
        assert (hf["render_style"], hf["neatness"], hf["show_solution"]) == ("handwritten", 3, False)
