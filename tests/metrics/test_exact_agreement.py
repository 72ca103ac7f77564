"""Exact pair agreement of random designs: brute force, Monte Carlo, and the normal approximation's bound."""

from __future__ import annotations

from itertools import combinations, permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdad import methods
from mdad.methods import SourceView
from mdad.metrics import exact

# The normal approximation's error, measured on the grid below: |normal - exact| <= C / sd(X).
NORMAL_ERROR_CONSTANT = 0.25


def normal_sign_probabilities(N, k, n_plus, n_minus) -> exact.SignProbabilities:
    """Normal approximation of (P(K+ > K-), P(K+ < K-)) with finite-population and continuity corrections,
    the exact answers' quick rival: its error is at most NORMAL_ERROR_CONSTANT / sd(X) (tested below).

    X = K+ - K- has mean k mu and variance k s2 (N - k) / (N - 1), where mu = (n+ - n-)/N and
    s2 = (n+ + n-)/N - mu^2 are the mean and variance of an item's +1/-1/0 contribution.
    P(X >= 1) ~ 1 - Phi((0.5 - E X) / sd), P(X <= -1) ~ Phi((-0.5 - E X) / sd).
    """
    N, k, n_plus, n_minus = (np.asarray(x, dtype=np.float64) for x in np.broadcast_arrays(N, k, n_plus, n_minus))
    mu = (n_plus - n_minus) / np.maximum(N, 1)
    s2 = (n_plus + n_minus) / np.maximum(N, 1) - mu**2
    var = k * s2 * np.where(N > 1, (N - k) / np.maximum(N - 1, 1), 0.0)
    return exact.SignProbabilities(*exact.normal_tails(k * mu, var, 0.5))


def normal_sign_probabilities_scores(N, k, mean_diff, var_diff, continuity: bool = False) -> exact.SignProbabilities:
    """Normal approximation for any scores: the order of two models' plain means over k of N items.

    ``mean_diff`` and ``var_diff`` are the mean and (population) variance over the pool of the
    per-item score difference d = score1 - score2. The sum of d over the draw has mean
    k mean_diff and variance k var_diff (N - k) / (N - 1). For continuous scores ties have
    probability zero (``continuity=False``); for 0/1 scores ``continuity=True`` gives
    :func:`normal_sign_probabilities`. Arrays may carry a trailing strata axis (then N, k,
    mean_diff, var_diff are per stratum and the strata sums are independent).
    """
    N, k, m, v = (np.asarray(x, dtype=np.float64) for x in np.broadcast_arrays(N, k, mean_diff, var_diff))
    fpc = np.where(N > 1, (N - k) / np.maximum(N - 1, 1), 0.0)
    return exact.SignProbabilities(*exact.normal_tails(k * m, k * v * fpc, 0.5 if continuity else 0.0))


def brute_force(items: np.ndarray, k: int):
    """P(sum > 0), P(sum < 0) and the pmf of the sum over all k-subsets of +1/-1/0 items."""
    sums = np.array([int(items[list(c)].sum()) for c in combinations(range(len(items)), k)], dtype=np.int64)
    return (sums > 0).mean(), (sums < 0).mean(), sums


def pool(n_plus, n_minus, n0):
    return np.array([1] * n_plus + [-1] * n_minus + [0] * n0, dtype=np.int64)


@given(st.integers(0, 5), st.integers(0, 5), st.integers(0, 4), st.data())
@settings(max_examples=120, deadline=None)
def test_exact_equals_enumeration_of_all_subsets(n_plus, n_minus, n0, data):
    N = n_plus + n_minus + n0
    k = data.draw(st.integers(0, N))
    want_pos, want_neg, sums = brute_force(pool(n_plus, n_minus, n0), k)
    pos, neg = exact.sign_probabilities(N, k, n_plus, n_minus)
    assert pos == pytest.approx(want_pos, abs=1e-12) and neg == pytest.approx(want_neg, abs=1e-12)
    pmf, offset = exact.difference_pmf(N, k, n_plus, n_minus)
    np.testing.assert_allclose(pmf[0], np.bincount(sums + offset, minlength=pmf.shape[1]) / len(sums), atol=1e-12)


def test_vectorised_over_pairs_and_symmetric():
    rng = np.random.default_rng(1)
    n_plus, n_minus = rng.integers(0, 120, 500), rng.integers(0, 120, 500)
    pos, neg = exact.sign_probabilities(300, 40, n_plus, n_minus)
    for i in range(0, 500, 97):
        one = exact.sign_probabilities(300, 40, n_plus[i], n_minus[i])
        np.testing.assert_allclose([pos[i], neg[i]], np.ravel(one), atol=1e-14)
    swapped = exact.sign_probabilities(300, 40, n_minus, n_plus)
    np.testing.assert_allclose(swapped[0], neg, atol=1e-13)
    assert np.all(pos + neg <= 1 + 1e-12)
    # drawing every item reproduces the pool's order; ties of the pool always disagree
    full_pos, _ = exact.sign_probabilities(300, 300, n_plus, n_minus)
    np.testing.assert_allclose(full_pos, (n_plus > n_minus).astype(float), atol=1e-10)
    agree = exact.agreement(pos, neg, n_plus - n_minus)
    assert np.all(agree[n_plus == n_minus] == 0)


def test_exact_matches_monte_carlo():
    rng = np.random.default_rng(7)
    cases = [(400, 25, 60, 45), (400, 100, 90, 80), (1000, 10, 300, 200), (150, 149, 30, 29)]
    draws = 200_000
    for N, k, n_plus, n_minus in cases:
        counts = rng.multivariate_hypergeometric([n_plus, n_minus, N - n_plus - n_minus], k, size=draws)
        x = counts[:, 0] - counts[:, 1]
        pos, neg = exact.sign_probabilities(N, k, n_plus, n_minus)
        for p, hits in ((pos, x > 0), (neg, x < 0)):
            se = np.sqrt(p * (1 - p) / draws) + 1e-9
            assert abs(hits.mean() - p) < 4.5 * se, (N, k, n_plus, n_minus)


def normal_error_grid():
    out = []
    for N in (20, 50, 200, 1000, 3000):
        a = np.arange(0, N + 1, max(1, N // 40))
        P, M = (g.ravel() for g in np.meshgrid(a, a))
        P, M = P[P + M <= N], M[P + M <= N]
        for k in sorted({1, 2, 5, 10, 25, 100, 250, N // 2, N - 1, N} - {0}):
            if k > N:
                continue
            pos, neg = exact.sign_probabilities(N, k, P, M)
            npos, nneg = normal_sign_probabilities(N, k, P, M)
            mu = (P - M) / N
            var = k * ((P + M) / N - mu**2) * (N - k) / (N - 1)
            out.append(np.c_[var, np.maximum(abs(pos - npos), abs(neg - nneg))])
    return np.concatenate(out)


def test_normal_approximation_error_bound_on_a_grid():
    """Stated bound: |normal - exact| <= 0.25 / sd(X), X = K+ - K-; so <= 0.05 once Var(X) >= 25."""
    grid = normal_error_grid()
    var, err = grid[:, 0], grid[:, 1]
    positive = var > 1e-12
    assert np.all(err[positive] * np.sqrt(var[positive]) <= NORMAL_ERROR_CONSTANT)
    assert err[var >= 25].max() <= 0.05
    assert err[~positive].max() < 1e-10  # no randomness left: both are the same point mass


@given(st.integers(30, 3000), st.floats(0.01, 1.0), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
@settings(max_examples=150, deadline=None)
def test_normal_approximation_bound_holds_at_random_points(N, frac_k, frac_disc, frac_plus, _):
    k = max(1, int(frac_k * N))
    m = int(frac_disc * N)
    n_plus = int(frac_plus * m)
    n_minus = m - n_plus
    pos, neg = exact.sign_probabilities(N, k, n_plus, n_minus)
    npos, nneg = normal_sign_probabilities(N, k, n_plus, n_minus)
    mu = (n_plus - n_minus) / N
    var = k * ((n_plus + n_minus) / N - mu**2) * (N - k) / (N - 1)
    if var > 1e-12:
        assert max(abs(pos - npos), abs(neg - nneg)) * np.sqrt(var) <= NORMAL_ERROR_CONSTANT


# ---- strata ---------------------------------------------------------------------------------


def stratified_brute_force(strata_items, alloc):
    """Sign probabilities of the sum of independent uniform draws of alloc[s] items per stratum."""
    per = [np.array([items[list(c)].sum() for c in combinations(range(len(items)), a)]) for items, a in zip(strata_items, alloc, strict=True)]
    total = per[0]
    for sums in per[1:]:
        total = (total[:, None] + sums[None, :]).ravel()
    return (total > 0).mean(), (total < 0).mean()


def test_stratified_fixed_allocation_equals_enumeration():
    strata = [pool(3, 1, 2), pool(1, 3, 1), pool(2, 2, 3)]
    sizes = np.array([len(s) for s in strata])
    n_plus = np.array([[3, 1, 2]])
    n_minus = np.array([[1, 3, 2]])
    for alloc in ([2, 2, 3], [1, 0, 4], [6, 5, 0], [3, 3, 3]):
        pos, neg = exact.stratified_sign_probabilities(sizes, n_plus, n_minus, alloc)
        assert (pos[0], neg[0]) == pytest.approx(stratified_brute_force(strata, alloc), abs=1e-12)


def test_equal_design_mixes_every_remainder_choice_exactly():
    strata = [pool(2, 1, 1), pool(0, 2, 1), pool(1, 1, 3), pool(2, 0, 0)]
    sizes = np.array([len(s) for s in strata])
    n_plus = np.array([[2, 0, 1, 2]])
    n_minus = np.array([[1, 2, 1, 0]])
    for k in range(1, int(sizes.sum()) + 1):
        base, room = methods.random.equal_allocation_base(sizes, k)
        r = k - base.sum()
        want = []
        for extra in combinations(room.tolist(), r):
            alloc = base.copy()
            alloc[list(extra)] += 1
            want.append(stratified_brute_force(strata, alloc))
        pos, neg = exact.equal_design_sign_probabilities(sizes, n_plus, n_minus, k)
        assert (pos[0], neg[0]) == pytest.approx(tuple(np.mean(want, axis=0)), abs=1e-12), k


def successive_sampling_allocation_law(sizes, k):
    """Exact law of the per-subtask counts when items are drawn one by one with weight 1/size of their subtask."""
    items = np.repeat(np.arange(len(sizes)), sizes)
    weights = 1.0 / np.asarray(sizes, float)[items]
    law = {}
    for seq in permutations(range(len(items)), k):
        p, left = 1.0, weights.sum()
        for i in seq:
            p *= weights[i] / left
            left -= weights[i]
        key = tuple(np.bincount(items[list(seq)], minlength=len(sizes)))
        law[key] = law.get(key, 0.0) + p
    return law


def test_proportional_allocations_follow_the_design():
    sizes = np.array([1, 2, 4])
    k = 3
    law = successive_sampling_allocation_law(sizes, k)
    draws = 40_000
    allocs, freq = exact.proportional_allocations(sizes, k, np.random.default_rng(3), draws)
    got = {tuple(a): f for a, f in zip(allocs, freq, strict=True)}
    # the method itself (numpy choice with p, replace=False) draws the same law
    view = SourceView.from_arrays(np.zeros((1, sizes.sum())), subtasks=np.repeat(np.arange(3), sizes))
    rng = np.random.default_rng(4)
    method = methods.get("random-stratified-proportional")
    own = [tuple(np.bincount(view.subtasks[method.select(view, k, rng).items], minlength=3)) for _ in range(draws)]
    for key, p in law.items():
        se = np.sqrt(p * (1 - p) / draws)
        assert abs(got.get(key, 0.0) - p) < 4.5 * se
        assert abs(own.count(key) / draws - p) < 4.5 * se


def test_continuous_scores_normal_approximation_against_simulation():
    rng = np.random.default_rng(11)
    N, k, draws = 600, 60, 20_000
    for shift in (0.0, 0.01, 0.03):
        d = np.clip(rng.beta(2, 5, N) - rng.beta(2, 5, N) + shift, -1, 1)
        pos, neg = normal_sign_probabilities_scores(N, k, d.mean(), d.var())
        keys = rng.random((draws, N))
        chosen = np.argpartition(keys, k - 1, axis=1)[:, :k]
        sums = d[chosen].sum(axis=1)
        assert abs((sums > 0).mean() - pos) < 0.015
        assert abs((sums < 0).mean() - neg) < 0.015
