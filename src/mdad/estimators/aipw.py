"""The augmented inverse-probability-weighted (AIPW, prediction-powered) estimate of pool accuracy.

A target answers a uniform random sample S of k of the N pool items. A predictor gives its
probability of answering every pool item correctly; the estimate is the predicted accuracy
corrected by the mean residual (answer - prediction) on the sample. With a predictor that
does not depend on the sample this is exactly unbiased whatever the predictor, and its
variance under sampling without replacement is (1 - k/N) S_e^2 / k, S_e^2 being the pool
variance of the residuals, estimated without bias by their sample variance.

The predictor here depends on the target's own answers (its ability is estimated from
them), so it is cross-fitted: the sample, in its random draw order, is dealt into F folds;
the predictor of fold m is fitted on the other folds' answers. Given the other folds, fold
m is a uniform sample of the items they left, so
    estimate_m = (sum_S y + (N - k) (mean of f^(-m) over unsampled items + mean residual of fold m)) / N
is exactly unbiased for the pool accuracy, and so is their size-weighted mean, which is
(sum_S y + (N - k) (sum_m (n_m / k) mean_unsampled f^(-m) + mean cross-fitted residual)) / N.
Its variance estimate is the fixed-predictor formula with the cross-fitted residuals (an
approximation, measured in benchmarks/results/adaptive.md).

The interval does not trust a sample variance that the sample cannot show: a target that
answers almost nothing correctly usually answers every sampled item wrong, and its residuals
then vary far less than over the pool. So the interval uses the larger of the residuals'
sample variance and the variance the predictor itself implies for them, the mean of f (1 - f)
over the sampled items (the expected squared residual when the predictor is right). This only
widens the interval; ``variance`` stays the plain estimate. See docs/adaptive.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError

FOLDS = 10  # leave-one-out up to 10 items; 10 folds beyond


@dataclass(frozen=True, eq=False)
class AIPWEstimate:
    """Per target: the estimate, its variance estimate and the two-sided interval."""

    estimate: np.ndarray
    variance: np.ndarray  # the plain variance estimate; NaN with a single item
    low: np.ndarray
    high: np.ndarray


def aipw(
    scores: np.ndarray,
    items: np.ndarray,
    pool_size: int,
    predict: Callable[[np.ndarray], np.ndarray],
    *,
    folds: int = FOLDS,
    confidence: float = 0.95,
) -> AIPWEstimate:
    """Cross-fitted AIPW estimates of each target's pool accuracy (module docstring).

    ``scores`` (targets x k) are the 0/1 (or fractional) answers on ``items``, pool positions
    in the order they were drawn. ``predict`` maps answers on ``items`` (rows x k, NaN = held
    out) to predictions on every pool item (rows x pool_size). The interval is the estimate
    plus or minus the Student t quantile with k - 1 degrees of freedom times the standard
    error, clipped to [0, 1]; with one item it is [0, 1].
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    items = np.asarray(items, dtype=np.int64)
    n_targets, k = scores.shape
    if len(items) != k or len(np.unique(items)) != k or k < 1 or items.min() < 0 or items.max() >= pool_size:
        raise MdadError(f"AIPW needs {k} distinct pool positions below {pool_size} for the answers, got {len(items)}.")
    if np.isnan(scores).any():
        raise MdadError("AIPW needs every target's answer on every sampled item.")
    n_folds = max(1, min(folds, k))
    fold = np.arange(k) % n_folds
    in_fold = fold[None, None, :] == np.arange(n_folds)[:, None, None]
    held_out = np.where(in_fold, np.nan, scores[None])  # folds x targets x k
    predicted = np.asarray(predict(held_out.reshape(n_folds * n_targets, k)), dtype=np.float64)
    predicted = predicted.reshape(n_folds, n_targets, pool_size)
    unsampled = np.ones(pool_size, dtype=bool)
    unsampled[items] = False
    share = np.bincount(fold, minlength=n_folds) / k
    predicted_rest = predicted[:, :, unsampled].mean(axis=2) if unsampled.any() else np.zeros((n_folds, n_targets))
    residual = scores - predicted[fold, :, items].T  # targets x k, each item predicted without its own fold
    rest = pool_size - k
    estimate = (scores.sum(axis=1) + rest * (share @ predicted_rest + residual.mean(axis=1))) / pool_size
    if k > 1:
        finite = 1.0 - k / pool_size
        variance = finite * residual.var(axis=1, ddof=1) / k
        on_sample = predicted[fold, :, items].T
        implied = finite * np.mean(on_sample * (1.0 - on_sample), axis=1) / k
        from scipy.special import stdtrit  # imported on first use: every command lists the methods, few run aipw

        half = stdtrit(k - 1, 0.5 + confidence / 2) * np.sqrt(np.maximum(variance, implied))
        low, high = np.clip(estimate - half, 0.0, 1.0), np.clip(estimate + half, 0.0, 1.0)
    else:
        variance = np.full(n_targets, np.nan)
        low, high = np.zeros(n_targets), np.ones(n_targets)
    return AIPWEstimate(estimate=estimate, variance=variance, low=low, high=high)
