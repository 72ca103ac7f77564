"""Suites (docs/suites.md): models matched across benchmarks, the suite score, the allocation of a budget,
suite.json, the estimates of the average and their intervals; each statistic against an independent calculation."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data.matrix import ResponseMatrix
from mdad.errors import MdadError
from mdad.seeding import rng_for
from mdad.suite import Suite, SuiteMicroBenchmark, allocate, select_suite
from mdad.suite.allocation import average_reliability, mean_pair_variance, optimal_counts, pair_variances, suite_variance
from mdad.suite.names import match_models, model_key

runner = CliRunner()


def binary_matrix(models: list[str], n_items: int, seed: int, source: str) -> ResponseMatrix:
    """0/1 answers of models of spread-out abilities on items of spread-out difficulties."""
    rng = rng_for(seed, "suite-test", source)
    ability = np.linspace(-1.5, 1.5, len(models))
    difficulty = rng.normal(0, 1, n_items)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    scores = (rng.random(p.shape) < p).astype(np.float32)
    return ResponseMatrix(scores=scores, models=models, items=[f"{source}-{j}" for j in range(n_items)], subtasks=[source] * n_items, source=source)


@pytest.fixture(scope="module")
def small_suite() -> Suite:
    names = [f"org/m{i}" for i in range(40)]
    first = binary_matrix(names, 120, 0, "alpha")
    second = binary_matrix([n.replace("/", "__") for n in names[:36]] + ["other__x"], 80, 1, "beta")
    return Suite.load({"alpha": first, "beta": second}, weights=[2, 1], normalise={"beta": 0.25})


@pytest.fixture(scope="module")
def bundled() -> Suite:
    return Suite.load("gpqa,musr,math-hard")


# ---- models matched by name ----------------------------------------------------------------------------


def test_spellings_of_one_model_are_one_key():
    assert model_key("  org__model ") == model_key("org/model") == "org/model"
    assert model_key("org/model__v2") == "org/model__v2"  # a name with / keeps its double underscores


def test_missing_models_are_kept_and_named_and_ambiguous_matches_noted():
    keys, rows, notes = match_models({"a": ["org/x", "org/y", "org/z"], "b": ["org__x", "org/x ", "org__y"]})
    assert list(keys) == ["org/x", "org/y", "org/z", "org/x "]
    assert rows.tolist() == [[0, 0], [1, 2], [2, -1], [-1, 1]]
    assert any("'org__x' and 'org/x ' are both read as 'org/x'" in n for n in notes)
    assert any(n.startswith("b lacks 1 model") and "org/z" in n for n in notes)


def test_the_bundled_suite_shares_404_models_and_keeps_the_others(bundled):
    assert int(bundled.complete.sum()) == 404
    scores = bundled.scores()
    assert len(scores) == 444 and scores["suite"].notna().sum() == 404
    lacking = scores[scores["gpqa"].isna()].index
    assert len(lacking) == 24 and all(name in bundled.notes[0] for name in lacking)


# ---- the suite score -----------------------------------------------------------------------------------


def test_suite_score_is_the_weighted_mean_of_normalised_accuracies(small_suite):
    alpha, beta = small_suite.benchmarks["alpha"], small_suite.benchmarks["beta"]
    scores = small_suite.scores()
    for row in range(36):  # m0..m35 are in both
        a = float(alpha.scores[row].mean(dtype=np.float64))
        b = float(beta.scores[row].mean(dtype=np.float64))
        expected = (2 * a + 1 * max(0.0, (b - 0.25) / 0.75)) / 3
        assert scores["suite"].iloc[row] == pytest.approx(expected, abs=1e-9)
    assert np.isnan(scores.loc["org/m39", "beta"]) and np.isnan(scores.loc["org/m39", "suite"])
    assert scores.loc["other/x", "alpha"] != scores.loc["other/x", "alpha"]  # NaN: only in beta, kept


# ---- bad input: one sentence each ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"benchmarks": "gpqa,musr,gpqa"}, "names the benchmark 'gpqa' twice"),
        ({"benchmarks": "gpqa,again=gpqa"}, "same benchmark twice"),
        ({"benchmarks": "gpqa,musr", "weights": [1, 2, 3]}, "3 weights for 2 benchmarks"),
        ({"benchmarks": "gpqa,musr", "weights": {"gpqa": 1, "bbh": 1}}, "unknown benchmark 'bbh'"),
        ({"benchmarks": "gpqa,musr", "weights": [1, -1]}, "non-negative"),
        ({"benchmarks": "gpqa,musr", "normalise": {"bbh": 0.25}}, "names 'bbh', which is not a benchmark"),
        ({"benchmarks": "gpqa,musr", "normalise": {"gpqa": 1.0}}, "must lie in [0, 1)"),
        ({"benchmarks": "gpqa,musr", "normalise": {"gpqa": -0.1}}, "must lie in [0, 1)"),
        ({"benchmarks": "gpqa"}, "at least two benchmarks"),
    ],
)
def test_bad_suites_are_refused_in_one_sentence(kwargs, words):
    with pytest.raises(MdadError) as caught:
        Suite.load(**kwargs)
    assert words in str(caught.value) and str(caught.value).count(". ") == 0


def test_a_benchmark_sharing_no_model_is_refused():
    first = binary_matrix(["a/1", "a/2", "a/3"], 10, 0, "one")
    second = binary_matrix(["a/1", "a/2", "a/3"], 10, 1, "two")
    third = binary_matrix(["b/1", "b/2"], 10, 2, "three")
    with pytest.raises(MdadError, match="The benchmark three shares no model with the other benchmarks"):
        Suite.load({"one": first, "two": second, "three": third})


def test_a_budget_smaller_than_the_benchmarks_is_refused(bundled):
    with pytest.raises(MdadError, match="A budget of 2 items is smaller than the 3 benchmarks"):
        allocate(bundled, 2, "equal")
    with pytest.raises(MdadError, match=r"^The optimal allocation of anchor-points is measured on held-out runs; give at least 1 run"):
        allocate(bundled, 600, "optimal", method="anchor-points", runs=0)
    with pytest.raises(MdadError, match=r"^adaptive-1d is an adaptive test; a suite takes static micro-benchmarks"):
        allocate(bundled, 600, "equal", method="adaptive-1d")


# ---- allocation ----------------------------------------------------------------------------------------


def test_pair_variances_match_the_pairs_one_by_one(small_suite):
    scores = small_suite.complete_scores("alpha").astype(np.float64)[:12]
    direct = [np.var(scores[i] - scores[j], ddof=1) for i, j in itertools.combinations(range(len(scores)), 2)]
    np.testing.assert_allclose(pair_variances(scores), direct, rtol=1e-12)
    assert mean_pair_variance(scores) == pytest.approx(np.mean(direct), rel=1e-12)


def test_optimal_allocation_is_the_best_of_every_split():
    pools = np.array([5, 9, 4])
    spread = np.array([0.3, 1.1, 0.7])
    for budget in (3, 8, 12, 18):
        best = min((suite_variance(spread, np.array(k), pools), k) for k in itertools.product(*(range(1, n + 1) for n in pools)) if sum(k) == budget)
        found = optimal_counts(pools, budget, spread)
        assert suite_variance(spread, found, pools) == pytest.approx(best[0], rel=1e-12)
        assert found.sum() == budget and (found >= 1).all() and (found <= pools).all()


def test_allocations_of_the_bundled_suite(bundled):
    assert allocate(bundled, 600, "equal").counts == (200, 200, 200)
    assert allocate(bundled, 600, "proportional").counts == (128, 216, 256)  # 448 : 756 : 894
    optimal = allocate(bundled, 600, "optimal")
    assert sum(optimal.counts) == 600
    assert optimal.variance < allocate(bundled, 600, "equal").variance < allocate(bundled, 600, "proportional").variance


def test_the_average_variance_matches_simulated_draws(small_suite):
    """The exact variance of the average's difference against uniform draws of the items (mean over pairs)."""
    counts = (30, 20)
    rng = rng_for(0, "suite-test", "draws")
    alpha, beta = (small_suite.complete_scores(n).astype(np.float64) for n in ("alpha", "beta"))
    truth = small_suite.average(small_suite.raw_scores()[small_suite.complete])
    i, j = np.triu_indices(len(truth), 1)
    differences = []
    for _ in range(3000):
        a = alpha[:, rng.choice(alpha.shape[1], counts[0], replace=False)].mean(axis=1)
        b = beta[:, rng.choice(beta.shape[1], counts[1], replace=False)].mean(axis=1)
        estimate = small_suite.scale[0] * a + small_suite.scale[1] * b  # the unclipped average, up to a constant
        differences.append(estimate[i] - estimate[j])
    simulated = np.var(np.array(differences), axis=0, ddof=1).mean()
    spread = small_suite.scale**2 * np.array([mean_pair_variance(alpha), mean_pair_variance(beta)])
    exact = suite_variance(spread, np.array(counts), np.array([alpha.shape[1], beta.shape[1]]))
    assert simulated == pytest.approx(exact, rel=0.05)


def test_optimal_beats_equal_on_the_bundled_suite(bundled):
    optimal = average_reliability(bundled, allocate(bundled, 600, "optimal").counts)
    equal = average_reliability(bundled, (200, 200, 200))
    assert optimal.error < equal.error
    assert optimal.mdad <= equal.mdad


# ---- select, the file, estimates -----------------------------------------------------------------------


def test_select_saves_and_loads_the_suite_and_each_part(small_suite, tmp_path):
    selection = select_suite(small_suite, 40, allocation="equal", runs=0, seed=3)
    path = tmp_path / "suite.json"
    selection.chosen.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["suite.json"]  # written atomically: no temporary left
    loaded = SuiteMicroBenchmark.load(path)
    assert loaded.names == ["alpha", "beta"] and loaded.size == 40 and loaded.allocation == "equal"
    np.testing.assert_allclose(loaded.weights, [2 / 3, 1 / 3])
    assert loaded.baselines == {"beta": 0.25}
    for name in loaded.names:
        assert list(loaded.parts[name].item_ids) == list(selection.chosen.parts[name].item_ids)
    again = select_suite(small_suite, 40, allocation="equal", runs=0, seed=3).chosen
    assert all(list(again.parts[n].item_ids) == list(loaded.parts[n].item_ids) for n in loaded.names)  # one seed, same items


def test_a_broken_suite_file_is_refused_in_one_sentence(small_suite, tmp_path):
    path = tmp_path / "suite.json"
    select_suite(small_suite, 40, allocation="equal", runs=0).chosen.save(path)
    data = json.loads(path.read_text())
    data["allocation"]["alpha"] = 7
    path.write_text(json.dumps(data))
    with pytest.raises(MdadError, match="alpha has 20 items, its allocation 7"):
        SuiteMicroBenchmark.load(path)
    data["weights"] = {"alpha": 1}
    path.write_text(json.dumps(data))
    with pytest.raises(MdadError, match="'weights' must give one value per benchmark"):
        SuiteMicroBenchmark.load(path)


def test_average_intervals_cover_about_the_level(small_suite):
    """90% intervals of the suite average over 30 independent draws of the items cover 85-95% of the models."""
    truth = small_suite.scores()["suite"]
    results = dict(small_suite.benchmarks)
    covered = []
    for seed in range(30):
        chosen = select_suite(small_suite, 50, allocation="optimal", runs=0, seed=seed).chosen
        estimate = chosen.estimate(results, level=0.9)
        frame = estimate.to_frame().set_index("model")
        both = truth.notna()
        inside = (frame.loc[both, "suite_low"] <= truth[both]) & (truth[both] <= frame.loc[both, "suite_high"])
        covered.append(inside.to_numpy())
    assert 0.85 <= np.mean(covered) <= 0.95


def test_estimate_frame_holds_each_benchmark_and_the_average(small_suite):
    chosen = select_suite(small_suite, 60, allocation="proportional", runs=0).chosen
    estimate = chosen.estimate(dict(small_suite.benchmarks))
    frame = estimate.to_frame()
    assert list(frame.columns) == ["model", "alpha", "beta", "suite", "suite_low", "suite_high", "p_best"]
    both = frame.dropna(subset=["suite"])
    np.testing.assert_allclose(both["suite"], (2 * both["alpha"] + both["beta"]) / 3)
    assert frame["p_best"].notna().sum() == 1 and 0 < frame["p_best"].max() <= 1
    assert len(estimate.orders.gap) == len(both) - 1 and (estimate.orders.gap >= 0).all()
    assert frame.loc[frame["model"] == "other/x", "suite"].isna().all()  # only in beta: kept, no average
    with pytest.raises(MdadError, match="No results for the benchmark 'beta'"):
        chosen.estimate({"alpha": small_suite.benchmarks["alpha"]})


# ---- the command line ----------------------------------------------------------------------------------


def test_select_and_estimate_on_the_bundled_suite(tmp_path):
    out = tmp_path / "suite.json"
    result = runner.invoke(
        app,
        ["select", "--suite", "gpqa,musr,math-hard", "--budget", "600", "--method", "random", "--out", str(out), "--assess-runs", "0"],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "Allocation (optimal): gpqa 250 of 448, musr 232 of 756, math-hard 118 of 894." in flat
    assert "an equal split: MDAD" in flat
    csv = tmp_path / "estimates.csv"
    result = runner.invoke(app, ["estimate", str(out), "gpqa=gpqa", "musr=musr", "math-hard=math-hard", "--csv", str(csv)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(csv)
    assert list(frame.columns) == ["model", "gpqa", "musr", "math-hard", "suite", "suite_low", "suite_high", "p_best"]
    assert frame["suite"].notna().sum() == 404
    truth = mdad.Suite.load("gpqa,musr,math-hard").scores()["suite"].reindex(frame["model"]).to_numpy()
    inside = (frame["suite_low"] <= truth) & (truth <= frame["suite_high"])
    assert inside[frame["suite"].notna()].mean() > 0.8


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--suite", "gpqa,musr", "--budget", "10", "--weights", "1,2,3"], "3 weights for 2 benchmarks"),
        (["--suite", "gpqa,musr", "--budget", "10", "--normalise", "gpqa=1"], "must lie in [0, 1)"),
        (["--suite", "gpqa,musr", "--budget", "1"], "smaller than the 2 benchmarks"),
        (["--suite", "gpqa,musr", "--size", "10"], "--size does not apply to a suite"),
        (["--budget", "10"], "--budget applies to a suite"),
        (["--suite", "gpqa,musr"], "--suite needs --budget"),
    ],
)
def test_select_refuses_bad_suite_options_in_one_line(tmp_path, args, words):
    command = ["select", "--method", "random", "--out", str(tmp_path / "s.json"), "--assess-runs", "0", *args]
    result = runner.invoke(app, command, env={"COLUMNS": "300"})
    assert result.exit_code == 2
    assert words in result.output and "Traceback" not in result.output
    assert not (tmp_path / "s.json").exists()


def test_estimate_refuses_several_results_for_one_benchmark(tmp_path):
    micro = tmp_path / "micro.json"
    assert runner.invoke(app, ["select", "--method", "random", "--size", "10", "--out", str(micro), "--assess-runs", "0"]).exit_code == 0
    result = runner.invoke(app, ["estimate", str(micro), "gpqa", "musr=musr"], env={"COLUMNS": "300"})
    assert result.exit_code == 2 and "one-benchmark micro-benchmark" in result.output


# ---- plan --------------------------------------------------------------------------------------------------


def test_expected_agreement_of_the_average_matches_simulated_draws(small_suite):
    """The normal approximation of P(correct order of two averages) against uniform draws, averaged over pairs."""
    from mdad.suite.allocation import AverageModel

    counts = (25, 15)
    model = AverageModel(small_suite)
    alpha, beta = (small_suite.complete_scores(n).astype(np.float64) for n in ("alpha", "beta"))
    rng = rng_for(1, "suite-test", "agreement")
    truth = small_suite.average(small_suite.raw_scores()[small_suite.complete])
    i, j = np.triu_indices(len(truth), 1)
    agreed = np.zeros(len(i))
    draws = 2000
    for _ in range(draws):
        a = alpha[:, rng.choice(alpha.shape[1], counts[0], replace=False)].mean(axis=1)
        b = beta[:, rng.choice(beta.shape[1], counts[1], replace=False)].mean(axis=1)
        estimate = small_suite.average(np.column_stack([a, b]))
        agreed += np.sign(estimate[i] - estimate[j]) == np.sign(truth[i] - truth[j])
    assert float(np.mean(agreed / draws)) == pytest.approx(float(model.agreement(counts).mean()), abs=0.02)


def test_plan_finds_the_smallest_budget_for_each_allocation(bundled):
    from mdad.suite.allocation import AverageModel
    from mdad.suite.planning import plan_suite

    answer = plan_suite(bundled, detect=2.0)
    model = AverageModel(bundled)
    in_bin = (np.abs(100 * model.diff) >= 2.0) & (np.abs(100 * model.diff) < 2.5)
    for row in answer.rows:
        assert row.budget is not None
        at = model.agreement(allocate(bundled, row.budget, row.allocation).counts)[in_bin].mean()
        below = model.agreement(allocate(bundled, row.budget - 1, row.allocation).counts)[in_bin].mean()
        assert below < 0.8 <= at
    assert min(answer.rows, key=lambda r: r.budget).allocation == "optimal"


def test_plan_suite_command(tmp_path):
    result = runner.invoke(app, ["plan", "--suite", "gpqa,musr,math-hard", "--budget", "600"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "250, 232, 118" in result.output and "81,406 pairs" in result.output
    result = runner.invoke(app, ["plan", "--suite", "gpqa,musr", "--method", "anchor-points", "--detect", "2"], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "planned for uniform random items" in result.output


def test_results_spelled_otherwise_are_matched_to_the_suite(small_suite):
    """The new models' results may spell names as org__model in one benchmark and org/model in another."""
    chosen = select_suite(small_suite, 40, allocation="equal", runs=0).chosen
    alpha = small_suite.benchmarks["alpha"]
    respelled = alpha.take(models=np.arange(5))
    respelled = ResponseMatrix(
        scores=respelled.scores, models=[m.replace("/", "__") for m in respelled.models], items=respelled.items, subtasks=respelled.subtasks
    )
    frame = chosen.estimate({"alpha": respelled, "beta": small_suite.benchmarks["beta"].take(models=np.arange(5))}).to_frame()
    assert frame["suite"].notna().sum() == 5 and set(frame["model"]) == {f"org/m{i}" for i in range(5)}


def test_estimate_refuses_one_benchmark_options_for_a_suite(small_suite, tmp_path):
    path = tmp_path / "suite.json"
    select_suite(small_suite, 40, allocation="equal", runs=0).chosen.save(path)
    result = runner.invoke(app, ["estimate", str(path), "alpha=x", "--population"], env={"COLUMNS": "300"})
    assert result.exit_code == 2 and "--population does not apply to a suite" in result.output


# ---- run -----------------------------------------------------------------------------------------------


def test_run_suite_measures_each_allocation_on_held_out_targets(small_suite):
    from mdad.suite.experiment import held_out, run_suite

    result = run_suite(small_suite, 40, runs=4, targets=10, seed=1)
    assert list(result.summary["allocation"]) == ["equal", "proportional", "optimal"]
    assert len(result.runs) == 12 and result.summary["error"].gt(0).all()
    sources, results = held_out(small_suite, np.arange(5))
    assert all(m.n_models == 5 for m in results.values())
    assert not set(sources.models) & {f"org/m{i}" for i in range(5)}  # the targets are never sources
    with pytest.raises(MdadError, match="The targets must number from 2"):
        run_suite(small_suite, 40, runs=1, targets=40)


def test_run_suite_rows_per_benchmark_are_the_targets_estimates(small_suite):
    """One run recomputed by hand: the same targets and items give each benchmark's error and the average's."""
    from mdad.suite.experiment import held_out, run_suite

    result = run_suite(small_suite, 40, runs=1, targets=10, seed=3, allocations=("equal",))
    complete = np.flatnonzero(small_suite.complete)
    targets = np.sort(rng_for(3, "suite", "targets", 0).choice(complete, 10, replace=False))
    sources, results = held_out(small_suite, targets)
    seed = int(rng_for(3, "suite", "items", 0).integers(2**31))
    chosen = select_suite(sources, 40, allocation="equal", runs=0, seed=seed).chosen
    truth = small_suite.scores().loc[small_suite.models[targets]]
    for name, part in chosen.parts.items():
        rows = small_suite.rows[targets, small_suite.names.index(name)]
        columns = [list(small_suite.benchmarks[name].items).index(item) for item in part.item_ids]
        mean = small_suite.benchmarks[name].scores[np.ix_(rows, columns)].astype(np.float64).mean(axis=1)  # random: the mean
        baseline = small_suite.baselines.get(name, 0.0)  # beta is normalised above 0.25
        estimate = np.maximum(0.0, (mean - baseline) / (1 - baseline))
        expected = 100 * np.abs(estimate - truth[name].to_numpy()).mean()
        row = result.benchmarks[(result.benchmarks["benchmark"] == name)].iloc[0]
        assert row["items"] == part.size and row["error"] == pytest.approx(expected)


def test_run_suite_command_writes_its_tables(tmp_path):
    out = tmp_path / "run"
    command = ["run", "--suite", "gpqa,musr,math-hard", "--budget", "60", "--runs", "2", "--out", str(out)]
    result = runner.invoke(app, command, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(out / "suite-summary.csv")
    assert list(summary["allocation"]) == ["equal", "proportional", "optimal"] and {"mdad", "kendall_tau", "coverage"} <= set(summary.columns)
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "suite-benchmarks.csv", "suite-runs.csv", "suite-summary.csv"]
    # the report holds the terminal's and the CSV's numbers: per allocation, and each benchmark's rows
    html, terminal = (out / "report.html").read_text(), " ".join(result.output.split())
    assert html.count("data:image/png;base64,") == 1 and "mdad run --suite gpqa,musr,math-hard --budget 60" in html
    for row in summary.to_dict("records"):
        mdad = f"{row['mdad']:g} [{row['mdad_low']:g}, {row['mdad_high']:g}]"
        cells = [f"{row['error']:.2f}", f"{row['rmse']:.2f}", f"{row['kendall_tau']:.3f}", mdad, f"{100 * row['coverage']:.1f}%"]
        for cell in cells:
            assert f"<td>{cell}</td>" in html and cell in terminal
    benchmarks = pd.read_csv(out / "suite-benchmarks.csv")
    assert len(benchmarks) == 9 and set(benchmarks["benchmark"]) == {"gpqa", "musr", "math-hard"}
    for row in benchmarks.to_dict("records"):
        cells = (row["allocation"], row["benchmark"], row["items"], f"{row['error']:.2f}", f"{row['kendall_tau']:.3f}")
        assert "\n      ".join(f"<td>{cell}</td>" for cell in cells) in html
    items = benchmarks.pivot(index="allocation", columns="benchmark", values="items")
    for row in summary.to_dict("records"):  # each benchmark's items are the allocation's
        names = ("gpqa", "musr", "math-hard")
        assert [items.loc[row["allocation"], name] for name in names] == [row[f"items_{name}"] for name in names]
    refused = runner.invoke(app, ["run", "--suite", "gpqa,musr", "--budget", "60", "--sizes", "10", "--out", str(tmp_path / "x")])
    assert refused.exit_code == 2 and "--sizes does not apply to a suite" in refused.output


def test_run_suite_assess_runs_is_used_for_a_learned_method_and_refused_where_it_does_not_apply(tmp_path, monkeypatch):
    """--assess-runs reaches each run's held-out assessment (here counted), is in the report's command, and is refused
    for uniform random items (exact, no held-out runs) and without --suite."""
    import mdad.suite.experiment as experiment

    seen = []
    select = experiment.select_suite
    monkeypatch.setattr(experiment, "select_suite", lambda *a, **k: seen.append(k["runs"]) or select(*a, **k))
    out = tmp_path / "run"
    command = ["run", "--suite", "gpqa,musr", "--budget", "40", "--runs", "1", "--methods", "anchor-points", "--assess-runs", "1"]
    result = runner.invoke(app, [*command, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert seen == [1, 1, 1]  # one run, three allocations, each assessed on one held-out run per benchmark
    assert "--methods anchor-points --runs 1 --targets 50 --seed 0 --assess-runs 1" in (out / "report.html").read_text()
    refused = runner.invoke(app, ["run", "--suite", "gpqa,musr", "--budget", "40", "--assess-runs", "3", "--out", str(tmp_path / "r")])
    assert refused.exit_code == 2 and "--assess-runs does not apply to random" in refused.output
    alone = runner.invoke(app, ["run", "--assess-runs", "3", "--out", str(tmp_path / "a")])
    assert alone.exit_code == 2 and "needs both --suite" in alone.output


def test_one_results_source_holding_every_benchmark(small_suite, tmp_path):
    """One folder of logs (here one npz) holding every benchmark's tasks gives the same estimates as one source each;
    a model not run on a benchmark is missing there, not an error."""
    from mdad.data import write_npz

    alpha, beta = small_suite.benchmarks["alpha"], small_suite.benchmarks["beta"]
    models = list(small_suite.models)
    scores = np.full((len(models), alpha.n_items + beta.n_items), np.nan, dtype=np.float32)
    for b, matrix in enumerate((alpha, beta)):
        have = small_suite.rows[:, b] >= 0
        start = 0 if b == 0 else alpha.n_items
        scores[np.flatnonzero(have), start : start + matrix.n_items] = matrix.scores[small_suite.rows[have, b]]
    combined = ResponseMatrix(
        scores=scores, models=models, items=[*alpha.items, *beta.items], subtasks=[*alpha.subtasks, *beta.subtasks], source="combined"
    )
    chosen = select_suite(small_suite, 40, allocation="optimal", runs=0).chosen
    apart = chosen.estimate({"alpha": alpha, "beta": beta}).to_frame().set_index("model").sort_index()
    together = chosen.estimate({"alpha": combined, "beta": combined}).to_frame().set_index("model").sort_index()
    pd.testing.assert_frame_equal(apart, together)
    micro, npz, csv = tmp_path / "suite.json", tmp_path / "all.npz", tmp_path / "est.csv"
    chosen.save(micro)
    write_npz(combined, npz)
    result = runner.invoke(app, ["estimate", str(micro), str(npz), "--csv", str(csv)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    np.testing.assert_allclose(pd.read_csv(csv).set_index("model").sort_index()["suite"], together["suite"])
