"""How many items a suite average needs, for each allocation (``mdad plan --suite``), for the uniform random design.

Exact variances with the normal approximation (mdad.suite.allocation.AverageModel), over the pairs of models in
every benchmark. With a difference to detect: the smallest budget at which the pairs in its 0.5-point bin are
ordered correctly with mean probability at least the threshold (as ``mdad plan --detect`` for one benchmark),
found by bisection: with every allocation each benchmark's items grow with the budget (the optimal one gives one
item at a time), so the agreement does too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.defaults import DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.metrics.pairwise import bin_of
from mdad.planning.bins import bin_label, bin_lower
from mdad.suite.allocation import ALLOCATIONS, AverageModel, allocate
from mdad.suite.suite import Suite


@dataclass(frozen=True)
class SuitePlanRow:
    """One allocation's answer: the ``budget`` (the smallest that detects, or the one asked about; None: not even
    every item of the suite detects), its items per benchmark, the average's expected MDAD and mean absolute error
    (points), and the mean probability of the correct order in the bin of the difference to detect (NaN: none asked)."""

    allocation: str
    budget: int | None
    counts: tuple[int, ...] | None
    mdad: float
    error: float
    agreement: float


@dataclass(frozen=True, eq=False)
class SuitePlan:
    """``plan_suite``'s answer: one row per allocation, the benchmarks' names and the bin asked about."""

    names: tuple[str, ...]
    rows: tuple[SuitePlanRow, ...]
    detect: float | None
    threshold: float
    pairs: int

    @property
    def bin(self) -> str | None:
        """The bin of the difference to detect, as text ("2 to 2.5"; None: none asked)."""
        return None if self.detect is None else bin_label(bin_lower(self.detect))


def plan_suite(suite: Suite, *, detect: float | None = None, budget: int | None = None, threshold: float = DEFAULT_THRESHOLD) -> SuitePlan:
    """For each allocation (equal, proportional, optimal): the smallest budget whose suite average orders models
    ``detect`` points apart (its bin) with probability ``threshold``, or, with ``budget``, the average's MDAD and
    error at that budget (and the agreement in ``detect``'s bin when both are given).

    Examples
    --------
    >>> import mdad
    >>> from mdad.suite.planning import plan_suite
    >>> answer = plan_suite(mdad.Suite.load("gpqa,musr,math-hard"), detect=2.0)
    >>> [(row.allocation, row.budget) for row in answer.rows]
    [('equal', 274), ('proportional', 336), ('optimal', 244)]
    """
    check_threshold(threshold)
    if detect is None and budget is None:
        raise MdadError("Say what to plan for: a difference to detect, a budget, or both.")
    model = AverageModel(suite)
    in_bin = None
    if detect is not None:
        in_bin = bin_of(100.0 * model.diff) == bin_of(np.array([detect]))[0]
        if not in_bin.any():
            raise MdadError(f"No pair of models in every benchmark differs by {bin_label(bin_lower(detect))} points on the suite average.")
    total = sum(m.n_items for m in suite.benchmarks.values())

    def agreement(counts: tuple[int, ...]) -> float:
        return float(model.agreement(counts)[in_bin].mean()) if in_bin is not None else float("nan")

    rows = []
    for kind in ALLOCATIONS:
        chosen = budget
        if chosen is None:
            low, high = len(suite.names), total
            if agreement(allocate(suite, high, kind).counts) < threshold:
                rows.append(SuitePlanRow(kind, None, None, float("nan"), float("nan"), agreement(allocate(suite, high, kind).counts)))
                continue
            while low < high:
                middle = (low + high) // 2
                if agreement(allocate(suite, middle, kind).counts) >= threshold:
                    high = middle
                else:
                    low = middle + 1
            chosen = low
        counts = allocate(suite, chosen, kind).counts
        reliability = model.reliability(counts, threshold=threshold)
        rows.append(SuitePlanRow(kind, chosen, counts, reliability.mdad, reliability.error, agreement(counts)))
    pairs = int(in_bin.sum()) if in_bin is not None else len(model.diff)
    return SuitePlan(tuple(suite.names), tuple(rows), detect, threshold, pairs)
