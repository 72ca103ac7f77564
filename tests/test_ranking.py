"""P(the estimated best is the true best) (docs/intervals.md#the-best-of-a-ranking): against brute-force
enumeration, against simulation with known truth, and as `mdad estimate` prints and writes it."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import hypergeom, norm
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import write_npz
from mdad.errors import MdadError
from mdad.intervals.posterior import AccuracyPrior
from mdad.intervals.ranking import best_probabilities, count_posteriors, normal_posteriors
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
    best = chosen.best_probabilities(new)
    assert best.available and best.probability.min() >= 0.0 and best.probability.sum() <= 1.0 + 1e-9
    assert best.best == int(np.argsort(-best.estimate, kind="stable")[0])
    result = CliRunner().invoke(app, ["estimate", str(tmp_path / "m.json"), str(tmp_path / "new.npz"), "--csv", str(tmp_path / "out.csv")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    name = str(new.models[best.best])
    assert f"P({name}, the estimated best, is the true best of the 20 models on the full benchmark) =" in text
    frame = pd.read_csv(tmp_path / "out.csv")
    np.testing.assert_allclose(frame["p_best"], best.probability)
    again = chosen.best_probabilities(new)  # deterministic: no sampling
    np.testing.assert_array_equal(again.probability, best.probability)
