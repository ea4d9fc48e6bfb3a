"""A solution that does not fit its page: a sentence chain falls back to worked lines for its whole base; a worked
page that does not fit is refused (exit 2) and leaves no half-staged shard behind; pages are set in the row's style."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml
from typer.testing import CliRunner

from perturb.reasoning.base import clean_variant
from render.page import render_page
from synth.cli import app
from synth.config import validate_config
from synth.manifest import read_manifest
from synth.pipeline import run
from tests.conftest import tiny_config_data
from tests.render.test_page_sentences import COT, STUDENT, _boxes, _problem


def _phone(style: str, families: dict[str, float], count: int = 4) -> dict:
    """Hard problems on a phone-sized page: a chain of thought in paragraphs does not fit for figure families."""
    return tiny_config_data(count=count, render={"dpi": 50, "page": "phone"}, degrade={"ops": []},
                            generate={"families": families, "solution_style": style, "difficulties": ["hard"]},
                            inject={"variants_per_base": 2, "subtypes": {"intermediate_propagated": 1.0}},
                            output={"shard_size": 2})


def _by_base(run_dir: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in read_manifest(run_dir):
        out.setdefault(row["base_id"], []).append(row)
    return out


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_chain_too_long_for_its_page_falls_back_to_worked_lines_for_its_whole_base(tmp_path: Path) -> None:
    families = {"arithmetic.order_of_operations": 1.0, "geometry.triangle.angle_sum": 1.0}
    cot = run(validate_config(_phone("cot", families)), tmp_path / "cot").run_dir  # before: PageFullError, no run
    worked = run(validate_config(_phone("worked", families)), tmp_path / "worked").run_dir
    styled, plain = _by_base(cot), _by_base(worked)
    styles = {bid: {r["solution_style"] for r in rows} for bid, rows in styled.items()}
    assert all(len(s) == 1 for s in styles.values()), styles  # one style per base, all its pages alike
    fell_back = sorted(bid for bid, s in styles.items() if s == {"worked"})
    assert fell_back and len(fell_back) < len(styled), styles  # the long chains only; short ones stay cot
    for bid in fell_back:  # exactly the base a worked run makes: rows and page images
        assert styled[bid] == plain[bid]
        assert [_digest(cot / r["image"]) for r in styled[bid]] == [_digest(worked / r["image"]) for r in plain[bid]]
    funnel = json.loads((cot / "stats.json").read_text())["rejections"]["inject"]["chains.cot"]
    assert funnel["rejected"]["page_full_fallback"] == len(fell_back)
    kept_cot = sum(len(rows) for bid, rows in styled.items() if bid not in fell_back)
    assert funnel["kept"] == kept_cot


def test_a_worked_page_too_small_is_refused_in_one_line_and_leaves_no_half_staged_shard(tmp_path: Path) -> None:
    data = _phone("worked", {"solid.cone.volume": 1.0}, count=2)  # even worked lines overflow a phone page
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["generate", str(cfg), "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "does not fit on a phone page" in lines[0] and "render.page: a4" in lines[0]
    assert "Traceback" not in result.output
    assert not list((out / "images").glob(".tmp-*"))  # before: images/.tmp-00000 with the shard's first pages
    assert not list((out / "images").iterdir()) and not (out / "manifest.jsonl").exists()
    data["render"]["page"] = "a4"  # the fix the message names, over the refused run folder
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    again = CliRunner().invoke(app, ["generate", str(cfg), "--out", str(out), "--overwrite"])
    assert again.exit_code == 0, again.output
    rows = list(read_manifest(out))
    assert rows and all((out / r["image"]).is_file() for r in rows)
    assert not list((out / "images").glob(".tmp-*"))


def _gap(steps, solution_style: str | None) -> float:
    problem = _problem()
    page = render_page(problem, replace(clean_variant(problem), steps=steps), dpi=80, seed=7,
                       solution_style=solution_style).page
    b = sorted(_boxes(page, "step").values(), key=lambda b: b.y0)
    return min(n.y0 - p.y1 for p, n in zip(b, b[1:]))


def test_the_rows_style_not_the_sentence_length_decides_paragraph_spacing() -> None:
    long_student = STUDENT[1:3]  # a student's two long sentences (70+ characters): guessed as paragraphs
    assert _gap(long_student, "student") < _gap(long_student, None) == _gap(long_student, "cot")
    assert _gap(COT, "student") < _gap(COT, "cot") == _gap(COT, None)


def test_worked_pages_are_the_same_bytes_with_their_style_given() -> None:
    problem = _problem()
    variant = clean_variant(problem)
    assert np.array_equal(render_page(problem, variant, dpi=60, seed=3, solution_style="worked").pixels,
                          render_page(problem, variant, dpi=60, seed=3).pixels)
