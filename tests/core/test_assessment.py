"""A micro-benchmark's reliability on held-out models: numbers against brute force, storage, CLI."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from support.naive_metrics import naive_kendall_tau_b, naive_mdad
from typer.testing import CliRunner

import mdad
from mdad.assessment import Assessment, assess
from mdad.cli import app
from mdad.data import write_npz
from mdad.errors import MdadError
from mdad.experiment.splits import make_splits
from mdad.metrics.exact import sign_probabilities
from mdad.micro import SelectedMicroBenchmark


@pytest.fixture(scope="module")
def random_assessment(small_sim):
    return mdad.assess(small_sim, "random", 10, runs=6, targets=15, seed=4)


def test_summary_equals_brute_force_over_the_stored_runs(small_sim, random_assessment):
    a = random_assessment
    targets = make_splits(small_sim, 6, 15, seed=4).targets
    # the truth is each held-out target's accuracy on every item of the benchmark
    np.testing.assert_allclose(a.truths, small_sim.scores[targets].astype(float).mean(axis=2))
    # plain means of 10 items of 0/1 answers
    np.testing.assert_allclose(a.estimates * 10, np.round(a.estimates * 10), atol=1e-9)
    assert a.sources == small_sim.n_models - 15 and a.runs == 6 and a.targets == 15
    assert a.error == pytest.approx(np.mean(np.abs(a.estimates - a.truths)))
    assert a.kendall_tau == pytest.approx(np.mean([naive_kendall_tau_b(e, t) for e, t in zip(a.estimates, a.truths, strict=True)]))
    expected = naive_mdad(a.estimates, a.truths)
    assert (a.mdad if a.mdad_reached else None) == expected


def test_the_whole_pool_orders_every_pair_and_makes_no_error(small_sim):
    a = mdad.assess(small_sim, "random", small_sim.n_items, runs=3, targets=12)
    assert a.error == pytest.approx(0.0, abs=2.0**-31)  # estimates lie on a grid of 2**-30 (docs/reproducibility.md)
    assert a.kendall_tau == pytest.approx(1.0)


def test_agreement_matches_the_exact_hypergeometric_probability():
    """Known truth: for uniform random items, each pair's chance of being ordered correctly is exact."""
    matrix = mdad.simulate(seed=5, n_models=80, n_items=300, n_subtasks=1)
    k, runs = 20, 100
    a = mdad.assess(matrix, "random", k, runs=runs, targets=30, seed=1)
    i, j = np.triu_indices(30, 1)
    observed, expected = [], []
    targets = make_splits(matrix, runs, 30, seed=1).targets
    for run in range(runs):
        y = matrix.scores[targets[run]]
        n_plus = ((y[i] == 1) & (y[j] == 0)).sum(axis=1)
        n_minus = ((y[i] == 0) & (y[j] == 1)).sum(axis=1)
        p_pos, p_neg = sign_probabilities(matrix.n_items, k, n_plus, n_minus)
        expected.append(np.where(n_plus > n_minus, p_pos, np.where(n_plus < n_minus, p_neg, 0.0)))
        de = a.estimates[run][i] - a.estimates[run][j]
        dt = a.truths[run][i] - a.truths[run][j]
        observed.append(((np.sign(de) == np.sign(dt)) & (de != 0)).mean())
    # per run, the share of the 435 pairs ordered correctly minus its exact expectation; the pairs of a run share
    # its items, so the runs (independent draws) are the unit: the mean difference is within 4 standard errors of 0
    difference = np.array(observed) - np.array([e.mean() for e in expected])
    assert abs(difference.mean()) < 4 * difference.std(ddof=1) / math.sqrt(runs)
    assert difference.std(ddof=1) / math.sqrt(runs) < 0.01  # precise enough to see a bias of a few points


def test_same_numbers_whatever_the_workers(small_sim, random_assessment):
    two = mdad.assess(small_sim, "random", 10, runs=6, targets=15, seed=4, workers=2)
    assert two.to_json() == random_assessment.to_json()  # NaN (an unconfirmed interval end) as null: comparable
    np.testing.assert_array_equal(two.estimates, random_assessment.estimates)


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_counts_every_run_once_and_changes_no_number(small_sim, random_assessment, workers):
    finished: list[float] = []
    found = mdad.assess(small_sim, "random", 10, runs=6, targets=15, seed=4, workers=workers, on_runs=finished.append)
    assert sum(finished) == pytest.approx(6) and len(finished) == 6 and min(finished) > 0
    np.testing.assert_array_equal(found.estimates, random_assessment.estimates)


def test_stored_with_the_micro_benchmark_and_read_back(small_sim, random_assessment, tmp_path):
    chosen = mdad.select(small_sim, "random", 10, seed=4).with_assessment(random_assessment)
    chosen.save(tmp_path / "m.json")
    back = SelectedMicroBenchmark.load(tmp_path / "m.json").assessment
    assert back.to_json() == random_assessment.to_json()  # NaN (an unconfirmed interval end) as null: comparable
    nan = float("nan")
    unreached = replace(random_assessment, mdad=nan, mdad_low=nan, mdad_high=nan, mdad_robust=nan)
    assert not unreached.mdad_reached and unreached.cautious_mdad == math.inf
    chosen.with_assessment(unreached).save(tmp_path / "n.json")
    back = SelectedMicroBenchmark.load(tmp_path / "n.json").assessment
    assert math.isnan(back.mdad) and math.isnan(back.mdad_robust) and back.error == unreached.error
    with pytest.raises(MdadError, match="assessment is of random with 10 items"):
        mdad.select(small_sim, "random", 12).with_assessment(random_assessment)


def test_bad_arguments_get_one_sentence(small_sim):
    with pytest.raises(MdadError, match="larger than the pool"):
        mdad.assess(small_sim, "random", 5000)
    with pytest.raises(MdadError, match="Unknown"):
        mdad.assess(small_sim, "no-such-method", 10)
    with pytest.raises(MdadError, match="threshold"):
        mdad.assess(small_sim, "random", 10, threshold=1.0)


def test_select_assesses_and_estimate_flags_unlikely_orders(small_sim, tmp_path):
    write_npz(small_sim, tmp_path / "data.npz")
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "select",
            "--data",
            str(tmp_path / "data.npz"),
            "--method",
            "random",
            "--size",
            "10",
            "--assess-runs",
            "4",
            "--targets",
            "20",
            "--workers",
            "1",
            "--out",
            str(tmp_path / "m.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "On 4 held-out splits (20 target models, 100 source models" in " ".join(result.output.split())
    assert "Held-out runs" in result.output and "4/4" in result.output  # the progress bar, at its end
    assessment = SelectedMicroBenchmark.load(tmp_path / "m.json").assessment
    assert assessment.runs == 4
    result = runner.invoke(app, ["estimate", str(tmp_path / "m.json"), str(tmp_path / "data.npz")], terminal_width=200)
    assert result.exit_code == 0, result.output
    orders = SelectedMicroBenchmark.load(tmp_path / "m.json").order_probabilities(small_sim)
    flagged = int(np.sum(orders.probability < assessment.threshold))
    text = " ".join(result.output.split())
    assert f"{flagged} of the {len(orders.gap)} neighbouring pairs keep their order" in text and flagged > 0
    assert "Order probabilities: exact" in text
    result = runner.invoke(
        app,
        [
            "select",
            "--data",
            str(tmp_path / "data.npz"),
            "--method",
            "random",
            "--size",
            "10",
            "--assess-runs",
            "0",
            "--out",
            str(tmp_path / "plain.json"),
        ],
    )
    assert result.exit_code == 0 and SelectedMicroBenchmark.load(tmp_path / "plain.json").assessment is None
    result = runner.invoke(app, ["estimate", str(tmp_path / "plain.json"), str(tmp_path / "data.npz")])
    assert "carries no assessment" in " ".join(result.output.split())


def test_select_on_too_few_models_says_it_cannot_assess(small_sim, tmp_path):
    write_npz(small_sim.take(models=np.arange(3)), tmp_path / "three.npz")
    result = CliRunner().invoke(
        app, ["select", "--data", str(tmp_path / "three.npz"), "--method", "random", "--size", "10", "--out", str(tmp_path / "m.json")]
    )
    assert result.exit_code == 0, result.output
    assert "Not assessed: with 3 models" in " ".join(result.output.split())
    assert SelectedMicroBenchmark.load(tmp_path / "m.json").assessment is None


def test_every_registered_metric_reaches_the_assessment_and_its_file():
    from mdad.metrics.base import METRICS, Metric
    from mdad.micro.notes import describe_assessment

    spread = Metric(
        "spread",
        "estimate spread",
        "standard deviation of the estimates",
        lambda d: float(np.std(d.estimates)),
        scale=100.0,
        unit="pts",
        digits=1,
        better="higher",
    )
    METRICS.add(spread)
    try:
        a = assess(mdad.simulate(seed=0, n_models=30, n_items=80), "random", 10, runs=3)
        back = Assessment.from_json(a.to_json())
        sentence = describe_assessment(a)
    finally:
        METRICS.remove("spread")
    assert a.metrics["spread"] == pytest.approx(np.std(a.estimates))
    assert set(a.metrics) == {"error", "kendall_tau", "spread"} and back.metrics == pytest.approx(a.metrics)
    assert f"estimate spread {round(100 * a.metrics['spread'], 1):g} pts" in sentence
