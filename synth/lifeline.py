"""Worker processes die with their parent, so no orphan keeps writing to a run folder after its run is killed.

On Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` has the kernel kill a process the moment its parent
exits; everywhere, a daemon thread polling ``os.getppid()`` does the same within ``POLL_SECONDS``.
A pool worker's parent is the forkserver, and the forkserver's parent is the run, so the chain
run -> forkserver -> workers ends with the run however it ends (SIGKILL included).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
POLL_SECONDS = 0.5


def _kernel_deathsig() -> bool:
    """Ask Linux to SIGKILL this process when its parent exits; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os._exit(1)  # orphaned: the parent is gone and nobody will read what this process makes


def die_with_parent(*, poll: bool = True) -> None:
    """End this process when its parent exits: the kernel's death signal, and with ``poll`` a watcher thread.

    A process that forks (the forkserver) passes ``poll=False``: a fork copies no threads, and
    multiprocessing's forkserver already exits when the pipe from its parent closes.
    """
    parent = os.getppid()
    _kernel_deathsig()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if poll:
        threading.Thread(target=_watch, args=(parent,), name="mathstress-lifeline", daemon=True).start()


def pool_worker_init(run_pid: int) -> None:
    """ProcessPoolExecutor initializer: the worker dies with the forkserver that forked it, and so with the run."""
    die_with_parent()
    try:
        os.kill(run_pid, 0)
    except ProcessLookupError:  # the run died while this worker was being started
        os._exit(1)
    except PermissionError:
        pass
