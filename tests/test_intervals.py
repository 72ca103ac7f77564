"""Intervals and order probabilities against brute force: enumeration, independent loops, simulation with known truth."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import hypergeom

from mdad.errors import MdadError
from mdad.intervals import (
    ConformalCalibration, count_interval, exact_order_probability, stratified_count_interval,
)
from mdad.intervals.finite import hypergeometric_table
from mdad.intervals.order import PRIOR_BINS, PRIOR_FLOOR, PairPrior


def brute_force_interval(N: int, k: int, x: int, level: float, mid_p: bool) -> tuple[int, int]:
    """Invert the two one-sided tests of every pool count M with scipy, one M at a time."""
    alpha = (1 - level) / 2
    c = 0.5 if mid_p else 1.0
    lower = [M for M in range(N + 1) if hypergeom.sf(x, N, M, k) + c * hypergeom.pmf(x, N, M, k) > alpha]
    upper = [M for M in range(N + 1) if hypergeom.cdf(x - 1, N, M, k) + c * hypergeom.pmf(x, N, M, k) > alpha]
    return min(lower), max(upper)


@pytest.mark.parametrize("N,k", [(30, 7), (41, 12), (25, 25), (61, 1)])
@pytest.mark.parametrize("mid_p", [True, False])
def test_interval_is_the_inversion_of_the_hypergeometric_tests(N, k, mid_p):
    x = np.arange(k + 1)
    low, high = count_interval(N, k, x, level=0.9, mid_p=mid_p)
    expected = np.array([brute_force_interval(N, k, int(v), 0.9, mid_p) for v in x])
    np.testing.assert_array_equal(low, expected[:, 0])
    np.testing.assert_array_equal(high, expected[:, 1])


def coverage_by_enumeration(N: int, k: int, level: float, mid_p: bool) -> np.ndarray:
    """Exact coverage of the interval at every pool count M = 0..N (summing over every possible draw)."""
    low, high = count_interval(N, k, np.arange(k + 1), level=level, mid_p=mid_p)
    M = np.arange(N + 1)[:, None]
    return (hypergeometric_table(N, k) * ((low[None, :] <= M) & (M <= high[None, :]))).sum(axis=1)


@pytest.mark.parametrize("N,k", [(40, 10), (120, 25), (300, 50)])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_exact_version_covers_every_count_and_mid_p_covers_on_average(N, k, level):
    assert coverage_by_enumeration(N, k, level, mid_p=False).min() >= level - 1e-9
    mid = coverage_by_enumeration(N, k, level, mid_p=True)
    assert level - 0.01 <= mid.mean() <= level + 0.05
    assert mid.mean() < coverage_by_enumeration(N, k, level, mid_p=False).mean()


def test_whole_pool_drawn_gives_the_count_itself():
    low, high = count_interval(20, 20, np.arange(21), level=0.95)
    np.testing.assert_array_equal(low, np.arange(21))
    np.testing.assert_array_equal(high, np.arange(21))


def test_one_stratum_is_the_uniform_interval_and_strata_cover_by_enumeration():
    x = np.arange(9)
    np.testing.assert_array_equal(stratified_count_interval([50], [8], x[:, None], level=0.9)[0],
                                  count_interval(50, 8, x, level=0.9)[0])
    sizes, ks = (60, 40), (8, 6)
    draws = np.array(list(itertools.product(range(ks[0] + 1), range(ks[1] + 1))))
    low, high = stratified_count_interval(sizes, ks, draws, level=0.9)
    coverage = []
    for M1, M2 in itertools.product(range(0, 61, 6), range(0, 41, 4)):
        p = hypergeometric_table(60, 8)[M1, draws[:, 0]] * hypergeometric_table(40, 6)[M2, draws[:, 1]]
        coverage.append((p * ((low <= M1 + M2) & (M1 + M2 <= high))).sum())
    assert 0.88 <= np.mean(coverage) <= 0.97


def test_stratified_estimate_with_kish_effective_items():
    # equal allocation over subtasks of 300 and 100 items: weights 30 and 10, deff = 20 x 10,000 / 400^2 = 1.25
    low, high = stratified_count_interval([300, 100], [10, 10], [[5, 5], [2, 9]], level=0.9)
    share = np.array([(5 * 30 + 5 * 10) / 400, (2 * 30 + 9 * 10) / 400])  # 0.5 and 0.375: 8 and 6 of 16
    expected = count_interval(400, 16, np.rint(16 * share).astype(int), level=0.9)
    np.testing.assert_array_equal(low, expected[0])
    np.testing.assert_array_equal(high, expected[1])
    # a subtask without chosen items takes the chosen items' mean: here the uniform interval of the rest
    np.testing.assert_array_equal(stratified_count_interval([50, 50], [10, 0], [[5, 0]], level=0.9),
                                  count_interval(100, 10, [5], level=0.9))


def test_bad_levels_and_counts_get_one_sentence():
    with pytest.raises(MdadError, match="confidence level"):
        count_interval(10, 3, [1], level=1.0)
    with pytest.raises(MdadError, match="between 0 and the 3 items"):
        count_interval(10, 3, [4])


def brute_force_order_probability(N: int, k: int, plus: int, minus: int, prior=None) -> float:
    """Posterior of the pool split M+ of m = round(d N / k) discordant items, a loop over M+ with scipy."""
    d = plus + minus
    m = min(max(round(d * N / k), d), N - (k - d))
    if m == 0:
        return 0.0
    before = np.ones(m + 1) if prior is None else np.array([prior(j / m) for j in range(m + 1)])
    weights = before * np.array([hypergeom.pmf(plus, m, j, d) for j in range(m + 1)])
    return float(weights[np.arange(m + 1) > m / 2].sum() / weights.sum())


def test_order_probability_matches_a_loop_and_pools_strata():
    cases = [(200, 20, 6, 2), (200, 20, 3, 3), (50, 10, 0, 4), (80, 80, 7, 5), (80, 80, 5, 5)]
    got = exact_order_probability([200], [20], [[6], [3]], [[2], [3]])
    np.testing.assert_allclose(got, [brute_force_order_probability(*c) for c in cases[:2]], atol=1e-12)
    for N, k, a, b in cases[2:]:
        np.testing.assert_allclose(exact_order_probability([N], [k], [[a]], [[b]]),
                                   [brute_force_order_probability(N, k, a, b)], atol=1e-12)
    assert exact_order_probability([80], [80], [[7], [5]], [[5], [5]]).tolist() == [1.0, 0.0]  # whole pool: certain
    assert exact_order_probability([300], [30], [[0]], [[0]]).tolist() == [0.0]  # no discordant item: a tie
    # strata: each stratum's discordant pool estimated on its own, then the counts pooled
    m = round(4 * 100 / 10) + round(3 * 60 / 6)
    d, plus = 7, 4
    weights = np.array([hypergeom.pmf(plus, m, j, d) for j in range(m + 1)])
    expected = weights[np.arange(m + 1) > m / 2].sum() / weights.sum()
    np.testing.assert_allclose(exact_order_probability([100, 60], [10, 6], [[3, 1]], [[1, 2]]), [expected], atol=1e-12)


def test_a_prior_from_the_leaderboard_weights_the_splits():
    rng = np.random.default_rng(5)
    scores = (rng.random((30, 200)) < rng.uniform(0.3, 0.7, size=(30, 1))).astype(float)
    prior = PairPrior.from_scores(scores)
    x = scores
    shares = [((x[a] == 1) & (x[b] == 0)).sum() / ((x[a] != x[b]).sum()) for a in range(30) for b in range(30) if a != b]
    np.testing.assert_allclose(prior.density, np.histogram(shares, bins=len(prior.density), range=(0, 1))[0] / len(shares))
    bins = len(prior.density)

    def density(share):
        return (1 - PRIOR_FLOOR) * prior.density[min(int(share * bins), bins - 1)] + PRIOR_FLOOR / bins

    for case in [(200, 20, 6, 2), (200, 40, 9, 5), (120, 30, 0, 3)]:
        np.testing.assert_allclose(exact_order_probability([case[0]], [case[1]], [[case[2]]], [[case[3]]], prior=prior),
                                   [brute_force_order_probability(*case, prior=density)], atol=1e-12)
    assert PairPrior.from_json(prior.to_json()).density.tolist() == prior.density.tolist()


@pytest.mark.parametrize("concentrated", [False, True])
def test_order_probability_is_calibrated_when_splits_follow_its_prior(concentrated):
    """Draw the pool's split from a prior, then a micro-benchmark: pairs given p keep their order p of the time.

    With a prior concentrated near 1/2 (close models, as on real leaderboards) the uniform prior is overconfident."""
    rng = np.random.default_rng(0)
    N, k, m = 400, 40, 120
    share = rng.beta(8, 8, size=6000) if concentrated else rng.uniform(size=6000)
    M_plus = np.minimum((share * (m + 1)).astype(int), m)
    pool = np.zeros((len(M_plus), N), dtype=np.int8)
    pool[:, :m] = -1
    pool[np.arange(N)[None, :] < M_plus[:, None]] = 1
    chosen = np.argsort(rng.random((len(M_plus), N)), axis=1)[:, :k]
    drawn = np.take_along_axis(pool, chosen, axis=1)
    plus, minus = (drawn == 1).sum(axis=1), (drawn == -1).sum(axis=1)
    counts = np.histogram(np.concatenate([share, 1 - share]), bins=PRIOR_BINS, range=(0, 1))[0]
    prior = PairPrior(counts / counts.sum()) if concentrated else None
    p = exact_order_probability([N], [k], plus[:, None], minus[:, None], prior=prior)
    held = M_plus > m / 2
    for lo, hi in ((0.0, 0.2), (0.2, 0.5), (0.5, 0.8), (0.8, 1.0)):
        here = (p >= lo) & (p < hi)
        assert abs(held[here].mean() - p[here].mean()) < 0.05, (lo, hi)
    if concentrated:
        flat = exact_order_probability([N], [k], plus[:, None], minus[:, None])
        sure = flat > 0.9
        assert held[sure].mean() < flat[sure].mean() - 0.05


def test_conformal_interval_covers_at_the_nominal_rate_on_simulated_data():
    """Residual spread depends on the estimate; fresh targets are exchangeable with the calibration ones."""
    rng = np.random.default_rng(1)

    def draw(n):
        truth = rng.uniform(0.05, 0.95, n)
        estimate = truth + rng.normal(0.01, 0.02 + 0.15 * truth * (1 - truth), n)
        return estimate, truth

    for level in (0.9, 0.95):
        covered, widths = [], []
        for _ in range(300):
            calibration = ConformalCalibration.fit(*draw(800))
            estimate, truth = draw(50)
            low, high = calibration.bounds(estimate, level=level)
            covered.append(np.mean((low <= truth) & (truth <= high)))
            widths.append(np.mean(high - low))
        se = np.std(covered) / np.sqrt(len(covered))
        assert level - 3 * se <= np.mean(covered) <= level + 2 / 201 + 3 * se
    # bins follow the estimate: narrower near the ends than mid-range
    calibration = ConformalCalibration.fit(*draw(2000))
    low, high = calibration.bounds(np.array([0.1, 0.5]), level=0.9)
    assert (high - low)[0] < (high - low)[1]


def test_conformal_bounds_are_order_statistics_of_the_residuals():
    residuals = np.linspace(-0.1, 0.1, 19)  # n = 19: 90% uses the 1st and 19th order statistics
    calibration = ConformalCalibration.fit(np.full(19, 0.5), 0.5 + residuals)
    low, high = calibration.bounds([0.5], level=0.9)
    np.testing.assert_allclose([low[0], high[0]], [0.4, 0.6])
    low, high = calibration.bounds([0.5], level=0.95)  # beyond the sample: the ends of [0, 1]
    assert (low[0], high[0]) == (0.0, 1.0)
    back = ConformalCalibration.from_json(calibration.to_json())
    np.testing.assert_array_equal(back.bounds([0.3], level=0.8), calibration.bounds([0.3], level=0.8))
