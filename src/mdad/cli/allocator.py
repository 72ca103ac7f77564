"""The C allocator's settings for a command's process and its workers (glibc only).

numpy's arrays of a few hundred kilobytes to tens of megabytes (a run's pairs, a bootstrap's
resamples, a selection's models x items working arrays, a 6,000 x 1,000 polynomial basis) are
above glibc's starting threshold for memory maps, so each one is mapped on allocation and
unmapped when freed, and every page of the next one is faulted in and zeroed by the kernel
again; the heap's free top is also returned to the system as soon as it exceeds 128 kB. Keeping
arrays below ``MMAP_THRESHOLD`` in the heap, and up to ``TRIM_THRESHOLD`` of free heap in the
process, spares those faults: on the GPQA grid of `mdad run` a quarter of its minor page faults
and about 0.3 CPU s, on the paper grid's heavy methods most of their system time
(docs/benchmarks.md#earlier-measurements). Larger arrays are still mapped and returned at once; the free heap kept
adds at most ``TRIM_THRESHOLD`` to a process's memory. Only the command line sets this, never
the library: the allocator is the whole process's.
"""

from __future__ import annotations

import ctypes
import platform

MMAP_THRESHOLD = 64 * 2**20  # bytes: smaller blocks come from the heap
TRIM_THRESHOLD = 256 * 2**20  # bytes of free heap kept before any is returned
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters (malloc.h)


def tune() -> bool:
    """Set the thresholds (inherited by forked workers); False where the C library is not glibc."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
