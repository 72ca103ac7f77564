"""The defaults every part of mdad shares, and the checks of the values that replace them.

One home for each: the agreement rate that defines MDAD, the width of the bins of accuracy
difference, the confidence of every interval, the numbers of targets, sources and runs, and
the ladders of sizes (docs/protocol.md#mdad). The command line formats its help from them.
"""

from __future__ import annotations

import numbers

from mdad.errors import MdadError

DEFAULT_THRESHOLD = 0.8  # agreement rate that defines MDAD
DEFAULT_BIN_WIDTH = 0.5  # points of accuracy difference per bin of the agreement curve
DEFAULT_CONFIDENCE = 0.95  # of the bootstrap intervals of MDAD
DEFAULT_BOOTSTRAP = 1000  # resamples behind those intervals
# below these, MDAD is marked or not estimated (measured in benchmarks/bench_mdad_coverage.py)
MIN_CROSSING_PAIRS = 200  # pairs in the crossing bin of a first-crossing MDAD that is not marked
MIN_CONFIRMING_PAIRS = 50  # pairs a bin needs to set the high end of the MDAD interval
MIN_TARGET_PAIRS = 45  # distinct target pairs (10 targets) below which MDAD cannot be estimated
MIN_RUN_TARGETS = 100  # runs x targets below which MDAD cannot be estimated
ROBUST_WINDOW = 0.75  # the robust MDAD refits the bins within +-75% of its first fit's crossing (docs/protocol.md#robust-mdad)
DEFAULT_LEVEL = 0.9  # confidence level of the intervals of a micro-benchmark's estimates
DEFAULT_TARGETS = 50  # target models per run (half the models when there are fewer than twice as many)
DEFAULT_SOURCES = 300  # source models per run (every model besides the targets when fewer)
EXPERIMENT_RUNS = 50  # random runs per cell of `mdad run`
ASSESS_RUNS = 20  # held-out runs of an assessment (`mdad.assess`, `mdad select`, `mdad plan`)
PLAN_RUNS = 10  # held-out runs of `mdad.planning.simulated_plan` called alone
EXPERIMENT_SIZES = (10, 25, 50, 100, 250, 500, 1000)  # the paper's sizes, kept where they fit the seen pool
PLAN_NOISE_SE = 2.0  # `plan --method all` counts an advantage over uniform random when it exceeds this many standard errors
SOURCE_COUNTS = (5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)  # source models a `plan --sources-curve` tries
PLAN_SIZES = (10, 25, 50, 100, 250, 500, 1000, 2500, 5000)  # sizes that `plan` tries or tabulates

BIN_TEXT = f"{DEFAULT_BIN_WIDTH:g}-point"  # as in "its 0.5-point bin"


def percent(level: float) -> str:
    """A level as people write it: 0.9 -> "90%"."""
    return f"{round(100 * level, 6):g}%"


def check_threshold(threshold: float) -> float:
    """The agreement threshold, or an error when it is not strictly between 0 and 1."""
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 < threshold < 1:
        raise MdadError(f"The agreement threshold must lie strictly between 0 and 1, got {threshold!r}.")
    return float(threshold)
