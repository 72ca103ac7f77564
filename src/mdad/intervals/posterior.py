"""Empirical-Bayes intervals for the random designs (docs/intervals.md#empirical-bayes-intervals).

The exact intervals of :mod:`mdad.intervals.finite` hold for every pool count M (Clopper-Pearson)
or close to it (mid-p, on average over M), so they must cover a model with 0 correct of 10 items
as if it could be anywhere from 0 to 20%. On a
leaderboard where a third of the models score under 1% (MATH level 5) that over-covers. The
population answer: a prior for M, the distribution of the source models' pool counts, and the
posterior given the model's answers,

    P(M | x) ~ prior(M) P(x | M),   P(x | M) hypergeometric (N, M, k),

whose equal-tailed quantiles are the interval. Averaged over models drawn like the sources it
covers at the nominal level.

The prior: the source models' pool counts smoothed by a Gaussian kernel on the variance-
stabilising scale theta = arcsin(sqrt(M / N)) (binomial noise has the same spread everywhere
there, so a model at exactly 0 keeps its mass near 0 instead of being spread over several
points), reflected at both ends, bandwidth by Silverman's rule on theta, and mixed with a
uniform distribution over 0..N of weight ``UNIFORM_WEIGHT``, so that a new model unlike every
source (better than all of them, say) is still governed by its own answers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from mdad.defaults import DEFAULT_LEVEL
from mdad.errors import MdadError
from mdad.intervals.finite import check_level, hypergeometric_table

UNIFORM_WEIGHT = 0.2  # chosen by measurement: benchmarks/results/intervals.md, "Intervals and order probabilities"
MIN_BANDWIDTH = 0.01  # on the arcsine scale, when the sources' spread says nothing (few or equal models)
KERNEL_REACH = 8.0  # bandwidths: where the Gaussian kernel is evaluated around each source


@dataclass(frozen=True, eq=False)
class AccuracyPrior:
    """Distribution of the pool count of correct items over the source models (N pool items)."""

    pool_items: int
    counts: np.ndarray  # sorted pool counts of the source models
    uniform_weight: float = UNIFORM_WEIGHT

    @classmethod
    def from_scores(cls, scores: np.ndarray, *, uniform_weight: float = UNIFORM_WEIGHT) -> AccuracyPrior:
        """From complete 0/1 ``scores`` (source models x pool items)."""
        x = np.asarray(scores, dtype=np.float64)
        if x.ndim != 2 or not x.shape[0] or np.isnan(x).any() or not np.isin(x, (0.0, 1.0)).all():
            raise MdadError("An accuracy prior needs complete 0/1 scores of at least one model.")
        return cls(x.shape[1], np.sort(x.sum(axis=1).astype(np.int64)), uniform_weight)

    def __post_init__(self) -> None:
        counts = np.asarray(self.counts)
        if self.pool_items < 1 or counts.ndim != 1 or not len(counts) or counts.min() < 0 or counts.max() > self.pool_items:
            raise MdadError("An accuracy prior needs pool counts between 0 and the pool's size.")
        if not 0 <= self.uniform_weight <= 1:
            raise MdadError("An accuracy prior's uniform weight must lie between 0 and 1.")

    @property
    def bandwidth(self) -> float:
        """Silverman's rule on the arcsine scale, at least ``MIN_BANDWIDTH``."""
        theta = np.arcsin(np.sqrt(self.counts / self.pool_items))
        if len(theta) < 2:
            return MIN_BANDWIDTH
        q75, q25 = np.percentile(theta, [75, 25])
        spread = min(np.std(theta, ddof=1), (q75 - q25) / 1.34) or np.std(theta, ddof=1)
        return float(max(0.9 * spread * len(theta) ** -0.2, MIN_BANDWIDTH))

    def weights(self) -> np.ndarray:
        """Prior probability of every pool count M = 0..N."""
        N = self.pool_items
        cut = np.arcsin(np.sqrt(np.clip((np.arange(N + 2) - 0.5) / N, 0.0, 1.0)))  # theta at M -/+ 1/2
        values, multiplicity = np.unique(self.counts, return_counts=True)
        theta = np.arcsin(np.sqrt(values / N))[:, None]
        h = self.bandwidth
        mass = np.zeros(N + 1)
        reach = KERNEL_REACH * h  # beyond it a kernel's mass is below 1e-15
        for centre, weight in zip(np.concatenate([theta, -theta, np.pi - theta]).ravel(), np.tile(multiplicity, 3), strict=True):
            # the kernel and its reflections at 0 and pi/2, on the cut points it reaches
            lo = max(int(np.searchsorted(cut, centre - reach)) - 1, 0)
            hi = min(int(np.searchsorted(cut, centre + reach)) + 1, N + 2)
            if hi - lo >= 2:
                mass[lo : hi - 1] += weight * np.diff(ndtr((cut[lo:hi] - centre) / h))
        smooth = mass / mass.sum()
        return (1.0 - self.uniform_weight) * smooth + self.uniform_weight / (N + 1)

    def to_json(self) -> dict:
        """The prior as JSON-ready numbers (pool size, source models' counts, uniform weight), as micro.json stores it."""
        return {"pool_items": self.pool_items, "counts": self.counts.tolist(), "uniform_weight": self.uniform_weight}

    @classmethod
    def from_json(cls, data: dict) -> AccuracyPrior:
        """Read :meth:`to_json`'s output; a malformed prior is one error sentence."""
        try:
            counts = np.sort(np.asarray(data["counts"], dtype=np.int64))
            return cls(int(data["pool_items"]), counts, float(data.get("uniform_weight", UNIFORM_WEIGHT)))
        except (KeyError, TypeError, ValueError):
            raise MdadError("The micro-benchmark's accuracy prior is malformed (pool_items and a list of counts).") from None


def posterior_count_pmf(prior: AccuracyPrior, k: int, x) -> np.ndarray:
    """P(M | x) over M = 0..N for x correct of k items drawn uniformly (rows: one per x)."""
    x = np.atleast_1d(np.asarray(x, dtype=np.int64))
    N = prior.pool_items
    if k < 0 or k > N or np.any(x < 0) or np.any(x > k):
        raise MdadError(f"Counts of correct items must lie between 0 and the {k} items drawn from {N}.")
    joint = prior.weights()[None, :] * hypergeometric_table(N, k)[:, x].T
    return joint / joint.sum(axis=1, keepdims=True)


def posterior_count_interval(prior: AccuracyPrior, k: int, x, *, level: float = DEFAULT_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Posterior interval for the pool count M (arrays over ``x``): equal tails where the posterior allows.

    Each tail may leave out (1 - level)/2 of the posterior: the lower bound is the smallest M
    whose cumulative probability exceeds that (so it is 0 whenever M = 0 alone holds more), the
    upper bound the smallest M whose cumulative probability reaches 1 minus that. A tail that
    cannot use its share, because the posterior has an atom at the end of the range (a model
    with nothing right where many sources have nothing right), passes what it left unused to
    the other tail, so the interval still holds ``level`` of the posterior, not more than needed.
    """
    alpha = 1.0 - check_level(level)
    cdf = np.cumsum(posterior_count_pmf(prior, int(k), x), axis=1)
    N = prior.pool_items
    rows = np.arange(len(cdf))

    def lower(share):  # smallest M with cdf > share, and the mass left out below it
        low = np.minimum((cdf <= share[:, None] + 1e-12).sum(axis=1), N)
        return low, np.where(low > 0, cdf[rows, np.maximum(low - 1, 0)], 0.0)

    def upper(share):  # smallest M with cdf >= 1 - share, and the mass left out above it
        high = np.minimum((cdf < 1.0 - share[:, None] - 1e-12).sum(axis=1), N)
        return high, 1.0 - cdf[rows, high]

    half = np.full(len(cdf), alpha / 2.0)
    _, left_out_below = lower(half)
    high, left_out_above = upper(alpha - left_out_below)
    low, _ = lower(alpha - np.maximum(left_out_above, 0.0))
    return low, high
