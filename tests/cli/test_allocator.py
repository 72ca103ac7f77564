"""The command line keeps numpy's mid-sized arrays in the heap: fewer page faults, the same results (mdad.cli.allocator)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

WORKLOAD = """
import resource, sys
import numpy as np
from mdad.cli import allocator
tuned = allocator.tune() if sys.argv[1] == "tuned" else None
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
kept, total = [], 0.0
for i in range(300):  # arrays of 0.5-4.3 MB made and freed, as a run's pairs and resamples are
    a = np.ones((i % 9 + 1) * 60_000)
    b = a * 2.0
    total += float(b.sum())
    kept.append(np.ones(300_000))
    if len(kept) > 2:
        kept.pop(0)
    del a, b
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, tuned, total)
"""


def faults(mode: str) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-c", WORKLOAD, mode], capture_output=True, text=True, check=True)
    count, tuned, total = done.stdout.split()
    return int(count), tuned, total


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="the allocator's thresholds are glibc's")
def test_freed_arrays_are_reused_instead_of_faulted_in_again():
    plain, _, plain_total = faults("plain")
    tuned_faults, tuned, tuned_total = faults("tuned")
    assert tuned == "True"
    assert tuned_total == plain_total  # the same arithmetic
    assert tuned_faults * 3 < plain, (tuned_faults, plain)
