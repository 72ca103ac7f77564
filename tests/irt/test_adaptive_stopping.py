"""The adaptive tests' stopping rule and exposure control, on simulated models of known ability."""

from __future__ import annotations

import numpy as np
import pytest

from mdad import methods
from mdad.errors import MdadError
from mdad.irt import estimate_ability, sigmoid
from mdad.irt.adaptive import run_adaptive


@pytest.fixture(scope="module")
def bank():
    """A 1-D 2PL bank of 300 items and 150 models of known ability with their answers."""
    rng = np.random.default_rng(0)
    a, b = rng.lognormal(0.2, 0.3, (300, 1)), rng.normal(0.0, 1.2, 300)
    theta = rng.normal(size=(150, 1))
    answers = (rng.random((150, 300)) < sigmoid(theta @ a.T - b)).astype(float)
    return a, b, theta, answers


def posterior_sd(answers: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """The posterior sd at the MAP ability from ``answers`` on items (a, b), recomputed from the 2PL's information."""
    theta = estimate_ability(answers[None, :], a, b)[0]
    p = sigmoid(a @ theta - b)
    return float(1.0 / np.sqrt(1.0 + np.sum(a[:, 0] ** 2 * p * (1 - p))))


def test_a_test_stops_once_the_ability_is_known_to_the_threshold(bank):
    a, b, _, answers = bank
    budget, threshold = 120, 0.3
    outcome = run_adaptive(answers, a, b, sizes=(budget,), start=np.zeros(1), stop_se=threshold)
    used = outcome.items_used(budget)
    assert used.min() >= 1 and used.max() <= budget and used.min() < budget
    for model in range(0, 150, 7):
        asked = outcome.items[model, : used[model]]
        assert (outcome.items[model, used[model] :] == -1).all()
        sd = posterior_sd(answers[model, asked], a[asked], b[asked])
        if used[model] < budget:
            assert sd < threshold  # it stopped because it was precise enough
        if used[model] > 1:
            before = asked[:-1]
            assert posterior_sd(answers[model, before], a[before], b[before]) >= threshold  # and not before


def test_items_used_fall_and_error_grows_as_the_threshold_grows(bank):
    a, b, theta, answers = bank
    means, errors = [], []
    for threshold in (0.2, 0.3, 0.45):
        outcome = run_adaptive(answers, a, b, sizes=(200,), start=np.zeros(1), stop_se=threshold)
        means.append(outcome.items_used(200).mean())
        errors.append(np.abs(outcome.theta[0, :, 0] - theta[:, 0]).mean())
    assert means[0] > means[1] > means[2]
    assert errors[0] < errors[2]


def test_smaller_budgets_cut_the_same_tests(bank):
    a, b, _, answers = bank
    outcome = run_adaptive(answers, a, b, sizes=(10, 40), start=np.zeros(1), stop_se=0.3)
    np.testing.assert_array_equal(outcome.items_used(10), np.minimum(outcome.items_used(40), 10))
    done_early = outcome.items_used(40) <= 10
    np.testing.assert_allclose(outcome.estimate(10)[done_early], outcome.estimate(40)[done_early])


def test_without_options_the_test_is_unchanged(bank):
    a, b, _, answers = bank
    plain = run_adaptive(answers, a, b, sizes=(30,), start=np.zeros(1))
    same = run_adaptive(answers, a, b, sizes=(30,), start=np.zeros(1), randomesque=1, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(plain.items, same.items)
    assert plain.used is None and (plain.items_used(30) == 30).all()


def test_exposure_control_spreads_the_items_shown(bank):
    a, b, _, answers = bank
    plain = run_adaptive(answers, a, b, sizes=(30,), start=np.zeros(1))
    spread = run_adaptive(answers, a, b, sizes=(30,), start=np.zeros(1), randomesque=5, rng=np.random.default_rng(1))
    exposure = [np.bincount(o.items.ravel(), minlength=300).max() / 150 for o in (plain, spread)]
    assert exposure[0] == 1.0 and exposure[1] < 1.0  # without it every model sees the first item
    first = np.bincount(spread.items[:, 0], minlength=300) / 150
    assert first.max() < 0.4 and (first > 0).sum() == 5  # the first item: one of the five most informative at the start
    for row in spread.items:
        assert len(np.unique(row)) == 30
    again = run_adaptive(answers, a, b, sizes=(30,), start=np.zeros(1), randomesque=5, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(spread.items, again.items)


def test_options_are_named_and_checked():
    method = methods.get("adaptive-1d@stop-se=0.3@randomesque=4")
    assert (method.stop_se, method.randomesque, method.name) == (0.3, 4, "adaptive-1d@stop-se=0.3@randomesque=4")
    assert method.preparation == methods.get("adaptive-1d").preparation  # shares the one IRT fit
    with pytest.raises(MdadError, match="strictly between 0 and 1"):
        methods.get("adaptive-1d@stop-se=0")
    with pytest.raises(MdadError, match="whole number"):
        methods.get("adaptive@randomesque=x")
    with pytest.raises(MdadError, match="not an adaptive test"):
        methods.get("random@stop-se=0.3")


def test_the_stopping_rule_runs_in_the_experiment(small_sim):
    from mdad.experiment.grid import Task, task_outcomes
    from mdad.experiment.splits import make_splits

    splits = make_splits(small_sim, 1, 10, 0)
    names = ("adaptive-1d", "adaptive-1d@stop-se=0.6")
    ((_, outcomes),) = list(task_outcomes(small_sim, splits, Task(names, 30, (20,))))
    fixed, stopped = (outcomes[cell] for cell in sorted(outcomes, key=lambda c: c.method))
    assert np.isfinite(stopped.estimates).all()
    assert ((stopped.items >= 0).sum(axis=1) <= 20).all() and (stopped.items == -1).any()
    assert (fixed.items >= 0).all()


def test_the_experiment_reports_the_items_each_target_answered(small_sim):
    """summary.csv's items used are the mean and sd, over runs and targets, of the items each test asked
    (counted independently from the stored item lists), and a fixed-length test has none."""
    from mdad.experiment import Experiment, ExperimentConfig
    from mdad.experiment.grid import Task, task_outcomes

    config = ExperimentConfig(methods=("adaptive-1d", "adaptive-1d@stop-se=0.6"), sizes=(20,), sources=(30,), runs=2, targets=10, seed=0)
    experiment = Experiment(small_sim, config)
    summary = experiment.run(workers=1).summary()
    row = summary.set_index(["method", "view"]).loc[("adaptive-1d@stop-se=0.6", "seen")]
    asked = []
    for _, outcomes in task_outcomes(small_sim, experiment.splits, Task(("adaptive-1d@stop-se=0.6",), 30, (20,))):
        ((outcome,),) = [tuple(outcomes.values())]
        asked.append((outcome.items >= 0).sum(axis=1))
    counted = np.concatenate(asked)
    assert row["items_used_mean"] == pytest.approx(counted.mean()) and row["items_used_sd"] == pytest.approx(counted.std())
    assert 1 <= row["items_used_mean"] < 20
    fixed = summary.set_index(["method", "view"]).loc[("adaptive-1d", "seen")]
    assert np.isnan(fixed["items_used_mean"])
