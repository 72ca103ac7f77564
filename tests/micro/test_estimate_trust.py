"""Intervals and order probabilities of a saved micro-benchmark: which calibration, storage, and the estimate command."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import write_npz
from mdad.intervals import count_interval, exact_order_probability
from mdad.intervals.finite import kish_effective
from mdad.intervals.order import PairPrior
from mdad.intervals.posterior import posterior_count_interval
from mdad.micro import SelectedMicroBenchmark
from mdad.micro.trust import OFF_POPULATION_MARK


@pytest.fixture(scope="module")
def assessed(small_sim):
    """anchor-points with a held-out assessment, saved and loaded back."""
    chosen = mdad.select(small_sim, "anchor-points", 20, seed=1)
    return chosen.with_assessment(mdad.assess(small_sim, "anchor-points", 20, runs=6, targets=30, seed=1))


def test_random_design_intervals_are_mid_p_or_posterior_and_orders_the_exact_ones(small_sim, tmp_path):
    chosen = mdad.select(small_sim, "random", 30, seed=2)
    scores, _ = chosen.item_scores(small_sim)
    per_model = chosen.intervals(small_sim, level=0.95)
    low, high = count_interval(small_sim.n_items, 30, scores.sum(axis=1).astype(int), level=0.95)
    np.testing.assert_allclose(per_model.low, low / small_sim.n_items)
    np.testing.assert_allclose(per_model.high, high / small_sim.n_items)
    assert per_model.calibration.startswith("exact") and "on average over accuracies" in per_model.calibration
    assert per_model.kind == "exact"
    result = chosen.intervals(small_sim, level=0.95, population=True)
    assert chosen.accuracy_prior.counts.tolist() == sorted(small_sim.scores.sum(axis=1).astype(int).tolist())
    low, high = posterior_count_interval(chosen.accuracy_prior, 30, scores.sum(axis=1).astype(int), level=0.95)
    np.testing.assert_allclose(result.low, low / small_sim.n_items)
    np.testing.assert_allclose(result.high, high / small_sim.n_items)
    assert result.level == 0.95 and result.calibration.startswith("empirical Bayes")
    assert result.kind == "population"
    orders = chosen.order_probabilities(small_sim)
    ranked = np.argsort(-result.estimate, kind="stable")
    np.testing.assert_allclose(chosen.pair_prior.mass, PairPrior.from_scores(small_sim.scores).mass)
    # a pair of models both estimated among the sources' best fifth takes the prior of the best fifth's pairs
    accuracy = small_sim.scores.mean(axis=1)
    line = np.quantile(accuracy, 0.8)
    best_fifth = PairPrior.from_scores(small_sim.scores[accuracy >= line])
    np.testing.assert_allclose(chosen.pair_prior.best_fifth.mass, best_fifth.mass)
    assert chosen.pair_prior.best_fifth_line == line
    took = []
    for p in range(len(ranked) - 1):
        a, b = scores[ranked[p]], scores[ranked[p + 1]]
        both = min(result.estimate[ranked[p]], result.estimate[ranked[p + 1]]) >= line
        prior = best_fifth if both else PairPrior.from_scores(small_sim.scores)
        expected = exact_order_probability([small_sim.n_items], [30], [((a == 1) & (b == 0)).sum()], [((a == 0) & (b == 1)).sum()], prior=prior)
        assert orders.first[p] == small_sim.models[ranked[p]] and orders.probability[p] == pytest.approx(expected[0])
        took.append(both)
    assert any(took) and not all(took)
    assert "the pairs of its best fifth" in orders.calibration
    assert len(orders.gap) == small_sim.n_models - 1 and (orders.gap >= 0).all()
    # saved and loaded: the same; a file of an older mdad (no accuracy prior): the exact mid-p interval, said so
    chosen.save(tmp_path / "m.json")
    np.testing.assert_array_equal(SelectedMicroBenchmark.load(tmp_path / "m.json").intervals(small_sim, level=0.95, population=True).low, result.low)
    data = chosen.to_json()
    del data["accuracy_prior"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    old = SelectedMicroBenchmark.load(tmp_path / "old.json").intervals(small_sim, level=0.95, population=True)
    np.testing.assert_allclose(old.low, per_model.low)
    assert old.calibration.startswith("exact") and "mid-p" in old.calibration


def test_stratified_design_uses_the_pool_subtask_sizes(small_sim):
    chosen = mdad.select(small_sim, "random-stratified-equal", 12, seed=2)
    names, sizes = np.unique(small_sim.subtasks, return_counts=True)
    assert chosen.pool_subtasks == dict(zip(names.tolist(), sizes.tolist(), strict=True))
    scores, _ = chosen.item_scores(small_sim)
    correct = np.stack([scores[:, chosen.subtasks == name].sum(axis=1) for name in names], axis=1).astype(int)
    total, n_eff, x_eff = kish_effective(sizes, [3, 3, 3, 3], correct)
    low, _ = count_interval(total, n_eff, x_eff, level=0.9)
    np.testing.assert_allclose(chosen.intervals(small_sim).low, low / small_sim.n_items)
    assert "Kish" in chosen.intervals(small_sim).calibration
    low, _ = posterior_count_interval(chosen.accuracy_prior, n_eff, x_eff, level=0.9)
    np.testing.assert_allclose(chosen.intervals(small_sim, population=True).low, low / small_sim.n_items)


def test_learned_methods_use_the_stored_calibration_after_loading(assessed, small_sim, tmp_path):
    assessed.save(tmp_path / "m.json")
    back = SelectedMicroBenchmark.load(tmp_path / "m.json")
    fresh, loaded = assessed.intervals(small_sim), back.intervals(small_sim)
    assert loaded.calibration.startswith("split-conformal") and loaded.available
    assert loaded.kind == "calibrated"
    np.testing.assert_array_equal(fresh.low, loaded.low)
    np.testing.assert_array_equal(fresh.high, loaded.high)
    a = assessed.assessment
    intercept, slope = back.assessment.interval_calibration.trend  # scores about the estimates' line on the accuracy
    residuals = np.sort((intercept + slope * a.truths - a.estimates).ravel())
    stored = np.sort(np.concatenate(back.assessment.interval_calibration.residuals))
    np.testing.assert_allclose(stored, residuals)
    orders = back.order_probabilities(small_sim)
    assert orders.calibration.startswith("calibrated") and "residual spread" in orders.calibration
    estimate = back.estimate(small_sim)
    fit = assessed.assessment.order_calibration
    expected = fit.rankings.adjacent_probability(fit.scaled_gap(estimate[orders.first].to_numpy(), estimate[orders.second].to_numpy()), 120)
    np.testing.assert_allclose(orders.probability, expected)  # neighbours: the fit on held-out rankings (of 30, fewer than 120)
    assert "held-out rankings of 30 models, fewer than the 120 here" in orders.calibration


def test_an_order_fit_on_the_gap_alone_of_an_older_mdad_still_works(assessed, small_sim, tmp_path):
    data = assessed.to_json()
    data["assessment"]["order_calibration"] = {"intercept": 0.2, "slope_per_point": 0.5, "pairs": 400}
    (tmp_path / "old.json").write_text(json.dumps(data))
    orders = SelectedMicroBenchmark.load(tmp_path / "old.json").order_probabilities(small_sim)
    assert "gap alone" in orders.calibration
    np.testing.assert_allclose(orders.probability, 1 / (1 + np.exp(-(0.2 + 0.5 * orders.gap))))


def test_files_of_an_older_mdad_load_and_say_why_there_is_no_interval(assessed, small_sim, tmp_path):
    data = assessed.to_json()
    for key in ("interval_calibration", "order_calibration"):
        del data["assessment"][key]
    (tmp_path / "old.json").write_text(json.dumps(data))
    old = SelectedMicroBenchmark.load(tmp_path / "old.json")
    result = old.intervals(small_sim)
    assert not result.available and "no held-out assessment" in result.calibration
    stratified = mdad.select(small_sim, "random-stratified-proportional", 12, seed=0).to_json()
    del stratified["pool_subtasks"]
    (tmp_path / "strat.json").write_text(json.dumps(stratified))
    result = SelectedMicroBenchmark.load(tmp_path / "strat.json").intervals(small_sim)
    assert not result.available and "older mdad" in result.calibration


def test_estimate_command_prints_and_writes_intervals_and_pair_probabilities(assessed, small_sim, tmp_path):
    assessed.save(tmp_path / "m.json")
    write_npz(small_sim.take(models=np.arange(3)), tmp_path / "three.npz")
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "estimate",
            str(tmp_path / "m.json"),
            str(tmp_path / "three.npz"),
            "--level",
            "0.8",
            "--csv",
            str(tmp_path / "e.csv"),
            "--pairs-csv",
            str(tmp_path / "p.csv"),
        ],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    assert "80% interval" in result.output and "Intervals: split-conformal" in " ".join(result.output.split())
    rows = pd.read_csv(tmp_path / "e.csv")
    assert list(rows.columns) == ["model", "estimate", "low", "high", "level", "mark", "p_best"] and (rows["level"] == 0.8).all()
    assert ((rows["low"] <= rows["high"]) & (rows["level"] == 0.8)).all() and len(rows) == 3
    expected = assessed.intervals(small_sim.take(models=np.arange(3)), level=0.8)
    np.testing.assert_allclose(rows["low"], expected.low)
    pairs = pd.read_csv(tmp_path / "p.csv")
    assert list(pairs.columns) == ["first", "second", "gap", "probability", "mark"] and len(pairs) == 2
    assert (pairs["gap"] >= 0).all() and pairs["probability"].between(0, 1).all()
    result = runner.invoke(app, ["estimate", str(tmp_path / "m.json"), str(tmp_path / "three.npz"), "--level", "90"])
    assert result.exit_code == 2 and "--level must lie strictly between 0 and 1" in result.output


def test_continuous_scores_fall_back_to_the_assessment_or_say_why(small_sim):
    matrix = small_sim.take(models=np.arange(60))
    soft = mdad.ResponseMatrix(
        scores=np.clip(matrix.scores * 0.9 + 0.05, 0, 1), models=matrix.models, items=matrix.items, subtasks=matrix.subtasks, source="soft scores"
    )
    chosen = mdad.select(soft, "random", 20, seed=0)
    result = chosen.intervals(soft)
    assert not result.available and "need 0/1 scores" in result.calibration
    assert result.kind == "none"
    calibrated = chosen.with_assessment(mdad.assess(soft, "random", 20, runs=3, seed=0)).intervals(soft)
    assert calibrated.available and calibrated.calibration.startswith("split-conformal")


def test_continuous_scores_mark_models_beyond_the_sources_from_their_stored_mean_scores(small_sim, tmp_path):
    """Continuous scores have no accuracy prior, so select stores each source's mean score: the marks of models
    estimated among the sources' best tenth (docs/intervals.md#models-better-than-the-sources) apply there too."""
    matrix = small_sim.take(models=np.arange(60))
    soft = mdad.ResponseMatrix(
        scores=np.clip(matrix.scores * 0.9 + 0.05, 0, 1), models=matrix.models, items=matrix.items, subtasks=matrix.subtasks, source="soft scores"
    )
    chosen = mdad.select(soft, "anchor-points", 20, seed=0)
    chosen = chosen.with_assessment(mdad.assess(soft, "anchor-points", 20, runs=3, seed=0))
    chosen.save(tmp_path / "m.json")
    loaded = SelectedMicroBenchmark.load(tmp_path / "m.json")
    means = np.sort(soft.scores.mean(axis=1))
    np.testing.assert_allclose(loaded.source_scores, means)
    assert loaded.best_source_accuracy == pytest.approx(means[-1])
    new = mdad.ResponseMatrix(
        scores=np.vstack([np.full(soft.n_items, 0.95), np.full(soft.n_items, 0.3)]).astype(np.float32),
        models=np.array(["strong", "weak"]),
        items=soft.items,
        subtasks=soft.subtasks,
    )
    result = loaded.intervals(new)
    assert result.estimate[0] >= np.quantile(means, 0.9) > result.estimate[1]
    assert result.mark[0] == OFF_POPULATION_MARK and result.mark[1] == ""
    data = json.loads((tmp_path / "m.json").read_text())
    data["source_means"] = data["source_means"][::-1]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(mdad.MdadError, match="'source_means' must be sorted"):
        SelectedMicroBenchmark.load(tmp_path / "bad.json")
    assert "source_means" not in mdad.select(matrix, "anchor-points", 20, seed=0).to_json()  # 0/1 scores: the accuracy prior holds them


def test_adaptive_tests_are_calibrated_on_tests_the_targets_took(small_sim):
    """Each calibration target takes its own adaptive test: estimates from 10 asked items, not from the whole pool
    (which would make them exact and the intervals zero wide)."""
    chosen = mdad.select(small_sim, "adaptive-1d", 10, seed=0)
    assessed = chosen.with_assessment(mdad.assess(small_sim, "adaptive-1d", 10, runs=3, targets=30, seed=0))
    residuals = assessed.assessment.truths - assessed.assessment.estimates
    assert np.abs(residuals).mean() > 0.01
    asked = small_sim.scores.copy()
    for row in range(small_sim.n_models):  # each model answers only the items its own test asks
        answers = np.full(small_sim.n_items, np.nan)
        for _ in range(10):
            item = chosen.micro.next_items(answers[None])[0]
            answers[item] = small_sim.scores[row, item]
        asked[row] = answers
    partial = mdad.ResponseMatrix(scores=asked, models=small_sim.models, items=small_sim.items, subtasks=small_sim.subtasks, source="asked items")
    result = assessed.intervals(partial)
    assert result.calibration.startswith("split-conformal") and np.all(result.high - result.low > 0.02)
    truth = small_sim.scores.mean(axis=1)
    assert np.mean((result.low <= truth) & (truth <= result.high)) > 0.75


def test_estimate_command_says_which_random_design_interval_it_printed(small_sim, tmp_path):
    mdad.select(small_sim, "random", 25, seed=3).save(tmp_path / "r.json")
    write_npz(small_sim.take(models=np.arange(4)), tmp_path / "four.npz")
    runner = CliRunner()
    base = ["estimate", str(tmp_path / "r.json"), str(tmp_path / "four.npz")]
    calibrated = runner.invoke(app, base + ["--population", "--csv", str(tmp_path / "eb.csv")], terminal_width=200)
    exact = runner.invoke(app, base + ["--csv", str(tmp_path / "exact.csv")], terminal_width=200)
    assert calibrated.exit_code == 0 and exact.exit_code == 0, calibrated.output + exact.output
    assert "Intervals: empirical Bayes" in " ".join(calibrated.output.split())
    assert "nominal coverage on average over accuracies" in " ".join(exact.output.split())
    eb, mid_p = pd.read_csv(tmp_path / "eb.csv"), pd.read_csv(tmp_path / "exact.csv")
    assert (eb["high"] - eb["low"]).mean() < (mid_p["high"] - mid_p["low"]).mean()


def test_estimate_says_when_models_score_above_every_source(small_sim, tmp_path):
    """Models better than every source: the promises were measured on models like the sources, and the
    sentence says which part still holds."""
    order = np.argsort(small_sim.scores.mean(axis=1), kind="stable")
    sources, new = order[:-3], np.concatenate([order[-3:], order[:2]])  # the best three are new
    mdad.select(small_sim.take(models=sources), "random", 60, seed=0).save(tmp_path / "r.json")
    write_npz(small_sim.take(models=new), tmp_path / "new.npz")
    runner = CliRunner()
    base = ["estimate", str(tmp_path / "r.json"), str(tmp_path / "new.npz")]
    exact, population = (runner.invoke(app, base + extra, terminal_width=200) for extra in ([], ["--population"]))
    assert exact.exit_code == 0 and population.exit_code == 0, exact.output + population.output
    best = small_sim.scores[sources].mean(axis=1).max()
    micro = SelectedMicroBenchmark.load(tmp_path / "r.json")
    assert micro.best_source_accuracy == pytest.approx(best)
    estimates = micro.estimate(small_sim.take(models=new))
    above = int((estimates > best).sum())
    assert above >= 1
    said = f"{above} of the 5 models are estimated above every model the micro-benchmark was chosen from"
    assert said in " ".join(exact.output.split()) and "The exact intervals do not rest on the source models" in " ".join(exact.output.split())
    assert "The --population intervals covered such models less often" in " ".join(population.output.split())
    write_npz(small_sim.take(models=order[:4]), tmp_path / "weak.npz")
    weak = runner.invoke(app, ["estimate", str(tmp_path / "r.json"), str(tmp_path / "weak.npz")], terminal_width=200)
    assert weak.exit_code == 0 and "above every model" not in weak.output


@pytest.mark.parametrize(
    "field,value",
    [
        ("accuracy_prior", {"pool_items": 10, "counts": "many"}),
        ("accuracy_prior", {"pool_items": 10, "counts": [3, 11]}),
        ("pair_prior", {"m_edges": [1, 2], "mass": [[1.0]]}),
        ("pair_prior", {"m_edges": [1], "mass": [[1.0] * 50], "best_fifth": {"m_edges": [1], "mass": [[1.0] * 50], "line": 1.5}}),
        ("pair_prior", {"m_edges": [1], "mass": [[1.0] * 50], "best_fifth": [1, 2]}),
    ],
)
def test_malformed_priors_in_a_file_get_one_sentence(small_sim, tmp_path, field, value):
    data = mdad.select(small_sim, "random", 10, seed=0).to_json()
    data[field] = value
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(mdad.MdadError, match="bad.json.*prior"):
        SelectedMicroBenchmark.load(tmp_path / "bad.json")


def test_a_file_of_an_older_mdad_without_the_best_fifth_prior_uses_the_whole_table_for_every_pair(small_sim, tmp_path):
    chosen = mdad.select(small_sim, "random", 30, seed=2)
    data = chosen.to_json()
    assert data["pair_prior"]["best_fifth"]["line"] == chosen.pair_prior.best_fifth_line
    del data["pair_prior"]["best_fifth"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    old = SelectedMicroBenchmark.load(tmp_path / "old.json")
    assert old.pair_prior.best_fifth is None
    orders, now = old.order_probabilities(small_sim), chosen.order_probabilities(small_sim)
    scores, _ = chosen.item_scores(small_sim)
    rows = {name: i for i, name in enumerate(small_sim.models)}
    a, b = scores[rows[orders.first[0]]], scores[rows[orders.second[0]]]
    whole = exact_order_probability([small_sim.n_items], [30], [((a == 1) & (b == 0)).sum()], [((a == 0) & (b == 1)).sum()], prior=old.pair_prior)
    assert orders.probability[0] == pytest.approx(whole[0]) and "best fifth" not in orders.calibration
    assert not np.allclose(orders.probability, now.probability)  # the best models' pairs differ


def test_the_clopper_pearson_interval_is_offered_where_each_model_needs_the_guarantee(small_sim):
    """``mid_p=False``: the Clopper-Pearson interval (at least the level for every accuracy), wider than mid-p."""
    chosen = mdad.select(small_sim, "random", 30, seed=2)
    scores, _ = chosen.item_scores(small_sim)
    exact = chosen.intervals(small_sim, level=0.9, mid_p=False)
    low, high = count_interval(small_sim.n_items, 30, scores.sum(axis=1).astype(int), level=0.9, mid_p=False)
    np.testing.assert_allclose(exact.low, low / small_sim.n_items)
    np.testing.assert_allclose(exact.high, high / small_sim.n_items)
    assert "Clopper-Pearson" in exact.calibration and "for every accuracy" in exact.calibration
    mid_p = chosen.intervals(small_sim, level=0.9)
    assert ((exact.low <= mid_p.low) & (exact.high >= mid_p.high)).all()
    assert ((exact.high - exact.low) > (mid_p.high - mid_p.low)).any()
