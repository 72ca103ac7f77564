"""Anchor Points (weighted): k-medoids on how items co-vary across the source models.

Each pool item is the vector of the source models' gold-option probabilities on it
(their 0/1 correctness when the data has no option probabilities). Items are clustered
by k-medoids (FasterPAM from the ``kmedoids`` package, from k random items) on the
distance 1 - Pearson correlation between items across source models. FasterPAM visits the
swap candidates in its own order: as good a clustering as in the random order the reference's
seeded call makes, at 2.5x less time (docs/deviations.md#anchor-points-swap-order); it stops after two
passes over the swap candidates, which bring nearly all of the objective's gain
(docs/deviations.md#anchor-points-swap-passes). Every item joins
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

from mdad.exact import product_bits
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView

# Distances are integers in units of 2**-DISTANCE_BITS (1 - correlation in [0, 2]): FasterPAM then
# compares exact integer sums, and equal distances are equal on every machine.
DISTANCE_BITS = 24
BLOCK_ROWS = 512  # items per block of the correlation product (float64: 8 bytes per item and pool item)
# FasterPAM's passes over the swap candidates: the first two bring nearly all of the objective's gain from a
# random start, each further pass re-reads the whole items x items matrix to find a few small swaps
# (docs/deviations.md#anchor-points-swap-passes)
SWAP_PASSES = 2


def item_correlations(values: np.ndarray) -> np.ndarray:
    """Pearson correlation (items x items, float64) between the columns of ``values`` (sources x items).

    The standardised columns are rounded to integers of ``product_bits`` bits (a relative
    precision of about 1e-6 at 300 sources) so that their product is exact: the correlations
    are the same on every machine (mdad.exact). Constant columns: correlation 1 with the
    constant columns of the same value, 0 with every other column; the diagonal is 1.
    """
    return 1.0 - item_distances(values) / 2.0**DISTANCE_BITS


def item_distances(values: np.ndarray) -> np.ndarray:
    """1 - Pearson correlation between the columns of ``values`` (sources x items), as int32
    in units of 2**-DISTANCE_BITS (see ``item_correlations``); the diagonal is 0."""
    values = np.asarray(values, dtype=np.float64)
    n_sources, n_items = values.shape
    centred = values - values.mean(axis=0)
    norms = np.sqrt(np.sum(centred * centred, axis=0))
    constant = np.ptp(values, axis=0) == 0
    z = centred / np.where(constant, 1.0, norms)  # unit columns: |z| <= 1
    z[:, constant] = 0.0
    bits = product_bits(n_sources)
    q = np.rint(np.ldexp(z, bits))  # exact products: |q| <= 2**bits, n_sources terms
    # 1 - q_i . q_j / 4**bits in units of 2**-DISTANCE_BITS, rounded once: an exact function of q
    shift = 2 * bits - DISTANCE_BITS
    distance = np.empty((n_items, n_items), dtype=np.int32)
    for start in range(0, n_items, BLOCK_ROWS):  # the upper triangle by blocks, mirrored: exact, so symmetric
        rows = slice(start, start + BLOCK_ROWS)
        block = q[:, rows].T @ q[:, start:]
        np.subtract(4.0**bits, block, out=block)
        block *= 2.0**-shift  # a power of two: exact
        np.rint(block, out=block)
        np.clip(block, 0, 2 ** (DISTANCE_BITS + 1), out=block)
        distance[rows, start:] = block
        distance[start:, rows] = block.T
    idx = np.flatnonzero(constant)
    level = values[0, idx]
    same = level[:, None] == level[None, :]
    distance[np.ix_(idx, idx)] = np.where(same, 0, 2**DISTANCE_BITS)
    np.fill_diagonal(distance, 0)
    return distance


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
    nearest = distance[medoids].min(axis=0).astype(np.float64)
    nearest[medoids] = -np.inf
    added = []
    for _ in range(missing):
        best = np.flatnonzero(nearest == nearest.max())
        item = int(rng.choice(best))
        added.append(item)
        nearest = np.minimum(nearest, distance[item])
        nearest[item] = -np.inf
    return np.sort(np.concatenate([medoids, added]).astype(np.int64))


def assign(distance_to_medoids: np.ndarray, medoids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Cluster (0..k-1) of every item: the medoid it correlates with most (least distance), ties at random.

    ``distance_to_medoids`` is k x items (exact integers, so ties are exact). An item with several nearest
    medoids joins the one with the largest of k uniform draws, drawn (k x tied items, in item order) for
    the tied items only: on option probabilities there are seldom any, and k x items draws would cost
    more than the rest of the assignment. A medoid always joins its own cluster.
    """
    best = distance_to_medoids == distance_to_medoids.min(axis=0)
    labels = np.argmax(best, axis=0)
    tied = np.flatnonzero(np.count_nonzero(best, axis=0) > 1)
    if tied.size:
        draws = rng.random((best.shape[0], tied.size))
        labels[tied] = np.argmax(np.where(best[:, tied], draws, -1.0), axis=0)
    labels[medoids] = np.arange(len(medoids))
    return labels


@METHODS.register(order=30)
class AnchorPoints(SelectionMethod):
    name = "anchor-points"
    description = (
        "k-medoids (FasterPAM) on 1 - Pearson correlation of items across source models' gold-option "
        "probabilities (0/1 answers without option probabilities); cluster-share weights on the "
        "target's gold-option probability."
    )

    def prepare(self, view: SourceView, rng: np.random.Generator) -> np.ndarray:
        """The distance 1 - correlation between pool items (int32 units, exact), shared by all sizes:
        one items x items array (144 MB at 6,000 items)."""
        return item_distances(view.gold_prob)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, distance: np.ndarray) -> MicroBenchmark:
        n = distance.shape[0]
        if k == n:
            return MicroBenchmark(items=np.arange(n), weights=np.full(n, 1.0 / n), uses_gold_prob=True)
        import kmedoids  # imported here: it loads scikit-learn (a second), unless the command line imported it without (mdad.cli.lean)

        start = np.sort(rng.choice(n, size=k, replace=False))
        # its own swap order from this start; FasterPAM reads the distances of one candidate to every item as
        # ``mat[item, candidate]``, a column: the transposed view (the same numbers, the matrix being symmetric)
        # makes that a contiguous row, 4x faster at small k
        fit = kmedoids.fasterpam(distance.T, start, max_iter=SWAP_PASSES, n_cpu=1)
        medoids = complete_medoids(fit.medoids.astype(np.int64), k, distance, rng)
        labels = assign(distance[medoids], medoids, rng)
        weights = np.bincount(labels, minlength=k) / n
        return MicroBenchmark(items=medoids, weights=weights, uses_gold_prob=True)
