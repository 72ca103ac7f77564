"""mrmr-krr and disco against independent calculations: mRMR's greedy order recomputed from scratch, DISCO's
divergence by hand, kernel ridge against a closed-form solve and scikit-learn, nearest neighbours against
scikit-learn; and both methods on a small real leaderboard through ``mdad run``."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV, LeaveOneOut
from sklearn.neighbors import KNeighborsRegressor
from threadpoolctl import threadpool_limits
from typer.testing import CliRunner

from mdad import methods
from mdad.cli import app
from mdad.estimators.forest import SETTINGS as FOREST_SETTINGS
from mdad.estimators.forest import TREES, forest_on
from mdad.estimators.krr import ALPHAS_BINARY, ALPHAS_CONTINUOUS, DEGREES, kernel_ridge_on
from mdad.estimators.neighbours import NEIGHBOURS, neighbours_on
from mdad.methods import SourceView
from mdad.methods.disco import disagreement
from mdad.methods.mrmr import GreedyOrder
from mdad.testing import check_method


def gaussian_mi(a: np.ndarray, b: np.ndarray) -> float:
    r = np.corrcoef(a, b)[0, 1]
    return -0.5 * math.log(1.0 - r * r)


def brute_force_mrmr(x: np.ndarray, k: int) -> list[int]:
    """The MID greedy order, every criterion recomputed from scratch with numpy's correlation."""
    y = x.mean(axis=1)
    chosen: list[int] = []
    for _ in range(k):
        best, best_value = -1, -np.inf
        for j in range(x.shape[1]):
            if j in chosen:
                continue
            value = gaussian_mi(x[:, j], y) - (np.mean([gaussian_mi(x[:, j], x[:, c]) for c in chosen]) if chosen else 0.0)
            if value > best_value + 1e-9:
                best, best_value = j, value
        chosen.append(best)
    return chosen


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mrmr_order_is_the_greedy_mid_order_recomputed_from_scratch(seed):
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=30)
    x = 1 / (1 + np.exp(-(ability[:, None] * rng.uniform(0.2, 2, 12) - rng.normal(size=12) + rng.normal(0, 0.8, (30, 12)))))
    order = GreedyOrder(x)
    order.items(8)
    assert order.order == brute_force_mrmr(x, 8)


def test_mrmr_puts_items_every_source_answers_alike_last():
    rng = np.random.default_rng(4)
    x = (rng.random((20, 10)) < 0.5).astype(float)
    x[:, 3] = 1.0
    x[:, 7] = 0.0
    order = GreedyOrder(x)
    order.items(10)
    assert sorted(order.order[-2:]) == [3, 7]
    assert sorted(order.order) == list(range(10))


def test_disco_divergence_by_hand():
    gold = np.array(
        [
            [1.0, 1.0, 0.5, 0.9, 1.0],
            [1.0, 0.0, 0.5, 0.1, 1.0],
            [1.0, 1.0, 0.5, 0.9, 0.0],
            [1.0, 0.0, 0.5, 0.1, 0.0],
        ]
    )
    h = lambda p: -(p * math.log(p) + (1 - p) * math.log(1 - p))  # noqa: E731
    expected = [0.0, math.log(2), 0.0, math.log(2) - h(0.9), math.log(2)]
    np.testing.assert_allclose(disagreement(gold), expected, atol=1e-12)
    # 0/1 scores: the entropy of the share of sources that are right
    scores = np.array([[1, 1, 0], [1, 0, 0], [1, 0, 0], [0, 0, 1]], dtype=float)
    np.testing.assert_allclose(disagreement(scores), [h(0.75), h(0.25), h(0.25)], atol=1e-12)


def test_disco_keeps_the_items_of_most_disagreement():
    rng = np.random.default_rng(5)
    gold = rng.random((15, 40))
    view = SourceView.from_arrays((gold > 0.5).astype(float), gold)
    micro = methods.get("disco").select(view, 6, np.random.default_rng(0))
    divergence = disagreement(gold)
    assert set(micro.items) == set(np.argsort(-divergence)[:6])
    assert micro.kind == "nearest-neighbours" and micro.uses_gold_prob


def test_kernel_ridge_predicts_as_the_closed_form_solve_and_chooses_as_leave_one_out_search():
    rng = np.random.default_rng(6)
    ability = rng.normal(size=40)
    scores = (rng.random((40, 30)) < 1 / (1 + np.exp(-(ability[:, None] - rng.normal(size=30))))).astype(float)
    items = np.arange(0, 30, 3)
    micro = kernel_ridge_on(scores, items)
    x, y = scores[:, items], scores.mean(axis=1)
    search = GridSearchCV(
        KernelRidge(kernel="poly", gamma=1 / len(items), coef0=1),
        {"degree": list(DEGREES), "alpha": list(ALPHAS_BINARY)},
        cv=LeaveOneOut(),
        scoring="neg_mean_squared_error",
    ).fit(x, y)
    assert (micro.degree, micro.alpha) == (search.best_params_["degree"], search.best_params_["alpha"])
    kernel = (x @ x.T / len(items) + 1) ** micro.degree
    dual = np.linalg.solve(kernel + micro.alpha * np.eye(len(y)), y)
    targets = (rng.random((7, len(items))) < 0.5).astype(float)
    expected = np.clip(((targets @ x.T) / len(items) + 1) ** micro.degree @ dual, 0, 1)
    np.testing.assert_allclose(micro.estimate(targets), expected, atol=1e-9)


def test_kernel_ridge_uses_the_wider_penalty_grid_on_continuous_scores():
    rng = np.random.default_rng(7)
    scores = rng.random((25, 12))
    micro = kernel_ridge_on(scores, np.arange(6))
    assert micro.alpha in ALPHAS_CONTINUOUS


def test_nearest_neighbours_predict_as_scikit_learn_and_choose_k_by_leave_one_out():
    rng = np.random.default_rng(8)
    gold = rng.random((30, 20))  # continuous signatures: no tied distances
    view = SourceView.from_arrays((gold > 0.5).astype(float), gold)
    items = np.arange(0, 20, 2)
    micro = neighbours_on(view, items)
    accuracy = view.scores.astype(np.float64).mean(axis=1)
    train = gold[:, items]
    errors = []
    for k in NEIGHBOURS:
        loo = [KNeighborsRegressor(n_neighbors=k).fit(np.delete(train, i, 0), np.delete(accuracy, i)).predict(train[i : i + 1])[0] for i in range(30)]
        errors.append(np.mean(np.abs(np.array(loo) - accuracy)))
    assert micro.n_neighbors == NEIGHBOURS[int(np.argmin(errors))]
    targets = rng.random((5, 20))
    reference = KNeighborsRegressor(n_neighbors=micro.n_neighbors).fit(train, accuracy)
    np.testing.assert_allclose(micro.estimate((targets > 0.5)[:, items], targets[:, items]), reference.predict(targets[:, items]), atol=1e-12)


def test_tied_neighbours_go_to_the_earlier_source():
    """Sources answering (1, 0), (0, 1), (1, 1), (0, 0) (pool accuracy 0.5, 0.5, 1, 0); a target answering (1, 0) is
    at squared distance 0, 2, 1, 1: its two nearest are source 0 and, of the tied sources 2 and 3, source 2."""
    scores = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=float)
    micro = neighbours_on(SourceView.from_arrays(np.column_stack([scores, scores])), np.array([0, 1]))
    target = np.array([[1.0, 0.0]])
    assert replace(micro, n_neighbors=1).estimate(target)[0] == pytest.approx(0.5)
    assert replace(micro, n_neighbors=2).estimate(target)[0] == pytest.approx(0.75)


@pytest.mark.parametrize("name", ["mrmr-krr", "disco", "anchor-points@estimator=krr", "random@estimator=knn@per-subtask", "disco@estimator=forest"])
def test_new_methods_and_pairs_keep_the_contract(name):
    check_method(name)


def test_items_do_not_depend_on_blas_threads(small_sim):
    view = SourceView.from_arrays(small_sim.scores[:80], small_sim.gold_prob()[:80], small_sim.subtask_codes, has_option_probs=True)
    for name in ("mrmr-krr", "disco"):
        with threadpool_limits(limits=1, user_api="blas"):
            one = methods.get(name).select(view, 40, np.random.default_rng(1)).items
        two = methods.get(name).select(view, 40, np.random.default_rng(1)).items
        np.testing.assert_array_equal(one, two)


def test_mrmr_and_disco_run_on_a_real_leaderboard(shared_data_dir, tmp_path):
    args = ["run", "--data", str(shared_data_dir / "oll2-gpqa"), "--methods", "random,lasso,mrmr-krr,disco"]
    result = CliRunner().invoke(app, [*args, "--runs", "1", "--sizes", "10", "--workers", "1", "--out", str(tmp_path / "o")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for name in ("mrmr-krr", "disco", "lasso"):
        assert name in result.output


def test_forest_predicts_as_scikit_learn_and_keeps_the_setting_of_least_out_of_bag_error():
    rng = np.random.default_rng(9)
    ability = rng.normal(size=60)
    gold = 1 / (1 + np.exp(-(ability[:, None] - rng.normal(size=25) + rng.normal(0, 0.5, (60, 25)))))
    view = SourceView.from_arrays((gold > 0.5).astype(float), gold)
    items = np.arange(0, 25, 2)
    micro = forest_on(view, items, np.random.default_rng(3))
    seed = int(np.random.default_rng(3).integers(2**31 - 1))
    accuracy = view.scores.astype(np.float64).mean(axis=1)
    fits = [
        RandomForestRegressor(n_estimators=TREES, min_samples_leaf=leaf, max_features=share, oob_score=True, random_state=seed, n_jobs=1).fit(
            gold[:, items], accuracy
        )
        for leaf, share in FOREST_SETTINGS
    ]
    best = fits[int(np.argmin([np.mean(np.abs(f.oob_prediction_ - accuracy)) for f in fits]))]
    targets = rng.random((9, 25))
    np.testing.assert_allclose(micro.estimate((targets > 0.5)[:, items], targets[:, items]), best.predict(targets[:, items]), atol=1e-12)
    again = forest_on(view, items, np.random.default_rng(3))
    np.testing.assert_array_equal(again.threshold, micro.threshold)
