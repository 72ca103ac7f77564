"""How many items any method needs to order models D points apart, from a quick simulation (docs/intervals.md#report-and-plan).

The random designs have exact answers (``mdad.metrics.analytic``). Every other method is
answered the way ``mdad.assess`` measures a micro-benchmark: in each of ``runs`` held-out
runs, target models are held out, the method chooses k items of the whole pool using the
other models (every size of a ladder in the same run, sharing the per-run work), and each
pair of targets whose full-benchmark difference lies in D's bin (DEFAULT_BIN_WIDTH) is checked: did
the micro-benchmark order it as the full benchmark does? The answer is the smallest size of
the ladder whose share of such pairs ordered correctly reaches the threshold. It is a
simulation: each share carries a Monte Carlo standard error (pairs of one run share their
micro-benchmark, so the error is computed between runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mdad.assessment import Assessment, assess, held_out_runs
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD, PLAN_RUNS, PLAN_SIZES, check_threshold
from mdad.errors import MdadError
from mdad.metrics.pairwise import agreement_from_differences, bin_of, pair_differences
from mdad.planning.bins import bin_label, bin_lower


@dataclass(frozen=True, eq=False)
class SimulatedPlan:
    """Share of pairs D points apart ordered correctly at each size of the ladder, with its Monte Carlo error."""

    method: str
    source: str  # the data it was simulated on
    lower: float  # lower edge of the difference bin, points
    sizes: np.ndarray
    agreement: np.ndarray
    stderr: np.ndarray
    pairs: int  # pairs in the bin over all runs (the same at every size)
    runs: int
    threshold: float

    @property
    def smallest(self) -> int | None:
        """The smallest size of the ladder whose share reaches the threshold (None: none does)."""
        hits = np.flatnonzero(self.agreement >= self.threshold)
        return int(self.sizes[hits[0]]) if len(hits) else None

    @property
    def label(self) -> str:
        return bin_label(self.lower)

    def to_frame(self) -> pd.DataFrame:
        """One row per size: the share of pairs of the bin ordered correctly and its standard error."""
        return pd.DataFrame({"items": self.sizes, "share_correct_order": self.agreement, "stderr": self.stderr})


@dataclass(frozen=True, eq=False)
class SimulatedMdadAtSize:
    """MDAD of one size from a quick assessment on held-out runs (its interval is the Monte Carlo error)."""

    method: str
    source: str
    size: int
    runs: int
    assessment: Assessment


def simulated_plan(
    matrix: ResponseMatrix,
    method: str,
    *,
    detect: float,
    threshold: float = DEFAULT_THRESHOLD,
    sizes=None,
    runs: int = PLAN_RUNS,
    targets: int | None = None,
    seed: int = 0,
    workers: int = 1,
    sources: int | None = None,
    on_runs: Callable[[float], None] | None = None,
) -> SimulatedPlan:
    """Simulate ``method`` at every size of ``sizes`` (default: the ladder up to the pool) on held-out runs.

    ``sources`` limits the source models of each run (default: every non-target model); ``on_runs``
    receives the runs finished (for a progress bar).

    Examples
    --------
    >>> import mdad
    >>> found = simulated_plan(mdad.simulate(seed=0, n_models=40, n_items=300), "random", detect=10, runs=2)
    >>> found.label, found.sizes.tolist()
    ('10 to 10.5', [10, 25, 50, 100, 250])
    """
    check_threshold(threshold)
    lower = bin_lower(detect)
    ladder = np.array(sorted(sizes if sizes is not None else [k for k in PLAN_SIZES if k <= matrix.n_items]), dtype=int)
    if not len(ladder):
        raise MdadError(f"The pool of {matrix.n_items} items is smaller than every size to try.")
    found = held_out_runs(
        matrix, method, tuple(int(k) for k in ladder), runs=runs, targets=targets, seed=seed, workers=workers, sources=sources, on_runs=on_runs
    )
    dt = pair_differences(found.truths)
    in_bin = bin_of(100 * dt, DEFAULT_BIN_WIDTH) == round(lower / DEFAULT_BIN_WIDTH)  # runs x pairs
    per_run = in_bin.sum(axis=1)
    if not per_run.sum():
        raise MdadError(f"No pair of held-out models differs by {bin_label(lower)} points; choose another difference.")
    agreement, stderr = [], []
    for k in ladder:
        agree = agreement_from_differences(pair_differences(found.estimates[int(k)]), dt) & in_bin
        rate = agree.sum() / per_run.sum()
        run_rates = np.where(per_run > 0, agree.sum(axis=1) / np.maximum(per_run, 1), rate)
        used = per_run > 0
        n = int(used.sum())
        # ratio estimator's between-run standard error (runs weighted by their pairs)
        var = (n / max(n - 1, 1)) * np.sum((per_run[used] * (run_rates[used] - rate)) ** 2) / per_run.sum() ** 2
        agreement.append(float(rate))
        stderr.append(float(np.sqrt(var)))
    return SimulatedPlan(
        method=method,
        source=matrix.source,
        lower=lower,
        sizes=ladder,
        agreement=np.array(agreement),
        stderr=np.array(stderr),
        pairs=int(per_run.sum()),
        runs=runs,
        threshold=threshold,
    )


def simulated_mdad_at_size(
    matrix: ResponseMatrix,
    method: str,
    *,
    size: int,
    threshold: float = DEFAULT_THRESHOLD,
    runs: int = ASSESS_RUNS,
    seed: int = 0,
    workers: int = 1,
    sources: int | None = None,
    on_runs: Callable[[float], None] | None = None,
) -> SimulatedMdadAtSize:
    """MDAD of ``method`` at ``size`` items from ``runs`` held-out runs (``mdad.assess``).

    Examples
    --------
    >>> import mdad
    >>> found = simulated_mdad_at_size(mdad.simulate(seed=0, n_models=40, n_items=300), "random", size=50, runs=2)
    >>> found.assessment.targets, found.assessment.sources
    (20, 20)
    """
    found = assess(matrix, method, size, runs=runs, seed=seed, workers=workers, threshold=threshold, sources=sources, on_runs=on_runs)
    return SimulatedMdadAtSize(method=method, source=matrix.source, size=size, runs=runs, assessment=found)
