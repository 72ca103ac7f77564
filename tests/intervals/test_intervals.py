"""Intervals and order probabilities against brute force: enumeration, independent loops, simulation with known truth."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import hypergeom
from support.paths import ROOT
from support.sim_designs import simulated_pairs

from mdad.errors import MdadError
from mdad.intervals import (
    ConformalCalibration,
    count_interval,
    exact_order_probability,
    stratified_count_interval,
)
from mdad.intervals.finite import coverage_by_count, hypergeometric_table
from mdad.intervals.order import PRIOR_BINS, PairPrior


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
    return (hypergeometric_table(N, k) * ((low[None, :] <= M) & (high[None, :] >= M))).sum(axis=1)


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
    np.testing.assert_array_equal(stratified_count_interval([50], [8], x[:, None], level=0.9)[0], count_interval(50, 8, x, level=0.9)[0])
    sizes, ks = (60, 40), (8, 6)
    draws = np.array(list(itertools.product(range(ks[0] + 1), range(ks[1] + 1))))
    low, high = stratified_count_interval(sizes, ks, draws, level=0.9)
    coverage = []
    for M1, M2 in itertools.product(range(0, 61, 6), range(0, 41, 4)):
        p = hypergeometric_table(60, 8)[M1, draws[:, 0]] * hypergeometric_table(40, 6)[M2, draws[:, 1]]
        coverage.append((p * ((low <= M1 + M2) & (high >= M1 + M2))).sum())
    assert 0.88 <= np.mean(coverage) <= 0.97


def test_stratified_estimate_with_kish_effective_items():
    # equal allocation over subtasks of 300 and 100 items: weights 30 and 10, deff = 20 x 10,000 / 400^2 = 1.25
    low, high = stratified_count_interval([300, 100], [10, 10], [[5, 5], [2, 9]], level=0.9)
    share = np.array([(5 * 30 + 5 * 10) / 400, (2 * 30 + 9 * 10) / 400])  # 0.5 and 0.375: 8 and 6 of 16
    expected = count_interval(400, 16, np.rint(16 * share).astype(int), level=0.9)
    np.testing.assert_array_equal(low, expected[0])
    np.testing.assert_array_equal(high, expected[1])
    # a subtask without chosen items takes the chosen items' mean: here the uniform interval of the rest
    np.testing.assert_array_equal(stratified_count_interval([50, 50], [10, 0], [[5, 0]], level=0.9), count_interval(100, 10, [5], level=0.9))


def test_bad_levels_and_counts_get_one_sentence():
    with pytest.raises(MdadError, match="confidence level"):
        count_interval(10, 3, [1], level=1.0)
    with pytest.raises(MdadError, match="between 0 and the 3 items"):
        count_interval(10, 3, [4])


def brute_force_order_probability(N: int, k: int, plus: int, minus: int, prior=None) -> float:
    """Posterior mass of M+ > m/2 given the chosen discordant items, a double loop over (m, M+) with scipy.

    ``prior(m, j)``: prior weight of (m, M+ = j); default uniform over m = 1..N and, given m, over j."""
    d = plus + minus
    num = den = 0.0
    for m in range(1, N + 1):
        p_d = hypergeom.pmf(d, N, m, k)
        if p_d == 0:
            continue
        for j in range(m + 1):
            w = (1.0 / N / (m + 1) if prior is None else prior(m, j)) * p_d * hypergeom.pmf(plus, m, j, d)
            den += w
            num += w * (2 * j > m)
    return num / den


@pytest.mark.parametrize(
    "N,k,plus,minus", [(40, 8, 2, 0), (40, 8, 1, 1), (30, 10, 0, 3), (60, 12, 3, 2), (50, 10, 0, 0), (25, 25, 4, 3), (25, 25, 3, 3)]
)
def test_order_probability_with_a_uniform_prior_is_the_double_loop(N, k, plus, minus):
    got = exact_order_probability([N], [k], [[plus]], [[minus]])
    np.testing.assert_allclose(got, [brute_force_order_probability(N, k, plus, minus)], atol=1e-9)


def test_whole_pool_drawn_is_certain_and_no_discordant_item_is_a_coin_short_of_ties():
    assert exact_order_probability([80], [80], [[7], [5]], [[5], [5]]).tolist() == [1.0, 0.0]
    # strata drawn whole: certain as well
    assert exact_order_probability([30, 20], [30, 20], [[2, 3]], [[4, 0]]).tolist() == [1.0]
    tie_free = exact_order_probability([300], [30], [[0]], [[0]])[0]
    assert 0.3 < tie_free < 0.5  # symmetric prior: (1 - P(tie)) / 2


def test_many_discordant_values_give_the_full_sum():
    """Hundreds of values of m and M+: the posterior is the full double loop."""
    N, k, plus, minus = 600, 40, 9, 5
    m = np.arange(1, N + 1)
    p_d = hypergeom.pmf(plus + minus, N, m, k)
    num = den = 0.0
    for mm, w in zip(m, p_d, strict=True):
        if w < 1e-300:
            continue
        j = np.arange(mm + 1)
        like = w / (mm + 1) * hypergeom.pmf(plus, mm, j, plus + minus)
        den += like.sum()
        num += like[2 * j > mm].sum()
    assert exact_order_probability([N], [k], [[plus]], [[minus]])[0] == pytest.approx(num / den, abs=1e-6)


def test_stratified_designs_use_the_uniform_likelihood_with_the_stratified_estimate_of_m():
    # proportional allocation (10% of each subtask): the uniform design of the pooled counts
    np.testing.assert_allclose(
        exact_order_probability([100, 60], [10, 6], [[3, 1]], [[1, 2]]), exact_order_probability([160], [16], [[4]], [[3]]), atol=1e-12
    )
    # equal allocation: m estimated as 2 x 100/5 + 1 x 20/5 = 44, the uniform design with 120 x 3 / 44 = 8 draws
    np.testing.assert_allclose(
        exact_order_probability([100, 20], [5, 5], [[2, 0]], [[0, 1]]), exact_order_probability([120], [8], [[2]], [[1]]), atol=1e-12
    )


def test_order_probability_is_the_posterior_under_the_source_pairs():
    """Tiny pool: every (m, M+) has its own prior cell, so the answer is the posterior under the source pairs'
    empirical distribution, enumerated pair by pair."""
    rng = np.random.default_rng(3)
    N = 8
    m = rng.integers(1, N + 1, 20000)
    plus = rng.binomial(m, np.where(m <= 3, 0.8, 0.5))
    prior = PairPrior.from_pairs(N, plus, m - plus)
    atoms_m = np.concatenate([m, m])
    atoms_j = np.concatenate([plus, m - plus])  # both orders of each pair
    for k in (2, 3, 5):
        for d in range(1, k + 1):
            p_d = np.nan_to_num(hypergeom.pmf(d, N, atoms_m, k))
            for K in range(d + 1):
                w = p_d * np.nan_to_num(hypergeom.pmf(K, atoms_m, atoms_j, d))
                if w.sum() < 1e-6:
                    continue
                expected = w[2 * atoms_j > atoms_m].sum() / w.sum()
                got = exact_order_probability([N], [k], [[K]], [[d - K]], prior=prior)[0]
                assert got == pytest.approx(expected, abs=0.02), (k, d, K)


@pytest.mark.parametrize("design", ["uniform", "proportional"])
def test_order_probability_is_calibrated_on_pairs_from_the_prior_population(design):
    """Known truth: pairs drawn from a population with near-duplicates, the prior from an independent sample of it.
    Pairs given p keep their order p of the time, also those with one or two discordant chosen items."""
    rng = np.random.default_rng(0)
    N, k = 300, 30
    prior = PairPrior.from_pairs(N, *simulated_pairs(rng, 30000, N))
    M_plus, M_minus = simulated_pairs(rng, 30000, N)
    pool = np.zeros((len(M_plus), N), dtype=np.int8)
    pool[np.arange(N)[None, :] < (M_plus + M_minus)[:, None]] = -1
    pool[np.arange(N)[None, :] < M_plus[:, None]] = 1
    chosen = np.argsort(rng.random((len(M_plus), N)), axis=1)[:, :k]
    drawn = np.take_along_axis(pool, chosen, axis=1)
    if design == "uniform":
        plus, minus = (drawn == 1).sum(axis=1)[:, None], (drawn == -1).sum(axis=1)[:, None]
        p = exact_order_probability([N], [k], plus, minus, prior=prior)
    else:  # the same draw read as two subtasks of the pool (items by position), 10% drawn from each
        first = np.sort(rng.choice(N, N // 2, replace=False))
        mask = np.zeros(N, bool)
        mask[first] = True
        pool_a, pool_b = pool[:, mask], pool[:, ~mask]
        pick_a = np.argsort(rng.random(pool_a.shape), axis=1)[:, : k // 2]
        pick_b = np.argsort(rng.random(pool_b.shape), axis=1)[:, : k // 2]
        da, db = np.take_along_axis(pool_a, pick_a, axis=1), np.take_along_axis(pool_b, pick_b, axis=1)
        plus = np.stack([(da == 1).sum(axis=1), (db == 1).sum(axis=1)], axis=1)
        minus = np.stack([(da == -1).sum(axis=1), (db == -1).sum(axis=1)], axis=1)
        p = exact_order_probability([N // 2, N - N // 2], [k // 2, k // 2], plus, minus, prior=prior)
        plus, minus = plus.sum(axis=1), minus.sum(axis=1)
    plus, minus = np.ravel(plus), np.ravel(minus)
    held = M_plus > M_minus
    shown = plus > minus  # as in estimate: the order the micro-benchmark shows
    for lo, hi in ((0.0, 0.5), (0.5, 0.6), (0.6, 0.8), (0.8, 0.95), (0.95, 1.01)):
        here = shown & (p >= lo) & (p < hi)
        if here.sum() < 200:
            continue
        se = np.sqrt(0.25 / here.sum())
        assert abs(held[here].mean() - p[here].mean()) < 0.02 + 3 * se, (lo, hi, here.sum())
    few = shown & (plus + minus <= 2)
    assert few.sum() > 1000 and abs(held[few].mean() - p[few].mean()) < 0.05
    # the share histogram alone (no dependence on m) misses the band for those pairs
    flat_m = PairPrior(np.array([1]), prior.mass.sum(axis=0, keepdims=True))
    p_flat = exact_order_probability([N], [k], plus[:, None], minus[:, None], prior=flat_m)
    assert abs(held[few].mean() - p_flat[few].mean()) > 0.05


def test_an_unequal_allocation_may_rank_a_pair_against_its_order_probability_and_both_are_right():
    """Equal design over subtasks of 240 and 60 items (15 drawn from each): the stratified estimate weights the small
    subtask's items 4 times less, the order probability pools the discordant counts (docs/intervals.md#exact-order-probability).
    Pairs the stratified estimates rank first may get p < 0.5, and they hold that rarely: every bin is calibrated
    against the known truth, also below 0.5."""
    rng = np.random.default_rng(0)
    N, na, per = 300, 240, 15
    prior = PairPrior.from_pairs(N, *simulated_pairs(rng, 30000, N))
    M_plus, M_minus = simulated_pairs(rng, 30000, N)
    position = np.arange(N)[None, :]
    labels = np.where(position < M_plus[:, None], 1, np.where(position < (M_plus + M_minus)[:, None], -1, 0))
    pool = np.take_along_axis(labels, np.argsort(rng.random(labels.shape), axis=1), axis=1)  # discordant items anywhere
    parts = [pool[:, :na], pool[:, na:]]
    drawn = [np.take_along_axis(part, np.argsort(rng.random(part.shape), axis=1)[:, :per], axis=1) for part in parts]
    plus = np.stack([(part == 1).sum(axis=1) for part in drawn], axis=1)
    minus = np.stack([(part == -1).sum(axis=1) for part in drawn], axis=1)
    p = exact_order_probability([na, N - na], [per, per], plus, minus, prior=prior)
    shown = (plus - minus) @ np.array([na / per, (N - na) / per]) > 0  # the order the stratified estimates show
    held = M_plus > M_minus
    assert (shown & (p < 0.5)).sum() > 1000
    for lo, hi in ((0.0, 0.5), (0.5, 0.6), (0.6, 0.8), (0.8, 0.95), (0.95, 1.01)):
        here = shown & (p >= lo) & (p < hi)
        if here.sum() < 100:
            continue
        se = np.sqrt(0.25 / here.sum())
        assert abs(held[here].mean() - p[here].mean()) < 0.02 + 3 * se, (lo, hi, here.sum())


def test_a_prior_from_the_leaderboard_counts_every_pair_in_both_orders_by_discordant_items():
    rng = np.random.default_rng(5)
    scores = (rng.random((30, 200)) < rng.uniform(0.3, 0.7, size=(30, 1))).astype(float)
    prior = PairPrior.from_scores(scores)
    edges = prior.edges
    counts = np.zeros_like(prior.mass)
    for a in range(30):
        for b in range(30):
            if a != b:
                m = int((scores[a] != scores[b]).sum())
                share = ((scores[a] == 1) & (scores[b] == 0)).sum() / m
                counts[np.searchsorted(edges, m, side="right") - 1, min(int(share * PRIOR_BINS), PRIOR_BINS - 1)] += 1
    np.testing.assert_allclose(prior.mass.sum(axis=1), counts.sum(axis=1) / counts.sum())
    assert (prior.mass[counts.sum(axis=1) == 0] == 0).all()
    back = PairPrior.from_json(prior.to_json())
    np.testing.assert_allclose(back.mass, prior.mass, rtol=1e-12)
    assert back.edges.tolist() == edges.tolist()
    # a file of an older mdad: the share histogram alone, read as one bin of m
    old = PairPrior.from_json({"bins": PRIOR_BINS, "density": [1.0] * PRIOR_BINS})
    np.testing.assert_allclose(
        exact_order_probability([40], [8], [[2]], [[1]], prior=old), exact_order_probability([40], [8], [[2]], [[1]]), atol=1e-12
    )
    with pytest.raises(MdadError, match="pair prior"):
        PairPrior.from_json({"m_edges": [2, 1], "mass": [[1.0] * PRIOR_BINS] * 2})


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


def test_what_each_interval_promises_is_the_table_of_the_docs():
    """docs/intervals.md#what-each-interval-promises, recomputed by enumeration: Clopper-Pearson covers at least
    the level for every pool count, mid-p only on average over them (and under the level for many)."""
    text = (ROOT / "docs" / "intervals.md").read_text()
    section = text.split("## What each interval promises")[1].split("\n## ")[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| 9")]
    assert len(rows) == 10
    for row in rows:
        level, k, *cells = [cell.strip() for cell in row]
        level, k = float(level.rstrip("%")) / 100, int(k)
        mid = coverage_by_count(448, k, level=level)
        exact = coverage_by_count(448, k, level=level, mid_p=False)
        shown = [float(cell.rstrip("%")) for cell in cells[:5]]
        computed = [100 * mid.min(), 100 * mid.mean(), 100 * (mid < level).mean(), 100 * exact.min(), 100 * exact.mean()]
        rounding = np.array([0.05, 0.05, 0.5, 0.05, 0.05]) + 1e-9  # the table's digits
        assert (np.abs(np.subtract(shown, computed)) <= rounding).all(), (level, k, shown, computed)
        assert exact.min() >= level and mid.mean() >= level and mid.min() < level - 0.01


@pytest.mark.parametrize("mid_p", [True, False])
def test_coverage_by_count_is_the_enumeration_over_the_draw(mid_p):
    N, k, level = 40, 9, 0.9
    x = np.arange(k + 1)
    low, high = count_interval(N, k, x, level=level, mid_p=mid_p)
    expected = [sum(hypergeom.pmf(c, N, M, k) for c in x if low[c] <= M <= high[c]) for M in range(N + 1)]
    np.testing.assert_allclose(coverage_by_count(N, k, level=level, mid_p=mid_p), expected, atol=1e-12)
