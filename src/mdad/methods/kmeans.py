"""k-means whose clusters are the same on every machine: greedy k-means++ and Lloyd's algorithm in exact arithmetic.

What scikit-learn's ``KMeans`` computes (greedy k-means++ starts, Lloyd iterations until the labels
settle or the centres move by less than ``tol`` times the mean variance of the features, the best of
``n_init`` starts by inertia, empty clusters moved to the points farthest from their centres), with
two differences. First, it is reproducible: scikit-learn compares distances computed in floating
point by the machine's BLAS kernel, so near-equal distances (duplicate or nearly duplicate points,
common in tinyBenchmarks' IRT embeddings) are ordered by rounding noise that differs between CPUs.
Here the points are rounded to 2**-16 of their largest magnitude and the centres to a grid of
``product_bits`` bits, on which every squared distance is an exact integer below 2**53, whichever
kernel computes the products. Ties go to the lowest index (docs/reproducibility.md). Second, it is
cheaper: 3 local trials per k-means++ step where scikit-learn takes 2 + ln k (6-8 at the paper's
100-1,000 anchors), and a tolerance of 1e-2 where scikit-learn's is 1e-4; the held-out estimation
error of tinyBenchmarks is unchanged within its noise (docs/deviations.md#k-means-seeding-and-tolerance).
With many centres, Lloyd's passes skip the points that cannot change cluster (Hamerly's bounds), which
changes the cost, not the result. Yinyang's group bounds were measured in their place and not kept: on
tinyBenchmarks' embeddings they check fewer than half as many points at 1,000 centres, but their wider
passes and per-group bounds cost more than that saves at every number of centres
(docs/benchmarks.md#earlier-measurements, "exact k-means bounds").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.exact import power_of_two_above, product_bits

POINT_BITS = 16  # resolution of the points: 2**-16 of their largest magnitude
MAX_ITER = 300
TOL = 1e-2  # centre movement (squared, summed) relative to the mean variance of the features
TRIALS = 3  # k-means++ candidates per new centre, the best kept (docs/deviations.md#k-means-seeding-and-tolerance)
BLOCK_CELLS = 2**17  # points x centres per block of the distance product (1 MB: stays in the cache)
PRUNE_CENTRES = 32  # from this many centres on, Lloyd's passes skip the points that cannot change cluster
BOUND_MARGIN = 1e-12  # relative slack of the bounds of Lloyd's pruning for the rounding of square roots


@dataclass(frozen=True, eq=False)
class KMeansResult:
    """Cluster of every point, the centres, and each point's squared distance to its own centre.

    ``distance`` is in the squared grid units of the fit: exact, so equal distances are ties."""

    labels: np.ndarray  # points
    centres: np.ndarray  # k x features, in the points' units
    distance: np.ndarray  # points
    inertia: float


class _Grid:
    """Points as integers on a grid where squared distances to integer centres are exact."""

    def __init__(self, points: np.ndarray) -> None:
        points = np.asarray(points, dtype=np.float64)
        if points.ndim != 2 or not np.isfinite(points).all():
            raise MdadError("k-means needs a finite points x features array.")
        d = points.shape[1]
        # |x|, |c| <= 2**bits with 4 d 4**bits <= 2**53: every partial sum of |x|^2 - 2 x.c + |c|^2,
        # in any order, is an integer below 2**53, so exact (whatever the kernel's order or FMA)
        self.bits = product_bits(d) - 1
        coarse = min(POINT_BITS, self.bits)
        self.unit = power_of_two_above(float(np.max(np.abs(points), initial=0.0))) * 2.0**-self.bits
        step = 2.0 ** (self.bits - coarse)  # the points' resolution, in grid units
        self.x = np.rint(points / self.unit / step) * step
        self.norms = np.einsum("ij,ij->i", self.x, self.x)  # exact: integers below 2**53
        self.columns = np.ascontiguousarray(self.x.T)  # features x points, for the clusters' sums
        # [x, 1]: one product with [-2 c, |c|^2] gives |c|^2 - 2 x.c, exactly
        self.x1 = np.hstack([self.x, np.ones((len(self.x), 1))])
        # [x, 1, |x|^2] times [-2 x, |x|^2, 1] by feature gives |x - y|^2, exactly
        self.x1_norms = np.hstack([self.x1, self.norms[:, None]])
        self.by_feature = np.vstack([-2.0 * self.x.T, self.norms[None, :], np.ones((1, len(self.x)))])

    def to_points(self, points: np.ndarray) -> np.ndarray:
        """Exact squared distances, the points of index ``points`` x all points."""
        return self.x1_norms[points] @ self.by_feature

    def nearest(self, centres: np.ndarray, rows: np.ndarray | None = None, *, second: bool = False) -> tuple[np.ndarray, ...]:
        """Each point's (of ``rows``; all by default) nearest centre (the lowest index among equal
        distances) and its squared distance; with ``second``, also the squared distance to the
        second nearest (inf with one centre)."""
        x1 = self.x1 if rows is None else self.x1[rows]
        norms = self.norms if rows is None else self.norms[rows]
        n = len(x1)
        labels, best, runner_up = np.empty(n, dtype=np.int64), np.empty(n), np.full(n, np.inf)
        by_feature = np.vstack([-2.0 * centres.T, np.einsum("ij,ij->i", centres, centres)[None, :]])
        rows_per_block = max(1, BLOCK_CELLS // len(centres))
        # one block's products, reused: with glibc's default thresholds a fresh 1 MB array per block is
        # mapped and its pages faulted in anew, a fifth to a quarter of Lloyd's time (docs/benchmarks.md#earlier-measurements)
        buffer = np.empty((min(rows_per_block, n), len(centres)))
        for start in range(0, n, rows_per_block):
            block = slice(start, start + rows_per_block)
            dist = np.matmul(x1[block], by_feature, out=buffer[: len(x1[block])])  # |c|^2 - 2 x.c, exact; |x|^2 added to the minima only
            here = np.argmin(dist, axis=1)
            at = np.arange(len(dist))
            labels[block] = here
            best[block] = dist[at, here] + norms[block]
            if second and dist.shape[1] > 1:
                dist[at, here] = np.inf
                runner_up[block] = dist.min(axis=1) + norms[block]
        return (labels, best, runner_up) if second else (labels, best)

    def own(self, centres: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Each point's exact squared distance to its own centre (integers below 2**53)."""
        diff = self.x - centres[labels]
        return np.einsum("ij,ij->i", diff, diff)

    def means(self, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The members' mean of every cluster, rounded to the grid, and the cluster sizes."""
        counts = np.bincount(labels, minlength=k)
        sums = np.stack([np.bincount(labels, weights=column, minlength=k) for column in self.columns], axis=1)
        return np.rint(sums / np.maximum(counts, 1)[:, None]), counts


def kmeans(
    points: np.ndarray,
    k: int,
    rng: np.random.Generator,
    *,
    n_init: int = 1,
    max_iter: int = MAX_ITER,
    tol: float = TOL,
    trials: int = TRIALS,
) -> KMeansResult:
    """k clusters of the rows of ``points``: the best of ``n_init`` greedy k-means++ starts, each
    refined by Lloyd's algorithm (module docstring). Every cluster has at least one point: with
    fewer distinct points than k, the points farthest from their centres (the lowest index
    among equals) form clusters of their own."""
    grid = _Grid(points)
    n = len(grid.x)
    if not 1 <= k <= n:
        raise MdadError(f"k-means needs between 1 and {n} clusters, got {k}.")
    if trials < 1:
        raise MdadError(f"k-means++ needs at least 1 candidate per centre, got {trials}.")
    spread = float(np.mean(np.var(grid.x, axis=0))) if n else 0.0
    best: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    best_inertia = np.inf
    for _ in range(max(1, n_init)):
        centres = _plus_plus(grid, k, rng, trials)
        labels, distance = _lloyd(grid, centres, max_iter, tol * spread)
        inertia = float(distance.sum())
        if inertia < best_inertia:
            best, best_inertia = (labels, centres, distance), inertia
    assert best is not None
    labels, centres, distance = _fill_empty(grid, *best, k)
    return KMeansResult(labels=labels, centres=centres * grid.unit, distance=distance, inertia=float(distance.sum()))


def _plus_plus(grid: _Grid, k: int, rng: np.random.Generator, trials: int) -> np.ndarray:
    """Greedy k-means++: each new centre is the best (least total squared distance) of
    ``trials`` candidates drawn with probability proportional to the squared distance."""
    n = len(grid.x)
    chosen = [int(rng.integers(n))]
    closest = grid.to_points(np.array(chosen))[0]
    for _ in range(1, k):
        cumulative = np.cumsum(closest)
        if cumulative[-1] > 0:
            candidates = np.searchsorted(cumulative, rng.random(trials) * cumulative[-1], side="right")
            candidates = np.minimum(candidates, n - 1)
        else:  # every point sits on a centre: any point will do
            candidates = rng.integers(n, size=trials)
        to_candidates = grid.to_points(candidates)  # candidates x points, exact
        np.minimum(to_candidates, closest, out=to_candidates)
        pick = int(np.argmin(to_candidates.sum(axis=1)))
        chosen.append(int(candidates[pick]))
        closest = to_candidates[pick]
    return grid.x[chosen].copy()


def _lloyd(grid: _Grid, centres: np.ndarray, max_iter: int, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's algorithm from ``centres`` (updated in place) until the labels settle or the centres
    move by at most ``tol`` (squared, summed); each point's final cluster and squared distance.

    Hamerly's bounds skip the points that cannot change cluster: a lower bound on the distance to
    any other centre, lowered by the other centres' largest move; a point whose exact distance to
    its own centre is below it keeps its cluster. The bounds only decide which points are checked
    against every centre (with a margin for the square roots' rounding); the labels and distances
    are the exact ones of a full pass."""
    k = len(centres)
    prune = k >= PRUNE_CENTRES
    if prune:
        labels, distance, second = grid.nearest(centres, second=True)
        lower = np.sqrt(second) * (1.0 - BOUND_MARGIN)
    else:
        labels, distance = grid.nearest(centres)
    for _ in range(max_iter):
        means, counts = grid.means(labels, k)
        empty = np.flatnonzero(counts == 0)
        if empty.size:  # an empty cluster moves to the points farthest from their centres
            far = np.argsort(-distance, kind="stable")[: empty.size]
            means[empty] = grid.x[far]
        shift = float(np.sum((means - centres) ** 2))
        if prune:
            moved = np.sqrt(np.einsum("ij,ij->i", means - centres, means - centres))
            top = int(np.argmax(moved))
            drop = np.where(labels == top, np.delete(moved, top).max(), moved[top])  # the other centres' largest move
            lower -= drop + BOUND_MARGIN * (lower + drop)
        centres[:] = means
        if not prune:
            new_labels, distance = grid.nearest(centres)
        else:
            new_labels, distance = labels.copy(), grid.own(centres, labels)
            check = np.flatnonzero(np.sqrt(distance) * (1.0 + BOUND_MARGIN) >= lower)
            if check.size:
                new_labels[check], distance[check], second = grid.nearest(centres, check, second=True)
                lower[check] = np.sqrt(second) * (1.0 - BOUND_MARGIN)
        settled = np.array_equal(new_labels, labels)
        labels = new_labels
        if settled or shift <= tol:
            break
    return labels, distance


def _fill_empty(grid: _Grid, labels: np.ndarray, centres: np.ndarray, distance: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clusters left without a point (duplicates, fewer distinct points than k) each take the point
    farthest from its centre among clusters of two or more (the lowest index among equals)."""
    labels, centres, distance = labels.copy(), centres.copy(), distance.copy()
    for cluster in np.flatnonzero(np.bincount(labels, minlength=k) == 0):
        counts = np.bincount(labels, minlength=k)
        movable = np.flatnonzero(counts[labels] >= 2)
        point = int(movable[np.argsort(-distance[movable], kind="stable")[0]])
        labels[point], centres[cluster], distance[point] = cluster, grid.x[point], 0.0
    return labels, centres, distance
