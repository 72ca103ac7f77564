"""`plan` for every method: the quick simulation against the exact answer where one exists, and the command."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import write_npz
from mdad.errors import MdadError
from mdad.experiment.splits import make_splits
from mdad.metrics.exact import agreement, sign_probabilities
from mdad.planning import ExactMdadAtSize, ExactSmallestSize, SimulatedMdadAtSize, simulated_plan


def test_simulated_share_matches_the_exact_probability_within_its_monte_carlo_error(small_sim):
    runs, detect = 20, 6.0
    found = simulated_plan(small_sim, "random", detect=detect, sizes=(10, 40, 200), runs=runs, seed=3)
    targets = make_splits(small_sim, runs, 50, seed=3).targets  # the held-out runs' targets (default 50)
    scores = small_sim.scores.astype(np.float64)
    exact = {k: [] for k in found.sizes}
    for run in targets:
        for a in range(len(run)):
            for b in range(a + 1, len(run)):
                x, y = scores[run[a]], scores[run[b]]
                diff = 100 * (x.mean() - y.mean())
                if int(np.floor(abs(diff) / 0.5 + 1e-9)) != int(detect / 0.5):
                    continue
                plus, minus = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
                for k in found.sizes:
                    pos, neg = sign_probabilities(small_sim.n_items, int(k), plus, minus)
                    exact[k].append(float(agreement(pos, neg, np.sign(diff))))
    assert found.pairs == len(exact[found.sizes[0]]) > 50
    for k, rate, se in zip(found.sizes, found.agreement, found.stderr, strict=True):
        assert abs(rate - np.mean(exact[k])) < 4 * se + 0.01, (k, rate, np.mean(exact[k]), se)
    assert found.agreement[-1] > found.agreement[0]


def test_smallest_size_is_the_first_that_reaches_the_threshold(small_sim):
    found = simulated_plan(small_sim, "random", detect=6.0, sizes=(10, 40, 200, 400), runs=4, seed=0, threshold=0.7)
    reached = found.sizes[found.agreement >= 0.7]
    assert found.smallest == (int(reached[0]) if len(reached) else None)
    with pytest.raises(MdadError, match="from 0 to 100"):
        simulated_plan(small_sim, "random", detect=-1.0)


def test_plan_answers_for_a_method_without_an_exact_answer(small_sim, tmp_path):
    write_npz(small_sim, tmp_path / "data.npz")
    result = CliRunner().invoke(
        app, ["plan", "--data", str(tmp_path / "data.npz"), "--method", "anchor-points", "--detect", "6", "--runs", "3"], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Simulated, not exact" in text and "±" in text and "6 to 6.5 points apart" in text
    result = CliRunner().invoke(
        app, ["plan", "--data", str(tmp_path / "data.npz"), "--method", "anchor-points", "--size", "20", "--runs", "3"], terminal_width=200
    )
    assert result.exit_code == 0 and "simulated on 3 held-out runs" in " ".join(result.output.split())


def test_plan_answers_exactly_for_the_random_designs_and_its_answer_is_the_first_size_that_reaches(small_sim):
    found = mdad.plan(small_sim, detect=6.0, threshold=0.7)
    assert isinstance(found, ExactSmallestSize) and found.label == "6 to 6.5" and found.pairs > 0
    assert found.at_smallest >= 0.7 > found.below
    frame = found.to_frame()
    assert found.smallest in frame["items"].tolist()
    assert (frame.loc[frame["items"] < found.smallest, "p_correct_order"] < 0.7).all()
    at_size = mdad.plan(small_sim, size=found.smallest, method="random-stratified-equal")
    assert isinstance(at_size, ExactMdadAtSize) and at_size.pairs == 120 * 119 // 2
    assert at_size.to_frame()["pairs"].sum() == at_size.pairs


def test_plan_simulates_other_methods_and_refuses_unclear_requests(small_sim):
    found = mdad.plan(small_sim, size=20, method="anchor-points", runs=2)
    assert isinstance(found, SimulatedMdadAtSize) and found.assessment.runs == 2 and found.size == 20
    for request, message in (({"detect": 2.0, "size": 10}, "not both"), ({}, "not both or neither"), ({"detect": 2.0, "method": "nope"}, "nope")):
        with pytest.raises(MdadError, match=message):
            mdad.plan(small_sim, **request)
    with pytest.raises(MdadError, match="finished run"):
        mdad.plan(detect=2.0)


def test_compare_gives_every_chosen_pair_its_probability_against_the_mdad_of_all_pairs(small_sim):
    names = list(small_sim.models[:4])
    found = mdad.compare(small_sim, size=50, models=names)
    frame = found.to_frame()
    assert found.label == "4 chosen models" and len(frame) == 6 and found.all_pairs == 120 * 119 // 2
    assert set(frame["model_a"]) | set(frame["model_b"]) == set(names)
    assert (frame["accuracy_a"] >= frame["accuracy_b"]).all() and frame["difference_points"].is_monotonic_increasing
    assert found.below_mdad == int((frame["difference_points"] < found.mdad).sum())
    assert mdad.compare(small_sim, size=50).label == "all 120 models"
    with pytest.raises(MdadError, match="not both"):
        mdad.compare(small_sim, size=50, models=names, group="g")
    with pytest.raises(MdadError, match="two different"):
        mdad.compare(small_sim, size=50, models=names[:1] * 2)


def test_plan_from_results_refuses_other_data(small_sim, tmp_path):
    write_npz(small_sim, tmp_path / "data.npz")
    result = CliRunner().invoke(app, ["plan", "--results", str(tmp_path), "--data", str(tmp_path / "data.npz"), "--detect", "2"], terminal_width=200)
    assert result.exit_code == 2 and "drop --data and --dataset" in " ".join(result.output.split())
