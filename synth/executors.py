"""Executors: where a run's shards are made. In this process, on a process pool, or on Dask (``synth.distributed``).

Every executor runs one ``ShardJob``: ``produce(config_data, shard, stage)`` makes a shard's rows
and image bytes (pure: the same config and shard give the same bytes in any process), and
``RunDir.commit`` writes them into the run folder. Executors differ only in where ``produce``
runs and who commits, so all of them give byte-identical runs. ``on_shard(rows)`` is called in
this process after each commit, for progress.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from synth.lifeline import pool_worker_init
from synth.rundir import RunDir, ShardOutput

Produce = Callable[[dict[str, Any], int, Path | None], ShardOutput]
OnShard = Callable[[int], None]


@dataclass(frozen=True)
class ShardJob:
    """What an executor runs for each shard: ``produce``, a module-level function (workers import it by name)."""

    produce: Produce
    config_data: dict[str, Any]
    run_dir: Path


class Executor(Protocol):
    def run(self, job: ShardJob, shards: Sequence[int], on_shard: OnShard) -> None:
        """Produce and commit each of ``shards``, calling ``on_shard`` with its row count once it is committed."""


def produce_and_commit(job: ShardJob, shard: int) -> int:
    """Make ``shard`` here, streaming its images into its staging folder, and commit it; returns its row count.

    Committing the same shard twice (a retried task) rewrites identical bytes, so nothing is lost
    or duplicated. A shard that stops before its commit (a refusal such as a page too small, Ctrl-C)
    takes its staging folder with it: the run folder holds committed shards only, and a re-run never
    meets half-staged images (a worker killed outright leaves one, which a resumed run replaces and
    the finish removes).
    """
    folder = RunDir(job.run_dir)
    stage = folder.staging(shard, fresh=True)
    try:
        output = job.produce(job.config_data, shard, stage)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return folder.commit(output).lines


class InProcess:
    """Shards one after another in this process (one worker, and tests)."""

    def run(self, job: ShardJob, shards: Sequence[int], on_shard: OnShard) -> None:
        for shard in shards:
            on_shard(produce_and_commit(job, shard))


@dataclass(frozen=True)
class ProcessPool:
    """Shards on a forkserver process pool whose workers die with the run (``synth.lifeline``).

    A worker that dies (killed, out of memory) breaks the pool: ``run`` raises BrokenProcessPool
    and the shards committed until then stay committed.
    """

    workers: int

    def run(self, job: ShardJob, shards: Sequence[int], on_shard: OnShard) -> None:
        if not shards:
            return
        ctx = multiprocessing.get_context("forkserver")
        # Workers fork from a server that has the shard code imported already: each starts in milliseconds.
        ctx.set_forkserver_preload([job.produce.__module__, "synth.lifeline_forkserver"])
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=pool_worker_init,
                                 initargs=(os.getpid(),)) as pool:
            pending: set[Future[int]] = set()
            queue = list(shards)
            try:
                while queue or pending:
                    while queue and len(pending) < 2 * self.workers:  # bounded in flight: memory stays flat
                        pending.add(pool.submit(produce_and_commit, job, queue.pop(0)))
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        on_shard(fut.result())
            except BaseException:
                for fut in pending:
                    fut.cancel()
                raise
