"""The generation pipeline: plan -> generate -> inject -> verify -> render -> degrade -> write, over a run folder.

This module orchestrates: it opens (or resumes) the run folder, hands the shards still to do to an
executor (``synth.executors``: in this process, a process pool, or Dask), and joins the committed
shards into the manifest. The stages themselves are ``synth.stages``; every item is a function of
(run seed, base index) alone, so shards can run in any process, in any order, and resume after a
crash without changing a byte of the output.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.allocation import plan_notes
from synth.config import RunConfig
from synth.distributed import Dask
from synth.errors import ConfigError, ResumableError
from synth.executors import Executor, InProcess, ProcessPool, ShardJob, produce_and_commit
from synth.paraphrase import api_key
from synth.rundir import RESUME_HINT, ResumePlan, RunDir, check_same_versions, open_run
from synth.safepath import check_not_in_run_internals
from synth.stages import STAGES, produce_shard, shard_ranges, versions


def run_shard(config_data: dict[str, Any], run_dir: str | Path, shard: int) -> dict[str, Any]:
    """Produce one shard here, streaming its images to a staging folder, and commit it (what every worker does)."""
    return {"shard": shard, "items": produce_and_commit(ShardJob(produce_shard, config_data, Path(run_dir)), shard)}


def items_per_base(config: RunConfig) -> int:
    """Upper bound on rows per base problem (for progress totals; failed injections lower it)."""
    return (1 + config.inject.variants_per_base + sum(len(op.severities) for op in config.degrade.ops)
            + len(config.degrade.profiles))


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    items: int
    shards: int
    resumed_shards: int  # committed shards kept from an earlier attempt (verified against their checksums)
    seconds: float
    redone: dict[int, str] = field(default_factory=dict)  # shards that failed verification and were redone: why
    notes: tuple[str, ...] = ()  # what resuming repaired besides shards (a rebuilt manifest), for the user
    plan: tuple[str, ...] = ()  # what the quota plan could not do as asked (stats.json's allocation_notes)


ProgressFn = Callable[[int, int], None]  # (items done now, items expected in total)


def check_output_dir(run_dir: Path) -> None:
    check_not_in_run_internals(run_dir)  # another run's images/ or shards/: its --overwrite would delete this run
    parent = run_dir
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"output path {str(parent)!r} is a file; choose a folder with --out")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"output folder {str(parent)!r} is not writable; choose another with --out")


def prepare_run(config: RunConfig, run_dir: Path, *, resume: bool, overwrite: bool = False) -> ResumePlan:
    """Create or reopen the run folder; return the shards still to do. Writes nothing on error.

    The caller holds the folder's lock (``RunDir.locked``). Resuming trusts only what verifies:
    shards whose record, rows or images do not match their checksums are redone (the plan says
    which and why), and a finished run whose manifest or images do not match is reopened.
    """
    check_output_dir(run_dir)
    resolved = config.to_yaml()
    n_shards = len(shard_ranges(config.bases, config.output.shard_size))
    return open_run(run_dir, resolved, resume=resume, overwrite=overwrite, n_shards=n_shards,
                    differs="was started with a different config; --resume needs the same config (and --limit); "
                    "use --overwrite or another --out")


def finish_run(config: RunConfig, run_dir: Path, wall: float, resumed: int) -> int:
    """Join the shards into manifest.jsonl (the completion marker), write stats.json and checksums.jsonl."""
    n_shards = len(shard_ranges(config.bases, config.output.shard_size))
    folder = RunDir(run_dir)
    total: dict[str, Any] = {"items": Counter(), "families": Counter(), "subtypes": Counter(),
                             "subtype_pages": Counter(), "degradations": Counter(), "generate_rejected": Counter()}
    funnel: dict[str, dict[str, Any]] = {}
    seconds: Counter[str] = Counter()
    count = 0
    for record in folder.records(n_shards):
        part = record.stats
        count += record.lines
        for key in total:
            total[key].update(part.get(key, {}))  # subtype_pages: not in a shard of an earlier version
        seconds.update(part.get("seconds", {}))  # a shard put back from a finished run's checksums has none
        for inj, f in part["inject"].items():
            agg = funnel.setdefault(inj, {"attempted": 0, "kept": 0, "rejected": Counter()})
            agg["attempted"] += f["attempted"]
            agg["kept"] += f["kept"]
            agg["rejected"].update(f["rejected"])
    stats = {
        "name": config.name, "items": count, "base_problems": config.bases, "shards": n_shards,
        "resumed_shards": resumed,
        "counts": {k: dict(sorted(v.items())) for k, v in total.items() if k != "generate_rejected"},
        # Attempts redrawn because they read exactly like another variant of their base (funnel reason "duplicate").
        "duplicates_rejected": sum(f["rejected"].get("duplicate", 0) for f in funnel.values()),
        # What the quota plan could not do as asked (e.g. the control share not equal in every cell), or [].
        "allocation_notes": list(plan_notes(config)),
        "rejections": {"generate": dict(sorted(total["generate_rejected"].items())),
                       "inject": {k: {**v, "rejected": dict(sorted(v["rejected"].items()))}
                                  for k, v in sorted(funnel.items())}},
        "seconds_per_stage": {k: round(seconds[k], 3) for k in STAGES},
        "wall_seconds": round(wall, 3),
        "versions": versions(),
    }
    folder.write_json("stats.json", stats)
    return folder.publish(n_shards)


EXECUTORS = ("local", "dask")


def executor_for(name: str, *, workers: int, scheduler: str | None) -> Executor:
    """The executor ``--executor`` names: local is this process for one worker, else a pool of ``workers``."""
    if name not in EXECUTORS:
        raise ConfigError(f"--executor must be one of {', '.join(EXECUTORS)}, not {name!r}")
    if scheduler and name != "dask":
        raise ConfigError("--scheduler needs --executor dask")
    if name == "dask":
        return Dask(scheduler=scheduler, workers=workers)
    return InProcess() if workers <= 1 else ProcessPool(workers)


def run(config: RunConfig, run_dir: str | Path, *, workers: int = 1, resume: bool = False,
        overwrite: bool = False, progress: ProgressFn | None = None, executor: str = "local",
        scheduler: str | None = None) -> RunResult:
    """Generate a run folder. Interrupting it leaves finished shards; ``resume=True`` continues.

    ``executor="dask"`` runs shards as Dask tasks (a local cluster of ``workers`` processes, or
    the cluster at ``scheduler``); the output is byte-identical to the local executor's. The run
    holds the folder's lock throughout (a second run on it gets a LockedError). A stop part-way
    (disk full, a killed worker) raises a ResumableError; the shards committed until then are kept.
    """
    runner = executor_for(executor, workers=workers, scheduler=scheduler)
    t0 = time.perf_counter()
    run_dir = Path(run_dir)
    n_shards = len(shard_ranges(config.bases, config.output.shard_size))
    if config.generate.paraphrase is not None:
        api_key(config.generate.paraphrase)  # a missing key stops the run before its folder exists
    check_output_dir(run_dir)
    plan_notes(config)  # a quota plan the families cannot meet is refused before the run folder is made
    with RunDir(run_dir).locked():
        plan = prepare_run(config, run_dir, resume=resume, overwrite=overwrite)
        check_same_versions(run_dir, plan, n_shards, versions())
        todo = list(plan.todo)
        per_base = items_per_base(config)
        ranges = shard_ranges(config.bases, config.output.shard_size)
        expected = config.bases * per_base
        pending = set(todo)  # a list's `in` made the start quadratic in the shards (100k shards: 79 s)
        done = sum(len(r) for s, r in enumerate(ranges) if s not in pending) * per_base
        left = sum(len(r) for s, r in enumerate(ranges) if s in pending)  # bases still to make
        committed = n_shards - len(todo)
        if progress:
            progress(done, expected)

        def shard_done(n: int) -> None:
            # ``per_base`` is an estimate (photos an op cannot take are skipped): the total shown is what is done
            # plus the estimate for the bases left, exact once the last shard is in.
            nonlocal done, committed, left
            done += n
            committed += 1
            left = max(left - config.output.shard_size, 0) if committed < n_shards else 0
            if progress:
                progress(done, done + left * per_base)

        job = ShardJob(produce_shard, config.model_dump(mode="json"), run_dir)
        try:
            runner.run(job, todo, shard_done)
        except BrokenProcessPool as exc:
            raise ResumableError(f"a worker process died (killed, or out of memory) before its shard was "
                                 f"committed; {committed} of {n_shards} shards are committed and kept in "
                                 f"{run_dir}; {RESUME_HINT}") from exc
        except MemoryError as exc:
            raise ResumableError(f"out of memory; {committed} of {n_shards} shards are committed and kept in "
                                 f"{run_dir}; use fewer --workers or a smaller output.shard_size, then "
                                 f"{RESUME_HINT}") from exc
        if not (run_dir / "manifest.jsonl").exists():
            finish_run(config, run_dir, time.perf_counter() - t0, n_shards - len(todo))
        total = sum(1 for _ in (run_dir / "manifest.jsonl").open(encoding="utf-8"))
    return RunResult(run_dir, total, n_shards, n_shards - len(todo), time.perf_counter() - t0,
                     redone=plan.redone, notes=plan.notes, plan=plan_notes(config))
