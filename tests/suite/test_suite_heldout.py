"""The optimal allocation of methods other than uniform random items, from error curves fitted to held-out runs
(mdad.suite.curves, docs/suites.md#allocation): the fit, its anchor on random items (Neyman's allocation), where it
puts items when the benchmarks' noise differs, and the command that prints it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm
from typer.testing import CliRunner

from mdad.cli import app
from mdad.data.matrix import ResponseMatrix
from mdad.errors import MdadError
from mdad.seeding import rng_for
from mdad.suite import Suite, allocate, select_suite
from mdad.suite.allocation import greedy_counts, optimal_counts, pair_variances, spreads
from mdad.suite.curves import fit_curve, ladder, measure_curves

runner = CliRunner()


def noisy_matrix(n_models: int, n_items: int, noise: float, seed: int, source: str) -> ResponseMatrix:
    """0/1 answers: right when ability - difficulty + noise * (a standard normal draw) > 0; the larger ``noise``, the
    more two models' answers differ item by item beyond their abilities."""
    rng = rng_for(seed, "suite-heldout-test", source)
    ability = np.linspace(-1.0, 1.0, n_models)
    difficulty = rng.normal(0, 1, n_items)
    latent = ability[:, None] - difficulty[None, :] + noise * rng.normal(0, 1, (n_models, n_items))
    scores = (latent > 0).astype(np.float32)
    names = [f"org/m{i}" for i in range(n_models)]
    return ResponseMatrix(scores=scores, models=names, items=[f"{source}-{j}" for j in range(n_items)], subtasks=[source] * n_items, source=source)


@pytest.fixture(scope="module")
def uneven() -> Suite:
    """A quiet benchmark (answers almost fixed by ability) and a noisy one, of equal pools."""
    return Suite.load({"quiet": noisy_matrix(80, 300, 0.3, 0, "quiet"), "noisy": noisy_matrix(80, 300, 1.5, 1, "noisy")})


def test_the_fit_recovers_a_curve_of_its_form_exactly():
    sizes = np.array([10, 20, 40, 80])
    measured = 0.3 * sizes**-0.6 * (1 - sizes / 400)
    curve = fit_curve(sizes, measured, 400)
    assert curve.power == pytest.approx(0.6) and curve.scale == pytest.approx(0.3)
    assert float(curve(400)) == 0.0 and float(curve(25)) == pytest.approx(0.3 * 25**-0.6 * (1 - 25 / 400))
    assert fit_curve(np.array([10]), np.array([0.02]), 400).power == 1.0  # one size: the random design's exponent
    assert fit_curve(sizes, np.zeros(4), 400).scale == 0.0


def test_ladder_spans_the_equal_share_up_to_half_the_pool():
    assert ladder(894, 200) == (50, 100, 200, 400)
    assert ladder(448, 200) == (50, 100, 200, 224)
    assert ladder(3, 10) == (1,)


def test_held_out_curves_of_random_items_are_the_exact_variance():
    """On random items the measured curve is S^2 (1/k - 1/N): exponent near 1, value near the exact variance."""
    matrix = noisy_matrix(100, 400, 1.0, 2, "alone")
    curves = measure_curves(matrix, "random", (20, 40, 80, 160), runs=30, seed=0)
    exact = float(pair_variances(matrix.scores.astype(np.float64)).mean())  # S^2 over every pair, one by one
    assert 0.85 < curves.pairs.power < 1.15
    for k in (20, 60, 160):
        assert float(curves.pairs(k)) == pytest.approx(exact * (1 / k - 1 / 400), rel=0.15)


def test_held_out_allocation_of_random_items_matches_neyman(uneven):
    """The held-out machinery run on random items gives Neyman's closed-form allocation, within noise."""
    pools = np.array([300, 300])
    neyman = optimal_counts(pools, 200, spreads(uneven))
    curves = [measure_curves(uneven.benchmarks[name], "random", ladder(300, 100), runs=20, seed=0) for name in uneven.names]
    scale2 = np.asarray(uneven.scale) ** 2
    held_out = greedy_counts(pools, 200, lambda counts: scale2 * np.array([c.pairs(k) for c, k in zip(curves, counts, strict=True)]))
    assert neyman[1] > neyman[0]  # the noisy benchmark's models differ more item by item
    assert np.abs(held_out - neyman).max() <= 10


def test_a_learned_methods_optimal_allocation_gives_the_noisier_benchmark_more_items(uneven):
    split = allocate(uneven, 120, "optimal", method="lasso", runs=3)
    quiet, noisy = split.counts
    assert noisy > quiet and quiet + noisy == 120
    assert len(split.curves) == 2 and split.curves[1].pairs(60) > split.curves[0].pairs(60)
    # the criterion is the fitted curves' weighted sum at the counts (weights 1/2: c_b^2 = 1/4), and no other split
    # of the budget makes it smaller
    curve = lambda q: sum(0.25 * float(c.pairs(k)) for c, k in zip(split.curves, (q, 120 - q), strict=True))  # noqa: E731
    assert split.variance == pytest.approx(curve(quiet))
    assert all(curve(q) >= split.variance - 1e-15 for q in range(1, 120))


def test_select_reports_a_learned_methods_reliability_beside_the_equal_splits(uneven):
    selection = select_suite(uneven, 120, method="lasso", allocation="optimal", runs=3)
    assert selection.reliability is not None and selection.equal is not None
    # by hand: every pair's difference has sd sqrt(sum_b c_b^2 pairs_b(k_b)), P(right order) = Phi(|D| / sd), in 0.5-point bins
    curves, counts = selection.allocation.curves, selection.allocation.counts
    sd = np.sqrt(sum(0.25 * float(c.pairs(k)) for c, k in zip(curves, counts, strict=True)))
    truth = uneven.scores()["suite"].to_numpy()
    diff = np.abs(truth[:, None] - truth[None, :])[np.triu_indices(len(truth), 1)]
    agree = np.where(diff == 0, 0.0, norm.cdf(diff / sd))
    bins = np.floor(100 * diff / 0.5 + 1e-9).astype(int)
    curve = selection.reliability.curve
    for lower, pairs, agreed in zip(curve.lower, curve.pairs, curve.agreed, strict=True):
        inside = bins == round(lower / 0.5)
        assert pairs == inside.sum() and agreed == pytest.approx(agree[inside].sum())
    own = sum(0.25 * float(c.own(k)) for c, k in zip(curves, counts, strict=True))
    assert selection.reliability.error == pytest.approx(100 * np.sqrt(2 / np.pi * own))
    assert [part.size for part in selection.chosen.parts.values()] == list(selection.allocation.counts)
    assert select_suite(uneven, 120, method="lasso", allocation="equal", runs=0).reliability is None  # nothing measured


def test_a_learned_optimal_allocation_needs_held_out_runs(uneven):
    refusal = r"^The optimal allocation of lasso is measured on held-out runs; give at least 1 run \(--assess-runs\), got 0\.$"
    with pytest.raises(MdadError, match=refusal):
        select_suite(uneven, 120, method="lasso", allocation="optimal", runs=0)


def test_select_suite_optimal_with_lasso_prints_the_allocation_and_the_equal_split(tmp_path):
    out = tmp_path / "suite.json"
    command = ["select", "--suite", "gpqa,musr,math-hard", "--budget", "60", "--method", "lasso", "--allocation", "optimal"]
    result = runner.invoke(app, [*command, "--out", str(out), "--assess-runs", "2", "--workers", "1"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "Allocation (optimal): gpqa" in flat and "error curves fitted to 2 held-out runs per benchmark" in flat
    assert "an equal split: MDAD" in flat and out.exists()
    refused = runner.invoke(app, [*command, "--out", str(tmp_path / "other.json"), "--assess-runs", "0"], env={"COLUMNS": "300"})
    assert refused.exit_code == 2 and "give at least 1 run (--assess-runs)" in " ".join(refused.output.split())
    assert "Traceback" not in refused.output
