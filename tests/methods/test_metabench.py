"""metabench: the screen, the information choice against brute force, and the reconstruction on known abilities."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from support.sim_params import TEXTBOOK_2PL

from mdad import methods
from mdad.data import simulate_with_truth
from mdad.methods import SourceView
from mdad.methods.metabench import information, information_order, screened


def test_information_choice_is_the_best_subset_by_brute_force():
    rng = np.random.default_rng(2)
    a, b = rng.normal(1.0, 0.6, 9), rng.normal(0.0, 1.5, 9)
    thetas = np.quantile(rng.normal(size=300), np.arange(1, 10) / 10)
    per_item = information(a, b, thetas)
    for k in (1, 3, 5):
        best = max(combinations(range(9), k), key=lambda s: per_item[list(s)].sum())
        chosen = information_order(a, b, thetas, np.ones(9, bool))[:k]
        assert set(chosen) == set(best)


def test_information_is_the_fisher_information_of_the_2pl():
    """a^2 p (1 - p), checked as the variance of the score's derivative d/dtheta log P(answer)."""
    a, b, theta = np.array([1.7]), np.array([0.4]), np.array([-0.3])
    p = 1 / (1 + np.exp(-(a * theta - b)))
    score_variance = p * (a * (1 - p)) ** 2 + (1 - p) * (a * p) ** 2
    np.testing.assert_allclose(information(a, b, theta)[0, 0], score_variance[0])


def test_screened_items_come_after_the_others():
    rng = np.random.default_rng(0)
    ability = rng.normal(size=300)
    scores = (rng.random((300, 12)) < 1 / (1 + np.exp(-2 * (ability[:, None] - np.linspace(-1, 1, 12))))).astype(float)
    scores[:, 2] = 1.0  # no spread
    scores[:, 4] = (ability < 0).astype(float)  # runs against the rest
    keep = screened(scores)
    good = np.setdiff1d(np.arange(12), [2, 4])
    assert not keep[2] and not keep[4] and keep[good].all()
    order = information_order(np.ones(12), np.zeros(12), np.zeros(3), keep)
    assert set(order[:10]) == set(good)


@pytest.fixture(scope="module")
def one_dimensional():
    matrix, truth = simulate_with_truth(n_models=260, n_items=300, n_subtasks=1, dims=1, seed=4, with_option_probs=False, params=TEXTBOOK_2PL)
    return matrix.scores.astype(np.float64), truth


def test_metabench_reconstructs_the_accuracy_of_new_models(one_dimensional):
    """On data from a 1-D 2PL, 30 informative items estimate held-out models' pool accuracy better than 30 random
    items do, and the error falls with more items."""
    scores, _ = one_dimensional
    sources, targets = scores[:200], scores[200:]
    view = SourceView.from_arrays(sources)
    method = methods.get("metabench")
    prepared = method.prepare(view, np.random.default_rng(0))
    truth = targets.mean(axis=1)
    errors = {}
    for k in (10, 30, 120):
        micro = method.select(view, k, np.random.default_rng(0), prepared)
        errors[k] = np.abs(micro.estimate(targets[:, micro.items]) - truth).mean()
    rng = np.random.default_rng(1)
    random_error = np.mean([np.abs(targets[:, rng.choice(300, 30, replace=False)].mean(axis=1) - truth).mean() for _ in range(30)])
    assert errors[30] < random_error
    assert errors[120] < errors[10]
