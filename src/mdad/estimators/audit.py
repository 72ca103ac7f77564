"""Audit items: a design-based check and correction of a learned micro-benchmark's estimate.

A learned micro-benchmark answers k chosen items and estimates the pool accuracy with a model
fitted on the source models (an IRT fit, anchor weights, a regression). Its error depends on
the target being like the sources. Audit items are m further items drawn uniformly at random,
without replacement, from the N - k pool items the learned method did not choose. Given the
target, the learned estimate L is a fixed number (it uses the k chosen items only), so a
prediction yhat_j(L) of every remaining item is fixed too, and the AIPW estimate

    mu = (sum over the k chosen items of y + sum over the N - k others of yhat_j
          + (N - k) * mean over the audit items of (y_j - yhat_j)) / N

is exactly unbiased for the pool accuracy over the draw of the audit items, whatever L and the
predictions are. Its variance is ((N - k) / N)^2 (1 - m / (N - k)) S_e^2 / m, S_e^2 the
variance of the residuals over the N - k items; the interval is mdad.estimators.aipw's (its
Student t interval on the residuals with the same floor on their variance) over the remaining
items, carried to the pool. The predictions only narrow the interval: ``ItemCurves`` fits, per
pool item, a logistic curve of the source models' answers against their pool accuracy, so that
yhat_j(L) is the chance that a model of accuracy L answers item j. See docs/intervals.md#audit-items.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.estimators.aipw import aipw

MIN_AUDIT_ITEMS = 2  # a residual variance needs two residuals
RIDGE = 1.0  # penalty on each item curve's intercept and slope: keeps items every source got right (or wrong) finite
NEWTON_STEPS = 30  # of the per-item logistic fits (converged well before on the real matrices)
MAX_STEP = 5.0  # largest change of an intercept or slope in one Newton step


@dataclass(frozen=True, eq=False)
class ItemCurves:
    """Per pool item, P(correct) = sigmoid(intercept + slope * z), z the standardised logit of a model's pool accuracy."""

    intercept: np.ndarray
    slope: np.ndarray
    center: float
    scale: float

    @classmethod
    def fit(cls, scores: np.ndarray) -> ItemCurves:
        """Each item's curve fitted on the source models' complete ``scores`` (models x pool items, in [0, 1])
        by ridge-penalised logistic regression on the models' standardised logit pool accuracy."""
        scores = np.asarray(scores, dtype=np.float64)
        logit = _logit(scores.mean(axis=1), scores.shape[1])
        center, scale = float(logit.mean()), float(logit.std()) or 1.0
        z = (logit - center) / scale
        intercept = np.zeros(scores.shape[1])
        slope = np.zeros(scores.shape[1])
        for _ in range(NEWTON_STEPS):
            p = _sigmoid(intercept[None, :] + z[:, None] * slope[None, :])
            w = p * (1.0 - p)
            r = scores - p
            g0, g1 = r.sum(axis=0) - RIDGE * intercept, z @ r - RIDGE * slope
            h00, h01, h11 = w.sum(axis=0) + RIDGE, z @ w, (z**2) @ w + RIDGE
            det = h00 * h11 - h01**2
            intercept = intercept + np.clip((h11 * g0 - h01 * g1) / det, -MAX_STEP, MAX_STEP)
            slope = slope + np.clip((h00 * g1 - h01 * g0) / det, -MAX_STEP, MAX_STEP)
        return cls(intercept, slope, center, scale)

    def predict(self, accuracy: np.ndarray, pool_size: int) -> np.ndarray:
        """P(correct) on every pool item (targets x items) for models of pool ``accuracy`` (targets)."""
        z = (_logit(np.asarray(accuracy, dtype=np.float64), pool_size) - self.center) / self.scale
        return _sigmoid(self.intercept[None, :] + z[:, None] * self.slope[None, :])

    def to_json(self) -> dict:
        return {"intercept": self.intercept.tolist(), "slope": self.slope.tolist(), "center": self.center, "scale": self.scale}

    @classmethod
    def from_json(cls, data: dict) -> ItemCurves:
        if not isinstance(data, dict) or set(data) != {"intercept", "slope", "center", "scale"}:
            raise MdadError("the audit items' 'curves' must hold an intercept and a slope per pool item, a center and a scale")
        intercept, slope = np.asarray(data["intercept"], dtype=np.float64), np.asarray(data["slope"], dtype=np.float64)
        center, scale = float(data["center"]), float(data["scale"])
        if intercept.ndim != 1 or intercept.shape != slope.shape or not np.isfinite([*intercept, *slope, center, scale]).all() or scale <= 0:
            raise MdadError("the audit items' 'curves' must be finite numbers, one intercept and one slope per pool item, with a positive scale")
        return cls(intercept, slope, center, scale)


@dataclass(frozen=True, eq=False)
class AuditEstimate:
    """Per target: the learned estimate, the audit-corrected one, its variance estimate and its interval."""

    learned: np.ndarray
    estimate: np.ndarray
    variance: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float

    @property
    def correction(self) -> np.ndarray:
        """Corrected minus learned estimate (fractions): positive when the learned one is low."""
        return self.estimate - self.learned

    @property
    def off(self) -> np.ndarray:
        """Whether the learned estimate lies outside the corrected interval: off by more than the audit's noise."""
        return (self.learned < self.low) | (self.learned > self.high)


def audit_estimate(
    learned: np.ndarray,
    chosen_scores: np.ndarray,
    audit_scores: np.ndarray,
    chosen: np.ndarray,
    audit: np.ndarray,
    predicted: np.ndarray,
    *,
    level: float,
) -> AuditEstimate:
    """The audit-corrected estimate of each target's pool accuracy (module docstring).

    ``learned``: the learned estimates (targets); ``chosen_scores``/``audit_scores``: the targets' answers
    on the ``chosen`` and ``audit`` pool positions (targets x k, targets x m); ``predicted``: each
    target's P(correct) on every pool item (targets x N). The audit positions must be a uniform draw
    from the positions not chosen for the estimate to be unbiased."""
    learned = np.atleast_1d(np.asarray(learned, dtype=np.float64))
    predicted = np.atleast_2d(np.asarray(predicted, dtype=np.float64))
    chosen_scores, audit_scores = np.atleast_2d(chosen_scores).astype(np.float64), np.atleast_2d(audit_scores).astype(np.float64)
    pool_size = predicted.shape[1]
    rest = np.ones(pool_size, dtype=bool)
    rest[chosen] = False
    if len(audit) < MIN_AUDIT_ITEMS or not rest[audit].all() or len(np.unique(audit)) != len(audit):
        raise MdadError(f"The audit needs at least {MIN_AUDIT_ITEMS} distinct pool items besides the chosen ones, got {len(audit)}.")
    frame = np.flatnonzero(rest)  # the items the audit is drawn from, in pool order
    in_frame = np.searchsorted(frame, audit)
    on_rest = predicted[:, frame]
    part = aipw(audit_scores, in_frame, len(frame), lambda _answers: on_rest, folds=1, confidence=level)
    share = len(frame) / pool_size
    known = chosen_scores.sum(axis=1) / pool_size
    return AuditEstimate(
        learned=learned,
        estimate=known + share * part.estimate,
        variance=share**2 * part.variance,
        low=known + share * part.low,
        high=known + share * part.high,
        level=level,
    )


def draw_audit_items(pool_size: int, chosen: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` pool positions drawn uniformly without replacement from those not ``chosen``, sorted; one sentence
    when ``m`` is below 2 or above the items left."""
    rest = np.setdiff1d(np.arange(pool_size), chosen)
    check_audit_items(m, len(rest))
    return np.sort(rng.choice(rest, size=m, replace=False))


def check_audit_items(m: int, left: int) -> None:
    """One sentence when ``m`` audit items cannot be drawn from the ``left`` pool items not chosen."""
    if not MIN_AUDIT_ITEMS <= m <= left:
        raise MdadError(f"--audit-items must be between {MIN_AUDIT_ITEMS} and the {left} pool items the micro-benchmark did not choose, got {m}.")


def _logit(accuracy: np.ndarray, pool_size: int) -> np.ndarray:
    """Logit of accuracies kept half an item inside 0 and 1, so a perfect (or null) model stays finite."""
    edge = 0.5 / pool_size
    p = np.clip(accuracy, edge, 1.0 - edge)
    return np.log(p / (1.0 - p))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))
