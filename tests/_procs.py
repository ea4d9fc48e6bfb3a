"""What the tests of worker processes ask of /proc (tests/test_bounded.py, tests/test_mathparse.py)."""

from pathlib import Path


def running(pid: int) -> bool:
    """Whether pid is a process that can still run (a zombie has stopped for good)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
