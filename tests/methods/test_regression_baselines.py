"""random-regression, random-search-regression and lasso against scikit-learn fitted directly on the same matrices."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Lasso, RidgeCV, lasso_path

from mdad import methods
from mdad.data import simulate
from mdad.errors import MdadError
from mdad.exact import snap
from mdad.methods import SourceView, lasso
from mdad.methods.lasso import PATH_EPS, PATH_PENALTIES
from mdad.methods.random_regression import FIT_SHARE, SEARCH_DRAWS
from mdad.methods.ridge import ridge_cv


@pytest.fixture(scope="module")
def split(gpqa):
    """200 GPQA models as sources and 60 others as targets, on the even items (the pool)."""
    rng = np.random.default_rng(3)
    order = rng.permutation(gpqa.n_models)
    scores = gpqa.scores[:, ::2].astype(np.float64)
    return scores[order[:200]], scores[order[200:260]]


def test_ridge_matches_scikit_learn_ridgecv_on_random_matrices():
    rng = np.random.default_rng(0)
    for n, p in ((40, 5), (30, 60), (200, 100)):
        x = (rng.random((n, p)) < rng.random(p)).astype(float)
        y = x.mean(axis=1) + rng.normal(0, 0.05, n)
        ours, theirs = ridge_cv(x, y), RidgeCV().fit(x, y)
        assert ours.alpha == theirs.alpha_
        np.testing.assert_allclose(ours.coef, theirs.coef_, atol=1e-10)
        assert ours.intercept == pytest.approx(theirs.intercept_, abs=1e-10)


@pytest.mark.parametrize("k", [10, 50, 200])
def test_random_regression_predicts_as_scikit_learn_ridgecv(split, k):
    sources, targets = split
    micro = methods.get("random-regression").select(SourceView.from_arrays(sources), k, np.random.default_rng(k))
    reference = RidgeCV().fit(sources[:, micro.items], sources.mean(axis=1))
    expected = np.clip(reference.predict(targets[:, micro.items]), 0, 1)
    np.testing.assert_allclose(micro.estimate(targets[:, micro.items]), expected, atol=1e-9)
    assert len(np.unique(micro.items)) == k


def test_random_regression_beats_the_plain_mean_of_the_same_items(split):
    """The point of the regression: on GPQA with 25 items it errs less than the plain mean of its own items."""
    sources, targets = split
    truth = targets.mean(axis=1)
    gaps = []
    for seed in range(20):
        micro = methods.get("random-regression").select(SourceView.from_arrays(sources), 25, np.random.default_rng(seed))
        on_items = targets[:, micro.items]
        gaps.append(np.abs(on_items.mean(axis=1) - truth).mean() - np.abs(micro.estimate(on_items) - truth).mean())
    assert np.mean(gaps) > 0


def test_random_search_keeps_the_draw_of_least_validation_error(split):
    sources, _ = split
    k, seed = 15, 4
    micro = methods.get("random-search-regression").select(SourceView.from_arrays(sources), k, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)  # the same draws, replayed, judged with scikit-learn
    order = rng.permutation(len(sources))
    cut = int(len(sources) * FIT_SHARE)
    fit_rows, check_rows = np.sort(order[:cut]), np.sort(order[cut:])
    truth = sources.mean(axis=1)
    errors, draws = [], []
    for _ in range(SEARCH_DRAWS):
        items = np.sort(rng.choice(sources.shape[1], size=k, replace=False))
        model = RidgeCV().fit(sources[np.ix_(fit_rows, items)], truth[fit_rows])
        errors.append(np.abs(model.predict(sources[np.ix_(check_rows, items)]) - truth[check_rows]).mean())
        draws.append(items)
    np.testing.assert_array_equal(micro.items, draws[int(np.argmin(errors))])


def lasso_counts(sources: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """scikit-learn's Lasso (with its intercept) on the raw scores at every penalty of the path's grid."""
    y = sources.mean(axis=1)
    xc = sources - sources.mean(axis=0)
    top = np.abs(xc.T @ (y - y.mean())).max() / len(y)
    alphas = np.geomspace(top, top * PATH_EPS, PATH_PENALTIES)
    kept = [np.flatnonzero(Lasso(alpha=a, tol=1e-6, max_iter=100_000).fit(sources, y).coef_) for a in alphas]
    return alphas, kept


def test_lasso_chooses_the_items_scikit_learn_lasso_keeps(split):
    sources, targets = split
    _, kept = lasso_counts(sources)
    method = methods.get("lasso")
    view = SourceView.from_arrays(sources)
    prepared = method.prepare(view, np.random.default_rng(0))
    counts = np.array([len(items) for items in kept])
    checked = 0
    for k in (5, 10, 20, 40):
        over = np.flatnonzero(counts > k)
        items = kept[over[0] - 1]  # kept at the last penalty before the path first keeps more than k
        if len(items) != k:
            continue  # filled: checked below
        micro = method.select(view, k, np.random.default_rng(0), prepared)
        np.testing.assert_array_equal(micro.items, items)
        reference = RidgeCV().fit(sources[:, items], sources.mean(axis=1))  # the refit on the chosen items
        np.testing.assert_allclose(micro.estimate(targets[:, items]), np.clip(reference.predict(targets[:, items]), 0, 1), atol=1e-9)
        checked += 1
    assert checked >= 3


def full_path_items(scores: np.ndarray, sizes: range) -> tuple[np.ndarray, dict[int, tuple[np.ndarray, bool]]]:
    """The whole path's counts of items kept, and lasso's k items from the whole path in one scikit-learn
    call, by brute force (docs/deviations.md#lasso-path):
    kept at the path's first passage through k, filled by (repeated column, first penalty, -rounded
    correlation, position); and whether the former rule (the smallest penalty of the whole path keeping
    at most k) takes the same penalty."""
    y = scores.mean(axis=1)
    xc, yc = scores - scores.mean(axis=0), y - y.mean()
    distinct = sorted({tuple(col): j for j, col in reversed(list(enumerate(scores.T)))}.values())
    top = np.abs(xc.T @ yc).max() / len(y)
    _, coefs, _ = lasso_path(xc[:, distinct], yc, alphas=np.geomspace(top, top * PATH_EPS, PATH_PENALTIES))
    active = np.zeros((scores.shape[1], PATH_PENALTIES), dtype=bool)
    active[distinct] = coefs != 0
    counts = active.sum(axis=0)
    norms = np.sqrt((xc * xc).sum(axis=0))
    strength = snap(np.abs(xc.T @ yc) / np.where(norms > 0, norms, 1.0))
    first = [int(np.argmax(row)) if row.any() else PATH_PENALTIES for row in active]
    columns = set(distinct)
    order = sorted(range(scores.shape[1]), key=lambda j: (j not in columns, first[j], -strength[j], j))
    result = {}
    for k in sizes:
        step = PATH_PENALTIES - 1
        for i, count in enumerate(counts):
            if count > k:
                step = i - 1
                break
        former = max(i for i, count in enumerate(counts) if count <= k)
        kept = set(np.flatnonzero(active[:, step]).tolist())
        rest = [j for j in order if j not in kept]
        result[k] = (np.sort(np.array(sorted(kept) + rest[: k - len(kept)])), former == step)
    return counts, result


@pytest.mark.parametrize(("models", "dips"), [(40, True), (150, False)])
def test_lasso_path_followed_in_chunks_gives_the_whole_paths_items(models, dips, monkeypatch):
    scores = simulate(seed=0, n_models=models, n_items=models + 250, n_subtasks=2).scores.astype(np.float64)
    sizes = range(1, models + 20)
    counts, expected = full_path_items(scores, sizes)
    assert all(same for _, same in expected.values()) != dips  # a dip makes the former rule differ for some k
    # the path followed 1, 7 or all penalties at a time, the sizes asked of one path smallest or largest first
    for chunk, asked in ((1, sizes), (7, sizes[::-1]), (PATH_PENALTIES, sizes)):
        monkeypatch.setattr(lasso, "PATH_CHUNK", chunk)
        path = lasso.fit_path(scores)
        for k in asked:
            np.testing.assert_array_equal(path.items(k), expected[k][0])
        path.items(scores.shape[1])  # no count exceeds the number of items: the whole path
        np.testing.assert_array_equal(path.counts, counts)


def test_lasso_follows_the_path_only_as_far_as_the_size_needs():
    scores = simulate(seed=0, n_models=150, n_items=400, n_subtasks=2).scores
    path = lasso.fit_path(scores)
    path.items(20)
    assert path.followed < PATH_PENALTIES
    assert path.counts[-1] > 20


def test_lasso_fills_sizes_beyond_what_the_path_keeps(split):
    sources, _ = split
    view = SourceView.from_arrays(sources[:30])  # 30 sources: the lasso keeps at most about 30 items
    micro = methods.get("lasso").select(view, 100, np.random.default_rng(0))
    assert len(np.unique(micro.items)) == 100


def test_regressions_need_two_source_models():
    view = SourceView.from_arrays(np.array([[1.0, 0.0, 1.0, 0.0]]))
    with pytest.raises(MdadError, match="at least 2"):
        methods.get("random-regression").select(view, 2, np.random.default_rng(0))
