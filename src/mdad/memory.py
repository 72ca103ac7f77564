"""Refuse up front what cannot fit in memory, with how much it would need."""

from __future__ import annotations

import os

from mdad.errors import MdadError


def available_bytes() -> int:
    """Memory this process can still use: MemAvailable on Linux, else the free physical memory."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62  # unknown: do not refuse


def human(nbytes: float) -> str:
    """'3.2 GB', '512 MB'."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{nbytes / 1e3:.0f} kB"


def require_memory(nbytes: float, what: str) -> None:
    """An error sentence when ``what`` would need more memory than is available."""
    free = available_bytes()
    if nbytes > free:
        raise MdadError(f"{what} would need about {human(nbytes)} of memory, but only {human(free)} is available.")
