"""The Dask executor: shards become tasks, produced on workers and committed by the client.

Workers return a shard's rows and encoded images (the job's ``produce`` is pure); only the client
writes to the run folder, through the same ``RunDir.commit`` the local executors use, so the output
is byte-identical to a local run and the run folder need not be on storage the workers share.
A worker that dies mid-task is handled by Dask's scheduler, which reruns the task elsewhere
(up to ``distributed.scheduler.allowed-failures`` times); a shard is committed once, when its
result arrives, so no item is lost or written twice. When workers keep dying on a shard, the run
stops with a ResumableError and the shards committed so far are kept.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from synth.errors import ConfigError, ResumableError, RunError
from synth.executors import OnShard, ShardJob
from synth.rundir import RESUME_HINT, RunDir
from synth.seeding import stable_hash

CONNECT_TIMEOUT = "20s"  # how long to wait for a remote scheduler before giving up
DASK_HINT = 'the dask executor needs the dask extra: pip install "mathstress[dask]"'


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise RunError(DASK_HINT) from None
    return distributed


@dataclass(frozen=True)
class Dask:
    """Shards as tasks on the cluster at ``scheduler`` (``tcp://host:port``), or on a local cluster of
    ``workers`` single-threaded processes on 127.0.0.1 when there is none; each shard is committed here
    as it arrives."""

    scheduler: str | None
    workers: int

    def __post_init__(self) -> None:
        _import_distributed()  # a missing extra is refused here, before the run folder is touched
        if self.scheduler:  # so is a scheduler address that is malformed or that nothing answers at
            _check_scheduler(self.scheduler)

    def run(self, job: ShardJob, shards: Sequence[int], on_shard: OnShard) -> None:
        if shards:
            _run(job, list(shards), self.scheduler, self.workers, on_shard)


def _unreachable(scheduler: str, why: object) -> RunError:
    return RunError(f"could not reach the Dask scheduler at {scheduler}: {why}; start one with `dask scheduler` and "
                    "workers with `dask worker ADDRESS`, or drop --scheduler to use a local cluster")


def _check_scheduler(scheduler: str) -> None:
    """Refuse ``--scheduler`` before the run folder is touched: a malformed address (ConfigError), or a TCP one
    where nothing accepts a connection within the connect timeout (RunError)."""
    addressing = _import_distributed().comm.addressing
    try:
        scheme, location = addressing.parse_address(scheduler)  # no scheme is tcp, as Dask's Client reads it
        host, port = addressing.parse_host_port(location) if scheme in ("tcp", "tls") else (None, None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"--scheduler {scheduler!r} is not a scheduler address ({exc}); give tcp://HOST:PORT, as "
                          "`dask scheduler` prints it") from None
    if host is not None:
        try:
            socket.create_connection((host, int(port)), timeout=float(CONNECT_TIMEOUT.rstrip("s"))).close()
        except OSError as exc:
            raise _unreachable(scheduler, exc) from None


def _run(job: ShardJob, todo: list[int], scheduler: str | None, workers: int, on_shard: OnShard) -> None:
    distributed = _import_distributed()
    with ExitStack() as stack:
        if scheduler:
            try:
                client = stack.enter_context(distributed.Client(scheduler, timeout=CONNECT_TIMEOUT))
            except (OSError, TimeoutError) as exc:
                raise _unreachable(scheduler, exc) from None
            slots = max(1, sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()))
        else:
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=max(1, workers), threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None, silence_logs=40))
            client = stack.enter_context(distributed.Client(cluster))
            slots = max(1, workers)
        run_key = stable_hash(json.dumps(job.config_data, sort_keys=True) + str(job.run_dir))
        folder = RunDir(job.run_dir)
        queue = list(todo)
        pending = distributed.as_completed()

        def submit_next() -> None:
            shard = queue.pop(0)
            pending.add(client.submit(job.produce, job.config_data, shard, None,
                                      key=f"mathstress-{run_key}-{shard}", retries=2))

        # Bounded in flight: memory stays flat however many shards the run has.
        while queue and pending.count() < 2 * slots:
            submit_next()
        for future in pending:
            try:
                output = future.result()
            except distributed.KilledWorker as exc:
                raise ResumableError(f"Dask workers kept dying while making a shard ({exc}); the shards committed "
                                     f"so far are kept; {RESUME_HINT}") from exc
            future.release()
            on_shard(folder.commit(output).lines)
            if queue:
                submit_next()
