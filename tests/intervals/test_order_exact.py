"""The random designs' order probability is the full double sum over m and M+ (docs/intervals.md#exact-order-probability).

The reference here is written independently of mdad.intervals.order: a loop over every m the
draw allows and every M+ = 0..m, with scipy's hypergeometric distribution and the prior's own
``m_weights`` and ``share_weights``.
"""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from scipy.special import gammaln
from scipy.stats import hypergeom
from support.sim_designs import simulated_pairs

from mdad.intervals import PairPrior, exact_order_probability
from mdad.intervals.order import EXACTNESS, PRIOR_BINS, order_posterior


def hypergeometric_pmf(x, population, successes, draws) -> np.ndarray:
    """P(X = x), X hypergeometric, from log-gamma (as scipy.stats.hypergeom.pmf, and fast on large grids)."""
    x, n, s, r = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (x, population, successes, draws)))
    ok = (x >= 0) & (x <= s) & (r - x >= 0) & (r - x <= n - s)

    def log_comb(a, b):
        return gammaln(a + 1) - gammaln(b + 1) - gammaln(np.maximum(a - b, 0) + 1)

    return np.where(ok, np.exp(log_comb(s, np.where(ok, x, 0)) + log_comb(n - s, np.where(ok, r - x, 0)) - log_comb(n, r)), 0.0)


def full_double_sum(prior: PairPrior, N: int, k: int, d: int) -> np.ndarray | None:
    """P(M+ > m/2 | d, K+) for K+ = 0..d: every m from d (at least 1) to N - k + d, every M+ = 0..m
    (None when no m allows d)."""
    m_weight = prior.m_weights(N)
    held = np.zeros(d + 1)
    total = np.zeros(d + 1)
    K = np.arange(d + 1)[:, None]
    for m in range(max(d, 1), N - (k - d) + 1):
        w = m_weight[m] * hypergeometric_pmf(d, N, m, k)
        if w == 0:
            continue
        j = np.arange(m + 1)
        share = prior.share_weights(np.array([m]), j[None, :], np.ones((1, m + 1), bool))[0]
        like = w * share[None, :] * hypergeometric_pmf(K, m, j[None, :], d)  # (K+, M+)
        total += like.sum(axis=1)
        held += like[:, 2 * j > m].sum(axis=1)
    return held / total if total.sum() > 0 else None


def test_the_reference_pmf_is_scipys():
    x, n, s, r = np.meshgrid(np.arange(6), [5, 9, 30], [0, 2, 5], [0, 3, 5], indexing="ij")
    np.testing.assert_allclose(hypergeometric_pmf(x, n, s, r), hypergeom.pmf(x, n, s, r), rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize(
    "m,d,K,e", [(0, 0, 0, 1), (5, 2, 1, 3), (9, 4, 0, 10), (9, 4, 4, 7), (12, 5, 2, 0), (12, 5, 3, 6), (20, 1, 1, 11), (7, 7, 3, 8)]
)
def test_a_run_of_the_likelihood_over_m_plus_is_a_hypergeometric_tail(m, d, K, e):
    """sum_{j<e} C(j, K) C(m-j, d-K) = C(m+1, d+1) P(X >= K+1), X hypergeometric (m+1, e, d+1)."""
    direct = sum(comb(j, K) * comb(m - j, d - K) for j in range(e))
    tail = hypergeom.sf(K, m + 1, e, d + 1)
    assert direct == pytest.approx(comb(m + 1, d + 1) * tail, rel=1e-12, abs=1e-12)


def assert_full_sum(prior: PairPrior, N: int, cases) -> None:
    for k, d in cases:
        expected = full_double_sum(prior, N, k, d)
        if expected is None:  # the draw rules out d discordant items: nothing to compare
            continue
        np.testing.assert_allclose(order_posterior(prior, N, k, d), expected, atol=1e-6, err_msg=f"k={k}, d={d}")
        K = d // 2 + 1 if d else 0  # through the public function, one pair
        got = exact_order_probability([N], [k], [[K]], [[d - K]], prior=prior)[0]
        assert got == pytest.approx(expected[K], abs=1e-6), (k, d, K)


CASES = [(k, d) for k in (10, 30, 100) for d in range(6)] + [(100, 12), (100, 40), (300, 25), (440, 3)]


def test_order_probability_is_the_full_sum_with_a_simulated_prior():
    rng = np.random.default_rng(11)
    N = 448
    prior = PairPrior.from_pairs(N, *simulated_pairs(rng, 20000, N))
    assert_full_sum(prior, N, CASES)


def test_order_probability_is_the_full_sum_with_the_gpqa_leaderboard_prior(gpqa):
    """A real prior: every pair of GPQA's models. The grid of earlier versions was off by up to 0.15 here."""
    prior = PairPrior.from_scores(gpqa.scores)
    assert_full_sum(prior, gpqa.n_items, CASES)


def test_order_probability_is_the_full_sum_on_a_tiny_pool_and_a_uniform_prior():
    prior = PairPrior.uniform()
    for N in (1, 2, 5, 17):
        assert_full_sum(prior, N, [(k, d) for k in range(1, N + 1) for d in range(min(k, 5) + 1)])


def test_left_out_values_of_m_are_within_the_stated_bound():
    """Only weights of m below EXACTNESS x PRIOR_FLOOR / ((d + 1) x their number) of the largest are left out:
    on a pool where that leaves out most of the range the answer still matches the full sum."""
    rng = np.random.default_rng(2)
    N = 1500
    prior = PairPrior.from_pairs(N, *simulated_pairs(rng, 20000, N))
    assert EXACTNESS <= 1e-9
    assert_full_sum(prior, N, [(700, 3), (700, 30)])


def test_share_bins_given_m_are_the_bins_the_prior_puts_each_m_plus_in():
    """Bin starts agree with share_weights' bin of every M+ (floating point included) for every m up to 3000,
    and the per-bin prior is share_weights' value there."""
    prior = PairPrior.from_pairs(3000, *simulated_pairs(np.random.default_rng(4), 5000, 3000))
    m = np.arange(1, 3001)
    starts = prior.share_bin_starts(m)
    for mm, row in zip(m, starts, strict=True):
        j = np.arange(mm + 1)
        expected = np.minimum((j / mm * PRIOR_BINS).astype(np.int64), PRIOR_BINS - 1)
        np.testing.assert_array_equal(np.repeat(np.arange(PRIOR_BINS), np.diff(row)), expected, err_msg=str(mm))
    some = np.array([1, 7, 49, 50, 51, 333, 2999])
    heights = prior.share_bin_weights(some, prior.share_bin_starts(some))
    for mm, height, row in zip(some, heights, prior.share_bin_starts(some), strict=True):
        j = np.arange(mm + 1)
        direct = prior.share_weights(np.array([mm]), j[None, :], np.ones((1, mm + 1), bool))[0]
        np.testing.assert_allclose(np.repeat(height, np.diff(row)), direct, rtol=1e-12)
