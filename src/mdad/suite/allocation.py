"""How many of a budget's items each benchmark of a suite gets, and how reliable the suite average then is.

The criterion (docs/suites.md#allocation): the mean, over pairs of models in every benchmark, of the
variance of the estimated difference of their suite averages. With uniform random items in each
benchmark that variance is exactly ``sum_b c_b^2 S_b^2 (1/k_b - 1/N_b)``: ``c_b`` the benchmark's weight
over (1 - baseline) (mdad.suite.suite.Suite.scale), ``N_b`` its pool, ``k_b`` its items and ``S_b^2`` the
mean over pairs of the variance (divisor N_b - 1) of the per-item score differences (finite-population
correction included). The optimal allocation minimises it over integers with 1 <= k_b <= N_b.

For any other method (the stratified designs, the learned methods) the same criterion is measured: per benchmark,
the mean squared error of the held-out targets' pairwise differences at a few sizes, with a decreasing curve
fitted to it (mdad.suite.curves); the allocation minimises ``sum_b c_b^2 error_b(k_b)`` over those curves, the
benchmarks' errors taken as independent. Which of the two a method gets is the method's own ``design``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr

from mdad import methods as method_registry
from mdad.defaults import ASSESS_RUNS, DEFAULT_THRESHOLD
from mdad.errors import MdadError
from mdad.metrics.analytic import expected_curve
from mdad.metrics.pairwise import AgreementCurve
from mdad.suite.curves import HeldOutCurves, ladder, measure_curves
from mdad.suite.suite import Suite

ALLOCATIONS = ("equal", "proportional", "optimal")


def pair_variances(scores: np.ndarray) -> np.ndarray:
    """Per pair of rows (i < j, in numpy's upper-triangle order): the variance, divisor N - 1, of the
    per-item differences of their scores (models x N items, complete)."""
    x = np.asarray(scores, dtype=np.float64)
    n_items = x.shape[1]
    gram = x @ x.T
    squares = np.diag(gram)
    totals = x.sum(axis=1)
    i, j = np.triu_indices(len(x), 1)
    sum_d2 = squares[i] + squares[j] - 2.0 * gram[i, j]
    return np.maximum(sum_d2 - (totals[i] - totals[j]) ** 2 / n_items, 0.0) / (n_items - 1)


def mean_pair_variance(scores: np.ndarray) -> float:
    """S^2: the mean over pairs of models of ``pair_variances``, without forming the pairs."""
    x = np.asarray(scores, dtype=np.float64)
    n, n_items = x.shape
    column = x.sum(axis=0)
    all_d2 = float(n * (x**2).sum() - (column**2).sum())  # sum over pairs i < j of sum_t (x_it - x_jt)^2
    totals = x.sum(axis=1)
    all_sum2 = float(n * (totals**2).sum() - totals.sum() ** 2)  # sum over pairs of (a_i - a_j)^2
    return max(all_d2 - all_sum2 / n_items, 0.0) / (n_items - 1) / (n * (n - 1) / 2)


@dataclass(frozen=True)
class Allocation:
    """Items per benchmark (``counts``, in the suite's order) out of each benchmark's ``pools``, how they were
    decided (``kind``), and the criterion: the mean pair variance of the suite average's difference (``variance``:
    exact for the uniform random design, from the fitted ``curves`` when the method's optimal allocation was measured
    on held-out runs; NaN otherwise)."""

    names: tuple[str, ...]
    counts: tuple[int, ...]
    pools: tuple[int, ...]
    kind: str
    variance: float
    curves: tuple[HeldOutCurves, ...] = field(default=(), compare=False)  # per benchmark, when measured

    def as_dict(self) -> dict[str, int]:
        """Benchmark -> items."""
        return dict(zip(self.names, self.counts, strict=True))

    def describe(self) -> str:
        """'gpqa 150, musr 200, math-hard 250 (optimal)'."""
        return ", ".join(f"{n} {k}" for n, k in self.as_dict().items()) + f" ({self.kind})"


def check_budget(budget: int, pools: np.ndarray) -> None:
    """A budget must give every benchmark at least one item and fit in the pools."""
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
        raise MdadError(f"The budget must be a whole number of items, got {budget!r}.")
    if budget < len(pools):
        raise MdadError(f"A budget of {budget} items is smaller than the {len(pools)} benchmarks of the suite; each needs at least one item.")
    if budget > pools.sum():
        raise MdadError(f"A budget of {budget} items is larger than the suite's {int(pools.sum())} items.")


def equal_counts(pools: np.ndarray, budget: int) -> np.ndarray:
    """The same number per benchmark (a benchmark smaller than its share gives all its items and the others
    share the rest); the remainder one each to the first benchmarks, in the suite's order, that have room."""
    counts = np.ones(len(pools), dtype=np.int64)
    while counts.sum() < budget:
        room = np.flatnonzero(counts < pools)
        level = counts[room].min()
        for b in room[counts[room] == level]:
            if counts.sum() == budget:
                break
            counts[b] += 1
    return counts


def proportional_counts(pools: np.ndarray, budget: int) -> np.ndarray:
    """Items in proportion to the pools, rounded by largest remainders (ties: the suite's order), at least one each."""
    quota = budget * pools / pools.sum()
    counts = np.maximum(np.floor(quota).astype(np.int64), 1)
    while counts.sum() > budget:  # the minimum of one pushed the sum over: take from the most over its quota
        over = np.where(counts > 1, counts - quota, -np.inf)
        counts[int(np.argmax(over))] -= 1
    while counts.sum() < budget:
        short = np.where(counts < pools, quota - counts, -np.inf)
        counts[int(np.argmax(short))] += 1
    return counts


def greedy_counts(pools: np.ndarray, budget: int, error: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The integers 1 <= k_b <= N_b summing to ``budget`` that minimise sum_b error(k)_b, ``error`` giving every
    benchmark's term at the counts k, each decreasing and convex in its own k_b: one item at a time to the benchmark
    whose term it lowers most (ties: the suite's order). The objective is separable and convex, so this greedy
    allocation is the exact integer optimum."""
    counts = np.ones(len(pools), dtype=np.int64)
    for _ in range(int(budget) - len(pools)):
        gain = np.where(counts < pools, error(counts) - error(counts + 1), -np.inf)
        counts[int(np.argmax(gain))] += 1
    return counts


def optimal_counts(pools: np.ndarray, budget: int, spread: np.ndarray) -> np.ndarray:
    """The integers 1 <= k_b <= N_b summing to ``budget`` that minimise sum_b spread_b / k_b (spread_b = c_b^2 S_b^2):
    Neyman's allocation of uniform random items, by ``greedy_counts``."""
    return greedy_counts(pools, budget, lambda counts: spread / counts)


def random_terms(spread: np.ndarray, counts: np.ndarray, pools: np.ndarray) -> np.ndarray:
    """Per benchmark: spread_b (1/k_b - 1/N_b), its term of the average's variance for the uniform random design."""
    return spread * (1.0 / np.asarray(counts, dtype=np.float64) - 1.0 / pools)


def suite_variance(spread: np.ndarray, counts: np.ndarray, pools: np.ndarray) -> float:
    """sum_b spread_b (1/k_b - 1/N_b): the variance of the average's difference for the uniform random design."""
    return float(np.sum(random_terms(spread, counts, pools)))


def spreads(suite: Suite) -> np.ndarray:
    """Per benchmark: c_b^2 S_b^2, over the models in every benchmark."""
    return np.array([c**2 * mean_pair_variance(suite.complete_scores(name)) for name, c in zip(suite.names, suite.scale, strict=True)])


def check_allocation(suite: Suite, budget: int, allocation: str, *, method: str, runs: int = ASSESS_RUNS) -> np.ndarray:
    """The refusals of ``allocate`` before any work (an unknown allocation or method, an adaptive test, a budget
    that does not fit, no held-out ``runs`` for an optimal allocation that needs them); the benchmarks' pools."""
    if allocation not in ALLOCATIONS:
        raise MdadError(f"Unknown allocation {allocation!r}; use {', '.join(ALLOCATIONS)}.")
    spec = method_registry.get(method)
    if spec.adaptive:
        raise MdadError(f"{method} is an adaptive test; a suite takes static micro-benchmarks (e.g. random, anchor-points).")
    if allocation == "optimal" and spec.design != "uniform" and (isinstance(runs, bool) or not isinstance(runs, (int, np.integer)) or runs < 1):
        raise MdadError(f"The optimal allocation of {method} is measured on held-out runs; give at least 1 run (--assess-runs), got {runs!r}.")
    pools = np.array([m.n_items for m in suite.benchmarks.values()], dtype=np.int64)
    check_budget(budget, pools)
    return pools


def allocate(
    suite: Suite, budget: int, allocation: str = "optimal", *, method: str = "random", runs: int = ASSESS_RUNS, seed: int = 0, workers: int = 1
) -> Allocation:
    """How many of ``budget`` items each benchmark of ``suite`` gets: ``equal``, ``proportional`` to the pools, or
    ``optimal`` (the criterion of this module): exact for uniform random items, else measured on ``runs`` held-out
    runs per benchmark with ``seed`` (mdad.suite.curves; ``workers`` processes)."""
    pools = check_allocation(suite, budget, allocation, method=method, runs=runs)
    exact = method_registry.get(method).design == "uniform"
    curves: tuple[HeldOutCurves, ...] = ()
    if allocation == "optimal" and not exact:
        share = budget / len(pools)
        curves = tuple(
            measure_curves(suite.benchmarks[name], method, ladder(int(n), share), runs=runs, seed=seed, workers=workers)
            for name, n in zip(suite.names, pools, strict=True)
        )
    scale2 = np.asarray(suite.scale, dtype=np.float64) ** 2
    error: Callable[[np.ndarray], np.ndarray] | None = None
    if curves:
        error = lambda counts: scale2 * np.array([c.pairs(k) for c, k in zip(curves, counts, strict=True)])  # noqa: E731
    elif exact:
        spread = spreads(suite)
        error = lambda counts: random_terms(spread, counts, pools)  # noqa: E731
    if allocation == "equal":
        counts = equal_counts(pools, budget)
    elif allocation == "proportional":
        counts = proportional_counts(pools, budget)
    else:
        assert error is not None
        counts = greedy_counts(pools, budget, error)
    variance = float(error(counts).sum()) if error is not None else float("nan")
    return Allocation(tuple(suite.names), tuple(int(k) for k in counts), tuple(int(n) for n in pools), allocation, variance, curves)


@dataclass(frozen=True, eq=False)
class AverageReliability:
    """How reliable the suite average of uniform random items is with an allocation, over the pairs of models in
    every benchmark (normal approximation with the exact variances): its MDAD (points; NaN: not reached), the
    expected agreement curve it is read from, and the models' mean expected absolute error (points)."""

    mdad: float
    curve: AgreementCurve
    error: float


class AverageModel:
    """The suite average of uniform random items over the pairs of models in every benchmark: each pair's true
    difference of averages and, per benchmark, the variances that the allocation scales (computed once, so that
    many allocations and budgets are cheap to compare).

    A pair's estimated difference has the exact variance sum_b c_b^2 S_ij,b^2 (1/k_b - 1/N_b) (its own per-item
    differences); P(correct order) = Phi(|D| / sd) in the normal approximation (a true tie counts as disagreeing);
    each model's expected absolute error is sqrt(2/pi) times its own standard deviation.
    """

    def __init__(self, suite: Suite) -> None:
        truth = suite.average(suite.raw_scores()[suite.complete])
        i, j = np.triu_indices(len(truth), 1)
        self.diff = truth[i] - truth[j]
        self.pools = np.array([m.n_items for m in suite.benchmarks.values()], dtype=np.float64)
        self.pair_terms = []  # per benchmark: c_b^2 S_ij,b^2 per pair
        self.own_terms = []  # per benchmark: c_b^2 s_i,b^2 per model
        for name, c in zip(suite.names, suite.scale, strict=True):
            scores = suite.complete_scores(name).astype(np.float64)
            self.pair_terms.append(c**2 * pair_variances(scores))
            self.own_terms.append(c**2 * scores.var(axis=1, ddof=1))

    def agreement(self, counts: tuple[int, ...] | np.ndarray) -> np.ndarray:
        """Per pair: the probability that ``counts`` uniform random items per benchmark order the averages correctly."""
        fpc = 1.0 / np.asarray(counts, dtype=np.float64) - 1.0 / self.pools
        variance = sum(term * f for term, f in zip(self.pair_terms, fpc, strict=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.diff == 0, 0.0, np.where(variance > 0, ndtr(np.abs(self.diff) / np.sqrt(variance)), 1.0))

    def reliability(self, counts: tuple[int, ...] | np.ndarray, *, threshold: float = DEFAULT_THRESHOLD) -> AverageReliability:
        """The average's expected MDAD, agreement curve and mean absolute error (points) with ``counts``."""
        fpc = 1.0 / np.asarray(counts, dtype=np.float64) - 1.0 / self.pools
        own = sum(term * f for term, f in zip(self.own_terms, fpc, strict=True))
        curve = expected_curve(self.agreement(counts), 100.0 * self.diff)
        return AverageReliability(curve.crossing(threshold), curve, float(100.0 * np.mean(np.sqrt(2.0 / np.pi * own))))


def average_reliability(suite: Suite, counts: tuple[int, ...] | np.ndarray, *, threshold: float = DEFAULT_THRESHOLD) -> AverageReliability:
    """The suite average's expected MDAD and error with ``counts`` uniform random items per benchmark (AverageModel)."""
    return AverageModel(suite).reliability(counts, threshold=threshold)


class HeldOutAverage:
    """The suite average of a method whose optimal allocation was measured on held-out runs (``curves``, one per
    benchmark), over the pairs of models in every benchmark: each pair's estimated difference is taken to have the
    benchmarks' fitted mean squared pair error, sum_b c_b^2 pairs_b(k_b) (the same for every pair), P(correct
    order) = Phi(|D| / sd) (a true tie counts as disagreeing); the mean error is sqrt(2/pi) times the root of the
    fitted mean squared error of one model's average, sum_b c_b^2 own_b(k_b)."""

    def __init__(self, suite: Suite, curves: tuple[HeldOutCurves, ...]) -> None:
        truth = suite.average(suite.raw_scores()[suite.complete])
        i, j = np.triu_indices(len(truth), 1)
        self.diff = truth[i] - truth[j]
        self.scale2 = np.asarray(suite.scale, dtype=np.float64) ** 2
        self.curves = curves

    def reliability(self, counts: tuple[int, ...] | np.ndarray, *, threshold: float = DEFAULT_THRESHOLD) -> AverageReliability:
        """The average's expected MDAD, agreement curve and mean absolute error (points) with ``counts``."""
        pairs = float(sum(s * c.pairs(k) for s, c, k in zip(self.scale2, self.curves, counts, strict=True)))
        own = float(sum(s * c.own(k) for s, c, k in zip(self.scale2, self.curves, counts, strict=True)))
        with np.errstate(divide="ignore"):
            agree = np.where(self.diff == 0, 0.0, ndtr(np.abs(self.diff) / np.sqrt(pairs)) if pairs > 0 else 1.0)
        curve = expected_curve(agree, 100.0 * self.diff)
        return AverageReliability(curve.crossing(threshold), curve, float(100.0 * np.sqrt(2.0 / np.pi * own)))


def average_model(suite: Suite, allocation: Allocation, method: str) -> AverageModel | HeldOutAverage | None:
    """What the suite average's expected reliability is computed from: the exact variances for uniform random items,
    the allocation's held-out curves when it has them; None when neither (nothing measured)."""
    if allocation.curves:
        return HeldOutAverage(suite, allocation.curves)
    return AverageModel(suite) if method_registry.get(method).design == "uniform" else None
