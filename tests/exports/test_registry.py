"""Export formats come from one registry: a new format is one registered Exporter, ids are unique, and a
failed export publishes nothing."""

from __future__ import annotations

import ast
import errno
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.exports import EXPORTS, Context, Exporter, export, read_summary
from synth.registry import DuplicateIdError
from synth.safepath import STAGING_PREFIX, staging

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted((ROOT / "synth" / "exports").glob("*.py"))
FIRST_PARTY = ("synth", "perturb", "render")


def _toy(fail: list[BaseException] | None = None) -> Exporter:
    """A format writing one text file per item; it raises ``fail[0]`` after the first item when given."""
    def write(ctx: Context) -> None:
        for row in ctx.rows():
            ctx.target(f"toy/{row['id']}.txt").write_text(row["question"]["text"], encoding="utf-8")
            ctx.written += 1
            if fail:
                raise fail[0]
        ctx.details["run_their_code"] = ["cat toy/*.txt"]
    return Exporter(id="toy", title="Toy", help="one text file per item (a test format)", write=write,
                    entries=("toy",))


def _one_line(result, code: int) -> str:  # noqa: ANN001
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output.strip().splitlines()[-1]


def test_help_lists_every_registered_format_and_a_new_one_without_other_edits(tiny_run: Path, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EXPORTS, "toy", _toy())
    shown = CliRunner().invoke(app, ["export", "--help"], env={"COLUMNS": "250"})
    assert shown.exit_code == 0
    for fmt in ("hf", "processbench", "errorradar", "fermat", "mmerror", "mathreal", "seeing", "toy"):
        assert f"{fmt}: " in shown.output, fmt
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--format", "toy", "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    assert "run: cat toy/*.txt" in result.output
    assert len(list((tmp_path / "t" / "toy").iterdir())) == read_summary(tmp_path / "t")["written"] > 0


def test_two_formats_claiming_one_id_are_refused_naming_both() -> None:
    list(EXPORTS)   # the packaged formats are in (as in any process that has read the registry once)
    with pytest.raises(DuplicateIdError, match=r"export format id 'fermat' is registered twice: by "
                                               r"synth\.exports\.fermat\.Exporter\('fermat'\) and by "
                                               r"tests\.exports\.test_registry\.Exporter\('toy'\)"):
        EXPORTS.register(_toy(), id="fermat")


def test_an_unknown_format_is_one_line_naming_the_close_ids(tiny_run: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--format", "fermatt", "--out", str(tmp_path / "x")])
    line = _one_line(result, 2)
    assert line.startswith("error: --format: unknown export format 'fermatt'; did you mean 'fermat'?")
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(("fail", "code", "words"), [
    (OSError(errno.ENOSPC, "No space left on device"), 3, "free some space and re-run the same export command"),
    (OSError(errno.EACCES, "Permission denied"), 2, "nothing was published"),
    (KeyboardInterrupt(), 130, "interrupted: nothing was published")])
def test_a_stopped_export_publishes_nothing_and_keeps_an_earlier_export(tiny_run: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        fail: BaseException, code: int,
                                                                        words: str) -> None:
    failures: list[BaseException] = []
    monkeypatch.setitem(EXPORTS, "toy", _toy(failures))
    export(tiny_run, tmp_path / "t", "toy")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    failures.append(fail)
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--format", "toy", "--out", str(tmp_path / "t")])
    assert words in _one_line(result, code)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before   # no staging folder left


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_format_modules_stay_small_and_import_first_party_code_at_the_top(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 800
    late = [f"line {node.lineno}" for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in ast.walk(fn) if isinstance(node, ast.ImportFrom) and node.module
            and node.module.split(".")[0] in FIRST_PARTY]
    assert late == []


def test_a_staging_folder_a_killed_export_left_is_removed_by_the_next_export_and_a_live_one_is_kept(
        tiny_run: Path, tmp_path: Path) -> None:
    # A process killed while it writes (SIGKILL; pyarrow's abort on a full disk is the same: no finally runs).
    killed = subprocess.run([sys.executable, "-c", (
        "import os, signal, sys\n"
        "from synth.safepath import staging\n"
        "held = staging(sys.argv[1])\n"
        "folder = held.__enter__()\n"
        "(folder / 'part.arrow').write_bytes(b'x' * 4096)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"), str(tmp_path / "t")], cwd=ROOT, check=False)
    assert killed.returncode == -signal.SIGKILL
    left = [p for p in tmp_path.iterdir() if p.name.startswith(STAGING_PREFIX)]
    assert len(left) == 1
    unknown = tmp_path / f"{STAGING_PREFIX}from-an-earlier-version"   # no lock file: not ours to judge
    unknown.mkdir()
    with staging(tmp_path / "other") as live:                     # another export still writing beside it
        result = CliRunner().invoke(app, ["export", str(tiny_run), "--format", "processbench",
                                          "--out", str(tmp_path / "t")], env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.output
        assert not left[0].exists() and live.is_dir() and unknown.is_dir()
    assert "note 1: staging folders that killed exports left beside the destination, removed" in result.output
    assert read_summary(tmp_path / "t")["stale_staging_removed"] == [{"folder": left[0].name, "bytes": 4096}]
    assert not live.exists()


def test_an_export_the_disk_cannot_hold_is_refused_before_anything_is_written(
        tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    images = sum(p.stat().st_size for p in (tiny_run / "images").rglob("*") if p.is_file())
    assert images > 0
    monkeypatch.setattr(shutil, "disk_usage", lambda _: SimpleNamespace(total=10**12, used=0, free=2 * images))
    old = tmp_path / f"{STAGING_PREFIX}k2j4x9"   # an earlier version's, killed: no lock file to judge it by
    old.mkdir()
    (old / "data.arrow").write_bytes(b"x" * 3_000_000)
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--format", "hf", "--out", str(tmp_path / "h")],
                                env={"COLUMNS": "400"})
    line = _one_line(result, 3)
    assert line.startswith(f"error: export to {tmp_path / 'h'} needs at least")
    assert "the run's image files twice" in line and "choose an --out on another disk" in line
    assert f"beside it {old.name} (3 MB) look left by an export of an earlier version" in line
    assert list(tmp_path.iterdir()) == [old]   # neither the export nor a staging folder of its own; the old one kept
    # The formats that store no image copies are not held back by it.
    assert CliRunner().invoke(app, ["export", str(tiny_run), "--format", "processbench",
                                    "--out", str(tmp_path / "p")]).exit_code == 0


def test_an_export_into_folders_not_made_yet_checks_the_disk_they_will_be_on(tiny_run: Path, tmp_path: Path) -> None:
    dest = tmp_path / "new" / "deeper" / "h"
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--format", "hf", "--out", str(dest)])
    assert result.exit_code == 0, result.output
    assert read_summary(dest)["written"] > 0
