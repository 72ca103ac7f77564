"""k-means whose clusters are the same on every machine: greedy k-means++ and Lloyd's algorithm in exact arithmetic.

What scikit-learn's ``KMeans`` computes (greedy k-means++ starts with 2 + ln k local trials,
Lloyd iterations until the centres move by less than ``tol`` times the mean variance of the
features, the best of ``n_init`` starts by inertia, empty clusters moved to the points farthest
from their centres), with one difference that makes it reproducible: scikit-learn compares
distances computed in floating point by the machine's BLAS kernel, so near-equal distances
(duplicate or nearly duplicate points, common in tinyBenchmarks' IRT embeddings) are ordered by
rounding noise that differs between CPUs. Here the points are rounded to 2**-16 of their
largest magnitude and the centres to a grid of ``product_bits`` bits, on which every squared
distance is an exact integer below 2**53, whichever kernel computes the products. Ties go to
the lowest index (docs/reproducibility.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.exact import power_of_two_above, product_bits

POINT_BITS = 16  # resolution of the points: 2**-16 of their largest magnitude
MAX_ITER = 300
TOL = 1e-4  # centre movement (squared, summed) relative to the mean variance of the features
BLOCK_ROWS = 2048  # points per block of the distance product


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
        # |x|, |c| <= 2**bits with 4 d 4**bits <= 2**53: every partial sum of |x|^2 - 2 x.c + |c|^2 is exact
        self.bits = product_bits(d) - 1
        coarse = min(POINT_BITS, self.bits)
        self.unit = power_of_two_above(float(np.max(np.abs(points), initial=0.0))) * 2.0**-self.bits
        step = 2.0 ** (self.bits - coarse)  # the points' resolution, in grid units
        self.x = np.rint(points / self.unit / step) * step
        self.norms = np.einsum("ij,ij->i", self.x, self.x)  # exact: integers below 2**53

    def distances(self, centres: np.ndarray, rows: slice | np.ndarray = slice(None)) -> np.ndarray:
        """Exact squared distances (points ``rows`` x centres), centres being integers on the grid."""
        x = self.x[rows]
        return self.norms[rows][:, None] - 2.0 * (x @ centres.T) + np.einsum("ij,ij->i", centres, centres)[None, :]

    def nearest(self, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each point's nearest centre (the lowest index among equal distances) and its distance."""
        n = len(self.x)
        labels, best = np.empty(n, dtype=np.int64), np.empty(n)
        centre_norms = np.einsum("ij,ij->i", centres, centres)
        by_feature = np.ascontiguousarray(centres.T)
        for start in range(0, n, BLOCK_ROWS):
            block = slice(start, start + BLOCK_ROWS)
            dist = self.x[block] @ by_feature  # |c|^2 - 2 x.c: each step exact; |x|^2 added to the minimum only
            dist *= -2.0
            dist += centre_norms
            labels[block] = np.argmin(dist, axis=1)
            best[block] = dist[np.arange(len(dist)), labels[block]] + self.norms[block]
        return labels, best

    def means(self, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The members' mean of every cluster, rounded to the grid, and the cluster sizes."""
        counts = np.bincount(labels, minlength=k)
        sums = np.stack([np.bincount(labels, weights=column, minlength=k) for column in self.x.T], axis=1)
        return np.rint(sums / np.maximum(counts, 1)[:, None]), counts


def kmeans(points: np.ndarray, k: int, rng: np.random.Generator, *, n_init: int = 1, max_iter: int = MAX_ITER, tol: float = TOL) -> KMeansResult:
    """k clusters of the rows of ``points``: the best of ``n_init`` greedy k-means++ starts, each
    refined by Lloyd's algorithm (module docstring). Every cluster has at least one point: with
    fewer distinct points than k, the points farthest from their centres (the lowest index
    among equals) form clusters of their own."""
    grid = _Grid(points)
    n = len(grid.x)
    if not 1 <= k <= n:
        raise MdadError(f"k-means needs between 1 and {n} clusters, got {k}.")
    spread = float(np.mean(np.var(grid.x, axis=0))) if n else 0.0
    best: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    best_inertia = np.inf
    for _ in range(max(1, n_init)):
        centres = _plus_plus(grid, k, rng)
        labels, distance = _lloyd(grid, centres, max_iter, tol * spread)
        inertia = float(distance.sum())
        if inertia < best_inertia:
            best, best_inertia = (labels, centres, distance), inertia
    assert best is not None
    labels, centres, distance = _fill_empty(grid, *best, k)
    return KMeansResult(labels=labels, centres=centres * grid.unit, distance=distance, inertia=float(distance.sum()))


def _plus_plus(grid: _Grid, k: int, rng: np.random.Generator) -> np.ndarray:
    """Greedy k-means++: each new centre is the best (least total squared distance) of
    2 + ln k candidates drawn with probability proportional to the squared distance."""
    n = len(grid.x)
    trials = 2 + int(math.log(k))
    chosen = [int(rng.integers(n))]
    closest = grid.distances(grid.x[chosen])[:, 0]
    points_by_feature = np.ascontiguousarray(grid.x.T)
    for _ in range(1, k):
        cumulative = np.cumsum(closest)
        if cumulative[-1] > 0:
            candidates = np.searchsorted(cumulative, rng.random(trials) * cumulative[-1], side="right")
            candidates = np.minimum(candidates, n - 1)
        else:  # every point sits on a centre: any point will do
            candidates = rng.integers(n, size=trials)
        # candidates x points squared distances, each step exact (integers below 2**53), in place
        to_candidates = grid.x[candidates] @ points_by_feature
        to_candidates *= -2.0
        to_candidates += grid.norms
        to_candidates += grid.norms[candidates][:, None]
        np.minimum(to_candidates, closest, out=to_candidates)
        pick = int(np.argmin(to_candidates.sum(axis=1)))
        chosen.append(int(candidates[pick]))
        closest = to_candidates[pick]
    return grid.x[chosen].copy()


def _lloyd(grid: _Grid, centres: np.ndarray, max_iter: int, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's algorithm from ``centres`` (updated in place) until the labels settle or the centres
    move by at most ``tol`` (squared, summed); each point's final cluster and squared distance."""
    k = len(centres)
    labels, distance = grid.nearest(centres)
    for _ in range(max_iter):
        means, counts = grid.means(labels, k)
        empty = np.flatnonzero(counts == 0)
        if empty.size:  # an empty cluster moves to the points farthest from their centres
            far = np.argsort(-distance, kind="stable")[: empty.size]
            means[empty] = grid.x[far]
        shift = float(np.sum((means - centres) ** 2))
        centres[:] = means
        new_labels, distance = grid.nearest(centres)
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
