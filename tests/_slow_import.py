"""A module that costs CPU time to import: tests/test_bounded.py checks that no call's budget pays for it."""

import time

IMPORT_CPU_S = 0.5

_start = time.process_time()
while time.process_time() - _start < IMPORT_CPU_S:
    pass


def answer() -> int:
    return 42
