"""P(the estimated best is the true best) (docs/intervals.md#the-best-of-a-ranking): against brute-force
enumeration, against simulation with known truth, and as `mdad estimate` prints and writes it."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import hypergeom, norm
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import write_npz
from mdad.errors import MdadError
from mdad.intervals import OrderCalibration
from mdad.intervals.posterior import AccuracyPrior
from mdad.intervals.ranking import best_probabilities, count_posteriors, logistic_fit, normal_posteriors
from mdad.seeding import rng_for


def brute_force_best(post: np.ndarray) -> np.ndarray:
    """P(model i strictly above every other) by summing over every joint value of the models."""
    n, g = post.shape
    out = np.zeros(n)
    for values in itertools.product(range(g), repeat=n):
        mass = np.prod([post[i, v] for i, v in enumerate(values)])
        top = max(values)
        if values.count(top) == 1:
            out[values.index(top)] += mass
    return out


def test_best_probabilities_match_enumeration_of_every_joint_value():
    rng = rng_for(0, "test-ranking", "enumeration")
    for n, g in [(2, 3), (3, 4), (4, 5)]:
        post = rng.dirichlet(np.full(g, 0.7), size=n)
        post[0, -1] = 0.0  # a model that cannot reach the top value, and one that cannot lie below some values
        post[0] /= post[0].sum()
        post[1, :2] = 0.0
        post[1] /= post[1].sum()
        np.testing.assert_allclose(best_probabilities(post), brute_force_best(post), atol=1e-12)


def test_point_masses_give_certainty_and_ties_give_no_best():
    post = np.eye(3)[[2, 0, 1]]  # model 0 sits at the top value for sure
    np.testing.assert_allclose(best_probabilities(post), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(best_probabilities(np.eye(3)[[2, 2, 0]]), [0.0, 0.0, 0.0])  # a tie at the top: nobody strictly best


def test_best_probability_is_calibrated_when_the_prior_is_the_truth():
    """Models drawn from the prior, answers hypergeometric: the estimated best is the true best as often as the mean
    probability says (the posterior needs no correction for choosing the best when the prior is right)."""
    N, k, n, sims = 200, 20, 8, 3000
    prior = AccuracyPrior(N, np.array([30, 60, 80, 90, 100, 110, 120, 150, 170]))
    weights = prior.weights()
    rng = rng_for(0, "test-ranking", "simulation")
    counts = rng.choice(N + 1, size=(sims, n), p=weights)
    correct = hypergeom.rvs(N, counts, k, random_state=rng)
    p, held = np.empty(sims), np.empty(sims, dtype=bool)
    for s in range(sims):
        best = int(np.argsort(-correct[s], kind="stable")[0])
        p[s] = best_probabilities(count_posteriors(prior, k, correct[s]))[best]
        held[s] = counts[s, best] > np.delete(counts[s], best).max()
    se = np.sqrt(np.mean(p * (1 - p)) / sims)
    assert abs(held.mean() - p.mean()) < 3 * se
    for part in (p < np.median(p), p >= np.median(p)):  # and within each half of the probabilities
        assert abs(held[part].mean() - p[part].mean()) < 3 * np.sqrt(np.mean(p[part] * (1 - p[part])) / part.sum())


def test_normal_posteriors_are_normal_cells_of_the_unit_interval():
    post = normal_posteriors(np.array([0.3, 0.99]), np.array([0.05, 0.05]), cells=1000)
    np.testing.assert_allclose(post.sum(axis=1), 1.0)
    centres = (np.arange(1000) + 0.5) / 1000
    assert post[0] @ centres == pytest.approx(0.3, abs=1e-6)
    assert post[1, -1] == pytest.approx(norm.sf((0.999 - 0.99) / 0.05))  # the tail above 1 sits in the last cell
    with pytest.raises(MdadError, match="positive residual spread"):
        normal_posteriors(np.array([0.3]), np.array([0.0]))


@pytest.mark.parametrize("method", ["random", "anchor-points"])
def test_estimate_prints_and_writes_the_probability_that_the_best_is_best(small_sim, tmp_path, method):
    sources, new = small_sim.take(models=np.arange(100)), small_sim.take(models=np.arange(100, 120))
    chosen = mdad.select(sources, method, 30, seed=1).with_assessment(mdad.assess(sources, method, 30, runs=4, targets=30, seed=1))
    chosen.save(tmp_path / "m.json")
    write_npz(new, tmp_path / "new.npz")
    best = chosen.best_probability(new)
    assert best.available and 0.0 < best.probability < 1.0
    assert best.model == str(new.models[np.argsort(-chosen.intervals(new).estimate, kind="stable")[0]])
    result = CliRunner().invoke(app, ["estimate", str(tmp_path / "m.json"), str(tmp_path / "new.npz"), "--csv", str(tmp_path / "out.csv")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"P({best.model}, the estimated best, is the true best of the 20 models on the full benchmark) =" in text
    frame = pd.read_csv(tmp_path / "out.csv")
    assert frame["p_best"].notna().sum() == 1
    assert frame.loc[frame["model"] == best.model, "p_best"].item() == pytest.approx(best.probability)
    assert chosen.best_probability(new).probability == best.probability  # deterministic: no sampling


def test_logistic_fit_recovers_known_coefficients():
    rng = rng_for(0, "test-ranking", "logistic")
    x = rng.normal(size=(20000, 2))
    truth = np.array([0.3, 1.5, -0.7])
    held = rng.random(20000) < 1.0 / (1.0 + np.exp(-(truth[0] + x @ truth[1:])))
    np.testing.assert_allclose(logistic_fit(x, held), truth, atol=0.06)


def simulated_runs(rng, runs: int, targets: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Held-out runs with known truth: accuracies spread over the middle, estimates off by a common shift per run
    (the same items for every target) and an independent error per model."""
    truth = rng.beta(4, 4, size=(runs, targets))
    estimates = truth + rng.normal(0, noise / 2, size=(runs, 1)) + rng.normal(0, noise, size=(runs, targets))
    return estimates, truth


def test_ranking_fit_calibrates_neighbours_and_the_best_of_new_calls():
    """Fitted on held-out runs of 50 targets, the neighbouring pairs of fresh calls of 50 models (and of 10) hold as
    often as printed within 0.05 per probability bin, and the estimated best is the true best as often as printed."""
    rng = rng_for(0, "test-ranking", "calibration")
    fit = OrderCalibration.fit(*simulated_runs(rng, 20, 50, 0.04))
    assert fit.rankings is not None and fit.rankings.largest == 50
    for n in (50, 10):
        est, truth = simulated_runs(rng, 400 if n == 50 else 2000, n, 0.04)
        order = np.argsort(-est, axis=1, kind="stable")
        e, t = np.take_along_axis(est, order, 1), np.take_along_axis(truth, order, 1)
        p = fit.rankings.adjacent_probability(fit.scaled_gap(e[:, :-1], e[:, 1:]), n).ravel()
        held = (t[:, :-1] > t[:, 1:]).ravel()
        for low, high in [(0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.0)]:
            part = (p >= low) & (p < high)
            if part.sum() > 500:
                assert abs(held[part].mean() - p[part].mean()) < 0.05, (n, low)
        raw = np.array([best_probabilities(normal_posteriors(np.clip(r, 0, 1), fit.spread_at(np.clip(r, 0, 1)) / 100))[0] for r in e])
        best = fit.rankings.best_probability(raw, n)
        won = t[:, 0] > t[:, 1:].max(axis=1)
        se = np.sqrt(np.mean(best * (1 - best)) / len(best))
        assert abs(won.mean() - best.mean()) < max(3 * se, 0.03), n


def test_ranking_calibration_is_stored_and_an_older_file_loads_without_it():
    rng = rng_for(0, "test-ranking", "json")
    fit = OrderCalibration.fit(*simulated_runs(rng, 6, 20, 0.05))
    again = OrderCalibration.from_json(json.loads(json.dumps(fit.to_json())))
    np.testing.assert_array_equal(again.rankings.adjacent, fit.rankings.adjacent)
    np.testing.assert_array_equal(again.rankings.best, fit.rankings.best)
    assert again.rankings.largest == 20
    data = fit.to_json()
    del data["rankings"]
    assert OrderCalibration.from_json(data).rankings is None
    data["rankings"] = {"adjacent": [1.0, 2.0], "best": [0, 1, 0], "largest": 20, "rankings": 3}
    with pytest.raises(MdadError, match="ranking calibration"):
        OrderCalibration.from_json(data)
    assert OrderCalibration.fit(*simulated_runs(rng, 3, 2, 0.05)).rankings is None  # rankings of 2 say nothing about neighbours


def test_the_note_says_how_far_to_trust_the_first_place():
    from mdad.estimates import BestProbability
    from mdad.micro.estimation import best_note

    models = np.array(["a", "b", "c"])
    assert "more likely than not another" in best_note(BestProbability(models, 1, 0.3, "how"), 0.8).text
    assert "not reliable" in best_note(BestProbability(models, 1, 0.6, "how"), 0.8).text
    sure = best_note(BestProbability(models, 1, 0.995, "how"), 0.8)
    assert sure.text.startswith(
        "P(b, the estimated best, is the true best of the 3 models on the full benchmark) = > 0.99: the first place is reliable"
    )
    marked = best_note(BestProbability(models, 1, 0.9, "how", mark="interval not valid for this model: ..."), 0.8)
    assert marked.warning and "marked '!'" in marked.text
    assert "not available" in best_note(BestProbability(models, 0, float("nan"), "not available: why"), 0.8).text
