"""Stratified sampling on confidence: strata, allocation, and an unbiased Horvitz-Thompson estimate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.sim_params import TEXTBOOK_2PL

from mdad.data import ResponseMatrix, simulate_with_truth
from mdad.experiment.evaluate import evaluate_cell
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.methods import REGISTRY, SourceView, get
from mdad.methods.stratified_confidence import (
    N_STRATA,
    StratifiedConfidence,
    allocate,
    horvitz_thompson,
    kmeans_1d,
    merge_small_strata,
    proxy_strata,
    sample_strata,
)
from mdad.seeding import rng_for


@pytest.fixture(scope="module")
def sim_view() -> tuple[SourceView, np.ndarray]:
    """Source models' view of a simulated pool (option probabilities) and one target's 0/1 scores."""
    matrix, _ = simulate_with_truth(n_models=81, n_items=300, n_subtasks=3, seed=5)
    view = SourceView.from_arrays(matrix.scores[:80], matrix.gold_prob()[:80], matrix.subtasks, True)
    return view, matrix.scores[80].astype(np.float64)


def design_variance(labels: np.ndarray, alloc: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Variance of the stratified mean given the allocation(s): sum_h W_h^2 (1 - f_h) S_h^2 / n_h.

    ``alloc`` is strata or draws x strata.
    """
    sizes = np.bincount(labels)
    s2 = np.array([y[labels == h].var(ddof=1) if sizes[h] > 1 else 0.0 for h in range(len(sizes))])
    return np.sum((sizes / len(y)) ** 2 * (1 - alloc / sizes) * s2 / alloc, axis=-1)


def optimal_inertia(x: np.ndarray, k: int) -> float:
    """Exact minimum within-cluster sum of squares of 1-D k-means, by dynamic programming over sorted x."""
    x = np.sort(x)
    n = len(x)
    s, q = np.concatenate([[0], np.cumsum(x)]), np.concatenate([[0], np.cumsum(x * x)])
    best = np.full((k + 1, n + 1), np.inf)
    best[0, 0] = 0.0
    for m in range(1, k + 1):
        for j in range(m, n + 1):
            i = np.arange(m - 1, j)
            best[m, j] = np.min(best[m - 1, i] + q[j] - q[i] - (s[j] - s[i]) ** 2 / (j - i))
    return best[k, n]


def inertia(x: np.ndarray, labels: np.ndarray) -> float:
    return sum(((x[labels == h] - x[labels == h].mean()) ** 2).sum() for h in np.unique(labels))


def test_registered_by_name():
    assert REGISTRY["stratified-confidence"] is StratifiedConfidence
    assert isinstance(get("stratified-confidence"), StratifiedConfidence)


def test_strata_are_ten_contiguous_intervals_of_the_proxy():
    proxy = np.random.default_rng(0).beta(2, 2, size=500)
    labels = proxy_strata(proxy, N_STRATA, np.random.default_rng(1))
    assert set(labels) == set(range(N_STRATA))
    highs = [proxy[labels == h].max() for h in range(N_STRATA)]
    lows = [proxy[labels == h].min() for h in range(N_STRATA)]
    assert all(high < low for high, low in zip(highs[:-1], lows[1:], strict=True))  # numbered in proxy order


def test_fewer_distinct_proxy_values_than_strata_give_one_stratum_per_value():
    proxy = np.repeat([0.0, 0.25, 0.5, 1.0], [10, 3, 40, 7])
    labels = proxy_strata(proxy, N_STRATA, np.random.default_rng(0))
    assert labels.max() + 1 == 4
    for value in np.unique(proxy):
        assert len(set(labels[proxy == value])) == 1


def test_kmeans_recovers_separated_groups_and_is_near_the_exact_optimum():
    rng = np.random.default_rng(3)
    centres = np.array([0.05, 0.3, 0.5, 0.9])
    x = np.repeat(centres, 25) + rng.normal(0, 0.01, 100)
    labels = proxy_strata(x, 4, rng)
    np.testing.assert_array_equal(labels, np.repeat(np.arange(4), 25))
    ratios = []
    for seed in range(10):
        x = np.random.default_rng(seed).beta(2, 3, 60)
        ratios.append(inertia(x, proxy_strata(x, 6, np.random.default_rng(seed))) / optimal_inertia(x, 6))
    assert max(ratios) < 1.15 and np.mean(ratios) < 1.03
    assert len(kmeans_1d(x, 6, rng)) == 5


def test_small_strata_merge_with_their_smaller_neighbour():
    labels = np.repeat(np.arange(10), [13, 39, 37, 33, 30, 24, 28, 13, 6, 1])  # N = 224
    # k = 10 needs N_h >= 22.4: 1 joins 6, the 7 joins 13, the first 13 joins 39, the 20 joins 28
    merged = merge_small_strata(labels, 10)
    np.testing.assert_array_equal(np.bincount(merged), [52, 37, 33, 30, 24, 48])
    assert np.all(np.diff(merged) >= 0)  # still numbered in proxy order
    np.testing.assert_array_equal(merge_small_strata(labels, 224), labels)  # every share >= 1 already
    np.testing.assert_array_equal(merge_small_strata(labels, 1), np.zeros(224))


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 60), min_size=1, max_size=12),
    fraction=st.floats(0, 1),
    seed=st.integers(0, 2**32 - 1),
)
def test_allocation_is_exactly_k_within_bounds(sizes, fraction, seed):
    sizes = np.array(sizes)
    k = len(sizes) + round(fraction * (sizes.sum() - len(sizes)))
    alloc = allocate(sizes, k, np.random.default_rng(seed))
    assert alloc.sum() == k
    assert np.all(alloc >= 1) and np.all(alloc <= sizes)
    rounded = np.clip(np.rint(k * sizes / sizes.sum()), 1, sizes)
    if rounded.sum() == k:
        np.testing.assert_array_equal(alloc, rounded)  # nothing to adjust: plain proportional rounding
    elif rounded.sum() < k:
        assert np.all(alloc >= rounded)  # only topped up
    else:
        assert np.all(alloc <= rounded)  # only trimmed


def test_sample_strata_takes_the_allocation_from_each_stratum():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 5, size=200)
    alloc = np.array([3, 1, 7, 2, 4])
    items = sample_strata(labels, alloc, rng)
    assert len(np.unique(items)) == len(items) == alloc.sum()
    np.testing.assert_array_equal(np.bincount(labels[items], minlength=5), alloc)


def test_horvitz_thompson_weights_by_hand():
    labels = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2, 2])  # N_h = 4, 2, 4; N = 10
    items = np.array([0, 1, 4, 6])  # n_h = 2, 1, 1
    np.testing.assert_allclose(horvitz_thompson(labels, items), [4 / 20, 4 / 20, 2 / 10, 4 / 10])


@pytest.mark.parametrize("k", [3, 10, 25, 57])
def test_horvitz_thompson_estimate_is_unbiased_for_the_seen_accuracy(sim_view, k):
    view, y = sim_view
    method = StratifiedConfidence()
    strata = method.prepare(view, rng_for(0, "prepare"))
    labels = strata.for_size(k)
    assert labels.max() + 1 <= min(k, N_STRATA)
    assert np.bincount(labels).min() * k >= len(labels)  # every stratum has a share of one item
    draws = 3000
    estimates, allocations = np.empty(draws), np.empty((draws, labels.max() + 1))
    for d in range(draws):
        micro = method.select(view, k, rng_for(0, "draw", k, d), strata)
        estimates[d] = micro.estimate(y[None, micro.items])[0]
        allocations[d] = np.bincount(labels[micro.items], minlength=labels.max() + 1)
    # law of total variance: the mean given the allocation is always the truth
    variance = design_variance(labels, allocations, y).mean()
    standard_error = np.sqrt(variance / draws)
    assert abs(estimates.mean() - y.mean()) < 4 * standard_error
    assert estimates.var(ddof=1) == pytest.approx(variance, rel=0.12)


def variance_ratios(matrix, n_sources: int, k: int = 50) -> np.ndarray:
    """Per held-out model: the stratified design's variance over simple random sampling's, strata from the sources."""
    view = SourceView.from_arrays(matrix.scores[:n_sources], matrix.gold_prob()[:n_sources], matrix.subtasks, True)
    method = StratifiedConfidence()
    strata = method.prepare(view, rng_for(0, "prepare"))
    n = view.n_items
    micro = method.select(view, k, rng_for(0, "one"), strata)
    labels = strata.for_size(k)
    ratios = []
    for y in matrix.scores[n_sources:].astype(np.float64):
        srs_variance = y.var(ddof=1) / k * (1 - k / n)
        ratios.append(design_variance(labels, np.bincount(labels[micro.items]), y) / srs_variance)
    return np.array(ratios)


def test_stratification_beats_simple_random_sampling():
    # where the items' difficulty predicts each model's answers (a textbook 2PL leaderboard), by a wide margin
    textbook, _ = simulate_with_truth(n_models=81, n_items=300, n_subtasks=3, seed=5, params=TEXTBOOK_2PL)
    assert variance_ratios(textbook, 80)[0] < 0.9
    # on the calibrated (real-like, noisier) leaderboard still on average over held-out models
    calibrated, _ = simulate_with_truth(n_models=91, n_items=300, n_subtasks=3, seed=5)
    assert variance_ratios(calibrated, 80).mean() < 1.0


def test_proxy_is_mean_gold_probability_or_mean_correctness(sim_view):
    view, _ = sim_view
    method = StratifiedConfidence()
    with_probs = method.prepare(view, rng_for(0, "p"))
    np.testing.assert_allclose(with_probs.proxy, view.gold_prob.astype(np.float64).mean(axis=0))
    zero_one = SourceView.from_arrays(view.scores)
    assert not zero_one.has_option_probs
    without = method.prepare(zero_one, rng_for(0, "p"))
    np.testing.assert_allclose(without.proxy, view.scores.astype(np.float64).mean(axis=0))
    assert not np.allclose(with_probs.proxy, without.proxy)


def test_micro_benchmark_shape_and_exact_estimate_of_constants(sim_view):
    view, _ = sim_view
    for k in (1, 9, 10, 100, view.n_items):
        micro = get("stratified-confidence")(view, k, rng_for(1, k))
        assert len(np.unique(micro.items)) == micro.size == k
        assert micro.weights.sum() == pytest.approx(1.0)
        assert not micro.uses_gold_prob  # the estimate is of 0/1 accuracy
        assert micro.estimate(np.ones((1, k)))[0] == pytest.approx(1.0)


def test_all_items_alike_is_one_stratum_and_the_plain_mean():
    view = SourceView.from_arrays(np.ones((20, 60), np.float32))
    micro = get("stratified-confidence")(view, 12, rng_for(0))
    np.testing.assert_allclose(micro.weights, 1 / 12)


def test_reproducible_from_seed(sim_view):
    view, _ = sim_view
    method = StratifiedConfidence()

    def run(seed):
        prepared = method.prepare(view, rng_for(seed, "prepare"))
        return method.select(view, 25, rng_for(seed, "select"), prepared)

    first, again, other = run(7), run(7), run(8)
    np.testing.assert_array_equal(first.items, again.items)
    np.testing.assert_array_equal(first.weights, again.weights)
    assert not np.array_equal(first.items, other.items)


def test_in_the_grid_on_zero_one_data_reproducible_with_finite_metrics(small_sim):
    """Through the experiment grid (0/1 scores only): same seed, same estimates; all metrics finite."""
    matrix = ResponseMatrix(scores=small_sim.scores, models=small_sim.models, items=small_sim.items, subtasks=small_sim.subtasks)
    config = ExperimentConfig(methods=("stratified-confidence",), sizes=(10, 40), sources=(60,), runs=3, targets=30)
    first, again = Experiment(matrix, config).run().frames, Experiment(matrix, config).run().frames
    for cell, frame in first.items():
        pd.testing.assert_frame_equal(frame, again[cell])
        rows, _ = evaluate_cell(cell, frame)
        assert all(np.isfinite([r["error"], r["kendall_tau"], r["pair_agreement"]]).all() for r in rows)
