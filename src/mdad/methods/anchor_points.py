"""Anchor Points (weighted): k-medoids on how items co-vary across the source models.

Each pool item is the vector of the source models' gold-option probabilities on it
(their 0/1 correctness when the data has no option probabilities). Items are clustered
by k-medoids (FasterPAM from the ``kmedoids`` package, from k random items) on the
distance 1 - Pearson correlation between items across source models. FasterPAM visits the
swap candidates in its own order: as good a clustering as in the random order the reference's
seeded call makes, at 2.5x less time (docs/deviations.md#anchor-points-swap-order). Every item joins
the medoid it correlates with most (ties broken at random; a medoid is in its own
cluster); a medoid's weight is its cluster's share of the pool. The estimate is the
weighted sum of the target's gold-option probabilities on the medoids (its 0/1
answers on 0/1 data).

Items with the same answer from every source model (zero variance, where Pearson
correlation is 0/0) are defined to be uncorrelated with every varying item (distance 1)
and perfectly correlated with the constant items of the same value (distance 0):
items that every source model answers identically are interchangeable, and an item
that does not vary tells nothing about which varying items it resembles. So constant
items never produce NaN, and they get a medoid of their own only when that pays.
"""

from __future__ import annotations

import numpy as np

from mdad.methods.base import MicroBenchmark, SelectionMethod, SourceView


def item_correlations(values: np.ndarray) -> np.ndarray:
    """Pearson correlation (items x items, float32) between the columns of ``values`` (sources x items).

    Constant columns: correlation 1 with the constant columns of the same value, 0 with
    every other column; the diagonal is 1.
    """
    values = np.asarray(values, dtype=np.float64)
    centred = values - values.mean(axis=0)
    norms = np.linalg.norm(centred, axis=0)
    constant = np.ptp(values, axis=0) == 0
    z = (centred / np.where(constant, 1.0, norms)).astype(np.float32)
    z[:, constant] = 0.0
    corr = z.T @ z
    np.clip(corr, -1.0, 1.0, out=corr)
    idx = np.flatnonzero(constant)
    level = values[0, idx]
    corr[np.ix_(idx, idx)] = level[:, None] == level[None, :]
    np.fill_diagonal(corr, 1.0)
    return corr


def complete_medoids(medoids: np.ndarray, k: int, distance: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``medoids`` made distinct and brought to exactly k.

    FasterPAM can repeat a medoid when k is close to the pool size and items are
    duplicates; each missing medoid is then the item farthest from its nearest medoid
    (the greedy BUILD step), ties broken at random.
    """
    medoids = np.unique(medoids)
    missing = k - len(medoids)
    if missing <= 0:
        return medoids
    nearest = distance[medoids].min(axis=0)
    nearest[medoids] = -np.inf
    added = []
    for _ in range(missing):
        best = np.flatnonzero(nearest == nearest.max())
        item = int(rng.choice(best))
        added.append(item)
        nearest = np.minimum(nearest, distance[item])
        nearest[item] = -np.inf
    return np.sort(np.concatenate([medoids, added]).astype(np.int64))


def assign(corr_to_medoids: np.ndarray, medoids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Cluster (0..k-1) of every item: the medoid it correlates with most, ties at random.

    ``corr_to_medoids`` is k x items. A medoid always joins its own cluster.
    """
    best = corr_to_medoids == corr_to_medoids.max(axis=0)
    labels = np.argmax(best * rng.random(best.shape), axis=0)
    labels[medoids] = np.arange(len(medoids))
    return labels


class AnchorPoints(SelectionMethod):
    name = "anchor-points"
    description = (
        "k-medoids (FasterPAM) on 1 - Pearson correlation of items across source models' gold-option "
        "probabilities (0/1 answers without option probabilities); cluster-share weights on the "
        "target's gold-option probability."
    )

    def prepare(self, view: SourceView, rng: np.random.Generator) -> np.ndarray:
        """The distance 1 - correlation between pool items (float32), shared by all sizes.

        Computed in place over the correlations: one items x items array (144 MB at 6,000
        items), not two."""
        distance = item_correlations(view.gold_prob)
        np.subtract(1.0, distance, out=distance)
        np.fill_diagonal(distance, 0.0)
        return distance

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, distance: np.ndarray) -> MicroBenchmark:
        n = distance.shape[0]
        if k == n:
            return MicroBenchmark(items=np.arange(n), weights=np.full(n, 1.0 / n), uses_gold_prob=True)
        import kmedoids  # imported here: it loads scikit-learn, which costs a second at start-up

        start = np.sort(rng.choice(n, size=k, replace=False))
        fit = kmedoids.fasterpam(distance, start, n_cpu=1)  # FasterPAM's own swap order from this start
        medoids = complete_medoids(fit.medoids.astype(np.int64), k, distance, rng)
        labels = assign(1.0 - distance[medoids], medoids, rng)
        weights = np.bincount(labels, minlength=k) / n
        return MicroBenchmark(items=medoids, weights=weights, uses_gold_prob=True)
