"""The ninth round's three parts against their former versions, alternating in one process, one thread.

    python benchmarks/bench_ninth_round.py [--repeats 20]

- IRT spread: ``spd_inverses`` (Cholesky over the whole stack) against ``np.linalg.inv`` (LAPACK once per
  matrix) on the stacks a 10-D fit inverts every round: 6,016 item covariances of 11 x 11 (the paper
  grid's pool) and 300 ability covariances of 10 x 10 (its largest source count);
- diversity: ``vandermonde`` (each column one product of an earlier column and a variable) against the
  former products of gathered powers, 5,549 trimmed points x 1,000 monomials (the grid's largest size);
- anchor-points: ``assign`` (uniform draws for the tied items only) against the former draws for every
  (medoid, item), k = 10-1,000 medoids of 6,016 items, distances without ties (option probabilities).

CPU seconds per call (the median of the repeats), each pair alternating, and the ratio former / now; the
results agree to rounding (inverses, monomials) or are the same (assignments without ties).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.irt.model import spd_inverses
from mdad.methods.anchor_points import assign
from mdad.methods.dpp import graded_exponents, vandermonde


def former_vandermonde(points: np.ndarray, k: int) -> np.ndarray:
    """The monomials as products of gathered powers (the former construction)."""
    exponents = graded_exponents(k, points.shape[1])
    degrees = np.arange(exponents.max(initial=0) + 1)
    rows = gathered = np.empty(0)
    for dim in range(points.shape[1]):
        powers = np.ascontiguousarray((points[:, dim, None] ** degrees).T)
        if dim == 0:
            rows = np.take(powers, exponents[:, 0], axis=0)
            gathered = np.empty_like(rows)
        else:
            rows *= np.take(powers, exponents[:, dim], axis=0, out=gathered)
    return rows.T


def former_assign(distance_to_medoids: np.ndarray, medoids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The former assignment: a uniform draw for every (medoid, item)."""
    best = distance_to_medoids == distance_to_medoids.min(axis=0)
    draws = rng.random(best.shape)
    labels = np.argmax(best, axis=0)
    redo = np.flatnonzero((np.count_nonzero(best, axis=0) > 1) | (draws[labels, np.arange(best.shape[1])] == 0.0))
    labels[redo] = np.argmax(best[:, redo] * draws[:, redo], axis=0)
    labels[medoids] = np.arange(len(medoids))
    return labels


def paired(former, now, repeats: int) -> tuple[float, float]:
    """Median CPU seconds of ``former()`` and ``now()``, alternating which goes first."""
    spent: dict[str, list[float]] = {"former": [], "now": []}
    for repeat in range(repeats):
        order = (("former", former), ("now", now)) if repeat % 2 == 0 else (("now", now), ("former", former))
        for name, call in order:
            start = time.process_time()
            call()
            spent[name].append(time.process_time() - start)
    return float(np.median(spent["former"])), float(np.median(spent["now"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'part':<46}{'former s':>10}{'now s':>10}{'ratio':>8}  agreement")
    with threadpool_limits(limits=1):
        for count, k in ((6016, 11), (300, 10)):
            factors = rng.normal(size=(count, 30, k))
            stack = np.einsum("nik,nil->nkl", factors, factors) + np.eye(k)
            former, now = paired(lambda s=stack: np.linalg.inv(s), lambda s=stack: spd_inverses(s), args.repeats)
            gap = float(np.max(np.abs(spd_inverses(stack) - np.linalg.inv(stack))))
            print(f"{f'IRT spread: {count:,} inverses of {k} x {k}':<46}{former:>10.4f}{now:>10.4f}{former / now:>7.2f}x  max |diff| {gap:.1e}")
        points = rng.uniform(-0.99, 0.99, size=(5549, 4))
        former, now = paired(lambda: former_vandermonde(points, 1000), lambda: vandermonde(points, 1000), args.repeats)
        gap = float(np.max(np.abs(vandermonde(points, 1000) - former_vandermonde(points, 1000))))
        print(f"{'diversity: 5,549 x 1,000 monomials':<46}{former:>10.4f}{now:>10.4f}{former / now:>7.2f}x  max |diff| {gap:.1e}")
        n = 6016
        for k in (10, 100, 1000):
            distance = rng.integers(0, 2**24, size=(k, n)).astype(np.int32)  # 24-bit units: no ties, as on probabilities
            medoids = np.sort(rng.choice(n, k, replace=False))
            former, now = paired(
                lambda d=distance, m=medoids: former_assign(d, m, np.random.default_rng(1)),
                lambda d=distance, m=medoids: assign(d, m, np.random.default_rng(1)),
                args.repeats,
            )
            same = np.array_equal(assign(distance, medoids, np.random.default_rng(1)), former_assign(distance, medoids, np.random.default_rng(1)))
            verdict = "the same" if same else "DIFFERENT"
            print(f"{f'anchor-points: assignment, k = {k:,}':<46}{former:>10.4f}{now:>10.4f}{former / now:>7.2f}x  {verdict}")


if __name__ == "__main__":
    main()
