"""adaptive, adaptive-1d and aipw as methods: the grid runs them like any method, with shared IRT fits."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pytest

from mdad import methods
from mdad.data import simulate_with_truth
from mdad.errors import MdadError
from mdad.estimators.aipw import aipw
from mdad.experiment import grid
from mdad.experiment.grid import Experiment, ExperimentConfig, plan_tasks
from mdad.experiment.store import Cell, ResultStore
from mdad.irt import estimate_ability, predict_correct
from mdad.irt.adaptive import run_adaptive
from mdad.irt.guard import MISFIT_Z, guard
from mdad.methods import SourceView
from mdad.methods.adaptive import AdaptiveBenchmark
from mdad.methods.tinybenchmarks import TinyPreparation
from mdad.seeding import rng_for


@pytest.fixture(scope="module")
def sim():
    matrix, _ = simulate_with_truth(n_models=90, n_items=160, n_subtasks=3, dims=2, seed=8, with_option_probs=False)
    return matrix


def test_experiment_runs_stores_and_resumes_adaptive_methods(sim, tmp_path):
    config = ExperimentConfig(methods=("random", "adaptive", "adaptive-1d", "aipw"), sizes=(5, 20), sources=(40,), runs=3, targets=20)
    first = Experiment(sim, config, store=ResultStore(tmp_path)).run()
    assert set(first.frames) == {Cell(m, k, 40) for m in config.methods for k in (5, 20)}
    for cell, frame in first.frames.items():
        assert len(frame) == 60 and np.isfinite(frame["estimate"]).all()
        if cell.method != "aipw":  # an unbiased AIPW estimate may leave [0, 1] (docs/adaptive.md)
            assert frame["estimate"].between(0, 1).all()
        # the guard's flags are kept for the model-based methods only
        assert ("flagged" in frame) == (cell.method != "random")
    summary = first.summary()
    assert summary.loc[summary["method"] == "random", "flagged_per_run"].isna().all()
    assert summary.loc[summary["method"] != "random", "flagged_per_run"].between(0, 20).all()
    with mock.patch.object(grid, "run_task", side_effect=AssertionError("recomputed")):
        again = Experiment(sim, config, store=ResultStore(tmp_path)).run()
    for cell, frame in first.frames.items():
        pd.testing.assert_frame_equal(again.frames[cell], frame)


def test_grid_estimates_are_the_adaptive_test_of_each_runs_own_fit(sim):
    config = ExperimentConfig(methods="adaptive", sizes=(4, 12), sources=40, runs=2, targets=10, seed=3)
    experiment = Experiment(sim, config)
    result = experiment.run().frames
    splits = experiment.splits
    for run in range(2):
        pool, src, tgt = splits.seen[run], splits.sources(40)[run], splits.targets[run]
        view = SourceView.from_arrays(sim.scores[np.ix_(src, pool)])
        fit = TinyPreparation(view, rng_for(3, "prepare", "tinybenchmarks-irt", 40, run)).fit
        direct = run_adaptive(sim.scores[np.ix_(tgt, pool)], fit.a, fit.b, sizes=(4, 12), start=fit.theta.mean(axis=0))
        for k in (4, 12):
            stored = result[Cell("adaptive", k, 40)]
            np.testing.assert_allclose(stored["estimate"].to_numpy().reshape(2, -1)[run], direct.estimate(k))


def test_sizes_nest_one_pass_serves_every_size(sim):
    alone = Experiment(sim, ExperimentConfig(methods="adaptive-1d", sizes=7, sources=40, runs=2, targets=10, seed=1)).run()
    together = Experiment(sim, ExperimentConfig(methods="adaptive-1d", sizes=(7, 30), sources=40, runs=2, targets=10, seed=1)).run()
    cell = Cell("adaptive-1d", 7, 40)
    np.testing.assert_array_equal(alone.frames[cell]["estimate"], together.frames[cell]["estimate"])


def test_adaptive_and_aipw_share_the_tinybenchmarks_fit():
    config = ExperimentConfig(methods=("tinybenchmarks-gpirt", "adaptive", "aipw", "adaptive-1d"), sizes=10, sources=40, runs=5, targets=20)
    tasks = plan_tasks(config)
    assert {t.methods for t in tasks} == {("tinybenchmarks-gpirt", "adaptive", "aipw"), ("adaptive-1d",)}


def test_adaptive_methods_have_no_per_subtask_variant():
    with pytest.raises(MdadError, match="per model"):
        methods.get("adaptive@per-subtask")
    assert methods.get("aipw@per-subtask").name == "aipw@per-subtask"


@pytest.fixture(scope="module")
def prepared(sim):
    view = SourceView.from_arrays(sim.scores[30:, :100])
    return view, TinyPreparation(view, np.random.default_rng(0))


def test_adaptive_benchmark_estimates_and_continues_from_partial_answers(sim, prepared):
    view, prep = prepared
    test = methods.get("adaptive").select(view, 15, np.random.default_rng(0), prep)
    assert isinstance(test, AdaptiveBenchmark) and test.size == 15 and len(test.items) == 100
    answers = sim.scores[:6, :100].astype(float)
    outcome, _ = test.administer(answers, (15,))
    for j in (0, 3, 14):  # a new model that answered the first j items the test chose
        partial = np.full_like(answers, np.nan)
        rows = np.arange(6)[:, None]
        partial[rows, outcome.items[:, :j]] = answers[rows, outcome.items[:, :j]]
        np.testing.assert_array_equal(test.next_items(partial), outcome.items[:, j])
    asked = np.full_like(answers, np.nan)
    asked[rows, outcome.items] = answers[rows, outcome.items]
    np.testing.assert_allclose(test.estimate(asked), outcome.estimate(15), atol=1e-6)
    assert (test.next_items(asked) == -1).all()  # the test is over after 15 answers


def test_aipw_benchmark_is_the_cross_fitted_estimator_on_random_items(sim, prepared):
    view, prep = prepared
    micro = methods.get("aipw").select(view, 20, np.random.default_rng(4), prep)
    assert len(set(micro.items.tolist())) == 20 and not np.all(np.diff(micro.items) > 0)  # draw order kept
    scores = sim.scores[:5, micro.items].astype(float)
    a, b = prep.fit.a, prep.fit.b
    direct = aipw(scores, micro.items, 100, lambda x: predict_correct(estimate_ability(x, a[micro.items], b[micro.items]), a, b))
    np.testing.assert_allclose(micro.estimate(scores), direct.estimate)
    result = micro.interval(scores)
    inside = np.clip(result.estimate, 0, 1)  # the estimate is unbiased, hence unclipped; the interval is clipped
    assert np.all(result.low <= inside) and np.all(inside <= result.high) and np.all(result.high > result.low)


def test_guard_flags_abilities_beyond_the_sources_and_misfitting_answers():
    rng = np.random.default_rng(0)
    a, b = np.abs(rng.normal(1.0, 0.3, size=(200, 1))), np.sort(rng.normal(0, 1.5, size=200))
    low, high = 0.3, 0.7
    theta = np.array([[0.0], [4.0], [0.0]])
    p = predict_correct(theta, a, b)
    answers = (rng.random(p.shape) < p).astype(float)
    answers[2] = (b > 0).astype(float)  # correct on the hard items, wrong on the easy ones
    flags = guard(theta, answers, a, b, low=low, high=high)
    assert flags.flagged.tolist() == [False, True, True]
    assert "above every source model" in flags.reason(1)
    assert flags.lz[2] < MISFIT_Z and "fit the IRT model badly" in flags.reason(2)
    assert flags.reason(0) == ""


def test_strongest_models_as_targets_are_flagged_more_often_than_random_ones(sim):
    config = dict(methods="adaptive-1d", sizes=40, sources=40, runs=3, targets=15)
    top = Experiment(sim, ExperimentConfig(targets_from="top", **config))
    strongest = np.argsort(-sim.accuracy())[:15]
    assert all(set(row) == set(strongest) for row in top.splits.targets.tolist())
    assert not set(strongest) & set(top.splits.sources(40).ravel().tolist())
    flagged_top = top.run().frames[Cell("adaptive-1d", 40, 40)]["flagged"].mean()
    flagged_random = Experiment(sim, ExperimentConfig(**config)).run().frames[Cell("adaptive-1d", 40, 40)]["flagged"].mean()
    assert flagged_top > max(0.2, 2 * flagged_random)
