"""How a selection method's error falls with its number of items on one benchmark, measured on held-out runs.

The optimal allocation of a suite (mdad.suite.allocation) needs, per benchmark, the mean over pairs of models of
the squared error of their estimated difference at k items. For uniform random items that is exact; for any other
method it is measured here the way the assessment measures a method (mdad.assessment.held_out_runs: in each of
``runs`` seeded runs targets are held out, the method chooses k items from the other models, the targets are
estimated), at a few sizes up to half the pool that share each run's targets (paired), and a curve of the random
variance's own form with a free exponent is fitted:

    error(k) = a k^-c (1 - k/N),   a >= 0, c in [0.05, 3]

by least squares in logs (a straight line through log(error / (1 - k/N)) against log k; c clipped to its range, a
then refitted; with one usable size c is 1). For uniform random items the error is exactly S^2 (1/k - 1/N), this
form with c = 1 and a = S^2, so the fit anchors itself there: the tests check it recovers that, and Neyman's
allocation, on random items. A learned method's error falls more slowly with k (its regression keeps some error
however many items it reads), which the fitted c (below 1) says. The same fit of the targets' own squared errors
gives the average's expected error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.assessment import held_out_runs
from mdad.data.matrix import ResponseMatrix

POWER_RANGE = (0.05, 3.0)  # the exponents a fit may take
LADDER = (0.25, 0.5, 1.0, 2.0)  # measured sizes, as shares of an equal split of the budget


@dataclass(frozen=True)
class ErrorCurve:
    """error(k) = scale k^-power (1 - k/pool) (fractions squared), fitted to ``measured`` at ``sizes``."""

    scale: float
    power: float
    pool: int
    sizes: tuple[int, ...] = ()
    measured: tuple[float, ...] = ()

    def __call__(self, k: np.ndarray | float) -> np.ndarray:
        """The fitted error at ``k`` items (0 with the whole pool)."""
        k = np.asarray(k, dtype=np.float64)
        return self.scale * k**-self.power * np.maximum(1.0 - k / self.pool, 0.0)


def fit_curve(sizes: np.ndarray, measured: np.ndarray, pool: int) -> ErrorCurve:
    """The curve of this module's form closest in logs to ``measured`` at ``sizes`` (sizes below ``pool``; zero errors
    are left out of the fit; none left: a zero curve)."""
    sizes, measured = np.asarray(sizes, dtype=np.float64), np.asarray(measured, dtype=np.float64)
    use = (measured > 0) & (sizes < pool)
    record = (tuple(int(k) for k in sizes), tuple(float(m) for m in measured))
    if not use.any():
        return ErrorCurve(0.0, 1.0, pool, *record)
    x, y = np.log(sizes[use]), np.log(measured[use] / (1.0 - sizes[use] / pool))
    power = 1.0
    if len(np.unique(x)) >= 2:
        slope = float(np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2))
        power = float(np.clip(-slope, *POWER_RANGE))
    return ErrorCurve(float(np.exp(np.mean(y + power * x))), power, pool, *record)


def ladder(pool: int, share: float) -> tuple[int, ...]:
    """The sizes measured for a benchmark of ``pool`` items when an equal split gives it ``share``: LADDER's shares
    of it, whole, from 1 to half the pool (where a learned method's error still falls as a power of k)."""
    top = max(pool // 2, 1)
    return tuple(sorted({int(min(max(round(share * f), 1), top)) for f in LADDER}))


@dataclass(frozen=True)
class HeldOutCurves:
    """A method's fitted curves on one benchmark: ``pairs`` (squared error of pairs' differences) and ``own`` (each
    model's squared error), from ``runs`` held-out runs."""

    pairs: ErrorCurve
    own: ErrorCurve
    runs: int


def measure_curves(matrix: ResponseMatrix, method: str, sizes: tuple[int, ...], *, runs: int, seed: int, workers: int = 1) -> HeldOutCurves:
    """Measure ``method`` on ``runs`` held-out runs of ``matrix`` at ``sizes`` (the same targets at every size) and fit
    this module's curve to the mean squared error of the targets' pairwise differences and of their own estimates."""
    found = held_out_runs(matrix, method, sizes, runs=int(runs), seed=seed, workers=workers)
    pair_errors, own_errors = [], []
    for k in sizes:
        error = found.estimates[k] - found.truths  # runs x targets
        t = error.shape[1]
        # mean over pairs i < j of (e_i - e_j)^2 = (t sum e^2 - (sum e)^2) / (t (t - 1) / 2), per run
        pair = (t * (error**2).sum(axis=1) - error.sum(axis=1) ** 2) / (t * (t - 1) / 2)
        pair_errors.append(float(pair.mean()))
        own_errors.append(float((error**2).mean()))
    pool = matrix.n_items
    return HeldOutCurves(fit_curve(np.array(sizes), np.array(pair_errors), pool), fit_curve(np.array(sizes), np.array(own_errors), pool), int(runs))
