"""Paths derived from manifests stay in their folder; mathstress deletes only what it wrote (issue 16)."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image
from typer.testing import CliRunner

from synth import __version__
from synth.cli import app
from synth.errors import ConfigError, UnsafePathError
from synth.export import export_run
from synth.forms import export_form
from synth.manifest import read_manifest
from synth.pipeline import run
from synth.safepath import (
    MARKER,
    check_id,
    folder_kind,
    inside,
    prepare_output_dir,
    read_marker,
    write_marker,
)
from tests.conftest import folder_hashes, tiny_config, tiny_config_data

SMALL = {"count": 2, "inject": {"variants_per_base": 1, "subtypes": {"final_number": 1.0}},
         "degrade": {"ops": [{"subtype": "blur", "severities": [2]}]}}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two bases, each a clean page, an error variant and a photo (six items)."""
    out = tmp_path_factory.mktemp("paths") / "run"
    run(tiny_config(**SMALL), out)
    return out


def _copy_run(src: Path, dest: Path, edit: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    if edit is not None:
        rows = [edit(n, row) for n, row in enumerate(read_manifest(src))]
        (dest / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return dest


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _one_line_error(result: Any, code: int = 2) -> str:
    """The CLI's last output line, asserted to be its one-line error (no traceback)."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("error: "), result.output
    return last


# -- ids and paths read from a manifest ---------------------------------------------------------------


def test_every_id_the_pipeline_writes_passes_the_id_check(small_run: Path) -> None:
    rows = list(read_manifest(small_run))
    assert {r["variant"] for r in rows} == {"clean", "error", "degraded"}
    for row in rows:
        assert check_id(row["id"]) == row["id"]
        assert check_id(row["base_id"], base=True) == row["base_id"]


@pytest.mark.parametrize("value", ["../tiny-000000", "tiny-000000/../../x", "/etc/passwd", "tiny-000000-e1/..",
                                   "..", "tiny-000000-x1", "tiny-000000\n", "", 7, None, "a" * 300 + "-000000"])
def test_ids_of_any_other_shape_are_refused_naming_the_field(value: Any) -> None:
    with pytest.raises(UnsafePathError, match="base_id") as err:
        check_id(value, field="base_id", where="manifest.jsonl row 3")
    message = str(err.value)
    assert "row 3" in message and "\n" not in message and len(message) < 300


@pytest.mark.parametrize("fmt", ["mathreal", "seeing", "errorradar", "processbench"])
def test_export_refuses_an_id_with_parent_steps_and_writes_nothing_outside(small_run: Path, tmp_path: Path,
                                                                           fmt: str) -> None:
    def escape(n: int, row: dict[str, Any]) -> dict[str, Any]:
        # The first base's rows name a crafted base: mathreal would copy its clean page to img/clean/<base_id>.png,
        # seeing and errorradar its figure to images/<base_id>-figure.png.
        return {**row, "base_id": "../../escape-000000"} if n < 3 else row

    crafted = _copy_run(small_run, tmp_path / "deep" / "run", escape)
    before = _files(tmp_path)
    result = CliRunner().invoke(app, ["export", str(crafted), "--format", fmt, "--out", str(tmp_path / "deep" / "x")])
    line = _one_line_error(result)
    assert "row 1: base_id '../../escape-000000'" in line
    assert _files(tmp_path) == before  # no export folder, no escaped file, no staging left behind


def test_hf_export_refuses_a_crafted_id_with_one_line(small_run: Path, tmp_path: Path) -> None:
    crafted = _copy_run(small_run, tmp_path / "run",
                        lambda n, row: {**row, "id": "x/../../y"} if n == 4 else row)
    result = CliRunner().invoke(app, ["export", str(crafted), "--format", "hf", "--out", str(tmp_path / "hf")])
    line = _one_line_error(result)
    assert "row 5" in line and "'x/../../y'" in line
    assert not (tmp_path / "hf").exists()


@pytest.mark.parametrize("fmt", ["mathreal", "hf"])
def test_export_refuses_an_absolute_image_path(small_run: Path, tmp_path: Path, fmt: str) -> None:
    outside = tmp_path / "secret.png"
    shutil.copyfile(small_run / next(read_manifest(small_run))["image"], outside)
    crafted = _copy_run(small_run, tmp_path / "run", lambda n, row: {**row, "clean_image": str(outside)})
    with pytest.raises(UnsafePathError, match="clean_image .*is absolute"):
        export_run(crafted, fmt, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("target", ["/etc/passwd", "tmp"])
def test_export_and_show_refuse_an_image_symlinked_outside_the_run(small_run: Path, tmp_path: Path,
                                                                   target: str) -> None:
    crafted = _copy_run(small_run, tmp_path / "run")
    photo = next(r for r in read_manifest(crafted) if r["variant"] == "degraded")
    if target == "tmp":
        outside = tmp_path / "outside.png"
        shutil.copyfile(crafted / photo["image"], outside)  # a real image, so only its place is wrong
        target = str(outside)
    (crafted / photo["image"]).unlink()
    os.symlink(target, crafted / photo["image"])
    with pytest.raises(UnsafePathError, match="image .*points outside"):
        export_form(crafted, tmp_path / "mathreal", "mathreal")
    result = CliRunner().invoke(app, ["show", str(crafted), photo["id"], "--out", str(tmp_path / "sheet.png")])
    assert photo["image"] in _one_line_error(result)
    assert not (tmp_path / "sheet.png").exists() and not (tmp_path / "mathreal").exists()


def test_a_symlink_inside_the_run_that_stays_inside_is_followed(small_run: Path, tmp_path: Path) -> None:
    crafted = _copy_run(small_run, tmp_path / "run")
    photo = next(r for r in read_manifest(crafted) if r["variant"] == "degraded")
    (crafted / "kept").mkdir()
    (crafted / photo["image"]).rename(crafted / "kept" / "photo.png")  # the same bytes, reached through a link
    os.symlink(crafted / "kept" / "photo.png", crafted / photo["image"])
    assert export_form(crafted, tmp_path / "mathreal", "mathreal").written == 2


def test_inside_refuses_escapes_and_proves_containment(tmp_path: Path) -> None:
    (tmp_path / "root" / "images").mkdir(parents=True)
    (tmp_path / "root" / "link").symlink_to(tmp_path)
    root = tmp_path / "root"
    assert inside(root, "images/a.png") == root.resolve() / "images" / "a.png"
    for bad, why in [("../x", "outside"), ("images/../../x", "outside"), ("link/x", "outside"), (".", "outside"),
                     ("/etc/passwd", "absolute"), ("C:\\x", "absolute"), ("~/x", "absolute"), ("a\x00b", "NUL")]:
        with pytest.raises(UnsafePathError, match=why):
            inside(root, bad, field="image")


def test_show_refuses_a_crafted_id_whose_default_sheet_would_leave_the_run(small_run: Path, tmp_path: Path) -> None:
    crafted = _copy_run(small_run, tmp_path / "run",
                        lambda n, row: {**row, "id": "../../../sheet"} if n == 1 else row)
    before = _files(tmp_path)
    result = CliRunner().invoke(app, ["show", str(crafted), "../../../sheet"])
    assert "'../../../sheet'" in _one_line_error(result)
    assert _files(tmp_path) == before


def test_show_writes_its_default_sheet_inside_the_run_and_an_explicit_out_anywhere(small_run: Path,
                                                                                  tmp_path: Path) -> None:
    crafted = _copy_run(small_run, tmp_path / "run")
    item = next(r for r in read_manifest(crafted) if r["variant"] == "error")["id"]
    assert CliRunner().invoke(app, ["show", str(crafted), item]).exit_code == 0
    assert Image.open(crafted / "show" / f"{item}.png").width > 0
    mine = tmp_path / "elsewhere" / "mine.png"
    assert CliRunner().invoke(app, ["show", str(crafted), item, "--out", str(mine)]).exit_code == 0
    assert mine.is_file()


def test_show_on_an_image_path_that_is_a_text_file_is_one_line_exit_2(small_run: Path, tmp_path: Path) -> None:
    crafted = _copy_run(small_run, tmp_path / "run")
    row = next(read_manifest(crafted))
    (crafted / row["image"]).write_text("not a picture\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["show", str(crafted), row["id"], "--out", str(tmp_path / "s.png")])
    line = _one_line_error(result)
    assert "not an image" in line and row["image"] in line


# -- output folders: never delete what mathstress did not create ---------------------------------------


def test_export_refuses_a_users_folder_and_keeps_its_files(small_run: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    (mine / "images").mkdir(parents=True)
    (mine / "thesis.tex").write_text("years of work", encoding="utf-8")
    for fmt in ("errorradar", "hf", "processbench"):
        result = CliRunner().invoke(app, ["export", str(small_run), "--format", fmt, "--out", str(mine)])
        line = _one_line_error(result)
        assert str(mine) in line and "choose another --out or delete it yourself" in line
    assert (mine / "thesis.tex").read_text(encoding="utf-8") == "years of work"
    assert _files(mine) == {"images", "thesis.tex"}
    assert not any(p.name.startswith(".mathstress-staging") for p in tmp_path.iterdir())


def test_export_out_an_existing_file_is_one_line_exit_2(small_run: Path, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("keep me", encoding="utf-8")
    result = CliRunner().invoke(app, ["export", str(small_run), "--format", "seeing", "--out", str(target)])
    assert "is a file" in _one_line_error(result)
    assert target.read_text(encoding="utf-8") == "keep me"


def test_export_into_the_run_folder_itself_is_refused_and_the_run_survives(small_run: Path, tmp_path: Path) -> None:
    crafted = _copy_run(small_run, tmp_path / "run")
    before = folder_hashes(crafted)
    result = CliRunner().invoke(app, ["export", str(crafted), "--format", "fermat", "--out", str(crafted)])
    assert "holds mathstress output of another kind (run" in _one_line_error(result)
    assert folder_hashes(crafted) == before


def test_export_uses_an_empty_folder_and_marks_it(small_run: Path, tmp_path: Path) -> None:
    dest = tmp_path / "empty"
    dest.mkdir()
    export_form(small_run, dest, "errorradar")
    marker = read_marker(dest)
    assert marker is not None and marker["kind"] == "export:errorradar"
    assert set(marker["entries"]) == {p.name for p in dest.iterdir()} - {MARKER}


def test_re_export_replaces_only_what_the_export_wrote(small_run: Path, tmp_path: Path) -> None:
    dest = tmp_path / "mr"
    export_form(small_run, dest, "mathreal")
    (dest / "img" / "real" / "stale.png").write_bytes(b"old")  # inside an entry the export owns: replaced
    (dest / "my-notes.md").write_text("mine", encoding="utf-8")  # beside it: the user's, kept
    export_form(small_run, dest, "mathreal")
    assert (dest / "my-notes.md").read_text(encoding="utf-8") == "mine"
    assert not (dest / "img" / "real" / "stale.png").exists()
    assert json.loads((dest / "summary.json").read_text())["written"] == 2
    with pytest.raises(UnsafePathError, match="another kind"):
        export_form(small_run, dest, "seeing")  # an export of another form is not replaced either


def test_an_unmarked_export_of_an_earlier_version_is_replaced(small_run: Path, tmp_path: Path) -> None:
    dest = tmp_path / "er"
    export_form(small_run, dest, "errorradar")
    (dest / MARKER).unlink()
    export_form(small_run, dest, "errorradar")
    assert read_marker(dest)["kind"] == "export:errorradar"  # type: ignore[index]


def _config_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(tiny_config_data(**{**SMALL, "count": 1})), encoding="utf-8")
    return path


def test_generate_overwrite_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    mine = tmp_path / "photos"
    for sub in ("images", "hf", "shards"):
        (mine / sub).mkdir(parents=True)
        (mine / sub / "holiday.jpg").write_bytes(b"\xff\xd8 not ours")
    (mine / "config.yaml").write_text("camera: mine\n", encoding="utf-8")
    (mine / "notes.txt").write_text("mine", encoding="utf-8")
    before = _files(mine)
    result = CliRunner().invoke(app, ["generate", str(_config_file(tmp_path)), "--out", str(mine), "--overwrite"])
    line = _one_line_error(result)
    assert str(mine) in line and "choose another --out or delete it yourself" in line
    assert _files(mine) == before


def test_overwriting_a_marked_run_keeps_a_users_extra_file_and_the_same_bytes(tmp_path: Path) -> None:
    config = tiny_config(**{**SMALL, "count": 1})
    out = tmp_path / "run"
    run(config, out)
    first = folder_hashes(out)
    assert read_marker(out) == {"kind": "run", "version": __version__}
    (out / "README-mine.md").write_text("mine", encoding="utf-8")
    (out / "images" / "stray.png").write_bytes(b"x")  # not a name the run writes: refused, not deleted (round 21)
    with pytest.raises(UnsafePathError, match="stray.png, which the run did not write"):
        run(config, out, overwrite=True)
    (out / "images" / "stray.png").unlink()
    run(config, out, overwrite=True)
    assert (out / "README-mine.md").read_text(encoding="utf-8") == "mine"
    assert folder_hashes(out) == first


def test_an_unmarked_run_is_ours_only_while_it_holds_nothing_but_a_runs_files(small_run: Path, tmp_path: Path) -> None:
    legacy = _copy_run(small_run, tmp_path / "old")
    (legacy / MARKER).unlink()
    assert folder_kind(legacy) == "run"
    (legacy / "notes.txt").write_text("mine", encoding="utf-8")
    assert folder_kind(legacy) is None
    with pytest.raises(UnsafePathError, match="not written by mathstress"):
        prepare_output_dir(legacy, "run", overwrite=True)
    assert (legacy / "manifest.jsonl").is_file() and (legacy / "notes.txt").is_file()
    (legacy / "notes.txt").unlink()
    prepare_output_dir(legacy, "run", overwrite=True)
    assert _files(legacy) == set()


def test_overwrite_clears_the_runs_own_hf_export_but_not_a_users_hf_folder(small_run: Path, tmp_path: Path) -> None:
    ours = _copy_run(small_run, tmp_path / "ours")
    (ours / "hf" / "dataset").mkdir(parents=True)
    write_marker(ours / "hf", "export:hf", entries=["dataset"])
    (ours / "hf" / "mine.txt").write_text("mine", encoding="utf-8")
    prepare_output_dir(ours, "run", overwrite=True)
    assert _files(ours) == {"hf", "hf/mine.txt"}


def test_output_path_that_is_a_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="is a file"):
        prepare_output_dir(tmp_path / "f", "run", overwrite=True)
    with pytest.raises(ConfigError, match="is a file"):
        prepare_output_dir(tmp_path / "f" / "sub", "export:hf")


# -- round 19: a hostile user's folders (eval, report, worksheet, a run's insides, a cut manifest) -------------------


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _user_folder(root: Path, names: dict[str, str]) -> Path:
    for name, text in names.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_eval_refuses_a_users_folder_and_an_out_that_is_a_file_and_writes_nothing(small_run: Path,
                                                                                  tmp_path: Path) -> None:
    # Before: eval replaced results.json, responses/ and report.md of a folder that merely held those names.
    mine = _user_folder(tmp_path / "thesis", {"results.json": '{"my": "results"}', "responses/detect.jsonl": "mine",
                                              "report.md": "mine"})
    before = _tree(mine)
    line = _one_line_error(CliRunner().invoke(app, ["eval", str(small_run), "--model", "random", "--task", "detect",
                                                    "--out", str(mine)]))
    assert "not written by mathstress" in line and _tree(mine) == before
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    line = _one_line_error(CliRunner().invoke(app, ["eval", str(small_run), "--model", "random", "--task", "detect",
                                                    "--out", str(tmp_path / "afile")]))
    assert "is a file" in line


def test_eval_marks_its_folder_and_resumes_an_earlier_versions_unmarked_one(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ev"
    args = ["eval", str(small_run), "--model", "random", "--task", "detect", "--out", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert read_marker(out)["kind"] == "eval"
    first = (out / "results.json").read_text(encoding="utf-8")
    (out / MARKER).unlink()  # as an earlier version left it: its cache proves it is an evaluation
    assert CliRunner().invoke(app, args).exit_code == 0
    assert read_marker(out)["kind"] == "eval"
    again = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]["detect"]
    assert again["metrics"] == json.loads(first)["tasks"]["detect"]["metrics"]
    assert again["counts"]["cached"] == again["counts"]["requests"]  # resumed from its cache, no call made again


@pytest.mark.parametrize("text", ["[]", "{}", "null", '{"model": 5}', '{"bad'])
def test_report_on_a_results_json_that_is_not_an_evaluations_is_one_line_exit_2(tmp_path: Path, text: str) -> None:
    (tmp_path / "results.json").write_text(text, encoding="utf-8")
    line = _one_line_error(CliRunner().invoke(app, ["report", str(tmp_path)]))
    assert "results.json" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_report_names_a_cut_responses_file(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ev"
    assert CliRunner().invoke(app, ["eval", str(small_run), "--model", "random", "--task", "detect",
                                    "--out", str(out)]).exit_code == 0
    with (out / "responses" / "detect.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"bad\n')
    line = _one_line_error(CliRunner().invoke(app, ["report", str(out)]))
    assert "detect.jsonl line" in line and "re-run the same `mathstress eval`" in line


def test_worksheet_refuses_a_users_folder_even_with_its_file_names(tmp_path: Path) -> None:
    mine = _user_folder(tmp_path / "sheets", {n: "mine" for n in ("problems.pdf", "copy.pdf", "answer_key.pdf",
                                                                   "index.json")})
    before = _tree(mine)
    config = str(_config_file(tmp_path))
    line = _one_line_error(CliRunner().invoke(app, ["worksheet", config, "--out", str(mine)]))
    assert "not written by mathstress" in line and _tree(mine) == before
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    assert "is a file" in _one_line_error(CliRunner().invoke(app, ["worksheet", config, "--out",
                                                                   str(tmp_path / "afile")]))
    ours = tmp_path / "ours"
    for _ in range(2):  # its own folder is marked, and written again on a second run
        assert CliRunner().invoke(app, ["worksheet", config, "--out", str(ours)]).exit_code == 0
    assert read_marker(ours)["kind"] == "worksheets" and (ours / "problems.pdf").stat().st_size > 1000


def test_overwrite_refuses_a_users_config_and_images_that_only_look_like_a_run(tmp_path: Path) -> None:
    # Before: config.yaml beside images/ passed for an earlier version's run, and --overwrite deleted both.
    mine = _user_folder(tmp_path / "photos", {"config.yaml": "camera: mine\n", "images/holiday.jpg": "jpeg"})
    before = _tree(mine)
    line = _one_line_error(CliRunner().invoke(app, ["generate", str(_config_file(tmp_path)), "--out", str(mine),
                                                    "--overwrite"]))
    assert "not written by mathstress" in line and _tree(mine) == before


@pytest.mark.parametrize("inner", ["images", "shards"])
def test_an_out_inside_a_runs_images_or_shards_is_refused(small_run: Path, tmp_path: Path, inner: str) -> None:
    # A later --resume (shards) or --overwrite (images) deletes those folders whole, with an export inside.
    target = small_run / inner / "mine"
    # generate and degrade made a run there (round 21), which the outer run's --overwrite then deleted
    images = tmp_path / "own"
    images.mkdir()
    (images / "a.png").write_bytes((small_run / "images" / sorted(os.listdir(small_run / "images"))[0]).read_bytes())
    for args in (["export", str(small_run), "--format", "fermat", "--out", str(target)],
                 ["eval", str(small_run), "--model", "random", "--task", "detect", "--out", str(target)],
                 ["generate", str(_config_file(tmp_path)), "--out", str(target)],
                 ["degrade", str(images), "--ops", "blur:1", "--out", str(target)]):
        line = _one_line_error(CliRunner().invoke(app, args))
        assert f"inside the {inner}/ folder of the run" in line
        assert not target.exists()


def test_a_cut_manifest_is_one_line_exit_2_naming_the_fix_for_every_reader(small_run: Path, tmp_path: Path) -> None:
    cut = _copy_run(small_run, tmp_path / "cut")
    data = (cut / "manifest.jsonl").read_bytes()
    (cut / "manifest.jsonl").write_bytes(data[: len(data) // 2])
    for args in (["eval", str(cut), "--model", "random", "--task", "detect", "--out", str(tmp_path / "ev")],
                 ["export", str(cut), "--format", "fermat", "--out", str(tmp_path / "exp")],
                 ["degrade", str(cut), "--out", str(tmp_path / "deg"), "--ops", "blur:1"]):
        line = _one_line_error(CliRunner().invoke(app, args))
        assert "manifest.jsonl line" in line and "--resume" in line, args
    assert not any((tmp_path / n).exists() for n in ("ev", "exp", "deg"))
    result = CliRunner().invoke(app, ["generate", str(cut / "config.yaml"), "--out", str(cut), "--resume"])
    assert result.exit_code == 0, result.output  # the fix the message gives works
    assert len(list(read_manifest(cut))) == len(list(read_manifest(small_run)))


def test_an_export_folder_gets_the_users_umask_not_mkdtemps_private_mode(small_run: Path, tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        export_form(small_run, tmp_path / "out", "errorradar")
    finally:
        os.umask(mask)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755  # was 0o700: unreadable to every other user


@pytest.mark.parametrize("fmt", ["hf", "fermat", "mathreal", "mmerror", "errorradar"])
def test_an_export_refuses_a_run_whose_image_no_longer_matches_its_checksum(small_run: Path, tmp_path: Path,
                                                                           fmt: str) -> None:
    # Before: the hf export published a garbage PNG, and the dataset raised only when a user's code decoded it.
    run_dir = _copy_run(small_run, tmp_path / "run")
    damaged = sorted((run_dir / "images").iterdir())[1]
    damaged.write_bytes(b"garbage")
    line = _one_line_error(CliRunner().invoke(app, ["export", str(run_dir), "--format", fmt, "--out",
                                                    str(tmp_path / "exp")]))
    assert f"images/{damaged.name}" in line and "--resume" in line
    assert not (tmp_path / "exp").exists()
    assert CliRunner().invoke(app, ["generate", str(run_dir / "config.yaml"), "--out", str(run_dir),
                                    "--resume"]).exit_code == 0  # the fix the message gives
    assert CliRunner().invoke(app, ["export", str(run_dir), "--format", fmt, "--out",
                                    str(tmp_path / "exp")]).exit_code == 0


@pytest.mark.parametrize("flags", [[], ["--resume"]])
def test_generate_into_a_users_folder_says_it_is_not_a_run(tmp_path: Path, flags: list[str]) -> None:
    # Before: "already holds a run; pass --resume ... or --overwrite", and --resume "was started with a different
    # config": a folder holding only a user's notes was called a run.
    mine = _user_folder(tmp_path / "mine", {"notes.txt": "mine"})
    line = _one_line_error(CliRunner().invoke(app, ["generate", str(_config_file(tmp_path)), "--out", str(mine),
                                                    *flags]))
    assert "not written by mathstress" in line
    assert _tree(mine) == {"notes.txt": b"mine"}


def test_show_does_not_replace_a_file_that_is_not_a_png(small_run: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("mine", encoding="utf-8")
    item = next(read_manifest(small_run))["id"]
    line = _one_line_error(CliRunner().invoke(app, ["show", str(small_run), item, "--out", str(notes)]))
    assert "is not a PNG image" in line and notes.read_text(encoding="utf-8") == "mine"
    sheet = tmp_path / "sheet.png"
    for _ in range(2):  # its own sheet is replaced on a second call
        assert CliRunner().invoke(app, ["show", str(small_run), item, "--out", str(sheet)]).exit_code == 0


def test_a_manifest_cut_at_a_line_boundary_is_caught_by_its_recorded_line_count(small_run: Path,
                                                                                tmp_path: Path) -> None:
    cut = _copy_run(small_run, tmp_path / "cut")
    lines = (cut / "manifest.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (cut / "manifest.jsonl").write_text("".join(lines[:-2]), encoding="utf-8")
    for args in (["eval", str(cut), "--model", "random", "--task", "detect", "--out", str(tmp_path / "ev")],
                 ["export", str(cut), "--format", "processbench", "--out", str(tmp_path / "exp")]):
        line = _one_line_error(CliRunner().invoke(app, args))
        assert f"holds {len(lines) - 2} rows" in line and "--resume" in line, args
    assert not (tmp_path / "ev").exists() and not (tmp_path / "exp").exists()


def test_the_repair_a_degrade_output_is_told_is_degrade_not_generate(tmp_path: Path) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    Image.new("RGB", (120, 160), (240, 240, 240)).save(photos / "a.png")
    out = tmp_path / "deg"
    assert CliRunner().invoke(app, ["degrade", str(photos), "--out", str(out), "--ops", "blur:1"]).exit_code == 0
    data = (out / "manifest.jsonl").read_bytes()
    (out / "manifest.jsonl").write_bytes(data[: len(data) // 2])
    line = _one_line_error(CliRunner().invoke(app, ["export", str(out), "--format", "fermat", "--out",
                                                    str(tmp_path / "exp")]))
    assert f"`mathstress degrade {photos} --out {out} --resume`" in line
    assert CliRunner().invoke(app, ["degrade", str(photos), "--out", str(out), "--ops", "blur:1",
                                    "--resume"]).exit_code == 0  # the fix the message gives
    assert CliRunner().invoke(app, ["export", str(out), "--format", "hf", "--out",
                                    str(tmp_path / "exp")]).exit_code == 0


def test_a_text_only_export_does_not_judge_images_it_does_not_write(small_run: Path, tmp_path: Path) -> None:
    run_dir = _copy_run(small_run, tmp_path / "run")
    sorted((run_dir / "images").iterdir())[1].write_bytes(b"garbage")
    assert CliRunner().invoke(app, ["export", str(run_dir), "--format", "processbench", "--out",
                                    str(tmp_path / "pb")]).exit_code == 0


def test_a_refused_evaluation_leaves_no_folder_behind(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ev"
    result = CliRunner().invoke(app, ["eval", str(small_run), "--model", "openai:m", "--base-url", "notaurl",
                                      "--task", "detect", "--out", str(out)])
    assert result.exit_code == 2 and not out.exists()


def test_earlier_versions_report_from_inspect_and_worksheet_folders_are_adopted(small_run: Path,
                                                                               tmp_path: Path) -> None:
    ev = tmp_path / "ev"
    assert CliRunner().invoke(app, ["eval", str(small_run), "--model", "random", "--task", "detect",
                                    "--out", str(ev)]).exit_code == 0
    (ev / MARKER).unlink()
    (ev / "cache.sqlite").unlink()  # as `report --from-inspect` of an earlier version left it: results, no cache
    assert CliRunner().invoke(app, ["report", str(ev)]).exit_code == 0
    assert CliRunner().invoke(app, ["eval", str(small_run), "--model", "random", "--task", "detect",
                                    "--out", str(ev)]).exit_code == 0
    assert read_marker(ev)["kind"] == "eval"
    sheets = tmp_path / "sheets"
    config = str(_config_file(tmp_path))
    assert CliRunner().invoke(app, ["worksheet", config, "--out", str(sheets)]).exit_code == 0
    (sheets / MARKER).unlink()  # an earlier version's worksheets: no marker, its index.json
    assert CliRunner().invoke(app, ["worksheet", config, "--out", str(sheets)]).exit_code == 0
    assert read_marker(sheets)["kind"] == "worksheets"


def test_show_fills_an_empty_placeholder_file(small_run: Path, tmp_path: Path) -> None:
    placeholder = tmp_path / "sheet.png"
    placeholder.touch()
    item = next(read_manifest(small_run))["id"]
    assert CliRunner().invoke(app, ["show", str(small_run), item, "--out", str(placeholder)]).exit_code == 0
    assert placeholder.read_bytes()[:4] == b"\x89PNG"


def test_a_folder_above_out_that_cannot_be_listed_does_not_stop_the_output(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # A 0711 home on a shared machine: its owner's folders inside are reachable, the home itself is not listable.
    # The check for a run's images/ above --out listed every ancestor, and eval and export crashed on it.
    locked = tmp_path / "home"
    (locked / "work").mkdir(parents=True)
    listing = Path.iterdir

    def iterdir(self: Path):  # noqa: ANN202 - Path.iterdir's own signature
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return listing(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    assert prepare_output_dir(locked / "work" / "ev", "eval") == locked / "work" / "ev"
    assert folder_kind(locked) is None


@pytest.mark.parametrize("edit", [{"steps": None}, {"error": "oops"}, {"question": []}])
def test_eval_on_a_manifest_row_with_a_wrong_field_is_one_line_exit_2(small_run: Path, tmp_path: Path,
                                                                      edit: dict[str, Any]) -> None:
    # Rows that parse as JSON but lack what a row holds gave TypeError or AttributeError tracebacks.
    bad = _copy_run(small_run, tmp_path / "bad", edit=lambda n, row: {**row, **edit} if n == 1 else row)
    line = _one_line_error(CliRunner().invoke(app, ["eval", str(bad), "--model", "random", "--task", "detect",
                                                    "--out", str(tmp_path / "ev")]))
    assert "row 2 is not a mathstress manifest row" in line and "--resume" in line
    assert not (tmp_path / "ev").exists()


# seeing is left out: the small run has no figure problem, so it skips every row before reading one.
@pytest.mark.parametrize("fmt", ["hf", "fermat", "mathreal", "mmerror", "errorradar", "processbench"])
@pytest.mark.parametrize("edit", [{"steps": None}, {"error": "oops"}, {"question": []}, {"answer": None}])
def test_export_of_a_manifest_row_with_a_wrong_field_is_one_line_exit_2(small_run: Path, tmp_path: Path, fmt: str,
                                                                        edit: dict[str, Any]) -> None:
    # Rows that parse as JSON but lack what a row holds gave TypeError, KeyError or AttributeError tracebacks.
    bad = _copy_run(small_run, tmp_path / "bad", edit=lambda n, row: {**row, **edit})
    result = CliRunner().invoke(app, ["export", str(bad), "--format", fmt, "--out", str(tmp_path / "exp")])
    if result.exit_code == 0:  # a format that never reads the field exports what it reads
        return
    line = _one_line_error(result)
    assert not (tmp_path / "exp").exists()
    if "can be exported as" in line:  # every row skipped for what it lacks: nothing to export, said so
        return
    assert "is not a mathstress manifest row" in line or "not a manifest row" in line, line
    assert "--resume" in line


def test_a_fault_reading_an_intact_manifest_is_ours_and_keeps_its_traceback(small_run: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # The manifest is the one the run sealed: a KeyError is a bug of ours, not "the file was edited".
    from synth.exports import _base

    monkeypatch.setattr(_base.Context, "question_image", lambda self, row, folder="images": row["no such field"])
    with pytest.raises(KeyError, match="no such field"):
        export_form(small_run, tmp_path / "exp", "errorradar")


@pytest.mark.parametrize("command", ["export", "eval"])
def test_a_run_still_being_written_is_said_to_be_in_use_not_interrupted(small_run: Path, tmp_path: Path,
                                                                        command: str) -> None:
    # During a `generate --overwrite`, export said "it looks interrupted: finish it with generate ... --resume", a
    # repair that would have met the writer's lock.
    from synth.rundir import RunDir

    busy = _copy_run(small_run, tmp_path / "busy")
    (busy / "manifest.jsonl").unlink()
    args = ["--format", "hf"] if command == "export" else ["--model", "random", "--task", "detect"]
    with RunDir(busy).locked():
        line = _one_line_error(CliRunner().invoke(app, [command, str(busy), *args, "--out", str(tmp_path / "o")]))
    assert "still being written by another mathstress process (pid" in line and "--resume" not in line
    line = _one_line_error(CliRunner().invoke(app, [command, str(busy), *args, "--out", str(tmp_path / "o")]))
    assert "still being written" not in line  # the lock released: an interrupted run again


def test_export_into_the_empty_folder_you_stand_in(small_run: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # `--out .` made the staging folder inside `.` (Path(".").parent is "."), wrote the whole export, then refused
    # to publish: "not empty and was not written by mathstress".
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    before = here.stat().st_ino
    for _ in range(2):  # a second export replaces the first
        result = CliRunner().invoke(app, ["export", str(small_run), "--format", "processbench", "--out", "."])
        assert result.exit_code == 0, result.output
    assert (here / "summary.json").is_file() and here.stat().st_ino == before  # the folder stood in, not replaced
    assert not [p for p in tmp_path.iterdir() if p.name != "here"]  # no staging folder left beside it


def test_show_refuses_an_out_inside_a_runs_images(small_run: Path, tmp_path: Path) -> None:
    # It replaced a run's own checksummed page with the contact sheet; the next export then refused the run.
    run_dir = _copy_run(small_run, tmp_path / "run")
    rows = list(read_manifest(run_dir))
    target = run_dir / rows[1]["image"]
    before = target.read_bytes()
    line = _one_line_error(CliRunner().invoke(app, ["show", str(run_dir), rows[0]["id"], "--out", str(target)]))
    assert "inside the images/ folder of the run" in line and target.read_bytes() == before


def test_inject_external_refuses_data_inside_its_out(tmp_path: Path) -> None:
    # Re-running on its own output (`DATA = out/injected.jsonl`) read it, then replaced it with 0 rows.
    data = tmp_path / "gsm.jsonl"
    data.write_text("".join(json.dumps({"id": f"p{i}", "question": "q", "answer": f"2 + {i} = <<2+{i}={2 + i}>>"
                                        f"{2 + i}\n#### {2 + i}"}) + "\n" for i in range(4)), encoding="utf-8")
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["inject-external", str(data), "--out", str(out), "--contract",
                                    "fermat"]).exit_code == 0
    written = out / "injected.jsonl"
    before = written.read_bytes()
    line = _one_line_error(CliRunner().invoke(app, ["inject-external", str(written), "--out", str(out),
                                                    "--contract", "fermat"]))
    assert "is inside --out" in line and written.read_bytes() == before


def test_a_quota_plan_the_families_cannot_meet_is_refused_before_the_run_folder_is_made(tmp_path: Path) -> None:
    # The plan was made by the first shard: exit 2 left config.yaml, images/ and shards/ behind, and the fixed
    # config was then refused as "already holds a run".
    data = tiny_config_data(**{**SMALL, "count": 2})
    data["generate"] = {**data.get("generate", {}), "allocation": "quota",
                        "families": {"arithmetic.order_of_operations": 1.0}}
    data["inject"] = {**data.get("inject", {}), "variants_per_base": 1, "subtypes": {"incorrect_units": 1.0}}
    config = tmp_path / "quota.yaml"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / "run"
    line = _one_line_error(CliRunner().invoke(app, ["generate", str(config), "--out", str(out)]))
    assert "incorrect_units" in line and "fit none of the families" in line
    assert not out.exists()


def test_resume_needs_a_run_not_a_copy_of_its_config_and_overwrite_keeps_a_users_file(tmp_path: Path) -> None:
    # A user's folder holding a copy of a run's config.yaml was resumed into (its images replaced, shards/ deleted);
    # --overwrite deleted a user's scan kept in a run's images/.
    config = _config_file(tmp_path)
    ref = tmp_path / "ref"
    assert CliRunner().invoke(app, ["generate", str(config), "--out", str(ref)]).exit_code == 0
    mine = _user_folder(tmp_path / "proj", {"config.yaml": (ref / "config.yaml").read_text(),
                                            "images/tiny-000003.png": "scan", "shards/notes.md": "n"})
    before = _tree(mine)
    line = _one_line_error(CliRunner().invoke(app, ["generate", str(mine / "config.yaml"), "--out", str(mine),
                                                    "--resume"]))
    assert "not written by mathstress" in line and _tree(mine) == before
    (ref / "images" / ".DS_Store").write_text("a file browser's")  # not the user's work: cleared
    (ref / "images" / "tiny-1000000.png").write_text("a run of a million bases names its images so")
    (ref / "images" / "my_scan.jpg").write_text("mine")
    line = _one_line_error(CliRunner().invoke(app, ["generate", str(config), "--out", str(ref), "--overwrite"]))
    assert "my_scan.jpg, which the run did not write" in line and (ref / "images" / "my_scan.jpg").read_text() == "mine"
    both = CliRunner().invoke(app, ["generate", str(config), "--out", str(ref), "--overwrite", "--resume"])
    assert both.exit_code == 2 and "pass one of them" in both.output


def test_an_unexpanded_tilde_a_control_character_and_a_fifo_are_refused(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # --out '~' made a folder named "~" (an `rm -rf ~` away from the home folder); output.root "runs\0x" crashed
    # with a traceback; a FIFO as the config hung in open() forever.
    monkeypatch.chdir(tmp_path)
    config = _config_file(tmp_path)
    line = _one_line_error(CliRunner().invoke(app, ["generate", str(config), "--out", "~"]))
    assert "not expanded to your home" in line and not (tmp_path / "~").exists()
    data = yaml.safe_load(config.read_text())
    data["output"] = {**data.get("output", {}), "root": "runs\0x"}
    bad = tmp_path / "nul.yaml"
    bad.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["generate", str(bad)])
    assert result.exit_code == 2 and "without control characters" in result.output
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    started = time.monotonic()
    result = CliRunner().invoke(app, ["generate", str(fifo)])
    assert result.exit_code == 2 and time.monotonic() - started < 30
