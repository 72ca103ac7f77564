"""Finite-population confidence distributions for the random designs (docs/intervals.md#exact-intervals).

A uniform random micro-benchmark of k of the N pool items holds X correct answers of a
model whose pool count is M: X is hypergeometric (N, M, k). Inverting the one-sided tests
of every M gives the exact interval (Clopper-Pearson's construction for sampling without
replacement). Both bounds come from one function of M,

    G(M) = P_M(X > x) + c P_M(X = x),

increasing in M: the lower bound is the smallest M with G(M) > alpha/2 and the upper the
largest with G(M) < 1 - alpha/2. ``c = 1/2`` is the mid-p version (default): its coverage
is close to the nominal level on average over M, not for every M: for a given M it can be
well under (at 90% on a 448-item pool, 85-87% at the worst M, and 25-46% of the M under 90%;
docs/intervals.md#what-each-interval-promises, :func:`coverage_by_count`). The exact
(``mid_p=False``, Clopper-Pearson) version covers at least the level for every M, at the price
of width (it uses c = 1 for the lower bound and c = 0 for the upper one).

G is the cumulative distribution of a *confidence distribution* of M: its increments give
two probability vectors over 0..N, one whose quantile is the lower bound and one (shifted by
one count) whose quantile is the upper bound.

Stratified designs (items drawn uniformly within each subtask, given how many per subtask)
are not a uniform draw of the pool. Their interval is the uniform design's, applied to the
stratified estimate sum_s N_s x_s / k_s with Kish's effective number of items k / deff
(deff = k sum w_i^2 / (sum w_i)^2, w_i = N_s / k_s the weight of a chosen item of subtask s),
as Korn and Graubard do for survey proportions. It is not exact: per-subtask exact answers
combined (by convolving the subtasks' confidence distributions) collapse when subtasks get one
or two items each and accuracies sit near 0, as on MATH level 5, while this borrows the
pooled count's strength; its coverage is measured (tests, benchmarks/bench_intervals.py).
Subtasks without chosen items take the chosen items' mean.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mdad.defaults import DEFAULT_LEVEL
from mdad.errors import MdadError
from mdad.metrics.exact import log_comb, log_factorials


def check_level(level: float) -> float:
    """A confidence level must lie strictly between 0 and 1."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not 0 < level < 1:
        raise MdadError(f"The confidence level must lie strictly between 0 and 1, got {level!r}.")
    return float(level)


@lru_cache(maxsize=64)
def hypergeometric_table(N: int, k: int) -> np.ndarray:
    """P_M(X = x) for M = 0..N (rows) and x = 0..k (columns), k of N items drawn without replacement."""
    lf = log_factorials(3 * N + 3)
    M = np.arange(N + 1)[:, None]
    x = np.arange(k + 1)[None, :]
    table = np.exp(log_comb(M, x, lf) + log_comb(N - M, k - x, lf) - log_comb(np.array(N), np.array(k), lf))
    table.setflags(write=False)
    return table


def tail_function(N: int, k: int, x: np.ndarray, weight: float) -> np.ndarray:
    """G(M) = P_M(X > x) + weight P_M(X = x) for every M = 0..N (rows: one per observed count in ``x``)."""
    table = hypergeometric_table(N, k)
    above = np.cumsum(table[:, ::-1], axis=1)[:, ::-1]  # above[M, j] = P_M(X >= j)
    x = np.asarray(x, dtype=np.int64)
    greater = np.where(x[:, None] < k, above[:, np.minimum(x + 1, k)].T, 0.0)
    return np.clip(greater + weight * table[:, x].T, 0.0, 1.0)


def _increments(G: np.ndarray) -> np.ndarray:
    """Probability vectors over 0..N whose cumulative sums are G (the rest of the mass at N)."""
    pmf = np.diff(G, axis=1, prepend=0.0)
    pmf[:, -1] += 1.0 - G[:, -1]
    return np.clip(pmf, 0.0, None)


def confidence_pmfs(N: int, k: int, x: np.ndarray, *, mid_p: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Confidence distributions of the pool count M (rows: observed counts ``x``): (lower, upper).

    The lower bound at level 1 - alpha is the first M where the lower one's cumulative sum
    exceeds alpha/2, the upper bound the first where the upper one's reaches 1 - alpha/2.
    With no item drawn (k = 0) both are uniform over 0..N.
    """
    x = np.atleast_1d(np.asarray(x, dtype=np.int64))
    if k == 0:
        flat = np.full((len(x), N + 1), 1.0 / (N + 1))
        return flat, flat
    if np.any(x < 0) or np.any(x > k) or k > N:
        raise MdadError(f"Counts of correct items must lie between 0 and the {k} items drawn from {N}.")
    lower = _increments(tail_function(N, k, x, 0.5 if mid_p else 1.0))
    upper_G = tail_function(N, k, x, 0.5 if mid_p else 0.0)
    # upper bound: the largest M with G(M) < 1 - alpha/2, i.e. the quantile of G shifted down one count
    shifted = np.concatenate([upper_G[:, 1:], np.ones((len(x), 1))], axis=1)
    upper = _increments(shifted)
    return lower, upper


def bounds_from_pmfs(lower: np.ndarray, upper: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bound (counts) of the two-sided interval at ``level`` from confidence distributions."""
    alpha = (1.0 - check_level(level)) / 2.0
    low_cdf = np.cumsum(lower, axis=1)
    high_cdf = np.cumsum(upper, axis=1)
    n = lower.shape[1] - 1
    low = np.minimum((low_cdf <= alpha + 1e-12).sum(axis=1), n)
    high = np.minimum((high_cdf < 1.0 - alpha - 1e-12).sum(axis=1), n)
    return low, high


def count_interval(N: int, k: int, x, *, level: float = DEFAULT_LEVEL, mid_p: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Interval for the pool count M from x correct of k items drawn uniformly from N (arrays over x)."""
    return bounds_from_pmfs(*confidence_pmfs(int(N), int(k), x, mid_p=mid_p), level)


def _item_weights(sizes, drawn, correct) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(sizes, drawn, correct) checked, and the weight of a chosen item of each stratum: N_s / k_s, scaled so
    that strata without chosen items take the chosen items' mean."""
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    drawn = np.asarray(drawn, dtype=np.int64).ravel()
    correct = np.atleast_2d(np.asarray(correct, dtype=np.int64))
    if not (len(sizes) == len(drawn) == correct.shape[1]):
        raise MdadError("Pool sizes, drawn items and correct counts need one entry per stratum.")
    if np.any(drawn > sizes) or np.any(drawn < 0) or not drawn.sum():
        raise MdadError("Each stratum's drawn items must lie between 0 and its pool size, and some item must be drawn.")
    if np.any(correct < 0) or np.any(correct > drawn):
        raise MdadError("Counts of correct items must lie between 0 and the items drawn in their stratum.")
    seen = drawn > 0
    weight = np.where(seen, sizes / np.maximum(drawn, 1), 0.0) * sizes.sum() / sizes[seen].sum()  # per chosen item
    return sizes, drawn, correct, weight


def stratified_estimate(sizes, drawn, correct) -> np.ndarray:
    """The pool accuracy a stratified design estimates from correct counts per stratum (rows: models):
    sum_s N_s x_s / k_s / N, strata without chosen items at the chosen items' mean.

    Given how many items each stratum got, items are uniform within it, so this is the design's
    unbiased estimate (when every stratum has a chosen item); the exact intervals of the stratified designs are built around it
    (:func:`kish_effective`), and it is the estimate printed with them.
    """
    sizes, _, correct, weight = _item_weights(sizes, drawn, correct)
    return (correct * weight[None, :]).sum(axis=1) / sizes.sum()


def coverage_by_count(N: int, k: int, *, level: float = 0.9, mid_p: bool = True) -> np.ndarray:
    """P(the interval covers M) for every pool count M = 0..N, k of N items drawn uniformly: exact, by
    enumeration of the hypergeometric distribution of the count drawn (what each interval promises)."""
    x = np.arange(int(k) + 1)
    low, high = count_interval(int(N), int(k), x, level=level, mid_p=mid_p)
    M = np.arange(int(N) + 1)[:, None]
    return (hypergeometric_table(int(N), int(k)) * ((low[None, :] <= M) & (high[None, :] >= M))).sum(axis=1)


def kish_effective(sizes, drawn, correct) -> tuple[int, int, np.ndarray]:
    """(pool size, effective items, effective correct counts per model) of a stratified design.

    The stratified estimate (:func:`stratified_estimate`) as a uniform draw of Kish's effective
    number of items k / deff, deff = k sum w_i^2 / (sum w_i)^2 for item weights w_i = N_s / k_s
    (module docstring).
    """
    sizes, drawn, correct, weight = _item_weights(sizes, drawn, correct)
    total = int(sizes.sum())
    share = stratified_estimate(sizes, drawn, correct)
    k = int(drawn.sum())
    deff = k * float((drawn * weight**2).sum()) / float((drawn * weight).sum()) ** 2
    n_eff = int(np.clip(round(k / deff), 1, k))
    x_eff = np.clip(np.rint(n_eff * share), 0, n_eff).astype(np.int64)
    return total, n_eff, x_eff


def stratified_count_interval(sizes, drawn, correct, *, level: float = DEFAULT_LEVEL, mid_p: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Interval for the total pool count of a stratified design (rows of ``correct``: models).

    The uniform design's interval of the stratified estimate with Kish's effective number of
    items (:func:`kish_effective`).
    """
    total, n_eff, x_eff = kish_effective(sizes, drawn, correct)
    return count_interval(total, n_eff, x_eff, level=level, mid_p=mid_p)
