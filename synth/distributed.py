"""The Dask executor: shards become tasks, produced on workers and committed by the client.

Workers return a shard's rows and encoded images (``produce_shard`` is pure); only the client
writes to the run folder, through the same ``commit_shard`` the local pool uses, so the output
is byte-identical to a local run and the run folder need not be on storage the workers share.
A worker that dies mid-task is handled by Dask's scheduler, which reruns the task elsewhere
(up to ``distributed.scheduler.allowed-failures`` times); a shard is committed once, when its
result arrives, so no item is lost or written twice. When workers keep dying on a shard, the run
stops with a ResumableError and the shards committed so far are kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from synth.errors import ResumableError, RunError
from synth.rundir import RESUME_HINT
from synth.seeding import stable_hash

CONNECT_TIMEOUT = "20s"  # how long to wait for a remote scheduler before giving up
DASK_HINT = 'the dask executor needs the dask extra: pip install "mathstress[dask]"'


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise RunError(DASK_HINT) from None
    return distributed


def run_on_dask(config_data: dict[str, Any], run_dir: Path, shards: Iterable[int], *, scheduler: str | None,
                workers: int, on_shard: Callable[[int], None]) -> None:
    """Produce ``shards`` on a Dask cluster and commit each as it arrives.

    With ``scheduler`` (``tcp://host:port``) the run joins an existing cluster; without one it
    starts a local cluster of ``workers`` single-threaded processes on 127.0.0.1. ``on_shard``
    is called with each committed shard's item count (for the progress bar).
    """
    from synth.pipeline import commit_shard, produce_shard

    distributed = _import_distributed()
    todo = list(shards)
    if not todo:
        return
    with ExitStack() as stack:
        if scheduler:
            try:
                client = stack.enter_context(distributed.Client(scheduler, timeout=CONNECT_TIMEOUT))
            except (OSError, TimeoutError) as exc:
                raise RunError(f"could not reach the Dask scheduler at {scheduler}: {exc}; start one with "
                               "`dask scheduler` and workers with `dask worker ADDRESS`, or drop --scheduler "
                               "to use a local cluster") from None
            slots = max(1, sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()))
        else:
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=max(1, workers), threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None, silence_logs=40))
            client = stack.enter_context(distributed.Client(cluster))
            slots = max(1, workers)
        run_key = stable_hash(json.dumps(config_data, sort_keys=True) + str(run_dir))
        queue = list(todo)
        pending = distributed.as_completed()

        def submit_next() -> None:
            shard = queue.pop(0)
            pending.add(client.submit(produce_shard, config_data, shard, key=f"mathstress-{run_key}-{shard}",
                                      retries=2))

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
            on_shard(commit_shard(run_dir, output))
            if queue:
                submit_next()
