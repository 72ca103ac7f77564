"""Ridge regression from a target's item scores to its pool accuracy, fitted on the source models.

What the regression-based methods share (``random-regression``, ``random-search-regression``,
``lasso``): scikit-learn's ``RidgeCV`` with its defaults, computed here with numpy so that the
choice of the penalty does not depend on the BLAS kernel. With an unpenalised intercept the
fit is the ridge fit of the centred scores; the penalty is the one of ``ALPHAS`` with the
smallest mean squared leave-one-out error over the source models (the efficient closed form
RidgeCV uses: residual / (1 - leverage)). The errors are rounded (``mdad.exact.snap``) before
the smallest is taken, and ties go to the first penalty, as ``RidgeCV`` does, so that rounding
noise never decides the penalty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.exact import snap
from mdad.methods.base import MicroBenchmark

ALPHAS = (0.1, 1.0, 10.0)  # scikit-learn's RidgeCV default, which the reference keeps


@dataclass(frozen=True, eq=False)
class RidgeFit:
    """A fitted ridge regression: prediction = intercept + features @ coef, and its penalty."""

    intercept: float
    coef: np.ndarray
    alpha: float
    loo_error: float  # mean squared leave-one-out error at ``alpha``


def filled(values: np.ndarray, fill: np.ndarray) -> np.ndarray:
    """``values`` (rows x items) as float64 with each missing cell (NaN) replaced by its item's ``fill``."""
    values = np.asarray(values, dtype=np.float64)
    return np.where(np.isnan(values), np.broadcast_to(fill, values.shape), values)


def item_means(scores: np.ndarray) -> np.ndarray:
    """Each item's mean over the source models, ignoring missing cells (0.5 for an item nobody answered)."""
    values = np.asarray(scores, dtype=np.float64)
    answered = (~np.isnan(values)).sum(axis=0)
    total = np.where(np.isnan(values), 0.0, values).sum(axis=0)
    return np.where(answered > 0, total / np.maximum(answered, 1), 0.5)


def pool_accuracy(scores: np.ndarray) -> np.ndarray:
    """Each source model's mean score over the pool, ignoring missing cells: the regression's target."""
    values = np.asarray(scores, dtype=np.float64)
    answered = (~np.isnan(values)).sum(axis=1)
    if (answered == 0).any():
        raise MdadError("A source model has no answer on the pool, so its pool accuracy is unknown.")
    return np.where(np.isnan(values), 0.0, values).sum(axis=1) / answered


def centred_svd(xc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The thin SVD (u, s, vt) of ``xc`` on its numerical rank, from the eigenvectors of the smaller Gram
    matrix (p x p or n x n): several times faster than an SVD for the shapes here, and accurate enough
    for a penalised fit."""
    n, p = xc.shape
    gram = xc.T @ xc if p <= n else xc @ xc.T
    values, vectors = np.linalg.eigh(gram)
    keep = values > values.max(initial=0.0) * max(n, p) * np.finfo(np.float64).eps
    s = np.sqrt(values[keep])
    if p <= n:
        v = vectors[:, keep]
        return (xc @ v) / s, s, v.T
    u = vectors[:, keep]
    return u, s, ((xc.T @ u) / s).T


def ridge_cv(features: np.ndarray, target: np.ndarray, alphas: tuple[float, ...] = ALPHAS) -> RidgeFit:
    """Ridge regression of ``target`` (n) on ``features`` (n x p) with the penalty of ``alphas``
    of least leave-one-out error; the intercept is not penalised (scikit-learn's ``RidgeCV``)."""
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(target, dtype=np.float64)
    n = len(y)
    if n < 2:
        raise MdadError(f"A regression on the source models needs at least 2 of them, got {n}.")
    x_mean, y_mean = x.mean(axis=0), float(y.mean())
    u, s, vt = centred_svd(x - x_mean)
    uty = u.T @ (y - y_mean)
    errors = []
    for alpha in alphas:
        shrink = s**2 / (s**2 + alpha)
        fitted = y_mean + u @ (shrink * uty)
        leverage = 1.0 / n + (u**2 * shrink).sum(axis=1)
        errors.append(float(np.mean(((y - fitted) / np.maximum(1.0 - leverage, 1e-12)) ** 2)))
    best = int(np.argmin(snap(np.asarray(errors))))  # first of equals, as RidgeCV
    alpha = alphas[best]
    coef = vt.T @ (s / (s**2 + alpha) * uty)
    return RidgeFit(intercept=y_mean - float(x_mean @ coef), coef=coef, alpha=float(alpha), loo_error=errors[best])


@dataclass(frozen=True, kw_only=True, eq=False)
class RegressionEstimate(MicroBenchmark):
    """Estimate = intercept + the target's scores on the items x coef, clipped to [0, 1].

    ``fill`` is each item's mean over the source models: an unanswered item (NaN) counts with it.
    ``weights`` is the plain mean's (it is no part of the estimate).
    """

    intercept: float
    coef: np.ndarray
    fill: np.ndarray

    kind = "ridge-regression"

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        values = filled(np.atleast_2d(scores), np.asarray(self.fill, dtype=np.float64))
        # element-wise products and numpy's own sum, not a BLAS dot product: the same rounding on every machine
        return np.clip(self.intercept + (values * np.asarray(self.coef, dtype=np.float64)).sum(axis=1), 0.0, 1.0)


def regression_on(scores: np.ndarray, items: np.ndarray, target: np.ndarray | None = None) -> RegressionEstimate:
    """The ridge estimator of the pool accuracy from the source models' ``scores`` on ``items``."""
    items = np.asarray(items, dtype=np.int64)
    fill = item_means(scores[:, items])
    fit = ridge_cv(filled(scores[:, items], fill), pool_accuracy(scores) if target is None else target)
    return RegressionEstimate(items=items, weights=np.full(len(items), 1.0 / len(items)), intercept=fit.intercept, coef=fit.coef, fill=fill)
