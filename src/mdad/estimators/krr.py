"""``krr``: kernel ridge regression with a polynomial kernel from a target's item scores to its pool accuracy.

The estimator of Bowyer, Locatelli and Cao (arXiv 2605.25773), fitted on the source models: features
are the models' scores on the chosen items (a missing cell counts with its item's mean over the
sources), the target is their pool accuracy, the kernel is scikit-learn's polynomial kernel
(gamma x + coef0)^degree with coef0 = 1 and gamma = 1 / k (scikit-learn's default), and there is
no intercept (scikit-learn's ``KernelRidge``; the kernel's constant term plays its part).

The degree (DEGREES) and the penalty (ALPHAS_BINARY on 0/1 scores, ALPHAS_CONTINUOUS otherwise,
the reference's grids) are those of least mean squared leave-one-out error over the source
models: the closed form residual / (1 - leverage) from one eigendecomposition of the kernel per
degree, equal to refitting without each model (scikit-learn's ``GridSearchCV`` with
``LeaveOneOut``). The errors are rounded (``mdad.exact.snap``) before the least is taken, and
ties go to the lower degree, then the smaller penalty. The final fit is scikit-learn's
``KernelRidge``; a target's estimate is computed with element-wise products, so that models with
the same answers get the same estimate on every machine, and clipped to [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.estimators.base import ESTIMATORS, Estimator
from mdad.exact import snap
from mdad.methods.base import MicroBenchmark, SourceView
from mdad.methods.ridge import filled, item_means, pool_accuracy

DEGREES = (1, 2, 3)
ALPHAS_BINARY = (0.1, 0.316227766, 1.0, 3.16227766, 10.0)  # the reference's np.logspace(-1, 1, 5) on 0/1 scores
ALPHAS_CONTINUOUS = (0.01, 0.0316227766, 0.1, 0.316227766, 1.0, 3.16227766, 10.0, 31.6227766, 100.0)  # np.logspace(-2, 2, 9)
COEF0 = 1.0
BLOCK_ELEMENTS = 2**22  # products per block of the element-wise kernel (32 MB)


def inner_products(x: np.ndarray, train: np.ndarray) -> np.ndarray:
    """<x_i, t_j> between every row of ``x`` and every row of ``train``, by element-wise products summed by numpy
    (not a BLAS product), so that a row's values do not depend on the other rows; in blocks of rows of about
    BLOCK_ELEMENTS products."""
    x = np.asarray(x, dtype=np.float64)
    train = np.asarray(train, dtype=np.float64)
    out = np.empty((len(x), len(train)))
    rows = max(1, BLOCK_ELEMENTS // max(train.size, 1))
    for start in range(0, len(x), rows):
        out[start : start + rows] = (x[start : start + rows, None, :] * train[None, :, :]).sum(axis=2)
    return out


def poly_kernel(x: np.ndarray, train: np.ndarray, degree: int, gamma: float, coef0: float = COEF0) -> np.ndarray:
    """(gamma <x, t> + coef0)^degree between every row of ``x`` and every row of ``train`` (``inner_products``)."""
    return (gamma * inner_products(x, train) + coef0) ** degree


def loo_errors(kernel: np.ndarray, y: np.ndarray, alphas: tuple[float, ...]) -> np.ndarray:
    """Mean squared leave-one-out error of kernel ridge (no intercept) at each penalty of ``alphas``:
    with K = V diag(l) V', the hat matrix is V diag(l / (l + alpha)) V' and the left-out residual
    is (y - fitted) / (1 - hat diagonal)."""
    values, vectors = np.linalg.eigh((kernel + kernel.T) / 2.0)
    values = np.maximum(values, 0.0)
    vty = vectors.T @ y
    errors = []
    for alpha in alphas:
        shrink = values / (values + alpha)
        fitted = vectors @ (shrink * vty)
        leverage = (vectors**2 * shrink).sum(axis=1)
        errors.append(float(np.mean(((y - fitted) / np.maximum(1.0 - leverage, 1e-12)) ** 2)))
    return np.asarray(errors)


@dataclass(frozen=True, kw_only=True, eq=False)
class KernelRidgeEstimate(MicroBenchmark):
    """Estimate = sum over source models of dual x (gamma <target, source> + coef0)^degree, clipped to [0, 1].

    ``train`` holds the source models' scores on the items (missing cells filled), ``fill`` each item's
    mean over the sources (an unanswered item counts with it); ``weights`` is the plain mean's (no part
    of the estimate)."""

    train: np.ndarray  # sources x k
    dual: np.ndarray  # sources
    degree: int
    gamma: float
    coef0: float
    alpha: float
    fill: np.ndarray

    kind = "kernel-ridge"

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        values = filled(np.atleast_2d(scores), np.asarray(self.fill, dtype=np.float64))
        kernel = poly_kernel(values, self.train, int(self.degree), float(self.gamma), float(self.coef0))
        return np.clip((kernel * np.asarray(self.dual, dtype=np.float64)).sum(axis=1), 0.0, 1.0)


def kernel_ridge_on(scores: np.ndarray, items: np.ndarray, target: np.ndarray | None = None) -> KernelRidgeEstimate:
    """The kernel ridge estimator of the pool accuracy (or ``target``) from the source models' ``scores`` on ``items``."""
    from sklearn.kernel_ridge import KernelRidge  # imported on use: listing the methods does not load scikit-learn

    items = np.asarray(items, dtype=np.int64)
    y = pool_accuracy(scores) if target is None else np.asarray(target, dtype=np.float64)
    if len(y) < 2:
        raise MdadError(f"Kernel ridge regression on the source models needs at least 2 of them, got {len(y)}.")
    fill = item_means(scores[:, items])
    x = filled(scores[:, items], fill)
    binary = bool(np.isin(x, (0.0, 1.0)).all())
    alphas = ALPHAS_BINARY if binary else ALPHAS_CONTINUOUS
    gamma = 1.0 / max(len(items), 1)
    grid = [(degree, alpha) for degree in DEGREES for alpha in alphas]
    inner = inner_products(x, x)
    errors = np.concatenate([loo_errors((gamma * inner + COEF0) ** degree, y, alphas) for degree in DEGREES])
    degree, alpha = grid[int(np.argmin(snap(errors)))]  # the first of equals: lower degree, then smaller penalty
    fit = KernelRidge(alpha=alpha, kernel="poly", degree=degree, gamma=gamma, coef0=COEF0).fit(x, y)
    return KernelRidgeEstimate(
        items=items,
        weights=np.full(len(items), 1.0 / max(len(items), 1)),
        train=x,
        dual=np.asarray(fit.dual_coef_, dtype=np.float64).ravel(),
        degree=int(degree),
        gamma=float(gamma),
        coef0=COEF0,
        alpha=float(alpha),
        fill=fill,
    )


@ESTIMATORS.register(order=20)
class KernelRidgeEstimator(Estimator):
    name = "krr"
    description = "kernel ridge regression (polynomial kernel, degree and penalty by leave-one-out error) to the pool accuracy."

    def fit(self, view: SourceView, items: np.ndarray, rng: np.random.Generator) -> MicroBenchmark:
        return kernel_ridge_on(view.scores, items)
