"""Process-level memory settings for the image stages (glibc's allocator)."""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's ceiling for this setting
_TRIM_THRESHOLD = 128 * 1024 * 1024


@cache
def keep_image_buffers() -> bool:
    """Let glibc reuse freed image-sized buffers instead of returning them to the OS at once.

    Every photo op allocates and frees arrays of tens of MB; by default glibc maps each one
    afresh, so every op pays page faults on its whole output (the noise op on an A4 page at
    150 dpi: 45 ms, 24 ms with this). The cost is that a worker keeps up to 128 MB of freed
    heap. Returns whether the setting took (False off glibc, e.g. on macOS).
    """
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
