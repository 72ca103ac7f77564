"""tinyBenchmarks: anchors, the p-IRT and gp-IRT estimators, and one IRT fit per run."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from support.sim_params import TEXTBOOK_2PL

import mdad.methods.tinybenchmarks as tb
from mdad import methods
from mdad.data import simulate_with_truth
from mdad.errors import MdadError
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.methods import SourceView
from mdad.methods.kmeans import kmeans
from mdad.seeding import rng_for

NAMES = ("tinybenchmarks", "tinybenchmarks-pirt", "tinybenchmarks-gpirt")


@pytest.fixture(scope="module")
def sim():
    matrix, truth = simulate_with_truth(n_models=140, n_items=300, n_subtasks=3, dims=3, seed=11, with_option_probs=False, params=TEXTBOOK_2PL)
    return matrix, truth


@pytest.fixture(scope="module")
def prepared(sim):
    matrix, _ = sim
    view = SourceView.from_arrays(matrix.scores[40:], subtasks=matrix.subtasks)
    return view, tb.TinyPreparation(view, np.random.default_rng(0))


def test_registered_with_one_shared_preparation():
    classes = [methods.REGISTRY[name] for name in NAMES]
    assert len({cls.preparation for cls in classes}) == 1
    assert classes[0].preparation is not None


def test_anchors_are_each_clusters_member_nearest_its_centroid():
    rng = np.random.default_rng(1)
    embedding = rng.normal(size=(80, 4))
    anchors, weights = tb.anchor_points(embedding, 7, np.random.default_rng(2))
    # brute force from the same k-means (the same generator state)
    km = kmeans(embedding, 7, np.random.default_rng(2), n_init=tb.KMEANS_STARTS)
    labels = km.labels
    expected, shares = [], []
    for c in range(7):
        members = np.flatnonzero(labels == c)
        dist = [np.linalg.norm(embedding[j] - km.centres[c]) for j in members]
        expected.append(members[int(np.argmin(dist))])
        shares.append(len(members) / 80)
    order = np.argsort(expected)
    np.testing.assert_array_equal(np.sort(anchors), np.array(expected)[order])
    np.testing.assert_allclose(weights[np.argsort(anchors)], np.array(shares)[order])
    assert len(set(anchors.tolist())) == 7
    assert weights.sum() == pytest.approx(1.0)


def test_pirt_equals_brute_force_on_a_tiny_case():
    rng = np.random.default_rng(3)
    n_pool, d = 9, 2
    a, b = rng.normal(size=(n_pool, d)), rng.normal(size=n_pool)
    items = np.array([1, 4, 6])
    scores = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    estimate = tb.pirt_estimate(scores, items, a, b)
    for t in range(len(scores)):

        def objective(theta, t=t):
            p = 1 / (1 + np.exp(-(a[items] @ theta - b[items])))
            return -np.sum(scores[t] * np.log(p) + (1 - scores[t]) * np.log(1 - p)) + 0.5 * theta @ theta

        theta = minimize(objective, np.zeros(d), method="BFGS", options={"gtol": 1e-10}).x
        total = 0.0
        for j in range(n_pool):
            if j in items:
                total += scores[t, list(items).index(j)]
            else:
                total += 1 / (1 + np.exp(-(a[j] @ theta - b[j])))
        assert estimate[t] == pytest.approx(total / n_pool, abs=1e-6)


def test_gpirt_lambda_is_the_papers_rule():
    for bias, variance, k in [(0.03, 0.2, 10), (0.1, 0.25, 100), (0.0, 0.2, 5), (0.05, 0.0, 5), (0.0, 0.0, 3)]:
        lam = tb.gpirt_lambda(bias, variance, k)
        assert 0.0 <= lam <= 1.0
        if bias or variance:
            assert lam == pytest.approx(bias**2 / (bias**2 + variance / (4 * k)))
        else:
            assert lam == 1.0


def test_lambda_ingredients_match_independent_computations(prepared):
    view, prep = prepared
    per_model = [np.mean((row - row.mean()) ** 2) for row in view.scores.astype(float)]
    assert prep.variance == pytest.approx(np.mean(per_model))
    assert 0.0 < prep.bias < 0.2
    # bias: the same held-out computation, written with per-model scipy fits, after r rounds of the
    # held-out fit (a fit stopped after r rounds is the fit with r rounds of 3 iterations), for
    # r = 3, 4, ... until a round moves it by less than the tolerance
    scores = view.scores.astype(float)
    n, m = scores.shape

    def independent_bias(rounds: int) -> float:
        rng = np.random.default_rng(prep._validation_seed)
        order = rng.permutation(n)
        n_val = round(0.2 * n)
        val, train = np.sort(order[:n_val]), np.sort(order[n_val:])
        fit = tb.fit_irt(scores[train], dims=tb.DIMS, rng=rng, max_iter=3 * rounds, max_rounds=rounds)
        perm = rng.permutation(m)
        seen, unseen = np.sort(perm[: m // 2]), np.sort(perm[m // 2 :])
        errors = []
        for i in val:

            def objective(theta, i=i):
                z = fit.a[seen] @ theta - fit.b[seen]
                return np.sum(np.logaddexp(0, z) - scores[i, seen] * z) + 0.5 * theta @ theta

            theta = minimize(objective, np.zeros(tb.DIMS), method="BFGS", options={"gtol": 1e-8}).x
            predicted = np.mean(1 / (1 + np.exp(-(fit.a[unseen] @ theta - fit.b[unseen]))))
            errors.append(abs(predicted - scores[i, unseen].mean()))
        return float(np.mean(errors))

    assert tb.VALIDATION_ITERATIONS == 3 * tb.VALIDATION_ROUNDS and tb.BIAS_FIRST_CHECK == 3
    found = [independent_bias(tb.BIAS_FIRST_CHECK)]
    for rounds in range(tb.BIAS_FIRST_CHECK + 1, tb.VALIDATION_ROUNDS + 1):
        found.append(independent_bias(rounds))
        if abs(found[-1] - found[-2]) < tb.BIAS_TOLERANCE:
            break
    assert prep.bias == pytest.approx(found[-1], abs=1e-4)


def test_lighter_validation_fit_gives_the_bias_of_a_full_fit(prepared, monkeypatch):
    """gp-IRT's held-out fit uses a smaller iteration budget than the main fit; lambda's bias must not notice."""
    view, prep = prepared
    monkeypatch.setattr(tb, "VALIDATION_ITERATIONS", None)  # the main fit's schedule
    monkeypatch.setattr(tb, "VALIDATION_ROUNDS", None)
    full = tb.pirt_bias(prep.scores, tb.DIMS, np.random.default_rng(prep._validation_seed))
    assert prep.bias == pytest.approx(full, abs=0.001)


def test_bias_on_a_large_pool_fits_a_subset_and_extends_it_to_every_item(prepared, monkeypatch):
    """Above VALIDATION_ITEMS items, with at least VALIDATION_MIN_SOURCES training sources, the held-out
    fit runs on a random subset and the other items' parameters are each item's MAP given the training
    sources' fitted abilities; the error is still measured on halves of the whole pool
    (docs/deviations.md#gp-irt-lambda). Written again with per-item scipy fits, in the same order of draws."""
    view, prep = prepared
    scores = view.scores.astype(float)
    n, m = scores.shape
    whole = tb.pirt_bias(scores, tb.DIMS, np.random.default_rng(5))
    monkeypatch.setattr(tb, "VALIDATION_ITEMS", 120)
    assert tb.pirt_bias(scores, tb.DIMS, np.random.default_rng(5)) == whole  # 80 training sources: too few
    monkeypatch.setattr(tb, "VALIDATION_MIN_SOURCES", 80)
    monkeypatch.setattr(tb, "ITEM_NEWTON_STEPS", 30)  # converged, to compare with the per-item fits
    found = tb.pirt_bias(scores, tb.DIMS, np.random.default_rng(5))

    rng = np.random.default_rng(5)
    order = rng.permutation(n)
    n_val = round(0.2 * n)
    val, train = np.sort(order[:n_val]), np.sort(order[n_val:])
    subset = np.sort(rng.permutation(m)[:120])
    fit = tb.fit_irt(scores[np.ix_(train, subset)], dims=tb.DIMS, rng=rng, max_iter=tb.VALIDATION_ITERATIONS, max_rounds=tb.VALIDATION_ROUNDS)
    a, b = np.empty((m, tb.DIMS)), np.empty(m)
    a[subset], b[subset] = fit.a, fit.b
    x = np.column_stack([fit.theta, -np.ones(len(train))])
    mean = np.append(fit.priors.a_mean, fit.priors.b_mean)
    scale = np.append(fit.priors.a_scale, fit.priors.b_scale)
    for j in np.setdiff1d(np.arange(m), subset):

        def objective(c, j=j):
            z = x @ c
            return np.sum(np.logaddexp(0, z) - scores[train, j] * z) + 0.5 * np.sum(((c - mean) / scale) ** 2)

        c = minimize(objective, mean, method="BFGS", options={"gtol": 1e-9}).x
        a[j], b[j] = c[:-1], c[-1]
    perm = rng.permutation(m)
    expected = tb.held_out_error(scores[val], np.sort(perm[: m // 2]), np.sort(perm[m // 2 :]), a, b)
    assert found == pytest.approx(expected, abs=1e-6)
    # and it estimates what the whole-pool fit does: within the spread of another start of that fit
    monkeypatch.setattr(tb, "VALIDATION_ITEMS", m)
    assert abs(found - np.mean([whole, tb.pirt_bias(scores, tb.DIMS, np.random.default_rng(6))])) < 0.01


def test_the_three_estimators_on_one_selection(sim, prepared):
    matrix, _ = sim
    view, prep = prepared
    targets = matrix.scores[:40].astype(float)
    micro = {name: methods.get(name).select(view, 15, np.random.default_rng(4), prep) for name in NAMES}
    np.testing.assert_array_equal(micro[NAMES[0]].items, micro[NAMES[2]].items)
    answers = targets[:, micro[NAMES[0]].items]
    weighted = micro[NAMES[0]].estimate(answers)
    pirt = micro[NAMES[1]].estimate(answers)
    gpirt = micro[NAMES[2]].estimate(answers)
    np.testing.assert_allclose(weighted, answers @ micro[NAMES[0]].weights)
    np.testing.assert_allclose(pirt, tb.pirt_estimate(answers, micro[NAMES[1]].items, prep.fit.a, prep.fit.b))
    lam = micro[NAMES[2]].lam
    assert lam == pytest.approx(tb.gpirt_lambda(prep.bias, prep.variance, 15))
    np.testing.assert_allclose(gpirt, lam * weighted + (1 - lam) * pirt)
    truth = targets.mean(axis=1)
    for estimate in (weighted, pirt, gpirt):
        assert np.all((estimate >= 0) & (estimate <= 1))
        assert np.corrcoef(estimate, truth)[0, 1] > 0.8
    # p-IRT uses the unseen pool items through the model: clearly better than 15 items alone
    assert np.mean(np.abs(pirt - truth)) < np.mean(np.abs(weighted - truth))


def test_non_binary_scores_are_refused():
    view = SourceView.from_arrays(np.full((5, 6), 0.5))
    with pytest.raises(MdadError, match="0/1 correctness"):
        methods.get("tinybenchmarks")(view, 3, np.random.default_rng(0))
    with pytest.raises(MdadError, match="target models' answers"):
        tb.pirt_estimate(np.array([[0.3, 1.0]]), np.array([0, 1]), np.zeros((3, 2)), np.zeros(3))


def test_one_irt_fit_per_run_for_all_sizes_and_estimators(sim, monkeypatch):
    matrix, _ = sim
    calls = []
    real_fit = tb.fit_irt

    def counting_fit(scores, **kwargs):
        calls.append(scores.shape)
        return real_fit(scores, **kwargs)

    monkeypatch.setattr(tb, "fit_irt", counting_fit)
    config = ExperimentConfig(methods=NAMES, sizes=(5, 10, 20), sources=(40,), runs=2, targets=20, seed=0)
    frames = Experiment(matrix, config).run().frames
    assert len(frames) == 9
    main_fits = [shape for shape in calls if shape[0] == 40]
    held_out_fits = [shape for shape in calls if shape[0] == 40 - 8]
    assert len(main_fits) == 2 and len(held_out_fits) == 2 and len(calls) == 4
    for frame in frames.values():
        assert np.isfinite(frame["estimate"]).all()


def test_deterministic_selection(sim):
    matrix, _ = sim
    view = SourceView.from_arrays(matrix.scores[:50, :100])
    method = methods.get("tinybenchmarks-gpirt")
    one = method.select(view, 12, rng_for(0, "s"), method.prepare(view, rng_for(0, "p")))
    two = method.select(view, 12, rng_for(0, "s"), method.prepare(view, rng_for(0, "p")))
    np.testing.assert_array_equal(one.items, two.items)
    assert one.lam == two.lam


def test_real_gpqa_one_run(gpqa):
    config = ExperimentConfig(methods=NAMES, sizes=(10, 50), sources=(100,), runs=1, targets=30, seed=1)
    frames = Experiment(gpqa, config).run().frames
    for frame in frames.values():
        assert frame["estimate"].between(0, 1).all()


def test_smallest_inputs_work_and_too_small_ones_are_refused():
    scores = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    micro = methods.get("tinybenchmarks-gpirt")(SourceView.from_arrays(scores), 2, np.random.default_rng(0))
    assert 0.0 <= micro.lam <= 1.0
    assert np.isfinite(micro.estimate(scores[:, micro.items])).all()
    with pytest.raises(MdadError, match="at least 2 source models"):
        methods.get("tinybenchmarks")(SourceView.from_arrays(scores[:1]), 1, np.random.default_rng(0))


def test_the_three_estimators_share_their_anchors():
    from mdad import methods
    from mdad.data import simulate
    from mdad.methods import SourceView

    matrix = simulate(seed=4, n_models=80, n_items=150, n_subtasks=2, dims=2)
    view = SourceView.from_arrays(matrix.scores, subtasks=matrix.subtask_codes)
    first = methods.get("tinybenchmarks")
    prepared = first.prepare(view, np.random.default_rng(0))
    chosen = [
        methods.get(name).select(view, 12, np.random.default_rng(i), prepared)
        for i, name in enumerate(("tinybenchmarks", "tinybenchmarks-pirt", "tinybenchmarks-gpirt"))
    ]
    assert all(np.array_equal(c.items, chosen[0].items) and np.allclose(c.weights, chosen[0].weights) for c in chosen)
