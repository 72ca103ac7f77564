"""The public API: keyword-only options, result objects, library defaults, one rule per home."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

import mdad
from mdad.errors import MdadError
from mdad.metrics import analytic, exact
from mdad.metrics.pairwise import AgreementCurve, first_crossing
from mdad.planning.exact import smallest_size


def brute_force_agreement(N: int, k: int, n_plus: int, n_minus: int, draws: int = 0) -> float:
    """P(K+ > K-) for k of N items (n+ only the first right, n- only the second), by enumerating
    every count pair with its multivariate hypergeometric probability."""
    from math import comb

    total = 0
    for a in range(0, min(n_plus, k) + 1):
        for b in range(0, min(n_minus, k - a) + 1):
            if a > b:
                total += comb(n_plus, a) * comb(n_minus, b) * comb(N - n_plus - n_minus, k - a - b)
    return total / comb(N, k)


def one_pair(N: int, n_plus: int, n_minus: int) -> analytic.PairStats:
    return analytic.PairStats(
        first=np.array([0]),
        second=np.array([1]),
        sizes=np.array([[N]]),
        n_plus=np.array([[n_plus]]),
        n_minus=np.array([[n_minus]]),
        sum_d=np.array([[float(n_plus - n_minus)]]),
        sum_d2=np.array([[float(n_plus + n_minus)]]),
        binary=True,
        strata=np.array(["all"]),
    )


def test_plan_finds_the_true_smallest_size_when_agreement_is_not_monotone():
    # ties count as errors, so agreement dips at even k: 0.717, 0.700, 0.816, 0.763, 1.0 at k = 15..19
    stats = one_pair(20, 10, 8)
    values = analytic.mean_agreement_by_size(stats, range(15, 20))
    assert values == pytest.approx([brute_force_agreement(20, k, 10, 8) for k in range(15, 20)], abs=1e-12)
    assert np.round(values, 3).tolist() == [0.717, 0.7, 0.816, 0.763, 1.0]
    k, at_k, below = smallest_size(stats, "random", 0.8, seed=0)
    brute = [brute_force_agreement(20, j, 10, 8) for j in range(1, 21)]
    assert k == 1 + next(j for j, v in enumerate(brute) if v >= 0.8) == 17
    assert at_k == pytest.approx(brute[16]) and below == pytest.approx(brute[15])


def test_public_functions_take_options_by_keyword_only():
    for func, first_option in (
        (mdad.select, "seed"),
        (mdad.assess, "runs"),
        (analytic.analytic_mdad, "design"),
        (mdad.plan, "detect"),
        (mdad.compare, "size"),
    ):
        parameter = inspect.signature(func).parameters[first_option]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, func.__name__
    with pytest.raises(TypeError):
        mdad.ExperimentConfig(("random",), (10,))


def test_the_version_is_written_once():
    from importlib.metadata import version

    assert version("mdad") == mdad.__version__


def test_defaults_live_in_the_library_and_fit_small_leaderboards():
    matrix = mdad.simulate(seed=1, n_models=31, n_items=200, n_subtasks=2)
    config = mdad.ExperimentConfig.for_matrix(matrix, methods="random", runs=3)
    assert config.targets == 15 and config.sources == (16,)
    assert config.sizes == (10, 25, 50)  # the paper's sizes that fit in the 99 seen items
    result = mdad.Experiment(matrix, config).run()
    summary = result.summary()
    assert set(summary["view"]) == {"seen", "unseen"} and len(summary) == 2 * len(config.sizes)
    stricter = result.summary(threshold=0.9)
    assert (stricter["mdad"].fillna(np.inf) >= summary["mdad"].fillna(np.inf)).all()
    assert set(result.curves()["size"]) == set(config.sizes)


def test_result_objects_describe_their_numbers():
    estimates = np.array([[0.5, 0.6, 0.9], [0.2, 0.4, 0.3]])
    truth = np.array([[0.4, 0.6, 0.8], [0.2, 0.3, 0.4]])
    error = mdad.metrics.estimation_error(estimates, truth)
    assert error.per_run == pytest.approx([0.2 / 3, 0.2 / 3]) and error.bias == pytest.approx(0.2 / 6)
    tau = mdad.metrics.kendall_tau(estimates, truth)
    assert tau.per_run == pytest.approx([1.0, 1 / 3]) and tau.mean == pytest.approx(2 / 3)
    probs = exact.sign_probabilities(20, 17, 10, 8)
    higher, lower = probs
    assert float(higher) == pytest.approx(brute_force_agreement(20, 17, 10, 8))
    assert float(lower) == pytest.approx(brute_force_agreement(20, 17, 8, 10))


def test_objects_holding_arrays_compare_by_identity_instead_of_raising(small_sim):
    micro = mdad.select(small_sim, "random", 5)
    assert micro != mdad.select(small_sim, "random", 5) and micro == micro
    assert micro.micro != micro.micro.__class__(items=micro.micro.items, weights=micro.micro.weights)


def test_first_crossing_is_the_one_rule_with_rows_and_rounding():
    edges = np.array([0.0, 0.5, 1.0])
    assert first_crossing(np.array([0.5, 0.8 - 1e-15, 0.9]), edges, 0.8) == 0.5
    assert np.isnan(first_crossing(np.array([0.1, 0.2, 0.3]), edges, 0.8))
    rows = first_crossing(np.array([[0.9, 0.9, 0.9], [0.1, 0.1, 0.1]]), edges, 0.8)
    assert rows[0] == 0.0 and np.isnan(rows[1])
    curve = AgreementCurve(lower=edges, pairs=np.array([10, 10, 10]), agreed=np.array([5, 8, 9]), bin_width=0.5)
    assert curve.crossing(0.8) == 0.5


def test_library_errors_do_not_name_command_line_flags(small_sim):
    with pytest.raises(MdadError) as caught:
        mdad.assess(small_sim, "random", 10, threshold=1.5)
    assert "--" not in str(caught.value)
    with pytest.raises(MdadError) as caught:
        small_sim.take(items=np.array([0, 1])).__class__(
            scores=np.array([[0.0, np.nan], [1.0, 1.0]]),
            models=["a", "b"],
            items=["i", "j"],
            subtasks=["s", "s"],
        ).require_complete()
    assert "--" not in str(caught.value)


def test_frames_round_trip_keeps_results(small_sim):
    frame = mdad.to_frame(small_sim)
    again = mdad.from_frame(frame, subtasks=frame.attrs["subtasks"])
    pd.testing.assert_frame_equal(mdad.to_frame(again), frame)


@pytest.mark.parametrize("name", ["gsm8k-zeroeval", "mmlu-pro-tiger"])
def test_the_readme_recipe_runs_on_small_real_leaderboards(name):
    """41 and 31 models: the library's defaults (half the models as targets, the rest as sources) make
    the Python recipe of docs/python.md work where fixed 50 targets / 300 sources would not."""
    from support.paths import real_dataset

    matrix = real_dataset(name).require_complete("drop-items")
    config = mdad.ExperimentConfig.for_matrix(matrix, methods="random", sizes=[10, 50], runs=3)
    assert config.targets == matrix.n_models // 2 and config.sources == (matrix.n_models - config.targets,)
    summary = mdad.Experiment(matrix, config).run().summary()
    assert len(summary) == 4 and summary["error"].between(0, 1).all()
    check = mdad.assess(matrix, "random", 10, runs=3)
    assert check.targets == matrix.n_models // 2
