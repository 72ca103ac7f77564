"""The analytic agreement curve against 2,000-run simulations of the real methods, on real and simulated data.

What is compared (the "full pool" statement of mdad.metrics.analytic): every pair of models,
k items drawn by the design from all items, truth = accuracy on all items, pairs binned by
their true difference. The simulation draws with the methods' own select().
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.paths import SHARED_DATA, real_dataset
from support.sim_designs import simulated_curve

from mdad.data import ResponseMatrix
from mdad.errors import MdadError
from mdad.metrics import analytic

RUNS = 2000


def musr_matrix() -> ResponseMatrix:
    """oll2-musr; its model list repeats some names (resubmissions), which get a #2 suffix here."""
    try:
        return real_dataset("oll2-musr")
    except MdadError:
        with np.load(SHARED_DATA / "oll2-musr" / "responses.npz") as z:
            seen: dict[str, int] = {}
            names = []
            for name in z["models"].astype(str):
                seen[name] = seen.get(name, 0) + 1
                names.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
            return ResponseMatrix(scores=z["scores"], models=names, items=z["items"], subtasks=z["subtasks"], source="oll2-musr")


def subset(matrix: ResponseMatrix, n_models: int, seed: int = 0) -> ResponseMatrix:
    pick = np.sort(np.random.default_rng(seed).choice(matrix.n_models, n_models, replace=False))
    return matrix.take(models=pick)


def assert_matches_simulation(matrix, design, k, runs=RUNS, z=4.0, floor=2e-3):
    stats = analytic.pair_stats(matrix)
    curve = analytic.expected_curve(analytic.agreement_probabilities(stats, k, design), stats.diff_points)
    lower, mean, se, pairs = simulated_curve(matrix, design, k, runs, seed=k, first=stats.first, second=stats.second)
    np.testing.assert_allclose(lower, curve.lower)
    np.testing.assert_array_equal(pairs, curve.pairs)
    gap = np.abs(curve.rate - mean)
    assert np.all(gap <= z * se + floor), (design, k, curve.lower[np.argmax(gap / (se + 1e-9))], gap.max())
    overall = (mean * pairs).sum() / pairs.sum()
    assert curve.agreed.sum() / curve.pairs.sum() == pytest.approx(overall, abs=z * se.max() + floor)


@pytest.mark.parametrize("k", [10, 100])
def test_gpqa_random_curve_matches_simulation(gpqa, k):
    assert_matches_simulation(subset(gpqa, 150), "random", k)


@pytest.mark.slow
@pytest.mark.parametrize("k", [10, 25, 100, 200])
def test_gpqa_all_pairs_random_curve_matches_simulation(gpqa, k):
    assert_matches_simulation(gpqa, "random", k)


@pytest.mark.parametrize("design", analytic.DESIGNS)
def test_musr_curves_of_every_random_design_match_simulation(shared_data_dir, design):
    assert_matches_simulation(subset(musr_matrix(), 120), design, 25)


@pytest.mark.slow
@pytest.mark.parametrize("design", analytic.DESIGNS)
@pytest.mark.parametrize("k", [10, 50])
def test_musr_all_pairs_curves_match_simulation(shared_data_dir, design, k):
    assert_matches_simulation(musr_matrix(), design, k)


def test_continuous_scores_curve_close_to_simulation(small_sim):
    scores = small_sim.gold_prob()  # probabilities of the gold option: continuous scores
    matrix = ResponseMatrix(scores=scores, models=small_sim.models, items=small_sim.items, subtasks=small_sim.subtasks)
    matrix = subset(matrix, 60)
    for design in ("random", "random-stratified-equal"):
        # a normal approximation: checked to within 0.03 per bin with enough pairs
        stats = analytic.pair_stats(matrix)
        curve = analytic.expected_curve(analytic.agreement_probabilities(stats, 20, design), stats.diff_points)
        _, mean, se, pairs = simulated_curve(matrix, design, 20, 1000, 5, stats.first, stats.second)
        busy = pairs >= 20
        assert np.abs(curve.rate - mean)[busy].max() < 0.03 + 4 * se[busy].max()


def test_pair_stats_equal_a_loop_and_use_common_items():
    rng = np.random.default_rng(2)
    scores = rng.integers(0, 2, (6, 40)).astype(np.float32)
    scores[rng.random(scores.shape) < 0.1] = np.nan
    subtasks = np.repeat(["a", "b"], 20)
    matrix = ResponseMatrix(scores=scores, models=[f"m{i}" for i in range(6)], items=[f"i{j}" for j in range(40)], subtasks=subtasks)
    stats = analytic.pair_stats(matrix)
    for p, (i, j) in enumerate(zip(stats.first, stats.second, strict=True)):
        for s, name in enumerate(["a", "b"]):
            cols = subtasks == name
            x, y = scores[i, cols], scores[j, cols]
            both = ~np.isnan(x) & ~np.isnan(y)
            assert stats.sizes[p, s] == both.sum()
            assert stats.n_plus[p, s] == ((x == 1) & (y == 0) & both).sum()
            assert stats.n_minus[p, s] == ((x == 0) & (y == 1) & both).sum()
        common = ~np.isnan(scores[i]) & ~np.isnan(scores[j])
        want = 100 * (scores[i, common].mean() - scores[j, common].mean())
        assert stats.diff_points[p] == pytest.approx(want)


def test_mdad_shrinks_with_size_and_can_be_not_reached(gpqa):
    values = [analytic.analytic_mdad(gpqa, k).value for k in (10, 25, 100, 400)]
    assert values == sorted(values, reverse=True) and values[0] > values[-1]
    assert not analytic.analytic_mdad(gpqa, 1, threshold=0.99).reached
    with pytest.raises(MdadError, match="Size 1000 must lie between 1 and"):
        analytic.analytic_mdad(gpqa, 1000)
    with pytest.raises(MdadError, match="No exact answer for method 'anchor-points'"):
        analytic.analytic_mdad(gpqa, 10, design="anchor-points")


def test_stored_run_analytic_curves_match_its_simulated_curves(small_sim, tmp_path):
    """The analytic curves of a stored run (its own seen halves and targets) against the run's simulated curves."""
    from mdad.experiment.evaluate import evaluate_store
    from mdad.experiment.grid import Experiment, ExperimentConfig
    from mdad.experiment.store import ResultStore
    from mdad.metrics.pairwise import pairwise_agreement
    from mdad.report.analytic import analytic_curves_for_store, analytic_figures, analytic_vs_simulated

    config = ExperimentConfig(methods=analytic.DESIGNS, sizes=(10, 40), sources=(20,), runs=30, targets=30, seed=1)
    store = ResultStore(tmp_path / "run")
    Experiment(small_sim, config, store=store).run(extra_config={"threshold": 0.8})
    exact_curves = analytic_curves_for_store(tmp_path / "run", small_sim)
    _, sim_curves = evaluate_store(store)
    assert set(exact_curves["method"]) == set(analytic.DESIGNS) and set(exact_curves["view"]) == {"seen", "unseen"}
    keys = ["method", "size", "sources", "view", "diff_low"]
    merged = sim_curves.merge(exact_curves, on=keys, suffixes=("_sim", "_exact"))
    assert len(merged) == len(sim_curves) == len(exact_curves)
    np.testing.assert_array_equal(merged["pairs_sim"], merged["pairs_exact"])
    for cell in store.cells():
        frame = store.read(cell)
        est = frame["estimate"].to_numpy().reshape(30, -1)
        for view in ("seen", "unseen"):
            per_run = pairwise_agreement(est, frame[view].to_numpy().reshape(30, -1))[0].mean(axis=1)
            rows = exact_curves[(exact_curves["method"] == cell.method) & (exact_curves["size"] == cell.size) & (exact_curves["view"] == view)]
            expected = rows["agreed"].sum() / rows["pairs"].sum()
            assert abs(per_run.mean() - expected) < 4 * per_run.std(ddof=1) / np.sqrt(30) + 1e-3, (cell, view)
    fig = analytic_vs_simulated(sim_curves, exact_curves, 10)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "random (exact)" in labels and "random (simulated)" in labels
    figures, _ = analytic_figures(tmp_path / "run", sim_curves, matrix=small_sim)
    assert [title for title, _ in figures] == [f"Exact and simulated agreement, {k} items (uniform random sampling)" for k in (10, 40)]
    with pytest.raises(MdadError, match="is not the data the stored run used"):
        analytic_curves_for_store(tmp_path / "run", subset(small_sim, 100))


@pytest.mark.parametrize("data", [["--dataset", "simulated"], []], ids=["simulated", "built-in gpqa"])
def test_report_finds_the_data_of_a_run(tmp_path, data):
    from typer.testing import CliRunner

    from mdad.cli import app
    from mdad.experiment.store import ResultStore
    from mdad.report.analytic import analytic_figures, matrix_of_run

    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", "--runs", "3", "--sizes", "10", "--methods", "random", "--seed", "4", *data, "--out", str(out)])
    assert result.exit_code == 0, result.output
    config = ResultStore(out).read_config()
    assert matrix_of_run(config)[0] is not None
    matrix, reason = matrix_of_run({**config, "data_fingerprint": "other"})
    assert matrix is None and "has changed since the run" in reason
    figures, reason = analytic_figures(out, pd.read_parquet(out / "curves.parquet"))
    assert len(figures) == 1 and reason == ""


@pytest.mark.parametrize("design", ["random-stratified-equal", "random-stratified-proportional"])
def test_blocks_of_pairs_give_the_same_probabilities(small_sim, monkeypatch, design):
    stats = analytic.pair_stats(small_sim, models=np.arange(25))
    whole = analytic.sign_probabilities(stats, 20, design, seed=3)
    monkeypatch.setattr(analytic, "PAIR_BLOCK", 37)
    blocked = analytic.sign_probabilities(stats, 20, design, seed=3)
    np.testing.assert_allclose(blocked[0], whole[0], atol=1e-12)
    np.testing.assert_allclose(blocked[1], whole[1], atol=1e-12)
