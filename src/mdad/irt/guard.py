"""The extrapolation guard of model-based estimates: targets the source models cannot vouch for.

An IRT-based estimate of a target is unreliable when (a) its ability lies outside the range
the source models span, where the fitted item parameters were never checked, or (b) its
answers fit the IRT model badly. Abilities are compared along the one direction that
matters for an accuracy estimate, the test characteristic: the predicted accuracy on the
pool at the target's ability must lie within the range of the source models' predicted
pool accuracies at theirs (with one dimension this is exactly "ability within the sources'
range", the pool accuracy being monotone in ability). Misfit is the standardised
log-likelihood person-fit statistic l_z (Drasgow, Levine & Williams 1985) of the answered
items, flagged below MISFIT_Z (one-sided 1% under the model). See docs/adaptive.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.irt.model import sigmoid

MISFIT_Z = -2.326  # one-sided 1% quantile of the standard normal


def pool_accuracy_range(theta: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The lowest and highest predicted pool accuracy among models of abilities ``theta`` (the sources)."""
    expected = sigmoid(theta @ a.T - b).mean(axis=1)
    return float(expected.min()), float(expected.max())


def person_fit(answers: np.ndarray, p: np.ndarray) -> np.ndarray:
    """l_z of each model over its answered items (NaN = not answered); NaN with fewer than two answers.

    l_z = (l - E l) / sd(l), l = sum log P(observed answer), moments under the model at ``p``."""
    answered = ~np.isnan(answers)
    y = np.nan_to_num(answers)
    p = np.clip(p, 1e-12, 1 - 1e-12)
    logit = np.log(p) - np.log1p(-p)
    loglik = np.where(answered, y * np.log(p) + (1 - y) * np.log1p(-p), 0.0).sum(axis=1)
    mean = np.where(answered, p * np.log(p) + (1 - p) * np.log1p(-p), 0.0).sum(axis=1)
    var = np.where(answered, p * (1 - p) * logit**2, 0.0).sum(axis=1)
    enough = (answered.sum(axis=1) >= 2) & (var > 0)
    return np.where(enough, (loglik - mean) / np.sqrt(np.where(enough, var, 1.0)), np.nan)


@dataclass(frozen=True, eq=False)
class GuardFlags:
    """Per target: whether its estimate is an extrapolation, and why."""

    expected: np.ndarray  # predicted pool accuracy at the target's ability
    low: float  # the source models' range of the same quantity
    high: float
    lz: np.ndarray  # person fit; NaN when fewer than two answers

    @property
    def outside(self) -> np.ndarray:
        return (self.expected < self.low) | (self.expected > self.high)

    @property
    def misfit(self) -> np.ndarray:
        return np.nan_to_num(self.lz, nan=0.0) < MISFIT_Z

    @property
    def flagged(self) -> np.ndarray:
        return self.outside | self.misfit

    def reason(self, i: int) -> str:
        """Why target i is flagged, in one phrase ("" when it is not)."""
        parts = []
        if self.expected[i] > self.high:
            parts.append(
                f"ability above every source model's (predicted pool accuracy {100 * self.expected[i]:.2f}%, "
                f"the sources' highest {100 * self.high:.2f}%)"
            )
        elif self.expected[i] < self.low:
            parts.append(
                f"ability below every source model's (predicted pool accuracy {100 * self.expected[i]:.2f}%, "
                f"the sources' lowest {100 * self.low:.2f}%)"
            )
        if self.misfit[i]:
            parts.append(f"answers fit the IRT model badly (person fit l_z = {self.lz[i]:.1f} < {MISFIT_Z:g})")
        return "; ".join(parts)


def guard(theta: np.ndarray, answers: np.ndarray, a: np.ndarray, b: np.ndarray, *, low: float, high: float) -> GuardFlags:
    """The guard of targets of abilities ``theta`` (targets x D) that gave ``answers`` on the pool
    (targets x pool, NaN = not asked), with the pool's items ``a``, ``b`` and the sources' range."""
    p = sigmoid(theta @ a.T - b)
    return GuardFlags(expected=p.mean(axis=1), low=low, high=high, lz=person_fit(answers, p))
