"""The adaptive-testing engine: MAP abilities on per-model items, D-optimal item choice, convergence."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from scipy.optimize import minimize

from mdad.data import simulate_with_truth
from mdad.errors import MdadError
from mdad.irt import estimate_ability, predict_correct
from mdad.irt.adaptive import map_abilities, run_adaptive


def two_pl_answers(truth, rng) -> np.ndarray:
    """0/1 answers drawn from the 2PL with the simulation's true abilities and items (a correct model)."""
    p = predict_correct(truth.theta, truth.a, truth.b)
    return (rng.random(p.shape) < p).astype(np.float64)


@pytest.fixture(scope="module")
def sim3():
    _, truth = simulate_with_truth(n_models=150, n_items=400, dims=3, seed=5, with_option_probs=False)
    return truth, two_pl_answers(truth, np.random.default_rng(1))


@pytest.fixture(scope="module")
def sim1():
    _, truth = simulate_with_truth(n_models=300, n_items=500, dims=1, seed=6, with_option_probs=False)
    return truth, two_pl_answers(truth, np.random.default_rng(2))


def test_map_abilities_minimise_each_models_own_posterior():
    rng = np.random.default_rng(0)
    n, t, d = 4, 7, 2
    a, b = rng.normal(size=(n, t, d)), rng.normal(size=(n, t))
    y = (rng.random((n, t)) < 0.6).astype(float)
    y[0] = 1.0  # all correct: only the prior keeps the optimum finite
    theta = map_abilities(y, a, b, prior_scale=1.5)
    for i in range(n):

        def f(th, i=i):
            eta = a[i] @ th - b[i]
            return float(np.sum(np.logaddexp(0, eta) - y[i] * eta) + 0.5 * th @ th / 1.5**2)

        reference = minimize(f, np.zeros(d), method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12}).x
        np.testing.assert_allclose(theta[i], reference, atol=1e-5)


def test_each_size_is_the_prefix_of_the_longest_test_and_estimates_as_p_irt(sim3):
    truth, answers = sim3
    out = run_adaptive(answers[:20], truth.a, truth.b, sizes=(25, 5, 12), start=np.zeros(3))
    assert out.items.shape == (20, 25)
    assert all(len(set(row)) == 25 for row in out.items.tolist())
    for k in (5, 12, 25):
        for i in range(20):
            items = out.items[i, :k]
            theta = estimate_ability(answers[i : i + 1, items], truth.a[items], truth.b[items])
            np.testing.assert_allclose(out.theta[out.sizes.index(k)][i], theta[0], atol=1e-4)
            predicted = predict_correct(theta, truth.a, truth.b)[0]
            predicted[items] = answers[i, items]
            assert out.estimate(k)[i] == pytest.approx(predicted.mean(), abs=1e-5)


def test_next_item_maximises_the_determinant_of_the_posterior_precision(sim3):
    truth, answers = sim3
    out = run_adaptive(answers[:3], truth.a, truth.b, sizes=(6,), start=np.full(3, 0.2))
    for i in range(3):
        asked = out.items[i, :5]
        theta = estimate_ability(answers[i : i + 1, asked], truth.a[asked], truth.b[asked])[0]

        def precision(items, theta=theta):
            w = predict_correct(theta[None], truth.a[items], truth.b[items])[0]
            return np.eye(3) + (truth.a[items] * (w * (1 - w))[:, None]).T @ truth.a[items]

        dets = [np.linalg.det(precision(np.r_[asked, j])) if j not in asked else -np.inf for j in range(400)]
        assert out.items[i, 5] == int(np.argmax(dets))
    # the first item is chosen at the start ability, with the prior alone
    w0 = predict_correct(np.full((1, 3), 0.2), truth.a, truth.b)[0]
    assert (out.items[:, 0] == np.argmax(w0 * (1 - w0) * np.sum(truth.a**2, axis=1))).all()


def test_one_dimension_asks_the_item_of_maximum_fisher_information(sim1):
    truth, answers = sim1
    out = run_adaptive(answers[:5], truth.a, truth.b, sizes=(8,), start=np.zeros(1))
    for i in range(5):
        asked = out.items[i, :7]
        theta = estimate_ability(answers[i : i + 1, asked], truth.a[asked], truth.b[asked])
        p = predict_correct(theta, truth.a, truth.b)[0]
        info = truth.a[:, 0] ** 2 * p * (1 - p)
        info[asked] = -np.inf
        assert out.items[i, 7] == int(np.argmax(info))


@pytest.mark.parametrize("fixture", ["sim1", "sim3"])
def test_ability_converges_to_the_truth_as_the_test_grows(fixture, request):
    truth, answers = request.getfixturevalue(fixture)
    sizes = (5, 20, 60, 160)
    out = run_adaptive(answers, truth.a, truth.b, sizes=sizes, start=np.zeros(truth.a.shape[1]))
    error = [float(np.sqrt(np.mean(np.sum((out.theta[i] - truth.theta) ** 2, axis=1)))) for i in range(len(sizes))]
    assert all(later < earlier for earlier, later in pairwise(error))
    prior_guess = float(np.sqrt(np.mean(np.sum(truth.theta**2, axis=1))))  # the error of answering nothing
    assert error[-1] < 0.5 * prior_guess
    # the ability of dimension 0 (general skill) is recovered closely with 160 items
    assert np.corrcoef(out.theta[-1][:, 0], truth.theta[:, 0])[0, 1] > 0.95


@pytest.mark.parametrize("fixture", ["sim1", "sim3"])
def test_fisher_choice_beats_random_order_at_equal_length(fixture, request):
    truth, _ = request.getfixturevalue(fixture)
    rng = np.random.default_rng(7)
    n_models, pool, d = truth.theta.shape[0], truth.a.shape[0], truth.a.shape[1]
    gaps = {k: [] for k in (10, 30)}
    for _ in range(8):  # repetitions: fresh answers and fresh random orders
        answers = two_pl_answers(truth, rng)
        out = run_adaptive(answers, truth.a, truth.b, sizes=tuple(gaps), start=np.zeros(d))
        order = np.argsort(rng.random((n_models, pool)), axis=1)
        for k in gaps:
            items = order[:, :k]
            random_theta = map_abilities(np.take_along_axis(answers, items, 1), truth.a[items], truth.b[items])
            adaptive_error = np.sum((out.theta[out.sizes.index(k)] - truth.theta) ** 2, axis=1)
            gaps[k].append(np.sum((random_theta - truth.theta) ** 2, axis=1) - adaptive_error)
    for k, values in gaps.items():
        paired = np.concatenate(values)  # random minus adaptive squared error, per model and repetition
        assert paired.mean() > 4 * paired.std(ddof=1) / np.sqrt(len(paired)), k


def test_bad_input_is_one_clear_error(sim3):
    truth, answers = sim3
    with pytest.raises(MdadError, match="every pool item"):
        run_adaptive(np.where(answers[:2] > 0, np.nan, 0.0), truth.a, truth.b, sizes=(3,), start=np.zeros(3))
    with pytest.raises(MdadError, match="sizes"):
        run_adaptive(answers[:2], truth.a, truth.b, sizes=(401,), start=np.zeros(3))
    with pytest.raises(MdadError, match="do not match"):
        run_adaptive(answers[:2], truth.a[:10], truth.b[:10], sizes=(3,), start=np.zeros(3))
