"""Specification of synth._bounded: calls in a worker process that is killed when their time is up."""

import math
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from synth import _bounded
from tests import _slow_import
from tests._procs import running


def stops_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not running(pid)


def live_worker() -> int:
    assert _bounded.call(abs, -3, cpu_s=5) == 3
    pid = _bounded.worker_pid()
    assert pid is not None
    return pid


def test_a_worker_that_waits_without_using_cpu_is_killed_at_the_wall_backstop():
    worker = live_worker()
    start = time.monotonic()
    assert _bounded.call(time.sleep, 60, cpu_s=0.2) is None  # backstop: 2 x 0.2 + 0.5 s
    assert time.monotonic() - start < 5.0
    assert not running(worker)


def test_errors_and_calls_that_cannot_travel_are_undecided_and_keep_the_worker():
    worker = live_worker()
    assert _bounded.call(math.sqrt, -1, cpu_s=5) is None  # raises ValueError in the worker
    assert _bounded.call(lambda: 1, cpu_s=5) is None  # a lambda does not pickle
    assert _bounded.call(abs, -4, cpu_s=0) is None  # no budget: not even started
    assert _bounded.worker_pid() == worker


def test_ctrl_c_while_waiting_kills_the_worker_and_the_next_call_starts_a_fresh_one():
    worker = live_worker()

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            _bounded.call(time.sleep, 60, cpu_s=30)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not running(worker)
    assert _bounded.call(abs, -5, cpu_s=5) == 5
    assert _bounded.worker_pid() != worker


def test_threads_sharing_the_worker_each_get_their_own_answer():
    live_worker()
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(lambda i: _bounded.call(abs, -i, cpu_s=5), range(60)))
    assert answers == list(range(60))


def test_a_forked_child_starts_its_own_worker_and_leaves_the_parents_alone():
    parent_worker = live_worker()
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (runs in the child)
        try:
            os.close(read_end)
            answer = _bounded.call(abs, -7, cpu_s=5)
            os.write(write_end, f"{answer} {_bounded.worker_pid()}".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        answer, child_worker = pipe.read().split()
    os.waitpid(child, 0)
    assert answer == "7"
    assert int(child_worker) != parent_worker
    assert stops_within(int(child_worker), 5.0)  # the child's worker goes with the child (its stdin closed)
    assert _bounded.call(abs, -8, cpu_s=5) == 8
    assert _bounded.worker_pid() == parent_worker


def test_a_call_that_wants_more_memory_than_the_cap_is_undecided_and_the_worker_is_replaced():
    worker = live_worker()
    assert _bounded.call(bytearray, _bounded.MEMORY_HEADROOM + (1 << 30), cpu_s=5) is None  # MemoryError
    assert not running(worker)
    assert _bounded.call(abs, -9, cpu_s=5) == 9


def test_the_module_of_a_function_is_imported_before_its_budget_starts():
    live_worker()  # running, without _slow_import: its first call imports it, outside the budget
    assert _bounded.call(_slow_import.answer, cpu_s=_slow_import.IMPORT_CPU_S / 2) == 42
    assert _bounded.call(time.sleep, 60, cpu_s=0.05) is None  # the worker is killed
    # A fresh worker imports, as it starts, the modules of the functions sent so far.
    assert _bounded.call(_slow_import.answer, cpu_s=_slow_import.IMPORT_CPU_S / 2) == 42
