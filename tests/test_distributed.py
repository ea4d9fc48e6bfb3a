"""The Dask executor: same bytes as the local pool, and a worker killed mid-run loses nothing."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synth.config import load_config
from synth.errors import ConfigError
from synth.pipeline import run

pytest.importorskip("distributed")

BIN = Path(sys.executable).parent


def _digest(run_dir: Path) -> dict[str, str]:
    return {str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run_dir.rglob("*")) if p.is_file() and p.name != "stats.json"}


def _config(count: int = 6):
    cfg = load_config("quickstart")
    return cfg.model_copy(update={"count": count, "output": cfg.output.model_copy(update={"shard_size": 1})})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_workers(address: str, n: int, timeout: float = 60.0) -> None:
    from distributed import Client

    with Client(address, timeout="20s") as client:
        client.wait_for_workers(n, timeout=timeout)


def test_scheduler_without_dask_executor_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--scheduler needs --executor dask"):
        run(_config(), tmp_path / "r", scheduler="tcp://127.0.0.1:1")


def test_unreachable_scheduler_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from synth import distributed as executor
    from synth.errors import RunError

    monkeypatch.setattr(executor, "CONNECT_TIMEOUT", "2s")
    with pytest.raises(RunError, match="could not reach the Dask scheduler"):
        run(_config(1), tmp_path / "r", executor="dask", scheduler=f"tcp://127.0.0.1:{_free_port()}")
    assert not (tmp_path / "r").exists()  # refused before the run folder is made (it was left half-made)


@pytest.mark.parametrize("address", ["notaurl", "tcp://127.0.0.1", "tcp://host:port"])
def test_a_malformed_scheduler_address_is_a_config_error_before_the_run_folder(tmp_path: Path, address: str) -> None:
    # Before: a ValueError traceback from inside Dask, and a run folder that the next plain run called "a run".
    with pytest.raises(ConfigError, match="is not a scheduler address"):
        run(_config(1), tmp_path / "r", executor="dask", scheduler=address)
    assert not (tmp_path / "r").exists()


def test_scheduler_and_two_workers_on_localhost_survive_a_killed_worker(tmp_path: Path) -> None:
    """A real `dask scheduler` and two `dask worker` processes; one is SIGKILLed after the first shard."""
    cfg = _config(6)
    local = run(cfg, tmp_path / "local")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)]
    try:
        for _ in range(2):
            procs.append(subprocess.Popen(
                [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                 "--host", "127.0.0.1"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True))
        deadline = time.monotonic() + 60
        while True:
            try:
                _wait_for_workers(address, 2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        killed: list[int] = []

        def progress(done: int, total: int) -> None:
            if done and not killed:  # after the first committed shard
                os.kill(procs[1].pid, signal.SIGKILL)
                killed.append(procs[1].pid)

        result = run(cfg, tmp_path / "dask", executor="dask", scheduler=address, progress=progress)
        assert killed, "the test never killed a worker"
        assert result.items == local.items
        assert _digest(tmp_path / "dask") == _digest(tmp_path / "local")
        ids = [json.loads(line)["id"] for line in (tmp_path / "dask" / "manifest.jsonl").read_text().splitlines()]
        assert len(ids) == len(set(ids))
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def test_a_scheduler_address_without_a_scheme_is_tcp_as_dask_reads_it() -> None:
    from synth.distributed import _check_scheduler
    from synth.errors import RunError

    with pytest.raises(RunError, match="could not reach the Dask scheduler"):  # parsed, then nothing answers
        _check_scheduler(f"127.0.0.1:{_free_port()}")
