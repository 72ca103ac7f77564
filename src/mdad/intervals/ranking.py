"""P(a model is the true best among those estimated together) (docs/intervals.md#the-best-of-a-ranking).

Each model's full-benchmark accuracy gets a posterior on one grid of values, and the models are
taken as independent given their own answers: the probability that model i is strictly above
every other model is

    P_i = sum_g post_i(v_g) prod_{j != i} P(X_j < v_g),

a finite sum, the same on every machine (no sampling). The estimated best model is the first of
the ranking by estimate; its P_i is what ``mdad estimate`` prints. A posterior computed under a
population prior that is right for the models at hand does not depend on which model the
estimates put first, which is why this answer, unlike a pair's probability taken alone, needs no
correction for the choice of the best. Where the posteriors come from:

- random designs on 0/1 scores: the empirical-Bayes posterior of the pool count given the model's
  correct answers (``posterior_count_pmf``: the source models' accuracies as the prior);
- calibrated methods: the estimate plus a normal residual with the held-out residual spread at
  that estimate (``OrderCalibration.spread_at``), on a grid of accuracies.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from mdad.errors import MdadError
from mdad.intervals.posterior import AccuracyPrior, posterior_count_pmf

ACCURACY_GRID = 2000  # cells of [0, 1] for the calibrated methods' normal posteriors


def best_probabilities(posterior: np.ndarray) -> np.ndarray:
    """P(each model's value is strictly above every other model's) for independent posteriors (models x values of
    one increasing grid, rows summing to 1)."""
    post = np.asarray(posterior, dtype=np.float64)
    if post.ndim != 2 or not post.shape[0] or np.any(post < 0):
        raise MdadError("Posteriors must be a non-negative table with one row per model.")
    below = np.clip(np.cumsum(post, axis=1) - post, 0.0, 1.0)  # P(X_j < v_g)
    zero = below <= 0.0
    with np.errstate(divide="ignore"):
        log_below = np.where(zero, 0.0, np.log(np.where(zero, 1.0, below)))
    zeros, total = zero.sum(axis=0), log_below.sum(axis=0)
    # the product over the other models: 0 when another model cannot lie below v_g, else exp of the other logs
    others_zero = zeros[None, :] - zero
    others = np.where(others_zero > 0, 0.0, np.exp(total[None, :] - log_below))
    return np.clip((post * others).sum(axis=1), 0.0, 1.0)


def count_posteriors(prior: AccuracyPrior, drawn: int, correct: np.ndarray) -> np.ndarray:
    """Empirical-Bayes posteriors of the pool count (models x 0..N) for ``correct`` of ``drawn`` uniformly drawn items."""
    return posterior_count_pmf(prior, int(drawn), np.asarray(correct, dtype=np.int64))


def normal_posteriors(estimates: np.ndarray, spread: np.ndarray, cells: int = ACCURACY_GRID) -> np.ndarray:
    """Normal(estimate, spread) (accuracies) on ``cells`` equal cells of [0, 1], the tails beyond each end put in the
    end cells (models x cells)."""
    e = np.asarray(estimates, dtype=np.float64)[:, None]
    s = np.asarray(spread, dtype=np.float64)[:, None]
    if np.any(~np.isfinite(s)) or np.any(s <= 0):
        raise MdadError("Normal posteriors need a positive residual spread for every model.")
    cuts = np.linspace(0.0, 1.0, cells + 1)[None, 1:-1]
    cdf = np.concatenate([np.zeros((len(e), 1)), ndtr((cuts - e) / s), np.ones((len(e), 1))], axis=1)
    return np.diff(cdf, axis=1)
