"""Anchor Points: correlations, medoids, cluster weights, constant items, and the paper's behaviour."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from mdad.data import ResponseMatrix, simulate, simulate_with_truth
from mdad.experiment.evaluate import evaluate_cell
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.methods import REGISTRY, SourceView, get
from mdad.methods.anchor_points import SWAP_PASSES, AnchorPoints, assign, item_correlations, item_distances
from mdad.metrics import agreement_curve, mdad_from_curve, pairwise_agreement
from mdad.seeding import rng_for


@pytest.fixture(scope="module")
def sim_view() -> SourceView:
    matrix, _ = simulate_with_truth(n_models=100, n_items=240, n_subtasks=3, seed=11)
    return SourceView.from_arrays(matrix.scores, matrix.gold_prob(), matrix.subtasks, True)


def zero_one_with_constant_items(seed: int = 0) -> np.ndarray:
    """0/1 answers of 60 models on 80 items; items 0-4 all wrong, 5-7 all right, 8-9 copies of 10-11."""
    rng = np.random.default_rng(seed)
    scores = (rng.random((60, 80)) < rng.uniform(0.2, 0.8, 80)).astype(np.float32)
    scores[:, :5] = 0
    scores[:, 5:8] = 1
    scores[:, 8:10] = scores[:, 10:12]
    return scores


def test_registered_by_name():
    assert REGISTRY["anchor-points"] is AnchorPoints
    assert isinstance(get("anchor-points"), AnchorPoints)


def test_correlations_match_numpy_on_varying_items(sim_view):
    corr = item_correlations(sim_view.gold_prob)
    assert corr.dtype == np.float64
    np.testing.assert_allclose(corr, np.corrcoef(sim_view.gold_prob.astype(np.float64), rowvar=False), atol=1e-5)


def test_distances_are_exact_integers_wherever_the_items_sit():
    # a matrix product rounds by position; the exact product does not: permuted items get the
    # permuted distances to the bit, and copies of an item its distances (docs/reproducibility.md)
    scores = zero_one_with_constant_items()
    order = np.random.default_rng(1).permutation(scores.shape[1])
    distance = item_distances(scores)
    assert distance.dtype == np.int32
    np.testing.assert_array_equal(item_distances(scores[:, order]), distance[np.ix_(order, order)])
    np.testing.assert_array_equal(distance[8], distance[10][[*range(8), 10, 11, 8, 9, *range(12, 80)]])
    np.testing.assert_allclose(1 - distance / 2.0**24, item_correlations(scores), atol=0)


def test_constant_items_have_defined_correlations():
    scores = zero_one_with_constant_items()
    corr = item_correlations(scores)
    assert np.isfinite(corr).all()
    np.testing.assert_array_equal(np.diag(corr), 1.0)
    np.testing.assert_array_equal(corr[:5, :5], 1.0)  # all-wrong items alike
    np.testing.assert_array_equal(corr[5:8, 5:8], 1.0)  # all-right items alike
    np.testing.assert_array_equal(corr[:5, 5:8], 0.0)  # all-wrong vs all-right
    np.testing.assert_array_equal(corr[:8, 8:], 0.0)  # constant vs varying
    np.testing.assert_allclose(corr[8:, 8:], np.corrcoef(scores[:, 8:], rowvar=False), atol=1e-5)


@pytest.mark.parametrize("k", [1, 10, 50, 200, 239, 240])
def test_k_distinct_medoids_with_cluster_share_weights(sim_view, k):
    micro = get("anchor-points")(sim_view, k, rng_for(0, k))
    n = sim_view.n_items
    assert micro.size == k == len(np.unique(micro.items))
    assert micro.uses_gold_prob
    assert micro.weights.sum() == pytest.approx(1.0)
    assert np.all(micro.weights >= 1 / n - 1e-12)  # every medoid is in its own cluster
    # every item joins the medoid it correlates with most (continuous data: no ties)
    corr = np.corrcoef(sim_view.gold_prob.astype(np.float64), rowvar=False)[micro.items]
    labels = np.argmax(corr, axis=0)
    labels[micro.items] = np.arange(k)
    np.testing.assert_allclose(micro.weights, np.bincount(labels, minlength=k) / n)


def test_estimate_is_weighted_gold_probability(sim_view):
    micro = get("anchor-points")(sim_view, 12, rng_for(1))
    probs = np.random.default_rng(0).random((3, 12))
    np.testing.assert_allclose(micro.estimate(np.zeros((3, 12)), probs), probs @ micro.weights)


@pytest.mark.parametrize("k", [3, 20, 70, 79, 80])
def test_constant_and_duplicate_items_on_zero_one_data(k):
    view = SourceView.from_arrays(zero_one_with_constant_items(1))
    assert not view.has_option_probs
    micro = get("anchor-points")(view, k, rng_for(2, k))
    assert micro.size == k == len(np.unique(micro.items))
    assert np.isfinite(micro.weights).all() and micro.weights.sum() == pytest.approx(1.0)
    assert np.all(micro.weights > 0)


def test_constant_items_form_their_own_cluster_when_it_pays():
    # 45 all-wrong items among 80: one medoid for them, carrying their share of the pool plus
    # the varying items that correlate negatively with every varying medoid (correlation 0 wins).
    scores = zero_one_with_constant_items(2)
    scores[:, 40:80] = 0
    scores[:, 5:8] = np.random.default_rng(3).random((60, 3)) < 0.5
    micro = get("anchor-points")(SourceView.from_arrays(scores), 6, rng_for(3))
    constant_items = np.r_[0:5, 40:80]
    constant = micro.items[np.isin(micro.items, constant_items)]
    assert len(constant) == 1
    varying_items = np.setdiff1d(np.arange(80), constant_items)
    varying_medoids = np.setdiff1d(micro.items, constant)
    corr = np.corrcoef(scores[:, varying_items], rowvar=False)
    to_medoids = corr[np.searchsorted(varying_items, varying_medoids)]
    joiners = np.sum(to_medoids.max(axis=0) < 0)
    assert micro.weights[micro.items == constant[0]][0] == pytest.approx((45 + joiners) / 80)


def test_assignment_is_the_nearest_medoid_ties_by_the_generators_draws():
    # the definition written out: per item, the tied nearest medoid with the largest draw of
    # rng.random((k, tied items)), one column per tied item in item order; ties are common (few distance levels)
    rng = np.random.default_rng(3)
    distance = rng.integers(0, 4, size=(6, 200)).astype(np.int32)
    medoids = np.array([7, 30, 61, 99, 150, 180])
    labels = assign(distance, medoids, np.random.default_rng(8))
    several = [item for item in range(200) if np.sum(distance[:, item] == distance[:, item].min()) > 1]
    assert 0 < len(several) < 200
    draws = np.random.default_rng(8).random((6, len(several)))
    for item in range(200):
        tied = np.flatnonzero(distance[:, item] == distance[:, item].min())
        expected = tied[np.argmax(draws[tied, several.index(item)])] if item in several else tied[0]
        assert labels[item] == (list(medoids).index(item) if item in medoids else expected)


def test_reproducible_from_seed(sim_view):
    """The start of FasterPAM and the tie-breaks of the assignment come from the selection's generator."""
    method = AnchorPoints()
    prepared = method.prepare(sim_view, rng_for(0, "prepare"))
    first = method.select(sim_view, 25, rng_for(5, "select"), prepared)
    again = method.select(sim_view, 25, rng_for(5, "select"), method.prepare(sim_view, rng_for(0, "prepare")))
    other = method.select(sim_view, 25, rng_for(6, "select"), prepared)
    np.testing.assert_array_equal(first.items, again.items)
    np.testing.assert_array_equal(first.weights, again.weights)
    assert not np.array_equal(first.items, other.items)


def test_a_size_has_the_same_estimates_alone_or_with_other_sizes_in_the_grid(small_sim):
    alone = Experiment(small_sim, ExperimentConfig(methods=("anchor-points",), sizes=(50,), sources=(60,), runs=2, targets=30)).run().frames
    together = Experiment(small_sim, ExperimentConfig(methods=("anchor-points",), sizes=(10, 25, 50), sources=(60,), runs=2, targets=30)).run().frames
    (cell,) = alone
    pd.testing.assert_frame_equal(alone[cell], together[cell])


def test_medoids_are_a_swap_local_optimum_on_a_small_pool():
    """No single swap of a medoid for a non-medoid lowers the k-medoids objective (checked by
    brute force): on a small pool FasterPAM's capped passes reach a local optimum, as in the reference."""
    matrix, _ = simulate_with_truth(n_models=40, n_items=70, n_subtasks=2, seed=4)
    view = SourceView.from_arrays(matrix.scores, matrix.gold_prob(), matrix.subtasks, True)
    method = AnchorPoints()
    prepared = method.prepare(view, rng_for(3))
    distance = prepared.astype(np.float64)
    for k in (10, 25, 40):
        medoids = method.choose(view, k, rng_for(3, "select", k), prepared).items
        best = distance[medoids].min(axis=0).sum()
        for position, other in itertools.product(range(k), np.setdiff1d(np.arange(70), medoids)):
            swapped = medoids.copy()
            swapped[position] = other
            assert distance[swapped].min(axis=0).sum() >= best - 1e-4


@pytest.mark.parametrize("k", [20, 100])
def test_capped_swap_passes_keep_nearly_all_of_the_objective_gain(k):
    """FasterPAM stopped after SWAP_PASSES passes (docs/deviations.md#anchor-points-swap-passes):
    on a pool where convergence takes more passes, at least 95% of the objective's fall from the
    random start to FasterPAM's converged medoids (same start), and within 0.2% of converged."""
    import kmedoids

    matrix = simulate(seed=2, n_models=60, n_items=1500, n_subtasks=3)
    view = SourceView.from_arrays(matrix.scores, matrix.gold_prob(), matrix.subtasks, True)
    method = AnchorPoints()
    distance = method.prepare(view, rng_for(0))
    start = np.sort(rng_for(7, "select").choice(1500, size=k, replace=False))  # what choose draws first
    converged = kmedoids.fasterpam(distance, start, max_iter=100, n_cpu=1)
    assert converged.n_iter > SWAP_PASSES  # the cap binds here
    medoids = method.choose(view, k, rng_for(7, "select"), distance).items

    def objective(items):
        return float(distance[items].min(axis=0).astype(np.int64).sum())

    start_loss, capped, best = objective(start), objective(medoids), float(converged.loss)
    assert best <= capped <= best * 1.002
    assert start_loss - capped >= 0.95 * (start_loss - best)


def _mdad(estimates: np.ndarray, truth: np.ndarray) -> float:
    agree, diff = pairwise_agreement(estimates, truth)
    return mdad_from_curve(agreement_curve(agree, diff), rng=np.random.default_rng(0)).value


def test_paper_behaviour_with_option_probabilities():
    """Much lower MDAD than uniform random at 10 items, and a floor as the size grows.

    The floor is the MDAD of the estimator Anchor Points tends to when every item is a
    medoid: the mean gold-option probability over the whole pool, which orders models
    differently from accuracy (computed here directly from the data).
    """
    matrix, _ = simulate_with_truth(n_models=200, n_items=600, n_subtasks=4, seed=1)
    sizes = (10, 25, 100, 296)
    config = ExperimentConfig(methods=("random", "anchor-points"), sizes=sizes, sources=(150,), runs=16)
    experiment = Experiment(matrix, config)
    frames = experiment.run().frames
    mdad = {(c.method, c.size): next(r["mdad"] for r in evaluate_cell(c, f)[0] if r["view"] == "seen") for c, f in frames.items()}
    assert mdad["anchor-points", 10] <= 0.6 * mdad["random", 10]

    splits = experiment.splits
    probs, scores = matrix.gold_prob().astype(np.float64), matrix.scores.astype(np.float64)
    pool_mean_prob = np.array([probs[np.ix_(t, s)].mean(axis=1) for t, s in zip(splits.targets, splits.seen, strict=True)])
    seen_accuracy = np.array([scores[np.ix_(t, s)].mean(axis=1) for t, s in zip(splits.targets, splits.seen, strict=True)])
    floor = _mdad(pool_mean_prob, seen_accuracy)
    assert floor >= 1.0
    assert all(mdad["anchor-points", k] >= floor - 0.5 for k in sizes)  # within one 0.5-point bin
    assert mdad["random", sizes[-1]] < floor - 0.5  # uniform random goes below it


def test_no_nan_and_no_degradation_on_real_zero_one_data(gpqa):
    """GPQA (0/1, a few items every source model gets right or wrong): finite estimates, and
    the error and MDAD fall as the size grows, up to 200 of the 224 seen items."""
    sizes = (10, 25, 50, 100, 200)
    config = ExperimentConfig(methods=("anchor-points",), sizes=sizes, runs=10)
    frames = Experiment(gpqa, config).run().frames
    rows = {c.size: evaluate_cell(c, f)[0][0] for c, f in frames.items()}
    assert all(np.isfinite(f["estimate"]).all() for f in frames.values())
    errors = [rows[k]["error"] for k in sizes]
    assert all(a > b for a, b in itertools.pairwise(errors))
    assert all(rows[k]["mdad_reached"] for k in sizes)
    assert rows[200]["mdad"] < rows[50]["mdad"] < rows[10]["mdad"]


def test_in_the_grid_on_zero_one_data_reproducible_with_finite_metrics(small_sim):
    """Through the experiment grid (0/1 scores only): same seed, same estimates; all metrics finite."""
    matrix = ResponseMatrix(scores=small_sim.scores, models=small_sim.models, items=small_sim.items, subtasks=small_sim.subtasks)
    config = ExperimentConfig(methods=("anchor-points",), sizes=(10, 40), sources=(60,), runs=3, targets=30)
    first, again = Experiment(matrix, config).run().frames, Experiment(matrix, config).run().frames
    for cell, frame in first.items():
        pd.testing.assert_frame_equal(frame, again[cell])
        rows, _ = evaluate_cell(cell, frame)
        assert all(np.isfinite([r["error"], r["kendall_tau"], r["pair_agreement"]]).all() for r in rows)
