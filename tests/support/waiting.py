"""What tests of interruptions need to hold on a busy machine or in a background job.

They wait on files, processes and events instead of the clock: a busy machine only makes them
slower. A bound is a safety net against a hang, never a measure of speed: it fails with a
sentence saying what was awaited, after a time no loaded machine needs.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from subprocess import Popen
from typing import TypeVar

BOUND = 300.0  # seconds
# Dask's own network timeouts (30 s by default), raised to the bound: a busy machine is not a lost connection
DASK_TIMEOUTS = {"distributed.comm.timeouts.connect": f"{BOUND:.0f}s", "distributed.comm.timeouts.tcp": f"{BOUND:.0f}s"}
T = TypeVar("T")


def wait_until(condition: Callable[[], T], what: str, process: Popen | None = None, bound: float = BOUND) -> T:
    """Poll ``condition`` until it gives a true value and return that value; fail naming ``what``
    when ``process`` ends first or after ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while not (value := condition()):
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the process ended (exit code {process.returncode}) while the test waited for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for {what} after {bound:.0f} s: something hangs")
        time.sleep(0.01)
    return value


@contextmanager
def ctrl_c_as_in_a_terminal() -> Iterator[None]:
    """Python's own Ctrl-C handler in this process during the block, and so the default Ctrl-C in
    the processes it starts: tests run as a background job (``pytest &`` in a script) inherit
    Ctrl-C ignored from the shell, and Ctrl-C would then stop nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
