"""Anchor Points (weighted): k-medoids on how items co-vary across the source models.

Each pool item is the vector of the source models' gold-option probabilities on it
(their 0/1 correctness when the data has no option probabilities). Items are clustered
by k-medoids (FasterPAM from the ``kmedoids`` package) on the
distance 1 - Pearson correlation between items across source models. FasterPAM starts
from the medoids of a smaller size of a fixed ladder (10, 25, 50, 100, 250, 500, 1000, 2500,
...), topped up at random, and visits swap candidates in its own order: as good a clustering
as from a random start in a random order, at 2.5x less time
(docs/deviations.md#anchor-points-warm-start); a size's medoids depend only on the run's
preparation seed and the size, never on which other sizes were asked for. Every item joins
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

from dataclasses import dataclass, field

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


def ladder_parent(k: int) -> int | None:
    """The largest rung of the fixed ladder 10, 25, 50, 100, 250, 500, 1000, 2500, ... below ``k``
    (None for k <= 10): the size whose medoids start FasterPAM at size k."""
    parent, scale = None, 10
    while True:
        for rung in (scale, 5 * scale // 2, 5 * scale):
            if rung >= k:
                return parent
            parent = rung
        scale *= 10


@dataclass(eq=False)
class AnchorDistances:
    """One run's preparation: the item distances, and the medoids of every size computed so far.

    The medoids of size k start FasterPAM from those of ``ladder_parent(k)`` (computed first when
    missing), topped up by items drawn from ``default_rng([seed, k])`` (which also breaks
    ``complete_medoids``' ties): the medoids of a size are the same whatever sizes were computed
    before it, in whatever order."""

    distance: np.ndarray  # items x items, float32
    seed: int
    _medoids: dict[int, np.ndarray] = field(default_factory=dict, init=False, repr=False)

    def medoids(self, k: int) -> np.ndarray:
        """k distinct medoids (sorted item positions), 1 <= k <= items."""
        if k not in self._medoids:
            import kmedoids  # imported here: it loads scikit-learn, which costs a second at start-up

            parent = ladder_parent(k)
            start = np.empty(0, np.int64) if parent is None else self.medoids(parent)
            rng = np.random.default_rng([self.seed, k])
            others = np.setdiff1d(np.arange(len(self.distance)), start)
            init = np.concatenate([start, rng.choice(others, k - len(start), replace=False)])
            fit = kmedoids.fasterpam(self.distance, init, n_cpu=1)  # FasterPAM's own swap order from this start
            self._medoids[k] = complete_medoids(fit.medoids.astype(np.int64), k, self.distance, rng)
        return self._medoids[k]


class AnchorPoints(SelectionMethod):
    name = "anchor-points"
    description = (
        "k-medoids (FasterPAM) on 1 - Pearson correlation of items across source models' gold-option "
        "probabilities (0/1 answers without option probabilities); cluster-share weights on the "
        "target's gold-option probability."
    )

    def prepare(self, view: SourceView, rng: np.random.Generator) -> AnchorDistances:
        """The distance 1 - correlation between pool items (float32), shared by all sizes, and the
        seed of the medoid ladder.

        Computed in place over the correlations: one items x items array (144 MB at 6,000
        items), not two."""
        distance = item_correlations(view.gold_prob)
        np.subtract(1.0, distance, out=distance)
        np.fill_diagonal(distance, 0.0)
        return AnchorDistances(distance, seed=int(rng.integers(2**63)))

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared: AnchorDistances) -> MicroBenchmark:
        distance = prepared.distance
        n = distance.shape[0]
        if k == n:
            return MicroBenchmark(items=np.arange(n), weights=np.full(n, 1.0 / n), uses_gold_prob=True)
        medoids = prepared.medoids(k)
        labels = assign(1.0 - distance[medoids], medoids, rng)
        weights = np.bincount(labels, minlength=k) / n
        return MicroBenchmark(items=medoids, weights=weights, uses_gold_prob=True)
