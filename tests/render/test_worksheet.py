"""PDF worksheets: problems, a copy-by-hand pack and an answer key, with the run's item ids on every block."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import zlib
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from render.figures import DRAWERS, FigureImage
from render.figures import _load as load_drawers
from render.worksheet import PACKS, write_worksheets
from synth.cli import app
from synth.manifest import read_manifest
from synth.records import Figure
from synth.worksheets import worksheet_items
from tests.conftest import tiny_config, tiny_config_data


def pdf_strings(path: Path) -> list[str]:
    """The literal strings drawn in a PDF's content streams (Courier ids are stored as plain text)."""
    found = []
    for head, body in re.findall(rb"<<(.*?)>>\s*stream\r?\n(.*?)endstream", path.read_bytes(), re.S):
        if b"ASCII85Decode" in head:
            body = base64.a85decode(body.strip().removesuffix(b"~>"), adobe=False)
        if b"FlateDecode" in head:
            body = zlib.decompress(body)
        found += [m.decode("latin-1") for m in re.findall(rb"\(((?:[^()\\]|\\.)*)\)\s*Tj", body)]
    return found


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory):
    items = worksheet_items(tiny_config(), limit=3)
    return items, write_worksheets(items, tmp_path_factory.mktemp("ws"), title="tiny")


def test_items_have_the_ids_generate_gives_them(tiny_run: Path, sheets) -> None:
    items, _ = sheets
    expected = [r["id"] for r in read_manifest(tiny_run) if r["index"] < 3 and r["variant"] != "degraded"]
    assert [i.id for i in items] == expected


def test_every_block_prints_its_id_as_plain_text(sheets) -> None:
    items, result = sheets
    clean = [i.id for i in items if i.variant.kind == "clean"]
    strings = {pack: pdf_strings(result.files[pack]) for pack in PACKS}
    assert [s for s in strings["problems"] if s.startswith("ID ")] == [f"ID {i}" for i in clean]
    assert [s for s in strings["copy"] if s.startswith("ID ")] == [f"ID {i.id}" for i in items]
    assert all(any(i.id in s for s in strings["answer_key"]) for i in items)


def test_index_says_which_page_holds_each_id_with_one_copy_per_page(sheets) -> None:
    items, result = sheets
    index = json.loads((result.out_dir / "index.json").read_text())
    copy_pages = [index[i.id]["copy"] for i in items]
    assert copy_pages == list(range(1, len(items) + 1)) == list(range(1, result.pages["copy"] + 1))
    for i in items:
        assert 1 <= index[i.id]["answer_key"] <= result.pages["answer_key"]
    assert result.problems == 3 and result.copies == len(items)


def test_the_same_items_give_the_same_pdf_bytes(sheets, tmp_path: Path) -> None:
    items, result = sheets
    again = write_worksheets(items, tmp_path, title="tiny")
    for pack in PACKS:
        assert again.files[pack].read_bytes() == result.files[pack].read_bytes(), pack


def _with_figure(items, kind: str):
    fig = Figure(kind, {"size_in": [2.0, 1.5], "elements": [{"id": "side_AB", "type": "segment", "value": 5}]})
    return [dataclasses.replace(i, problem=dataclasses.replace(i.problem, figure=fig)) for i in items]


def test_figures_are_embedded_as_images(sheets, tmp_path: Path) -> None:
    items, _ = sheets

    def box(figure, dpi):
        w, h = (int(v * dpi) for v in figure.spec["size_in"])
        return FigureImage(np.zeros((h, w, 3), np.uint8), ())

    load_drawers()
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(DRAWERS, "worksheet_test_box", box)
        result = write_worksheets(_with_figure(items, "worksheet_test_box"), tmp_path, title="fig")
    assert result.warnings == ()
    assert result.files["problems"].read_bytes().count(b"/Subtype /Image") >= 1


def test_a_figure_without_a_drawer_is_reported_not_fatal(sheets, tmp_path: Path) -> None:
    items, _ = sheets
    result = write_worksheets(_with_figure(items, "nobody_draws_this"), tmp_path, title="fig")
    assert result.warnings and all("nobody_draws_this" in w for w in result.warnings)
    assert len(result.warnings) == 3  # once per base problem, not per pack or variant
    assert b"/Subtype /Image" not in result.files["problems"].read_bytes()


def test_cli_writes_the_three_packs(tmp_path: Path) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_config_data()))
    result = CliRunner().invoke(app, ["worksheet", str(config), "--out", str(tmp_path / "ws"), "--limit", "1"])
    assert result.exit_code == 0, result.output
    assert {p.name for p in (tmp_path / "ws").glob("*.pdf")} == {"problems.pdf", "copy.pdf", "answer_key.pdf"}
    assert "index.json" in result.output


def test_cli_rejects_an_unknown_paper_size(tmp_path: Path) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_config_data()))
    result = CliRunner().invoke(app, ["worksheet", str(config), "--out", str(tmp_path / "ws"), "--page", "a5"])
    assert result.exit_code == 2 and "page must be one of" in result.output
    assert not (tmp_path / "ws").exists()  # refused before the folder and its marker were made


def test_the_worksheets_hold_the_steps_the_run_holds_when_a_chain_falls_back_to_worked_lines(tmp_path: Path) -> None:
    # A chain of thought too long for a phone-sized page is written up as worked lines in the run; the worksheet
    # (rendering off) kept the chain: 11 steps and a first error at step 10 on paper, 8 and 8 in the manifest.
    from synth.pipeline import run

    data = tiny_config_data(seed=3, count=6, render={"dpi": 50, "page": "phone"},
                            generate={"families": {"algebra.quadratic.formula": 1.0,
                                                   "statistics.mean.bar_chart": 1.0,
                                                   "calculus.derivative.product_rule": 1.0},
                                      "difficulties": ["hard"], "solution_style": {"cot": 1.0}},
                            inject={"variants_per_base": 1, "subtypes": {"final_number": 1.0}})
    config = tiny_config(**{k: v for k, v in data.items() if k in ("seed", "count", "render", "generate", "inject")})
    run(config, tmp_path / "run")
    stats = json.loads((tmp_path / "run" / "stats.json").read_text())
    assert "page_full_fallback" in json.dumps(stats)  # the case this test is about happens
    rows = {r["id"]: r for r in read_manifest(tmp_path / "run")}
    for item in worksheet_items(config):
        row = rows[item.id]
        assert [s.text for s in item.variant.steps] == [s["text"] for s in row["steps"]], item.id
        assert item.solution_style == row["solution_style"]
        assert (item.variant.error.first_error_step if item.variant.error else None) == \
            (row["error"]["first_error_step"] if row["error"] else None)
