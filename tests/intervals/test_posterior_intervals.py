"""Empirical-Bayes intervals of the random designs against independent calculations and simulation with known truth."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import hypergeom, norm

from mdad.errors import MdadError
from mdad.intervals.finite import count_interval
from mdad.intervals.posterior import AccuracyPrior, posterior_count_interval, posterior_count_pmf


def brute_force_weights(N: int, counts, h: float, uniform: float) -> np.ndarray:
    """Prior of M = 0..N, one source and one count at a time: the arcsine-scale kernel's mass on [M - 1/2, M + 1/2]."""
    out = np.zeros(N + 1)
    for c in counts:
        t = np.arcsin(np.sqrt(c / N))
        for M in range(N + 1):
            a = np.arcsin(np.sqrt(min(max((M - 0.5) / N, 0.0), 1.0)))
            b = np.arcsin(np.sqrt(min(max((M + 0.5) / N, 0.0), 1.0)))
            for centre in (t, -t, np.pi - t):  # reflections at both ends of [0, pi/2]
                out[M] += norm.cdf(b, centre, h) - norm.cdf(a, centre, h)
    return (1 - uniform) * out / out.sum() + uniform / (N + 1)


def test_prior_and_posterior_interval_match_a_loop():
    N, k, counts = 30, 8, [0, 0, 0, 2, 5, 9, 14, 15, 21]
    prior = AccuracyPrior(N, np.array(counts), 0.2)
    weights = brute_force_weights(N, counts, prior.bandwidth, 0.2)
    np.testing.assert_allclose(prior.weights(), weights, atol=1e-12)
    for x in range(k + 1):
        post = np.array([weights[M] * hypergeom.pmf(x, N, M, k) for M in range(N + 1)])
        post /= post.sum()
        np.testing.assert_allclose(posterior_count_pmf(prior, k, x)[0], post, atol=1e-12)
        cdf = np.cumsum(post)
        first = next(M for M in range(N + 1) if cdf[M] > 0.05)
        below = cdf[first - 1] if first else 0.0  # what the lower tail left out
        high = next(M for M in range(N + 1) if cdf[M] >= 1 - (0.1 - below) - 1e-12)
        above = 1 - cdf[high]
        low = next(M for M in range(N + 1) if cdf[M] > 0.1 - above + 1e-12)
        assert posterior_count_interval(prior, k, [x], level=0.9) == ([low], [high])
        assert post[low : high + 1].sum() >= 0.9 - 1e-9


def test_models_with_nothing_right_get_zero_as_lower_bound_when_the_sources_have_mass_there():
    N = 900
    counts = np.r_[np.zeros(40, int), np.arange(1, 9), np.linspace(20, 400, 60).astype(int)]
    prior = AccuracyPrior(N, counts)
    low, high = posterior_count_interval(prior, 10, [0], level=0.9)
    assert posterior_count_pmf(prior, 10, 0)[0, 0] > 0.05 and low[0] == 0 and high[0] > 0
    # the lower tail leaves nothing out, so the upper one leaves out 10%: its bound is the posterior's 90% quantile
    cdf = np.cumsum(posterior_count_pmf(prior, 10, 0)[0])
    assert high[0] == np.searchsorted(cdf, 0.9 - 1e-12)
    # no source at 0: a model with nothing right still gets a bound near 0, but the posterior puts little mass there
    lifted = AccuracyPrior(N, counts[40:] + 50, uniform_weight=0.0)
    assert posterior_count_interval(lifted, 10, [0], level=0.9)[0][0] > 0


def test_a_model_better_than_every_source_is_still_governed_by_its_answers():
    N, k = 400, 50
    prior = AccuracyPrior(N, np.linspace(40, 160, 200).astype(int))  # sources at 10-40%
    low, high = posterior_count_interval(prior, k, [45], level=0.9)  # 90% right
    exact_low, _ = count_interval(N, k, [45], level=0.9)
    assert low[0] > 250 and high[0] > 360 and low[0] <= exact_low[0] + 10
    without = AccuracyPrior(N, prior.counts, uniform_weight=0.0)
    assert posterior_count_interval(without, k, [45], level=0.9)[1][0] < 250  # the population alone would not


def population(rng, n: int, N: int) -> np.ndarray:
    """Pool counts of a population like MATH level 5: a third of the models near or at 0, the rest spread out."""
    low = rng.random(n) < 1 / 3
    acc = np.where(low, np.where(rng.random(n) < 0.3, 0.0, rng.beta(0.6, 80, n)), rng.beta(3, 7, n))
    return rng.binomial(N, acc)


@pytest.mark.parametrize("k", [10, 25, 100])
def test_posterior_interval_covers_at_the_nominal_rate_on_average_over_the_population(k):
    """Known truth: sources and new models drawn from one population; the sample of k items a uniform draw."""
    rng = np.random.default_rng(k)
    N = 600
    for level in (0.9, 0.95):
        covered = []
        for _ in range(40):
            prior = AccuracyPrior(N, np.sort(population(rng, 300, N)))
            truth = population(rng, 200, N)
            x = rng.hypergeometric(truth, N - truth, k)
            low, high = posterior_count_interval(prior, k, x, level=level)
            covered.append(np.mean((low <= truth) & (truth <= high)))
        se = np.std(covered) / np.sqrt(len(covered))
        assert level - 0.01 - 3 * se <= np.mean(covered) <= level + 0.035 + 3 * se, (level, np.mean(covered), se)


def test_prior_storage_and_bad_input():
    prior = AccuracyPrior.from_scores(np.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=float))
    assert prior.counts.tolist() == [0, 3, 4] and prior.pool_items == 4
    back = AccuracyPrior.from_json(prior.to_json())
    np.testing.assert_array_equal(back.weights(), prior.weights())
    with pytest.raises(MdadError, match="accuracy prior"):
        AccuracyPrior.from_json({"counts": [1, 2]})
    with pytest.raises(MdadError, match="accuracy prior"):
        AccuracyPrior(4, np.array([5]))
    with pytest.raises(MdadError, match="between 0 and the 8 items"):
        posterior_count_interval(prior, 8, [1])


@pytest.mark.slow
@pytest.mark.parametrize("k", [10, 50])
def test_with_the_population_as_prior_the_coverage_is_nominal_up_to_the_counts_discreteness(k):
    """Many sources and no uniform part: the prior is the population itself, so the posterior interval covers
    at the level on average (a little more where counts near 0 leave few values to choose bounds from)."""
    rng = np.random.default_rng(k)
    N = 600
    covered = []
    for _ in range(60):
        prior = AccuracyPrior(N, np.sort(population(rng, 5000, N)), uniform_weight=0.0)
        truth = population(rng, 500, N)
        low, high = posterior_count_interval(prior, k, rng.hypergeometric(truth, N - truth, k), level=0.9)
        covered.append(np.mean((low <= truth) & (truth <= high)))
    se = np.std(covered) / np.sqrt(len(covered))
    assert 0.9 - 3 * se <= np.mean(covered) <= 0.92 + 3 * se
