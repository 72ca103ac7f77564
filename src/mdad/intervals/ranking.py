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

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from mdad.errors import MdadError
from mdad.intervals.posterior import AccuracyPrior, posterior_count_pmf
from mdad.seeding import rng_for

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


# Two equal estimates: nothing tells which model is ahead, so either order holds with the same probability (the fits
# never see such a pair, and their intercept would otherwise answer; at one answered item it gave 0.85).
EVEN = 0.5
RANK_SIZES = (2, 3, 5, 10, 20, 50)  # numbers of models estimated together that the held-out rankings have
RANK_SETS = 200  # random sets of each size drawn over all held-out runs (at least one per run), to bound the work
FIT_GRID = 500  # cells of the normal posteriors in the held-out fit (the estimate uses ACCURACY_GRID)
LOGIT_CLIP = 1e-4  # the raw P(best) is kept within [LOGIT_CLIP, 1 - LOGIT_CLIP] before its logit
RIDGE = 1e-6  # relative ridge of the logistic fits (keeps separable data finite)


def _logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=np.float64), LOGIT_CLIP, 1.0 - LOGIT_CLIP)
    return np.log(q / (1.0 - q))


def logistic_fit(features: np.ndarray, held: np.ndarray, iterations: int = 50) -> np.ndarray:
    """Coefficients of the binomial logistic regression of ``held`` (0/1) on an intercept and ``features`` (rows x
    columns), by Newton steps with a small ridge (finite on separable data)."""
    x = np.column_stack([np.ones(len(features)), np.asarray(features, dtype=np.float64)])
    y = np.asarray(held, dtype=np.float64)
    beta = np.zeros(x.shape[1])
    ridge = RIDGE * len(y) * np.eye(x.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        step = np.linalg.solve(x.T @ (x * (p * (1.0 - p))[:, None]) + ridge, x.T @ (y - p) - ridge @ beta)
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def _sigmoid(t: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-t))


@dataclass(frozen=True, eq=False)
class RankingCalibration:
    """Logistic fits made on held-out rankings of ``RANK_SIZES`` models (random sets of each held-out run's targets).

    ``adjacent`` (4): P(a neighbouring pair's order holds) = sigmoid(a + b z + c L + d z L), z the pair's
    scaled gap (``OrderCalibration.scaled_gap``), L = log(number of models ranked): fitted on the
    neighbouring pairs of the held-out rankings, so a pair printed because it is adjacent is judged
    among pairs chosen the same way. ``best`` (3): P(the estimated best is the true best) =
    sigmoid(a + b logit(raw) + c L), raw the probability from normal posteriors with the held-out
    spread (:func:`best_probabilities`), fitted on the estimated best of the same rankings. L is
    capped at log(``largest``), the largest ranking fitted."""

    adjacent: np.ndarray
    best: np.ndarray
    largest: int
    rankings: int  # held-out rankings the fits were made on

    @classmethod
    def fit(cls, estimates: np.ndarray, truths: np.ndarray, scaled_gap, spread_at, *, seed: int = 0) -> RankingCalibration | None:
        """From held-out runs (runs x targets, accuracies), ``scaled_gap(e1, e2)`` and ``spread_at(e)`` (points) of the
        order calibration; None when the runs hold fewer than 3 targets or no ranking has a non-tied pair."""
        est, tru = np.atleast_2d(estimates), np.atleast_2d(truths)
        z, size_pair, held_pair, raw, size_best, held_best = [], [], [], [], [], []
        largest = 0
        for r in range(est.shape[0]):
            ok = np.flatnonzero(np.isfinite(est[r]) & np.isfinite(tru[r]))
            for s in sorted({min(s, len(ok)) for s in RANK_SIZES if len(ok) >= 2}):
                largest = max(largest, s)
                rng = rng_for(seed, "ranking-calibration", s, r)
                for _ in range(1 if s == len(ok) else -(-RANK_SETS // est.shape[0])):
                    pick = ok if s == len(ok) else rng.choice(ok, size=s, replace=False)
                    e, t = est[r, pick], tru[r, pick]
                    order = np.argsort(-e, kind="stable")
                    a, b = order[:-1], order[1:]
                    differ = e[a] != e[b]
                    z.append(scaled_gap(e[a][differ], e[b][differ]))
                    held_pair.append(t[a][differ] > t[b][differ])
                    size_pair.append(np.full(int(differ.sum()), s))
                    ec = np.clip(e, 0.0, 1.0)
                    raw.append(best_probabilities(normal_posteriors(ec, spread_at(ec) / 100.0, FIT_GRID))[order[0]])
                    held_best.append(t[order[0]] > np.delete(t, order[0]).max())
                    size_best.append(s)
        if largest < 3 or not sum(len(x) for x in z):
            return None
        zz, lp = np.concatenate(z), np.log(np.concatenate(size_pair))
        adjacent = logistic_fit(np.column_stack([zz, lp, zz * lp]), np.concatenate(held_pair))
        lb = np.log(np.array(size_best, dtype=np.float64))
        best = logistic_fit(np.column_stack([_logit(np.array(raw)), lb]), np.array(held_best))
        return cls(adjacent, best, largest, len(raw))

    def _log_size(self, models: int) -> float:
        return float(np.log(min(max(models, 2), self.largest)))

    def fitted_on(self, n: int) -> str:
        """Which held-out rankings answer a call of ``n`` models, in words."""
        return f"{n} models" if n <= self.largest else f"{self.largest} models, fewer than the {n} here"

    def adjacent_probability(self, z: np.ndarray, models: int) -> np.ndarray:
        """P(the order of neighbouring pairs of scaled gap ``z`` holds) in a ranking of ``models``."""
        a, b, c, d = self.adjacent
        zz, ls = np.asarray(z, dtype=np.float64), self._log_size(models)
        return np.where(zz == 0, EVEN, _sigmoid(a + b * zz + c * ls + d * zz * ls))

    def best_probability(self, raw: np.ndarray, models: int) -> np.ndarray:
        """P(the estimated best is the true best) from the raw probability ``raw`` in a ranking of ``models``."""
        a, b, c = self.best
        return _sigmoid(a + b * _logit(raw) + c * self._log_size(models))

    def to_json(self) -> dict:
        """The fits as JSON-ready numbers, as micro.json stores them (inside the order calibration)."""
        return {"adjacent": self.adjacent.tolist(), "best": self.best.tolist(), "largest": self.largest, "rankings": self.rankings}

    @classmethod
    def from_json(cls, data: dict) -> RankingCalibration:
        """Read :meth:`to_json`'s output; a malformed fit is one error sentence."""
        try:
            adjacent = np.asarray(data["adjacent"], dtype=np.float64).reshape(-1)
            best = np.asarray(data["best"], dtype=np.float64).reshape(-1)
            largest, rankings = int(data["largest"]), int(data["rankings"])
        except (KeyError, TypeError, ValueError):
            raise MdadError("The micro-benchmark's ranking calibration is malformed (adjacent, best, largest, rankings).") from None
        if len(adjacent) != 4 or len(best) != 3 or not np.isfinite(adjacent).all() or not np.isfinite(best).all() or largest < 3:
            raise MdadError("The micro-benchmark's ranking calibration needs 4 and 3 finite coefficients and rankings of 3 models or more.")
        return cls(adjacent, best, largest, rankings)
