"""mdad's exact k-means: the optimum on tiny cases, scikit-learn's quality, k clusters with duplicates, exact numbers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdad.errors import MdadError
from mdad.exact import integer_grid, power_of_two_above, product_bits, snap
from mdad.methods.kmeans import kmeans


def brute_force_inertia(points: np.ndarray, k: int) -> float:
    """The least within-cluster sum of squares over every assignment of the points to k clusters."""
    best = np.inf
    for labels in itertools.product(range(k), repeat=len(points)):
        labels = np.array(labels)
        if len(np.unique(labels)) < k:
            continue
        total = sum(((points[labels == c] - points[labels == c].mean(axis=0)) ** 2).sum() for c in range(k))
        best = min(best, total)
    return best


@pytest.mark.parametrize("seed", range(4))
def test_best_of_starts_reaches_the_brute_force_optimum(seed):
    # three groups a few spreads apart (k-means is a local search: on structureless points the
    # best of a few starts need not be the global optimum)
    rng = np.random.default_rng(seed)
    points = np.repeat([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]], [3, 3, 2], axis=0) + rng.normal(scale=0.7, size=(8, 2))
    fit = kmeans(points, 3, np.random.default_rng(seed), n_init=10)
    inertia = float(((points - fit.centres[fit.labels]) ** 2).sum())
    # the centres are the members' means rounded to the grid: the optimum up to that rounding
    assert inertia == pytest.approx(brute_force_inertia(points, 3), rel=1e-6)


def test_a_fixed_point_of_lloyd_every_point_at_its_nearest_centre():
    rng = np.random.default_rng(1)
    points = rng.normal(size=(400, 11)) * rng.uniform(0.2, 3.0, 11)
    fit = kmeans(points, 25, np.random.default_rng(2), n_init=2)
    squared = ((points[:, None, :] - fit.centres[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(fit.labels, np.argmin(squared, axis=1))
    for c in range(25):  # every centre is its members' mean, to the grid's resolution
        np.testing.assert_allclose(fit.centres[c], points[fit.labels == c].mean(axis=0), atol=1e-4 * np.abs(points).max())


def test_as_good_as_scikit_learn():
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(5)
    points = np.concatenate([rng.normal(loc, 0.3, size=(60, 4)) for loc in rng.normal(0, 3, size=(12, 4))])
    ours = kmeans(points, 12, np.random.default_rng(0), n_init=5)
    theirs = KMeans(n_clusters=12, n_init=5, random_state=0).fit(points)
    inertia = float(((points - ours.centres[ours.labels]) ** 2).sum())
    assert inertia <= 1.02 * theirs.inertia_


def test_k_clusters_even_with_fewer_distinct_points():
    points = np.repeat(np.arange(5.0)[:, None], 4, axis=0)  # 5 distinct points, 20 rows
    fit = kmeans(points, 8, np.random.default_rng(0), n_init=3)
    assert sorted(np.unique(fit.labels)) == list(range(8))
    assert fit.inertia == 0.0


def test_distances_are_exact_integers_so_duplicates_tie():
    rng = np.random.default_rng(4)
    points = rng.normal(size=(50, 11)) * 4
    points[25:] = points[:25]
    fit = kmeans(points, 10, np.random.default_rng(1), n_init=2)
    np.testing.assert_array_equal(fit.distance[25:], fit.distance[:25])
    np.testing.assert_array_equal(fit.distance, np.rint(fit.distance))
    assert fit.distance.max() < 2.0**53


def test_same_clusters_from_the_same_generator_state():
    points = np.random.default_rng(7).normal(size=(300, 3))
    first = kmeans(points, 20, np.random.default_rng(9), n_init=3)
    again = kmeans(points, 20, np.random.default_rng(9), n_init=3)
    np.testing.assert_array_equal(first.labels, again.labels)
    np.testing.assert_array_equal(first.centres, again.centres)


@pytest.mark.parametrize("k", [0, 11])
def test_k_outside_one_to_the_number_of_points_is_an_error(k):
    with pytest.raises(MdadError, match="clusters"):
        kmeans(np.zeros((10, 2)), k, np.random.default_rng(0))


def test_integer_products_are_exact_whatever_the_order():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(300, 40))
    bits = product_bits(300)
    q, unit = integer_grid(values, bits)
    assert np.abs(q).max() <= 2**bits
    gram = q.T @ q
    by_loop = np.zeros((40, 40))
    for row in q[::-1]:  # another order of summation, one term at a time
        by_loop += np.outer(row, row)
    np.testing.assert_array_equal(gram, by_loop)
    np.testing.assert_allclose(q * unit, values, atol=unit[()] / 2 if np.ndim(unit) else unit / 2)


def test_snap_is_symmetric_and_idempotent():
    values = np.random.default_rng(2).normal(size=1000) * 3
    snapped = snap(values)
    np.testing.assert_array_equal(snap(-values), -snapped)
    np.testing.assert_array_equal(snap(snapped), snapped)
    assert np.abs(snapped - values).max() <= 2.0**-21 * power_of_two_above(np.abs(values).max())
    assert power_of_two_above(4.0) == 4.0 and power_of_two_above(4.5) == 8.0 and power_of_two_above(0.0) == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_pruned_lloyd_passes_give_the_full_passes_clusters(seed, monkeypatch):
    # Hamerly's bounds only skip points that cannot change cluster: with many centres (pruned) the
    # clusters, centres and distances are those of full passes, duplicates and ties included
    import mdad.methods.kmeans as module

    rng = np.random.default_rng(seed)
    points = np.concatenate([rng.normal(loc, 0.4, size=(40, 5)) for loc in rng.normal(0, 3, size=(15, 5))])
    points[300:] = points[:300]  # exact duplicates: equal distances, ties broken by index
    k = 2 * module.PRUNE_CENTRES
    pruned = kmeans(points, k, np.random.default_rng(seed), n_init=2)
    monkeypatch.setattr(module, "PRUNE_CENTRES", 10**9)
    full = kmeans(points, k, np.random.default_rng(seed), n_init=2)
    np.testing.assert_array_equal(pruned.labels, full.labels)
    np.testing.assert_array_equal(pruned.centres, full.centres)
    np.testing.assert_array_equal(pruned.distance, full.distance)
    squared = ((points[:, None, :] - pruned.centres[None, :, :]) ** 2).sum(axis=2)
    assert (squared[np.arange(len(points)), pruned.labels] <= squared.min(axis=1) * (1 + 1e-6)).all()


def test_more_local_trials_give_a_lower_objective_on_average():
    # greedy k-means++ keeps the best of its candidates: over many seeds, 3 candidates per centre
    # seed better clusters than 1 (plain k-means++), the objective of the best of the starts
    rng = np.random.default_rng(3)
    points = np.concatenate([rng.normal(loc, 0.5, size=(30, 3)) for loc in rng.normal(0, 4, size=(20, 3))])
    inertia = {t: np.mean([kmeans(points, 20, np.random.default_rng(s), trials=t, max_iter=1).inertia for s in range(20)]) for t in (1, 3)}
    assert inertia[3] < inertia[1]


def test_at_least_one_trial():
    with pytest.raises(MdadError, match="at least 1 candidate"):
        kmeans(np.zeros((10, 2)), 2, np.random.default_rng(0), trials=0)


def reference_kmeans(points: np.ndarray, k: int, rng: np.random.Generator, n_init: int, trials: int = 3) -> tuple[np.ndarray, ...]:
    """The same exact algorithm written plainly: every distance of every pass by brute force on the
    points' grid (exact integers), no bounds; ties to the lowest index."""
    from mdad.methods.kmeans import MAX_ITER, TOL, _Grid

    x = _Grid(points).x
    n = len(x)

    def squared(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # exact: integers below 2**53
        return ((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2)

    best, best_inertia = None, np.inf
    for _ in range(n_init):
        chosen = [int(rng.integers(n))]
        closest = squared(x[chosen], x)[0]
        for _ in range(1, k):
            cumulative = np.cumsum(closest)
            if cumulative[-1] > 0:
                candidates = np.minimum(np.searchsorted(cumulative, rng.random(trials) * cumulative[-1], side="right"), n - 1)
            else:
                candidates = rng.integers(n, size=trials)
            rows = np.minimum(squared(x[candidates], x), closest)
            pick = int(np.argmin(rows.sum(axis=1)))
            chosen.append(int(candidates[pick]))
            closest = rows[pick]
        centres = x[chosen].copy()
        to_centres = squared(x, centres)
        labels = np.argmin(to_centres, axis=1)
        distance = to_centres[np.arange(n), labels]
        for _ in range(MAX_ITER):
            counts = np.bincount(labels, minlength=k)
            sums = np.zeros_like(centres)
            np.add.at(sums, labels, x)
            means = np.rint(sums / np.maximum(counts, 1)[:, None])
            empty = np.flatnonzero(counts == 0)
            if empty.size:
                means[empty] = x[np.argsort(-distance, kind="stable")[: empty.size]]
            shift = float(np.sum((means - centres) ** 2))
            centres = means
            to_centres = squared(x, centres)
            new_labels = np.argmin(to_centres, axis=1)
            distance = to_centres[np.arange(n), new_labels]
            settled = np.array_equal(new_labels, labels)
            labels = new_labels
            if settled or shift <= TOL * float(np.mean(np.var(x, axis=0))):
                break
        if distance.sum() < best_inertia:
            best, best_inertia = (labels, centres, distance), float(distance.sum())
    labels, centres, distance = (a.copy() for a in best)
    for cluster in np.flatnonzero(np.bincount(labels, minlength=k) == 0):
        movable = np.flatnonzero(np.bincount(labels, minlength=k)[labels] >= 2)
        point = int(movable[np.argsort(-distance[movable], kind="stable")[0]])
        labels[point], centres[cluster], distance[point] = cluster, x[point], 0.0
    return labels, centres, distance


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(60, 300),
    features=st.integers(1, 5),
    levels=st.integers(2, 12),
    k=st.sampled_from([1, 3, 12, 32, 40, 55]),
)
def test_same_clusters_as_the_plain_algorithm(seed, n, features, levels, k):
    # points on a few levels per feature (many exact duplicates and equal distances, so ties decide),
    # some moved a little, some far out; k from 32 on takes Lloyd's pruned passes, which must give the
    # full passes' clusters to the bit
    rng = np.random.default_rng(seed)
    points = rng.integers(0, levels, size=(n, features)) * 0.5 + rng.normal(scale=0.05, size=(n, features)) * (rng.random((n, 1)) < 0.3)
    points[rng.random(n) < 0.05] *= 4.0
    fit = kmeans(points, k, np.random.default_rng(seed), n_init=2)
    labels, centres, distance = reference_kmeans(points, k, np.random.default_rng(seed), n_init=2)
    np.testing.assert_array_equal(fit.labels, labels)
    np.testing.assert_array_equal(fit.distance, distance)
    np.testing.assert_array_equal(fit.centres, centres * _grid_unit(points))
    assert fit.inertia == float(distance.sum())


def _grid_unit(points: np.ndarray) -> float:
    from mdad.methods.kmeans import _Grid

    return _Grid(points).unit
