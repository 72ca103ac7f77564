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

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from mdad.assessment import Assessment, HeldOutRuns, assess, held_out_runs_of
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD, PLAN_NOISE_SE, PLAN_RUNS, PLAN_SIZES, check_threshold
from mdad.errors import MdadError
from mdad.metrics.pairwise import agreement_from_differences, bin_of, pair_differences
from mdad.planning.bins import bin_label, bin_lower
from mdad.planning.paired import PairsInBin

REFINE_STEP = 1.1  # sizes between two rungs of the ladder are tried about 10% apart
MAX_RUNS_TO_SETTLE = 100_000  # runs_to_settle caps at this: a share (almost) at the threshold is not settled by any practical number


def floored_se(share: float, between_runs: float, pairs: int) -> float:
    """The between-runs standard error of a simulated share, never below the binomial one of its pairs
    (with one success and one failure added): a share of 1.0 from few pairs is not a certainty."""
    smoothed = (share * pairs + 1) / (pairs + 2)
    return max(between_runs, math.sqrt(smoothed * (1 - smoothed) / max(pairs, 1)))


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
    in_bin: PairsInBin | None = None  # the pairs behind every share, for errors over runs and models and paired differences
    correct: dict[int, np.ndarray] | None = None  # size -> whether each pair of ``in_bin`` was ordered correctly

    @property
    def smallest(self) -> int | None:
        """The smallest size of the ladder whose share reaches the threshold (None: none does)."""
        hits = np.flatnonzero(self.agreement >= self.threshold)
        return int(self.sizes[hits[0]]) if len(hits) else None

    @property
    def label(self) -> str:
        return bin_label(self.lower)

    @property
    def bracket(self) -> tuple[int, int] | None:
        """(the largest size tried that falls short, :attr:`smallest`): the answer lies between them
        (None: no answer, or the smallest size tried already reaches the threshold)."""
        smallest = self.smallest
        at = None if smallest is None else int(np.searchsorted(self.sizes, smallest))
        return None if not at else (int(self.sizes[at - 1]), int(smallest))  # type: ignore[arg-type]

    def undecided(self) -> np.ndarray:
        """Positions of the sizes whose share decides the answer (the answer's and every smaller size's; every
        size when none reaches the threshold) and lies within PLAN_NOISE_SE standard errors of the threshold:
        there Monte Carlo noise can flip the answer."""
        smallest = self.smallest
        deciding = len(self.sizes) if smallest is None else int(np.searchsorted(self.sizes, smallest)) + 1
        se = np.array([floored_se(float(a), float(e), self.pairs) for a, e in zip(self.agreement, self.stderr, strict=True)])
        near = np.abs(self.agreement - self.threshold) < PLAN_NOISE_SE * se
        return np.flatnonzero(near[:deciding])

    def runs_to_settle(self) -> int | None:
        """Held-out runs after which every share of :meth:`undecided` would lie PLAN_NOISE_SE standard errors
        from the threshold, the errors shrinking as 1/sqrt(runs) (None: noise cannot flip the answer)."""
        undecided = self.undecided()
        if not len(undecided):
            return None
        gaps = np.abs(self.agreement[undecided] - self.threshold)
        se = np.array([floored_se(float(self.agreement[i]), float(self.stderr[i]), self.pairs) for i in undecided])
        with np.errstate(divide="ignore"):
            factor = float(np.max((PLAN_NOISE_SE * se / gaps) ** 2))
        return MAX_RUNS_TO_SETTLE if not factor * self.runs < MAX_RUNS_TO_SETTLE else max(self.runs + 1, math.ceil(factor * self.runs))

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
    targets_from: str = "random",
    scheduler: str | None = None,
) -> SimulatedPlan:
    """Simulate ``method`` at every size of ``sizes`` (default: the ladder up to the pool) on held-out runs.

    ``sources`` limits the source models of each run (default: every non-target model); ``on_runs``
    receives the runs finished (for a progress bar); ``targets_from="top"`` holds out the strongest
    models in every run (new models stronger than the sources); ``scheduler``: a Dask scheduler's
    address, to run the held-out runs on a cluster.

    Examples
    --------
    >>> import mdad
    >>> found = simulated_plan(mdad.simulate(seed=0, n_models=40, n_items=300), "random", detect=10, runs=2)
    >>> found.label, found.sizes.tolist()
    ('10 to 10.5', [10, 25, 50, 100, 250])
    """
    return simulated_plans(
        matrix,
        (method,),
        detect=detect,
        threshold=threshold,
        sizes=sizes,
        runs=runs,
        targets=targets,
        seed=seed,
        workers=workers,
        sources=sources,
        on_runs=on_runs,
        targets_from=targets_from,
        scheduler=scheduler,
    )[method]


def plan_ladder(n_items: int, up_to: int | None = None) -> tuple[int, ...]:
    """The sizes ``plan`` simulates: the rungs of PLAN_SIZES within the pool; with ``up_to`` (uniform random's exact
    answer), the rungs below it, and ``up_to`` itself unless the largest of them is within REFINE_STEP of it (about
    10%, the step between rungs' sizes: a method reaching between the two would tie uniform random). A method that
    needs more items than uniform random cannot be recommended, and the rungs above it are the costliest to simulate."""
    rungs = [k for k in PLAN_SIZES if k <= n_items]
    if up_to is None:
        return tuple(rungs)
    below = [k for k in rungs if k < up_to]
    return tuple(below if below and up_to <= REFINE_STEP * below[-1] else [*below, int(up_to)])


def simulated_plans(
    matrix: ResponseMatrix,
    methods: tuple[str, ...],
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
    targets_from: str = "random",
    scheduler: str | None = None,
) -> dict[str, SimulatedPlan]:
    """:func:`simulated_plan` of several methods on the same held-out runs in one pass (one pool of workers,
    per-run preparations the methods share done once: :func:`mdad.assessment.held_out_runs_of`); each
    method's answer is the one it gets alone."""
    check_threshold(threshold)
    lower = bin_lower(detect)
    ladder = np.array(sorted(sizes if sizes is not None else plan_ladder(matrix.n_items)), dtype=int)
    if not len(ladder):
        raise MdadError(f"The pool of {matrix.n_items} items is smaller than every size to try.")
    found = held_out_runs_of(
        matrix,
        tuple(methods),
        tuple(int(k) for k in ladder),
        runs=runs,
        targets=targets,
        seed=seed,
        workers=workers,
        sources=sources,
        on_runs=on_runs,
        targets_from=targets_from,
        scheduler=scheduler,
    )
    return {
        method: shares_of(method, runs_of, matrix.source, lower, ladder, threshold) for method, runs_of in zip(methods, found.values(), strict=True)
    }


def shares_of(method: str, found: HeldOutRuns, source: str, lower: float, ladder: np.ndarray, threshold: float) -> SimulatedPlan:
    """Per size of ``ladder``, the share of held-out pairs in the bin at ``lower`` that ``found``'s estimates order correctly."""
    runs = found.truths.shape[0]
    dt = pair_differences(found.truths)
    in_bin = bin_of(100 * dt, DEFAULT_BIN_WIDTH) == round(lower / DEFAULT_BIN_WIDTH)  # runs x pairs
    per_run = in_bin.sum(axis=1)
    if not per_run.sum():
        raise MdadError(f"No pair of held-out models differs by {bin_label(lower)} points; choose another difference.")
    agreement, stderr, correct = [], [], {}
    for k in ladder:
        agree = agreement_from_differences(pair_differences(found.estimates[int(k)]), dt) & in_bin
        correct[int(k)] = agree[in_bin]
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
        source=source,
        lower=lower,
        sizes=ladder,
        agreement=np.array(agreement),
        stderr=np.array(stderr),
        pairs=int(per_run.sum()),
        runs=runs,
        threshold=threshold,
        in_bin=None if found.target_ids is None else PairsInBin.of(in_bin, found.target_ids),
        correct=correct,
    )


def between(low: int, high: int) -> list[int]:
    """Sizes strictly between two rungs, about REFINE_STEP apart (geometric, whole items)."""
    steps = max(1, math.ceil(math.log(high / low) / math.log(REFINE_STEP)))
    grid = np.unique(np.round(np.geomspace(low, high, steps + 1)).astype(int))
    return [int(k) for k in grid if low < k < high]


def refined(found: SimulatedPlan, matrix: ResponseMatrix, **options) -> SimulatedPlan:
    """``found`` with the sizes between the two rungs that bracket its answer simulated too, on the same
    held-out runs (same seed, hence the same targets and source orders: the comparison stays paired),
    so the answer is known to about 10% of its size. ``options``: those of :func:`simulated_plan`
    (``detect`` among them)."""
    return all_refined({found.method: found}, matrix, **options)[found.method]


def all_refined(found: dict[str, SimulatedPlan], matrix: ResponseMatrix, **options) -> dict[str, SimulatedPlan]:
    """:func:`refined` for several methods simulated on the same runs: the methods whose answers share a
    bracket are simulated between its rungs in one pass (:func:`simulated_plans`), so the per-run
    preparation they share is done once."""
    by_bracket: dict[tuple[int, int], list[str]] = {}
    for name, plan in found.items():
        if plan.bracket is not None and between(*plan.bracket):
            by_bracket.setdefault(plan.bracket, []).append(name)
    out = dict(found)
    for bracket, names in by_bracket.items():
        first = found[names[0]]
        more = simulated_plans(matrix, tuple(names), sizes=between(*bracket), runs=first.runs, threshold=first.threshold, **options)
        for name in names:
            out[name] = _merged(found[name], more[name])
    return out


def _merged(found: SimulatedPlan, more: SimulatedPlan) -> SimulatedPlan:
    """``found`` with the sizes of ``more`` (the same method on the same runs) added, in order of size."""
    order = np.argsort(np.concatenate([found.sizes, more.sizes]), kind="stable")
    return replace(
        found,
        sizes=np.concatenate([found.sizes, more.sizes])[order],
        agreement=np.concatenate([found.agreement, more.agreement])[order],
        stderr=np.concatenate([found.stderr, more.stderr])[order],
        correct={**(found.correct or {}), **(more.correct or {})},
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
    targets_from: str = "random",
    scheduler: str | None = None,
) -> SimulatedMdadAtSize:
    """MDAD of ``method`` at ``size`` items from ``runs`` held-out runs (``mdad.assess``).

    Examples
    --------
    >>> import mdad
    >>> found = simulated_mdad_at_size(mdad.simulate(seed=0, n_models=40, n_items=300), "random", size=50, runs=2)
    >>> found.assessment.targets, found.assessment.sources
    (20, 20)
    """
    found = assess(
        matrix,
        method,
        size,
        runs=runs,
        seed=seed,
        workers=workers,
        threshold=threshold,
        sources=sources,
        on_runs=on_runs,
        targets_from=targets_from,
        scheduler=scheduler,
    )
    return SimulatedMdadAtSize(method=method, source=matrix.source, size=size, runs=runs, assessment=found)
