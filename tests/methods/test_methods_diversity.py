"""Diversity: graded monomials, the projection-DPP sampler against brute force, features, fallbacks."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist, pdist
from scipy.stats import chisquare

from mdad.data import ResponseMatrix, simulate_with_truth
from mdad.experiment.evaluate import evaluate_cell
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.methods import REGISTRY, SourceView, dpp, get
from mdad.methods.diversity import HALF_WIDTH, Diversity, diversity_features, pca_scores
from mdad.methods.dpp import graded_exponents, ope_bases, ope_basis, sample_projection_dpp, vandermonde
from mdad.seeding import rng_for


@pytest.fixture(scope="module")
def sim_view() -> SourceView:
    matrix, _ = simulate_with_truth(n_models=90, n_items=300, n_subtasks=3, seed=21)
    return SourceView.from_arrays(matrix.scores, matrix.gold_prob(), matrix.subtasks, True)


def test_registered_by_name():
    assert REGISTRY["diversity"] is Diversity
    assert isinstance(get("diversity"), Diversity)


@pytest.mark.parametrize("k, d", [(1, 2), (6, 2), (16, 2), (17, 2), (30, 3), (200, 4)])
def test_graded_order_groups_monomials_by_largest_exponent(k, d):
    # The order written out from its definition: layers of largest exponent 0, 1, 2, ...,
    # each in lexicographic order.
    expected, top = [], 0
    while len(expected) < k:
        expected += [t for t in itertools.product(range(top + 1), repeat=d) if max(t) == top]
        top += 1
    np.testing.assert_array_equal(graded_exponents(k, d), np.array(expected[:k]))


def test_vandermonde_evaluates_the_monomials():
    points = np.random.default_rng(0).uniform(-1, 1, (9, 3))
    exps = graded_exponents(12, 3)
    expected = np.array([[np.prod(p**e) for e in exps] for p in points])
    np.testing.assert_allclose(vandermonde(points, 12), expected)
    # the grid's largest size: degree up to 5 in each of 4 dimensions, to rounding
    points = np.random.default_rng(1).uniform(-0.99, 0.99, (50, 4))
    exps = graded_exponents(1000, 4)
    expected = np.array([[np.prod(p**e) for e in exps] for p in points])
    columns = vandermonde(points, 1000)
    assert columns.flags.f_contiguous
    np.testing.assert_allclose(columns, expected, rtol=1e-14, atol=0)


def _dpp_probabilities(basis: np.ndarray) -> dict[tuple[int, ...], float]:
    kernel = basis @ basis.T
    r = basis.shape[1]
    return {s: np.linalg.det(kernel[np.ix_(s, s)]) for s in itertools.combinations(range(len(basis)), r)}


@pytest.mark.parametrize("n, k, chunk", [(6, 3, None), (5, 2, None), (6, 3, 1)])
def test_sampler_matches_brute_force_dpp_probabilities(n, k, chunk, monkeypatch):
    if chunk is not None:  # the directions multiplied by every row one at a time (CHUNK at work)
        monkeypatch.setattr(dpp, "CHUNK", chunk)
    rng = np.random.default_rng(n * 10 + k)
    basis = ope_basis(rng.uniform(-0.99, 0.99, (n, 2)), k)
    exact = _dpp_probabilities(basis)
    assert sum(exact.values()) == pytest.approx(1.0)
    draws = 12_000
    counts = dict.fromkeys(exact, 0)
    for _ in range(draws):
        sample = sample_projection_dpp(basis, rng)
        assert len(set(sample)) == k
        counts[tuple(sorted(sample))] += 1
    observed = np.array([counts[s] for s in exact])
    expected = np.array([exact[s] for s in exact]) * draws
    assert chisquare(observed, expected).pvalue > 1e-3
    assert observed[expected < 1e-9].sum() == 0  # impossible sets never drawn


def test_sampler_inclusion_probabilities_are_the_kernel_diagonal():
    """A projection DPP includes item i with probability K_ii: checked on 150 items and rank 24,
    where the sampler's blocked updates and rejections are at work (several updates per sample)."""
    rng = np.random.default_rng(3)
    basis = ope_basis(rng.uniform(-0.99, 0.99, (150, 3)), 24)
    inclusion = np.einsum("ij,ij->i", basis, basis)
    draws = 3000
    counts = np.zeros(150)
    for _ in range(draws):
        sample = sample_projection_dpp(basis, rng)
        assert len(np.unique(sample)) == 24
        counts[sample] += 1
    z = (counts - draws * inclusion) / np.sqrt(draws * inclusion * (1 - inclusion))
    assert np.abs(z).max() < 4.5
    assert np.mean(z**2) == pytest.approx(1.0, abs=0.35)  # chi-square / 150 degrees of freedom


def test_chunked_products_draw_the_same_items(monkeypatch):
    """The sampler's products of every row with the directions, computed a few directions at a time
    (with their second orthogonalisation deferred to then), give the draws of computing them only at
    the variances' updates: the same projections up to rounding."""
    basis = ope_basis(np.random.default_rng(4).uniform(-0.99, 0.99, (300, 4)), 70)
    once = [sample_projection_dpp(basis, np.random.default_rng(seed)) for seed in range(20)]
    monkeypatch.setattr(dpp, "CHUNK", 3)
    chunked = [sample_projection_dpp(basis, np.random.default_rng(seed)) for seed in range(20)]
    for a, b in zip(once, chunked, strict=True):
        np.testing.assert_array_equal(a, b)


def test_rank_deficient_monomials_give_their_rank():
    points = np.repeat([[-0.5], [0.1], [0.9]], 4, axis=0)  # 3 distinct points span 3 monomials
    basis = ope_basis(points, 5)
    assert basis.shape == (12, 3)
    np.testing.assert_allclose(basis.T @ basis, np.eye(3), atol=1e-10)
    full = ope_basis(np.random.default_rng(1).uniform(-1, 1, (20, 2)), 7)
    np.testing.assert_allclose(full.T @ full, np.eye(7), atol=1e-10)


def test_basis_is_orthonormal_whichever_way_q_is_formed():
    """Q is the triangular solve A R^-1 when the column-normalised monomials are well conditioned, and
    Householder's Q otherwise: orthonormal either way, spanning the columns, with R such that A = Q R."""
    from mdad.methods.dpp import SOLVE_CONDITION, orthonormal_columns

    points = np.random.default_rng(5).uniform(-0.99, 0.99, (500, 3))
    columns = vandermonde(points, 60)
    q, r = orthonormal_columns(columns.copy(order="F"))
    assert q.flags.c_contiguous
    np.testing.assert_allclose(q.T @ q, np.eye(60), atol=1e-12)
    np.testing.assert_allclose(q @ r, columns, atol=1e-12)
    # nearly dependent columns (condition about 1e11): a solve would lose orthogonality, Householder's Q does not
    spread = np.random.default_rng(6).normal(size=(400, 5))
    spread[:, 4] = spread[:, 3] + 1e-11 * spread[:, 0]
    assert np.linalg.cond(spread / np.linalg.norm(spread, axis=0)) > 10 * SOLVE_CONDITION
    q, r = orthonormal_columns(spread.copy(order="F"))
    np.testing.assert_allclose(q.T @ q, np.eye(5), atol=1e-13)
    np.testing.assert_allclose(q @ r, spread, atol=1e-12)
    solved = np.linalg.solve(r.T, spread.T).T  # what the solve would have given
    assert np.abs(solved.T @ solved - np.eye(5)).max() > 1e-8


def test_one_qr_gives_every_sizes_basis():
    # the first k columns of the largest size's Q span the first k monomials, as a QR of those alone
    points = np.random.default_rng(3).uniform(-0.99, 0.99, (400, 4))
    sizes = (10, 25, 60, 150)
    bases = ope_bases(points, sizes)
    for k in sizes:
        alone = ope_basis(points, k)
        assert bases[k].shape == alone.shape
        np.testing.assert_allclose(bases[k] @ bases[k].T, alone @ alone.T, atol=1e-9)  # the same DPP kernel
    # sizes beyond the independent monomials get their own rank-limited basis
    few = np.repeat([[-0.5, 0.2], [0.1, -0.3], [0.9, 0.4], [0.3, 0.3]], 5, axis=0)
    bases = ope_bases(few, (3, 4, 6))
    assert [bases[k].shape[1] for k in (3, 4, 6)] == [3, 4, 4]
    for k in (3, 4, 6):
        np.testing.assert_allclose(bases[k] @ bases[k].T, ope_basis(few, k) @ ope_basis(few, k).T, atol=1e-9)
    # distinct points on a line: the third monomial (x) repeats the second (y), the smaller size still shares
    line = np.linspace(-0.9, 0.9, 30)[:, None] * np.ones(2)
    bases = ope_bases(line, (2, 3, 8))
    for k in (2, 3, 8):
        alone = ope_basis(line, k)
        assert bases[k].shape == alone.shape
        np.testing.assert_allclose(bases[k] @ bases[k].T, alone @ alone.T, atol=1e-9)


def test_sizes_chosen_together_are_the_sizes_chosen_alone(sim_view):
    method = Diversity()
    features = method.prepare(sim_view, np.random.default_rng(0))
    sizes = (5, 20, 60, 120)
    together = method.choose_sizes(sim_view, sizes, lambda k: np.random.default_rng(k), features)
    for k in sizes:
        np.testing.assert_array_equal(together[k].items, method.choose(sim_view, k, np.random.default_rng(k), features).items)


@pytest.mark.parametrize("shape", [(40, 300), (300, 40), (50, 3)])
def test_pca_scores_match_scikit_learn_up_to_sign(shape):
    from sklearn.decomposition import PCA

    features = np.random.default_rng(shape[0]).random(shape)
    expected = PCA(n_components=min(4, *shape)).fit_transform(features)
    # to the precision of the exact Gram matrix and of the rounded scores (docs/reproducibility.md)
    np.testing.assert_allclose(np.abs(pca_scores(features)), np.abs(expected), atol=4e-6 * np.abs(expected).max())
    collinear = np.c_[np.arange(10.0), 2 * np.arange(10.0)]
    assert pca_scores(collinear).shape == (10, 1)  # components without variance are dropped


def test_features_pca_trim_and_rescale(sim_view):
    features = diversity_features(sim_view.gold_prob)
    scores = pca_scores(sim_view.gold_prob.T)
    assert scores.shape == (sim_view.n_items, 4)
    # the PCA scores agree with scikit-learn's up to the sign of each component
    from sklearn.decomposition import PCA

    reference = PCA(n_components=4).fit_transform(sim_view.gold_prob.T.astype(np.float64))
    np.testing.assert_allclose(np.abs(scores), np.abs(reference), atol=4e-6 * np.abs(reference).max())  # rounded scores
    low, high = np.quantile(scores, [0.01, 0.99], axis=0)
    inside = np.all((scores >= low) & (scores <= high), axis=1)
    np.testing.assert_array_equal(features.trimmed, np.flatnonzero(inside))
    for points in (features.trimmed_points, features.all_points):
        np.testing.assert_allclose(points.min(axis=0), -HALF_WIDTH)
        np.testing.assert_allclose(points.max(axis=0), HALF_WIDTH)
    assert features.all_points.shape == (sim_view.n_items, 4)


@pytest.mark.parametrize("shape", [(300, 8), (40, 300)])
def test_pca_scores_are_exact_functions_of_the_items(shape):
    # items answered alike get the same scores to the bit, wherever they sit in the matrix (a
    # matrix product rounds rows differently by position), and every component's sign puts its
    # largest score (the first of equal magnitudes) above zero: docs/reproducibility.md
    rng = np.random.default_rng(3)
    features = (rng.random(shape) < 0.5).astype(float)
    features[-5:] = features[:5]
    order = rng.permutation(shape[0])
    scores, permuted = pca_scores(features), pca_scores(features[order])
    np.testing.assert_array_equal(scores[-5:], scores[:5])
    np.testing.assert_array_equal(permuted, scores[order])
    largest = np.argmax(np.abs(scores), axis=0)
    assert np.all(scores[largest, np.arange(scores.shape[1])] > 0)
    np.testing.assert_array_equal(pca_scores(-features), scores)  # centring removes the sign of the data


@pytest.mark.parametrize("k", [1, 10, 50, 150])
def test_exactly_k_distinct_trimmed_items(sim_view, k):
    micro = get("diversity")(sim_view, k, rng_for(0, k))
    features = diversity_features(sim_view.gold_prob)
    assert micro.size == k == len(np.unique(micro.items))
    assert np.isin(micro.items, features.trimmed).all()
    np.testing.assert_allclose(micro.weights, 1 / k)
    assert not micro.uses_gold_prob


def test_dpp_sample_is_more_spread_than_uniform(sim_view):
    method = Diversity()
    features = method.prepare(sim_view, rng_for(0))
    position = {item: i for i, item in enumerate(features.trimmed)}
    points = features.trimmed_points
    rng = np.random.default_rng(4)
    k, draws = 20, 200

    def spread(rows):  # mean distance from a chosen point to its nearest chosen neighbour
        d = cdist(points[rows], points[rows])
        np.fill_diagonal(d, np.inf)
        return d.min(axis=1).mean()

    dpp = [spread([position[i] for i in method.select(sim_view, k, rng, features).items]) for _ in range(draws)]
    uniform = [spread(rng.choice(len(points), k, replace=False)) for _ in range(draws)]
    assert np.mean(dpp) > 1.1 * np.mean(uniform)
    assert np.mean(dpp) - np.mean(uniform) > 5 * np.sqrt((np.var(dpp) + np.var(uniform)) / draws)


def test_size_beyond_the_trimmed_pool_uses_the_whole_pool(sim_view):
    features = diversity_features(sim_view.gold_prob)
    k = len(features.trimmed) + 5
    micro = get("diversity")(sim_view, k, rng_for(1))
    assert micro.size == k == len(np.unique(micro.items))
    assert not np.isin(micro.items, features.trimmed).all()
    everything = get("diversity")(sim_view, sim_view.n_items, rng_for(1))
    np.testing.assert_array_equal(everything.items, np.arange(sim_view.n_items))


@pytest.mark.parametrize("sources", [1, 2, 3])
def test_degenerate_features_still_give_k_distinct_items(sources):
    """Few source models on 0/1 data: few PCA dimensions and many identical feature points."""
    scores = (np.random.default_rng(sources).random((sources, 60)) < 0.5).astype(np.float32)
    view = SourceView.from_arrays(scores)
    features = diversity_features(view.gold_prob)
    assert features.all_points.shape[1] <= min(sources, 4)
    for k in (5, 30, 59):
        micro = get("diversity")(view, k, rng_for(sources, k))
        assert micro.size == k == len(np.unique(micro.items))


def test_identical_items_give_a_uniform_sample():
    view = SourceView.from_arrays(np.ones((10, 40), np.float32))
    features = diversity_features(view.gold_prob)
    assert features.all_points.shape == (40, 0)
    micro = get("diversity")(view, 7, rng_for(0))
    assert micro.size == 7 == len(np.unique(micro.items))


def test_zero_one_data_uses_correctness_as_features(sim_view):
    zero_one = SourceView.from_arrays(sim_view.scores)
    assert not zero_one.has_option_probs
    np.testing.assert_allclose(np.abs(pca_scores(zero_one.gold_prob.T)), np.abs(pca_scores(sim_view.scores.T)), atol=1e-9)
    micro = get("diversity")(zero_one, 25, rng_for(0))
    assert micro.size == 25 == len(np.unique(micro.items))


def test_reproducible_from_seed(sim_view):
    method = Diversity()
    prepared = method.prepare(sim_view, rng_for(0, "prepare"))
    first = method.select(sim_view, 30, rng_for(9, "select"), prepared)
    again = method.select(sim_view, 30, rng_for(9, "select"), method.prepare(sim_view, rng_for(1, "prepare")))
    other = method.select(sim_view, 30, rng_for(10, "select"), prepared)
    np.testing.assert_array_equal(first.items, again.items)
    assert not np.array_equal(first.items, other.items)
    assert pdist(np.c_[first.items]).min() > 0


def test_in_the_grid_on_zero_one_data_reproducible_with_finite_metrics(small_sim):
    """Through the experiment grid (0/1 scores only): same seed, same estimates; all metrics finite."""
    matrix = ResponseMatrix(scores=small_sim.scores, models=small_sim.models, items=small_sim.items, subtasks=small_sim.subtasks)
    config = ExperimentConfig(methods=("diversity",), sizes=(10, 40), sources=(60,), runs=3, targets=30)
    first, again = Experiment(matrix, config).run().frames, Experiment(matrix, config).run().frames
    for cell, frame in first.items():
        pd.testing.assert_frame_equal(frame, again[cell])
        rows, _ = evaluate_cell(cell, frame)
        assert all(np.isfinite([r["error"], r["kendall_tau"], r["pair_agreement"]]).all() for r in rows)


def test_a_basis_where_lapacks_divide_and_conquer_does_not_converge(monkeypatch):
    """ope_basis falls back to the QR-iteration SVD when gesdd fails (it did on a rank-deficient matrix of
    MMLU-Pro's items with one BLAS thread): the same span, orthonormal, of the same rank."""
    points = np.repeat(np.random.default_rng(3).uniform(-0.99, 0.99, (12, 2)), 3, axis=0)  # 12 distinct points: rank-deficient
    expected = ope_basis(points, 20)

    def failing(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(np.linalg, "svd", failing)
    basis = ope_basis(points, 20)
    assert basis.shape == expected.shape == (36, 12)
    np.testing.assert_allclose(basis.T @ basis, np.eye(12), atol=1e-10)
    np.testing.assert_allclose(basis @ basis.T, expected @ expected.T, atol=1e-10)  # the same projection kernel
