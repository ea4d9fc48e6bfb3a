"""Runs on disk: resume verifies checksums, one process per run folder, workers die with the run, stops resume."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from synth import rundir
from synth.cli import app
from synth.config import validate_config
from synth.errors import LockedError, ResumableError, RunError
from synth.pipeline import prepare_run, run, run_shard
from synth.rundir import LOCK_NAME, STATE_NAME, RunDir, ShardRecord, read_lock
from tests.conftest import folder_hashes, tiny_config, tiny_config_data

HAS_PROC = Path("/proc/self/stat").exists()


@pytest.fixture(scope="module")
def unfinished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tiny_config()'s run stopped after shards 0 and 1 of 3 were committed (no manifest yet)."""
    out = tmp_path_factory.mktemp("unfinished") / "run"
    cfg = tiny_config()
    with RunDir(out).locked():
        prepare_run(cfg, out, resume=False)
        for shard in (0, 1):
            run_shard(cfg.model_dump(mode="json"), str(out), shard)
    return out


def _copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "run"
    shutil.copytree(src, dest)
    return dest


def _image_of(run_dir: Path, shard: int) -> str:
    record = RunDir(run_dir).record(shard)
    assert isinstance(record, ShardRecord)
    return sorted(record.images)[0]


# ------------------------------------------------------------------------- resume verifies


def test_committed_shards_record_the_sha256_of_their_rows_and_images(unfinished: Path) -> None:
    folder = RunDir(unfinished)
    for shard in (0, 1):
        record = folder.check(shard)
        assert isinstance(record, ShardRecord), record
        assert record.images and all(len(d) == 64 for d in record.images.values())
    assert folder.check(2) is None  # never committed: simply still to do


@pytest.mark.parametrize("damage, why", [
    ("cut_rows", "shards/00001.jsonl does not match its checksum"),
    ("cut_record", "its record is unreadable"),
    ("edit_record", "its record does not match its own checksum"),
    ("corrupt_image", "does not match its checksum (damaged or replaced)"),
    ("delete_image", "is missing"),
])
def test_resume_redoes_a_damaged_shard_and_says_why(unfinished: Path, tiny_run: Path, tmp_path: Path,
                                                     damage: str, why: str) -> None:
    out = _copy(unfinished, tmp_path)
    rows, record = out / "shards" / "00001.jsonl", out / "shards" / "00001.stats.json"
    image = out / "images" / _image_of(out, 1)
    if damage == "cut_rows":
        rows.write_bytes(rows.read_bytes()[:-200])
    elif damage == "cut_record":
        record.write_bytes(record.read_bytes()[:100])
    elif damage == "edit_record":
        edited = json.loads(record.read_text())
        edited["rows"]["bytes"] += 1  # valid JSON, wrong content: only the seal can tell
        record.write_text(json.dumps(edited))
    elif damage == "corrupt_image":
        image.write_bytes(image.read_bytes()[:-10] + b"0123456789")
    else:
        image.unlink()
    result = run(tiny_config(), out, resume=True)
    assert list(result.redone) == [1] and why in result.redone[1]
    assert result.resumed_shards == 1  # shard 0 verified and kept
    assert folder_hashes(out) == folder_hashes(tiny_run)


def test_resume_of_a_finished_run_that_verifies_changes_nothing(tiny_run: Path, tmp_path: Path) -> None:
    out = _copy(tiny_run, tmp_path)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    result = run(tiny_config(), out, resume=True)
    assert result.redone == {} and result.notes == () and result.resumed_shards == result.shards
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_a_cut_manifest_is_rebuilt_from_the_shards_that_verify(tiny_run: Path, tmp_path: Path) -> None:
    out = _copy(tiny_run, tmp_path)
    manifest = out / "manifest.jsonl"
    lines = manifest.read_bytes().splitlines(keepends=True)
    manifest.write_bytes(b"".join(lines[:len(lines) // 2]) + lines[len(lines) // 2][:50])  # cut inside a row
    result = run(tiny_config(), out, resume=True)
    assert 0 not in result.redone and result.redone  # the first shard's rows were whole: kept, not redone
    assert any("manifest.jsonl did not match its checksum" in note for note in result.notes)
    assert result.items == len(lines)
    assert folder_hashes(out) == folder_hashes(tiny_run)


def test_a_damaged_image_of_a_finished_run_is_made_again(tiny_run: Path, tmp_path: Path) -> None:
    out = _copy(tiny_run, tmp_path)
    state = [json.loads(line) for line in (out / STATE_NAME).read_text().splitlines()]
    name = sorted(state[2]["images"])[0]
    (out / "images" / name).write_bytes(b"not a png")
    result = run(tiny_config(), out, resume=True)
    assert list(result.redone) == [2] and f"images/{name}" in result.redone[2]
    assert folder_hashes(out) == folder_hashes(tiny_run)


def test_a_finished_run_without_its_checksums_is_redone_whole(tiny_run: Path, tmp_path: Path) -> None:
    out = _copy(tiny_run, tmp_path)
    (out / STATE_NAME).unlink()
    (out / "manifest.jsonl").write_text("{}\n")  # nothing vouches for this: it must not survive
    result = run(tiny_config(), out, resume=True)
    assert sorted(result.redone) == [0, 1, 2] and f"no {STATE_NAME}" in result.redone[0]
    assert folder_hashes(out) == folder_hashes(tiny_run)


# ------------------------------------------------------------------------- lock


def test_a_second_run_on_a_locked_folder_is_refused_at_once_naming_the_holder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with RunDir(out).locked():
        holder = read_lock(out)
        assert holder is not None and holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        assert holder["started"]
        t0 = time.monotonic()
        with pytest.raises(LockedError, match=f"pid {os.getpid()} on {socket.gethostname()}, started") as err:
            run(tiny_config(), out)
        assert time.monotonic() - t0 < 5
        assert err.value.exit_code == 2
        assert not (out / "manifest.jsonl").exists() and not (out / "images").exists()  # it wrote nothing
    assert not (out / LOCK_NAME).exists()  # released with the run


def test_generate_on_a_locked_folder_exits_2_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config_data(), sort_keys=False))
    with RunDir(out).locked():
        result = CliRunner().invoke(app, ["generate", str(cfg), "--out", str(out), "--resume"])
    assert result.exit_code == 2, result.output
    assert "in use by another mathstress process" in result.output and f"pid {os.getpid()}" in result.output
    assert "Traceback" not in result.output


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom synth.rundir import RunDir\n"
         f"with RunDir({str(out)!r}).locked():\n    print('locked', flush=True)\n    time.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(LockedError, match=f"pid {holder.pid} "):
            run(tiny_config(), out)
    finally:
        holder.kill()
        holder.wait()
    with RunDir(out).locked():  # SIGKILL ran no cleanup, yet the kernel dropped the lock
        assert read_lock(out)["pid"] == os.getpid()  # type: ignore[index]


# ------------------------------------------------------------------------- stops are resumable


def test_disk_full_exits_3_with_one_line_and_keeps_what_was_committed(tiny_run: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config_data(), sort_keys=False))
    out = tmp_path / "run"
    real = rundir.write_file

    def full_at_shard_1(path: Path, data: bytes) -> None:
        if path.parent.name == ".tmp-00001" or path.name.startswith(".00001."):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data)

    monkeypatch.setattr(rundir, "write_file", full_at_shard_1)
    result = CliRunner().invoke(app, ["generate", str(cfg), "--out", str(out)])
    assert result.exit_code == 3, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "the disk is full" in lines[0] and "re-run with --resume to continue" in lines[0]
    assert "Traceback" not in result.output
    assert isinstance(RunDir(out).check(0), ShardRecord)  # committed before the disk filled: kept
    assert not (out / "manifest.jsonl").exists()
    monkeypatch.setattr(rundir, "write_file", real)
    resumed = run(tiny_config(), out, resume=True)
    assert resumed.resumed_shards == 1 and resumed.redone == {}
    assert folder_hashes(out) == folder_hashes(tiny_run)


def _children(pid: int) -> list[int]:
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        for kid in _children(todo.pop()):
            if kid not in found:
                found.add(kid)
                todo.append(kid)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's reaping is left


@pytest.mark.skipif(not HAS_PROC, reason="finds pool workers through /proc (Linux)")
def test_a_killed_pool_worker_stops_the_run_with_a_resumable_error(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    killed: list[int] = []

    def kill_a_worker(done: int, total: int) -> None:
        if done and not killed:  # after the first committed shard, while the others are being made
            workers = [w for child in _children(os.getpid()) for w in _children(child)]  # forkserver's children
            assert workers, "no pool worker found"
            os.kill(workers[0], signal.SIGKILL)
            killed.append(workers[0])

    with pytest.raises(ResumableError, match="a worker process died.*re-run with --resume to continue") as err:
        run(tiny_config(), out, workers=2, progress=kill_a_worker)
    assert err.value.exit_code == 3 and killed
    assert not (out / "manifest.jsonl").exists()
    run(tiny_config(), out, resume=True)
    assert folder_hashes(out) == folder_hashes(tiny_run)


@pytest.mark.skipif(not HAS_PROC, reason="follows the process tree through /proc (Linux)")
def test_sigkill_of_a_run_with_workers_leaves_no_process_and_resumes_to_the_same_bytes(tiny_run: Path,
                                                                                      tmp_path: Path) -> None:
    data = tiny_config_data()
    data["output"] = {"shard_size": 1}  # six shards; items do not depend on shard size: tiny_run is the reference
    cfg_path = tmp_path / "cfg.yaml"
    cfg_path.write_text(yaml.safe_dump(data, sort_keys=False))
    target = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "synth", "generate", str(cfg_path), "--out", str(target),
                             "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    tree: set[int] = set()
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            tree |= _descendants(proc.pid)
            workers |= {w for child in _children(proc.pid) for w in _children(child)}  # the forkserver's children
            if len(workers) >= 2 and list(target.glob("shards/*.stats.json")):  # both workers up, a shard done
                break
            time.sleep(0.05)
        tree |= _descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)  # the run alone: its workers are not signalled
        proc.wait()
        assert len(workers) >= 2, f"expected two pool workers under the forkserver, saw {sorted(tree)}"
        assert not (target / "manifest.jsonl").exists(), "the run finished before it could be killed"
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in tree) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in tree if _alive(p)], "processes of the killed run are still running"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    resumed = run(validate_config(data), target, resume=True)  # the lock died with the run
    assert resumed.redone == {}
    assert folder_hashes(target) == folder_hashes(tiny_run)
    assert not list((target / "images").glob(".tmp-*"))


def test_resuming_a_run_another_version_made_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A resume after an upgrade wrote rows of two versions into one manifest (0.1.0 x 112, 0.2.0 x 208).
    import synth.pipeline

    data = tiny_config_data(count=4, degrade={"ops": []})
    data["output"] = {"shard_size": 1}
    config = validate_config(data)
    out = tmp_path / "run"
    run(config, out)
    first = sorted((out / "images").iterdir())[0]
    first.unlink()  # one shard no longer verifies: a resume makes it again
    monkeypatch.setattr(synth.pipeline, "versions", lambda: {"mathstress": "9.9.9"})
    with pytest.raises(RunError, match=r"other versions \(mathstress 0\.1\.0 -> 9\.9\.9"):
        run(config, out, resume=True)


def test_a_run_folder_deleted_while_the_run_goes_is_not_made_again_by_a_worker(tmp_path: Path) -> None:
    # rm -rf of the run 8 s in: a worker's staging made images/ again at the old name, with 32 stray PNGs in it.
    folder = RunDir(tmp_path / "run")
    folder.path.mkdir()
    folder.staging(0, fresh=True)
    shutil.rmtree(folder.path)
    with pytest.raises(RunError, match="is gone"):
        folder.staging(1, fresh=True)
    assert not folder.path.exists()
