"""AIPW: exactly unbiased over draws whatever the predictor, exact variance for a fixed predictor."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mdad.data import simulate_with_truth
from mdad.errors import MdadError
from mdad.estimators.aipw import aipw
from mdad.irt import estimate_ability, predict_correct


def irt_predictor(a, b, items):
    """Predictions of the whole pool from the answers on ``items`` (NaN = held out), via MAP ability."""
    return lambda answers: predict_correct(estimate_ability(answers, a[items], b[items], tol=1e-14), a, b)


@pytest.mark.parametrize("folds", [1, 2, 3])
def test_exactly_unbiased_over_every_ordered_sample_with_a_wrong_predictor(folds):
    rng = np.random.default_rng(0)
    pool, k = 6, 3
    answers = np.array([[1, 0, 1, 1, 0, 0], [0, 0, 0, 1, 0, 1], [1, 1, 1, 1, 1, 0]], dtype=float)
    a, b = rng.normal(size=(pool, 2)), rng.normal(size=pool)  # item parameters unrelated to the answers
    estimates = []
    for draw in itertools.permutations(range(pool), k):  # every equally likely ordered sample
        items = np.array(draw)
        estimates.append(aipw(answers[:, items], items, pool, irt_predictor(a, b, items), folds=folds).estimate)
    np.testing.assert_allclose(np.mean(estimates, axis=0), answers.mean(axis=1), atol=1e-9)


def test_variance_estimate_is_exact_in_expectation_for_a_fixed_predictor():
    rng = np.random.default_rng(1)
    pool, k = 7, 3
    answers = (rng.random((4, pool)) < 0.5).astype(float)
    prediction = rng.random((1, pool))  # a fixed predictor: ignores the answers
    results = [
        aipw(answers[:, list(d)], np.array(d), pool, lambda x: np.repeat(prediction, len(x), 0)) for d in itertools.combinations(range(pool), k)
    ]
    estimates = np.array([r.estimate for r in results])
    variances = np.array([r.variance for r in results])
    np.testing.assert_allclose(estimates.mean(axis=0), answers.mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(variances.mean(axis=0), estimates.var(axis=0), atol=1e-12)


@pytest.fixture(scope="module")
def sim():
    matrix, truth = simulate_with_truth(n_models=60, n_items=300, dims=3, seed=4, with_option_probs=False)
    return matrix.scores.astype(float), truth


@pytest.mark.parametrize("wrong", [False, True])
def test_unbiased_over_random_draws_on_simulated_data(sim, wrong):
    answers, truth = sim
    targets = answers[:8]
    rng = np.random.default_rng(3)
    pool, k, draws = answers.shape[1], 20, 600
    true_p = truth.p_correct[:8]
    estimates, inside = [], []

    def true_probabilities(rows):
        return np.tile(true_p, (len(rows) // len(true_p), 1))

    for _ in range(draws):
        items = rng.permutation(pool)[:k]
        # wrong: 2PL abilities from the other folds, items reversed; else the true probabilities (fixed, so no fold sees its own answers)
        predict = irt_predictor(-truth.a, truth.b + 2.0, items) if wrong else true_probabilities
        result = aipw(targets[:, items], items, pool, predict)
        estimates.append(result.estimate)
        inside.append((result.low <= targets.mean(axis=1)) & (targets.mean(axis=1) <= result.high))
    estimates = np.array(estimates)
    error = estimates.mean(axis=0) - targets.mean(axis=1)
    standard_error = estimates.std(axis=0, ddof=1) / np.sqrt(draws)
    assert np.all(np.abs(error) < 4 * standard_error)
    # chi-square over targets: the mean errors are what Monte Carlo noise gives
    assert np.sum((error / standard_error) ** 2) < 26.1  # 99.9% quantile of chi2(8)
    if not wrong:
        assert 0.88 < np.mean(inside) < 0.99
        # a good predictor beats the plain sample mean on the same draws
        plain_var = (1 - k / pool) * targets.var(axis=1, ddof=1) / k
        assert np.mean(estimates.var(axis=0)) < 0.8 * np.mean(plain_var)


def test_the_whole_pool_gives_the_exact_accuracy_and_one_item_the_whole_range(sim):
    answers, truth = sim
    pool = answers.shape[1]
    items = np.random.default_rng(0).permutation(pool)
    whole = aipw(answers[:5, items], items, pool, irt_predictor(truth.a, truth.b, items))
    np.testing.assert_allclose(whole.estimate, answers[:5].mean(axis=1))
    np.testing.assert_allclose(whole.variance, 0.0)
    one = aipw(answers[:5, :1], np.array([0]), pool, irt_predictor(truth.a, truth.b, np.array([0])))
    assert np.isnan(one.variance).all() and (one.low == 0).all() and (one.high == 1).all()


def test_bad_input_is_one_clear_error(sim):
    answers, truth = sim
    with pytest.raises(MdadError, match="distinct"):
        aipw(answers[:2, :3], np.array([0, 0, 1]), 300, irt_predictor(truth.a, truth.b, np.array([0, 0, 1])))
    with pytest.raises(MdadError, match="every sampled item"):
        aipw(np.full((2, 3), np.nan), np.arange(3), 300, irt_predictor(truth.a, truth.b, np.arange(3)))


def test_interval_covers_a_target_that_answers_almost_nothing_correctly():
    rng = np.random.default_rng(5)
    pool, k = 300, 10
    answers = np.zeros((1, pool))
    answers[0, rng.choice(pool, 9, replace=False)] = 1.0  # 3% accuracy
    prediction = np.full((1, pool), 0.03)  # a predictor that is right on average
    covered, silent = [], []
    for _ in range(400):
        items = rng.permutation(pool)[:k]
        result = aipw(answers[:, items], items, pool, lambda x: np.repeat(prediction, len(x), 0))
        covered.append(result.low[0] <= answers.mean() <= result.high[0])
        silent.append(result.variance[0] < 1e-12)  # every sampled answer wrong: the residuals show no spread
    assert np.mean(silent) > 0.5
    assert np.mean(covered) > 0.93
