"""Stratified sampling on confidence: strata of items the source models find easy or hard.

An item's proxy is the mean over source models of their gold-option probability (their
0/1 correctness when the data has no option probabilities, so the proxy is then the
share of source models that answer the item correctly). 1-D k-means with 10 clusters
on the proxy (Lloyd's algorithm, best of 10 k-means++ starts) makes the strata; with
10 or fewer distinct proxy values, each value is a stratum.

Allocation: stratum h of N_h items gets round(k N_h / N) items, at most N_h; the total
is then brought to exactly k by adding items drawn uniformly from the unchosen items
of strata with room, or removing items drawn uniformly from strata holding more than
one. The items of a stratum are a uniform sample of its size.

Small strata: a stratum whose proportional share k N_h / N is below one item is merged
with its smaller neighbour in proxy order (smallest first) before allocating. So every
stratum gets at least one item (none is left out of the estimate), a stratum of a few
items never takes a whole item of a small micro-benchmark, and from the size at which
every stratum has a share of one item on, the design is the plain one above.

Estimate: the Horvitz-Thompson (stratified) estimate of the target's accuracy on the
pool, sum_h (N_h / N) * mean of its 0/1 scores on stratum h's chosen items, i.e.
weight N_h / (n_h N) per chosen item. The strata depend on the source models only and,
given the allocation, every stratum is a simple random sample: the estimate is unbiased.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mdad.errors import MdadError
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView

N_STRATA = 10


@dataclass(frozen=True)
class Strata:
    """Size-independent work of one run: the proxy and its strata."""

    proxy: np.ndarray  # per pool item
    labels: np.ndarray  # stratum 0..H-1 per pool item, ordered by proxy
    _merged: dict[int, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def for_size(self, k: int) -> np.ndarray:
        """The strata for a micro-benchmark of k items: small ones merged (see ``merge_small_strata``)."""
        if k not in self._merged:
            self._merged[k] = merge_small_strata(self.labels, k)
        return self._merged[k]


def merge_small_strata(labels: np.ndarray, k: int) -> np.ndarray:
    """Strata (numbered in proxy order) merged until each has a proportional share k N_h / N >= 1.

    The smallest stratum is merged with its smaller neighbour, again and again; at most k
    strata remain. Strata must be numbered in proxy order so that neighbours are alike.
    """
    sizes = list(np.bincount(labels))
    groups = [[h] for h in range(len(sizes))]
    while len(sizes) > 1 and min(sizes) * k < len(labels):
        h = int(np.argmin(sizes))
        neighbours = [g for g in (h - 1, h + 1) if 0 <= g < len(sizes)]
        g = min(neighbours, key=lambda g: sizes[g])
        low, high = min(g, h), max(g, h)
        sizes[low : high + 1] = [sizes[low] + sizes[high]]
        groups[low : high + 1] = [groups[low] + groups[high]]
    merged = np.empty(int(labels.max()) + 1, dtype=np.int64)
    for new, old in enumerate(groups):
        merged[old] = new
    return merged[labels]


def kmeans_1d(values: np.ndarray, n_clusters: int, rng: np.random.Generator, n_init: int = 10) -> np.ndarray:
    """Upper boundaries (n_clusters - 1, increasing) of the 1-D k-means clusters of ``values``.

    Lloyd's algorithm from ``n_init`` k-means++ starts, keeping the lowest within-cluster
    sum of squares. In one dimension clusters are intervals of the sorted values, so each
    iteration is a search for the midpoints between centres plus prefix sums.
    """
    x = np.sort(np.asarray(values, dtype=np.float64))
    sums = np.concatenate([[0.0], np.cumsum(x)])
    squares = np.concatenate([[0.0], np.cumsum(x * x)])
    if n_init < 1:
        raise MdadError(f"1-D k-means needs at least one start, not {n_init}.")
    best_bounds, best_inertia = np.zeros(0), np.inf
    for _ in range(n_init):
        centres = np.sort(_kmeans_plus_plus(x, n_clusters, rng))
        previous = None
        for _ in range(300):
            bounds = (centres[:-1] + centres[1:]) / 2
            cuts = np.concatenate([[0], np.searchsorted(x, bounds), [len(x)]])
            if previous is not None and np.array_equal(cuts, previous):
                break
            counts = np.diff(cuts)
            totals = np.diff(sums[cuts])
            centres = np.where(counts > 0, totals / np.maximum(counts, 1), centres)
            centres = np.sort(centres)
            previous = cuts
        counts = np.diff(cuts)
        inertia = float(np.sum(np.diff(squares[cuts]) - np.diff(sums[cuts]) ** 2 / np.maximum(counts, 1)))
        if inertia < best_inertia:
            best_bounds, best_inertia = bounds, inertia
    return best_bounds


def _kmeans_plus_plus(x: np.ndarray, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding: each new centre drawn with probability proportional to squared distance."""
    centres = [x[rng.integers(len(x))]]
    nearest = (x - centres[0]) ** 2
    for _ in range(n_clusters - 1):
        total = nearest.sum()
        pick = rng.integers(len(x)) if total == 0 else np.searchsorted(np.cumsum(nearest), rng.random() * total, "right")
        centres.append(x[min(pick, len(x) - 1)])
        nearest = np.minimum(nearest, (x - centres[-1]) ** 2)
    return np.array(centres)


def proxy_strata(proxy: np.ndarray, n_strata: int, rng: np.random.Generator) -> np.ndarray:
    """Stratum labels from 1-D k-means on ``proxy``, numbered in increasing order of proxy.

    The number of strata is min(n_strata, number of distinct proxy values); with no more
    distinct values than strata every distinct value is its own stratum. A cluster
    left empty by k-means is dropped, so every stratum has items.
    """
    values, inverse = np.unique(proxy, return_inverse=True)
    if len(values) <= n_strata:
        return inverse.astype(np.int64)
    labels = np.searchsorted(kmeans_1d(proxy, n_strata, rng), proxy, side="right")
    return np.unique(labels, return_inverse=True)[1].astype(np.int64)


def allocate(sizes: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Items per stratum: proportional (rounded), at least 1 and at most N_h, adjusted to sum to k.

    Needs len(sizes) <= k <= sizes.sum(). Items added (or removed) to reach k are drawn
    uniformly among the items that can still be added (or removed), so the adjustment
    favours no stratum beyond its room.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    alloc = np.clip(np.rint(k * sizes / sizes.sum()).astype(np.int64), 1, sizes)
    gap = k - int(alloc.sum())
    if gap > 0:
        alloc += rng.multivariate_hypergeometric(sizes - alloc, gap)
    elif gap < 0:
        alloc -= rng.multivariate_hypergeometric(alloc - 1, -gap)
    return alloc


def sample_strata(labels: np.ndarray, alloc: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniform sample of alloc[h] items from every stratum h (pool positions, sorted)."""
    order = np.lexsort((rng.random(len(labels)), labels))
    starts = np.searchsorted(labels[order], np.arange(len(alloc)))
    rank_in_stratum = np.arange(len(labels)) - starts[labels[order]]
    return np.sort(order[rank_in_stratum < alloc[labels[order]]])


def horvitz_thompson(labels: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Weights N_h / (n_h N) of the chosen ``items`` (stratum sizes N_h, chosen per stratum n_h)."""
    sizes = np.bincount(labels)
    chosen = np.bincount(labels[items], minlength=len(sizes))
    h = labels[items]
    return sizes[h] / (chosen[h] * len(labels))


@METHODS.register(order=20)
class StratifiedConfidence(SelectionMethod):
    name = "stratified-confidence"
    description = (
        "Strata from 1-D k-means (10) on the mean source-model gold-option probability (0/1 answers "
        "without option probabilities); proportional allocation; Horvitz-Thompson estimate."
    )

    def prepare(self, view: SourceView, rng: np.random.Generator) -> Strata:
        proxy = np.asarray(view.gold_prob, dtype=np.float64).mean(axis=0)
        return Strata(proxy=proxy, labels=proxy_strata(proxy, N_STRATA, rng))

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, strata) -> MicroBenchmark:
        labels = strata.for_size(k)
        items = sample_strata(labels, allocate(np.bincount(labels), k, rng), rng)
        return MicroBenchmark(items=items, weights=horvitz_thompson(labels, items))
