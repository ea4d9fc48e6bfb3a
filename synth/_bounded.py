"""Calls with a time bound that really stops the work: a persistent worker process, killed when time is up."""

# Why a process (issue 16). SymPy cannot be interrupted from inside: an exception raised by a
# SIGALRM handler is swallowed when the signal lands in a gc callback or a __del__ (a 0.2 s
# bound took 14 s), and a thread cannot be stopped at all, so both left SymPy running. A process
# can be killed.
#
# Shape. One worker per process, spawned on first use (importing SymPy costs ~0.4 CPU s), reused
# by every call, and replaced lazily on the next call after it is killed. The worker imports the
# module of every function it is sent before that function's budget starts: at its start, the
# modules of all calls seen so far, and later a new one on its first call. So this module imports
# none of its callers (synth.equivalence imports it), and a budget never pays for an import. A lock serialises the
# callers of one process (Dask worker threads). A fork hook and a pid check make a forked child
# start its own worker instead of writing into its parent's pipes.
#
# The bound. Before each call the worker arms ITIMER_PROF with the call's budget. SIGPROF's
# default action ends the process, and no Python code (gc callback, broad `except`) can catch or
# swallow it. The budget is CPU time, as in the parser's _Clock, so a busy machine does not turn a
# decidable comparison into "undecided"; the parent adds a wall-clock backstop
# (WALL_FACTOR x budget + WALL_SLACK_S) and SIGKILLs a worker that has not answered by then, so a
# starved or sleeping worker cannot hold its caller either.
#
# Lifetime. The worker exits when its stdin closes (its parent exited or dropped it), and a
# watcher thread ends it when its parent pid changes (the parent was killed while it computed).
# PR_SET_PDEATHSIG is not used: the kernel fires it when the spawning *thread* exits, which
# would kill a worker that other threads of the process still share.

from __future__ import annotations

import atexit
import importlib
import math
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synth.errors import ResumableError

WALL_FACTOR = 2.0
WALL_SLACK_S = 0.5
START_TIMEOUT_S = 60.0  # wall seconds for a new worker to import SymPy on a loaded machine
MEMORY_HEADROOM = 2 << 30  # bytes of address space a call may add to the worker (RLIMIT_AS)
PARENT_POLL_S = 0.5

_REQUEST = struct.Struct("!Qd")  # payload length, CPU budget in seconds (0: none)
_REPLY = struct.Struct("!QB")  # payload length, status
_OK, _RAISED, _RETIRING = 0, 1, 2  # _RETIRING: raised, and the worker exits after this reply
_READY = b"R"
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); from synth._bounded import _serve; "
    "_serve(int(sys.argv[2]), sys.argv[3:])"
)


class _Worker:
    """One worker process and its pipes, owned by the process that spawned it."""

    def __init__(self, modules: tuple[str, ...]) -> None:
        root = str(Path(__file__).resolve().parent.parent)
        self.modules = set(modules)  # imported by the worker, outside any budget
        try:
            # -P: the current directory must not shadow sympy or synth in the worker.
            self.proc = subprocess.Popen(
                [sys.executable, "-P", "-c", _BOOT, root, str(os.getpid()), *modules],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0,
            )  # fmt: skip
        except OSError as exc:
            raise ResumableError(
                f"could not start the equivalence worker process ({exc}); free memory or processes and re-run with "
                "--resume"
            ) from exc
        self.owner = os.getpid()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.to_worker = self.proc.stdin.fileno()
        self.from_worker = self.proc.stdout.fileno()
        try:
            ready = _read_exact(self.from_worker, len(_READY), time.monotonic() + START_TIMEOUT_S)
        except BaseException:
            self.kill()
            raise
        if ready != _READY:
            try:  # a closed pipe comes just before the exit status
                exited: int | None = self.proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                exited = None
            self.kill()
            raise _not_started(modules, f"did not start within {START_TIMEOUT_S:.0f} s" if exited is None
                               else f"exited with code {exited} while starting")

    def load(self, module: str) -> None:
        """Have the worker import module now, without a CPU budget; ResumableError when it cannot."""
        reply = self.call(pickle.dumps((_import, (module,)), protocol=pickle.HIGHEST_PROTOCOL), 0.0, START_TIMEOUT_S)
        if reply is None or reply[0] != _OK:
            if reply is not None:
                self.kill()
            raise _not_started((module,), f"could not import {module}")
        self.modules.add(module)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, payload: bytes, cpu_s: float, wall_s: float) -> tuple[int, bytes] | None:
        """(status, reply payload), or None when the worker died or missed the wall deadline (it is then dead)."""
        deadline = time.monotonic() + wall_s
        try:
            _write_all(self.to_worker, _REQUEST.pack(len(payload), cpu_s) + payload)
            header = _read_exact(self.from_worker, _REPLY.size, deadline)
            if len(header) == _REPLY.size:
                size, status = _REPLY.unpack(header)
                body = _read_exact(self.from_worker, size, deadline)
                if len(body) == size:
                    return status, body
        except BrokenPipeError:
            pass
        except BaseException:  # Ctrl-C while waiting: the reply would arrive out of turn, so the worker goes
            self.kill()
            raise
        self.kill()
        return None

    def kill(self) -> None:
        """SIGKILL the worker and reap it: nothing keeps running, no zombie stays."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.close()

    def close(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


def _not_started(modules: tuple[str, ...], what: str) -> ResumableError:
    imports = "; ".join(f"import {m}" for m in modules) or "import synth"
    return ResumableError(
        f"the equivalence worker process {what}; check that `{sys.executable} -c '{imports}'` works, then re-run "
        "with --resume"
    )


def _import(module: str) -> None:
    """Run in the worker: import a module whose functions it will be sent."""
    importlib.import_module(module)


def _read_exact(fd: int, n: int, deadline: float) -> bytes:
    """Up to n bytes from fd, fewer when it closes or the deadline passes."""
    chunks: list[bytes] = []
    got = 0
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if not poller.poll(None if math.isinf(left) else max(1, math.ceil(left * 1000))):
            continue
        chunk = os.read(fd, n - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# -- the parent side: one worker per process ----------------------------------------------------------
_lock = threading.Lock()
_holder: int | None = None  # thread ident inside call(), to refuse re-entry from a gc callback in that thread
_worker: _Worker | None = None
_inherited: list[_Worker] = []  # a parent's workers seen by a forked child: kept (never collected), never used
_modules: dict[str, None] = {}  # modules of the functions sent so far, in order: a new worker imports them first


def call(fn: Callable[..., Any], *args: Any, cpu_s: float) -> Any:
    """fn(*args) in the worker process, or None when it raises, dies, or exceeds its budget.

    ``fn`` and ``args`` travel by pickle, so fn must be a module-level function; the worker
    imports fn's module before the budget starts. The worker is killed when fn has used ``cpu_s``
    CPU seconds, or ``WALL_FACTOR * cpu_s + WALL_SLACK_S`` wall seconds have passed (a starved
    worker), and a fresh one is started on the next call. Raises ResumableError only when no
    worker process can be started or it cannot import fn's module.
    """
    global _holder, _worker
    if not cpu_s > 0:
        return None
    try:
        payload = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None
    wall_s = WALL_FACTOR * cpu_s + WALL_SLACK_S
    module = getattr(fn, "__module__", None)
    me = threading.get_ident()
    if _holder == me:  # re-entered from a gc callback or signal handler while this thread waits
        return None
    with _lock:
        _holder = me
        try:
            if _worker is not None and (_worker.owner != os.getpid() or not _worker.alive):
                _drop_worker()
            if isinstance(module, str) and module != "__main__":  # __main__ is another module in the worker
                _modules.setdefault(module)
            if _worker is None:
                _worker = _Worker(tuple(_modules))
            elif module in _modules and module not in _worker.modules:
                try:
                    _worker.load(module)
                except BaseException:
                    _worker = None  # load() killed it
                    raise
            reply = _worker.call(payload, cpu_s if math.isfinite(cpu_s) else 0.0, wall_s)
            if reply is None:
                _worker = None  # killed by its budget or by us; the next call starts a fresh one
                return None
            status, body = reply
            if status == _RETIRING:
                _worker.kill()
                _worker = None
            return pickle.loads(body) if status == _OK else None
        finally:
            _holder = None


def worker_pid() -> int | None:
    """The current worker's pid, or None when none is running (for tests and diagnostics)."""
    worker = _worker
    return worker.proc.pid if worker is not None and worker.owner == os.getpid() and worker.alive else None


def _drop_worker() -> None:
    global _worker
    if _worker is None:
        return
    if _worker.owner == os.getpid():
        _worker.kill()
    else:  # the parent's worker, seen through fork: close our copies of its pipes, leave the process alone
        _worker.close()
        _inherited.append(_worker)
    _worker = None


def _after_fork_in_child() -> None:
    global _lock, _holder
    _lock = threading.Lock()  # another thread may have held the parent's lock at the fork
    _holder = None
    _drop_worker()


def _shutdown() -> None:
    if _worker is not None and _worker.owner == os.getpid():
        _worker.kill()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_shutdown)


# -- the worker side ----------------------------------------------------------------------------------
def _serve(parent: int, modules: list[str]) -> None:
    """The worker's loop: read a request, run it under the CPU timer, reply; exit when stdin closes.

    ``modules`` hold the functions callers send: imported now, before any budget and the memory cap.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the parent's to handle
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="bounded-parent-watch", daemon=True).start()
    for module in modules:
        _import(module)
    _limit_memory()
    stdin, stdout = sys.stdin.buffer.fileno(), sys.stdout.buffer.fileno()
    _write_all(stdout, _READY)
    forever = float("inf")
    while True:
        header = _read_exact(stdin, _REQUEST.size, forever)
        if len(header) < _REQUEST.size:
            os._exit(0)
        size, cpu_s = _REQUEST.unpack(header)
        payload = _read_exact(stdin, size, forever)
        if len(payload) < size:
            os._exit(0)
        status, body = _RAISED, b""
        if cpu_s > 0:  # SIGPROF's default action ends this process; a zero timer would mean "no timer"
            signal.setitimer(signal.ITIMER_PROF, max(cpu_s, 1e-3))
        try:
            fn, args = pickle.loads(payload)
            body = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
            status = _OK
        except MemoryError:
            status = _RETIRING  # state after a failed allocation is not worth trusting
        except Exception:  # the caller's contract: an error means "undecided"
            pass
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        try:
            _write_all(stdout, _REPLY.pack(len(body), status) + body)
        except BrokenPipeError:
            os._exit(0)
        if status == _RETIRING:
            os._exit(0)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)  # orphaned while computing: nobody will read the answer


def _limit_memory() -> None:
    """Cap the worker's address space at what it uses now plus MEMORY_HEADROOM: a call cannot eat the machine."""
    try:
        import resource

        pages = int(Path("/proc/self/statm").read_text().split()[0])
        limit = pages * os.sysconf("SC_PAGE_SIZE") + MEMORY_HEADROOM
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, OSError, ValueError):
        pass  # not Linux: the time bound still holds
