"""Worker threads for a capture's work that can run beside the pixels' path.

OpenCV runs its filters and warps on every core but its arithmetic, random generator and codecs on
one; numpy runs on one. A capture keeps the second core busy with work that does not feed the next
op at once: measuring the op just applied (``profile``), the composed map while the page is lit
(``functional.geometric``), half of the sensor noise (``functional.camera``). Everything run here is a
pure function of its arguments (OpenCV's random generator is per thread and seeded right before use),
so the bytes are the same as running it inline.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")
_MIN_ROWS = 256  # below this many rows a half is too little work to hand to another thread


_here = threading.local()


def _mark_worker() -> None:
    _here.worker = True


@cache
def _pool(pid: int, role: str) -> ThreadPoolExecutor:
    """One worker per role and process (keyed by process id: a forked worker process starts its own).

    ``side`` takes work whose result is wanted later (measures, the composed map); ``halves`` takes only
    the other half of an ``in_halves`` call, so it is free whenever one starts.
    """
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"mathstress-{role}-{pid}", initializer=_mark_worker)


def later(work: Callable[..., T], *args: Any) -> Future[T]:
    """Run ``work(*args)`` on the side worker; called on a worker, run it here and now.

    Workers never wait for workers, so work handed on from a worker cannot queue behind its own caller.
    """
    if getattr(_here, "worker", False):
        return done(work(*args))
    return _pool(os.getpid(), "side").submit(work, *args)


def worth_halving(height: int) -> bool:
    """Whether an image this many rows tall is worth splitting between two threads (``in_halves``, ``beside``)."""
    return height >= 2 * _MIN_ROWS


def beside(work: Callable[..., T], *args: Any) -> Future[T]:
    """Run ``work(*args)`` on the halves worker while the caller does other work, for a result it needs before
    its next ``in_halves`` (whose other half would queue behind it); called on a worker, run it here and now."""
    if getattr(_here, "worker", False):
        return done(work(*args))
    return _pool(os.getpid(), "halves").submit(work, *args)


class Deferred:
    """Work for the side worker held back until ``flush``: ``deferred(work)`` returns a future at once, and the work
    is handed to ``later`` when flushed (in the order given). A capture holds its measures back while the ops after
    them can use both cores (their ``in_halves``), and flushes them when the main thread starts work the other core
    cannot share (a JPEG codec), so the measures fill that core's idle time instead of competing for it."""

    def __init__(self) -> None:
        self._held: list[tuple[Future[Any], Callable[[], Any]]] = []

    def __call__(self, work: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        self._held.append((future, work))
        return future

    def flush(self) -> None:
        held, self._held = self._held, []
        for future, work in held:
            later(_settle, future, work)


def _settle(future: Future[Any], work: Callable[[], Any]) -> None:
    try:
        future.set_result(work())
    except BaseException as error:  # noqa: BLE001 - handed to whoever waits on the future, as a pool would
        future.set_exception(error)


def done(value: T) -> Future[T]:
    """A future that already holds ``value``."""
    future: Future[T] = Future()
    future.set_result(value)
    return future


def in_halves(work: Callable[[slice], None], height: int) -> None:
    """Run ``work(rows)`` for the top half of ``height`` rows on a worker and the bottom half here.

    For OpenCV's serial per-pixel arithmetic (multiply, add, lookup tables), which a page's two halves
    can do side by side; ``work`` writes its rows of a preallocated output. Small images run whole. The
    halves depend on the height alone (on a worker both run here, one after the other), so work that
    seeds a generator per band gives the same bytes on any thread.
    """
    if not worth_halving(height):
        work(slice(0, height))
        return
    top, bottom = slice(0, height // 2), slice(height // 2, height)
    if getattr(_here, "worker", False):
        work(top)
        work(bottom)
        return
    first = _pool(os.getpid(), "halves").submit(work, top)
    work(bottom)
    first.result()

