"""What an estimate with its uncertainty is: intervals around estimates, and the probability that an order holds.

Plain result objects that every layer may hand on (an estimator gives its own interval as one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

WRITTEN_DECIMALS = 9  # an accuracy as output files hold it
WRITTEN_POINT_DECIMALS = 6  # points (100 times a difference of two accuracies, each within 5e-10 of its fraction)


def written(values, *, points: bool = False) -> np.ndarray:
    """Accuracies (or ``points``: 100 times a difference of two) as output files hold them, rounded to 9 decimals
    (points to 6): an estimate lies on the grid of 2**-30 (mdad.exact.on_estimate_grid), within 5e-10 of the fraction it
    stands for, so 1/10 is written 0.1 and not 0.09999999962747097, and a gap of 10 points 10.0."""
    return np.round(np.asarray(values, dtype=np.float64), WRITTEN_POINT_DECIMALS if points else WRITTEN_DECIMALS)


@dataclass(frozen=True, eq=False)
class EstimateIntervals:
    """Each model's estimated full-benchmark accuracy with an interval (fractions), like scipy's ConfidenceInterval.

    ``calibration`` says in words where the interval comes from and ``kind`` in one word:
    "exact" (random designs, from the model's own answers alone), "population" (random designs, empirical
    Bayes over models like the sources), "calibrated" (held-out assessment), "estimator" (the
    estimator's own, e.g. AIPW's) or "none" (``low`` and ``high`` NaN: the micro-benchmark
    carries nothing to compute them from).
    """

    models: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    calibration: str
    kind: str = "none"
    mark: np.ndarray | None = None  # per model: why its interval may not hold ("" where nothing is known against it)

    @property
    def available(self) -> bool:
        """Whether every model got a finite interval (False when the micro-benchmark carries nothing to compute them from)."""
        return bool(np.isfinite(self.low).all() and np.isfinite(self.high).all())

    def to_frame(self) -> pd.DataFrame:
        """One row per model: model, estimate, low, high, level, and mark: why the interval may not hold, what the
        table's '!' says ("" where nothing is known against it), so that a script sees it."""
        frame = pd.DataFrame(
            {"model": self.models, "estimate": written(self.estimate), "low": written(self.low), "high": written(self.high), "level": self.level}
        )
        frame["mark"] = self.mark if self.mark is not None else ""
        return frame


@dataclass(frozen=True, eq=False)
class OrderProbabilities:
    """For pairs of models: estimated gap (points, first minus second) and P(the full benchmark keeps that order).

    ``tied``: per pair, whether the full benchmark is known to tie the two (every item of the pool drawn, as
    many right each); such a pair has no order to keep, so its probability is NaN. None: no pair is known tied."""

    first: np.ndarray
    second: np.ndarray
    gap: np.ndarray
    probability: np.ndarray
    calibration: str
    tied: np.ndarray | None = None
    mark: np.ndarray | None = None  # per pair: why its probability may not hold ("" where nothing is known against it)

    @property
    def ties(self) -> np.ndarray:
        """Whether each pair is tied on the full benchmark (all False when none is known tied)."""
        return np.zeros(len(self.gap), dtype=bool) if self.tied is None else self.tied

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: first, second, gap (points), probability (NaN for a tie), tied when some pair is, and mark:
        why the probability may not hold, what the table's '!' says ("" where nothing is known against it)."""
        frame = pd.DataFrame({"first": self.first, "second": self.second, "gap": written(self.gap, points=True), "probability": self.probability})
        if self.ties.any():
            frame["tied"] = self.ties
        frame["mark"] = self.mark if self.mark is not None else ""
        return frame


@dataclass(frozen=True, eq=False)
class BestProbability:
    """For models estimated together: P(the estimated best, the first of the ranking by estimate, is the true best of
    them on the full benchmark, strictly above every other).

    ``row``: the estimated best's row; ``probability`` NaN when the micro-benchmark carries nothing to compute it
    from (``calibration`` then says why, else where the probability comes from); ``mark``: why it may not hold
    for this model (the estimated best's mark, mdad.micro.trust.order_marks; "" where nothing is known against it)."""

    models: np.ndarray
    row: int
    probability: float
    calibration: str
    mark: str = ""

    @property
    def model(self) -> str:
        """The estimated best model's name."""
        return str(self.models[self.row])

    @property
    def available(self) -> bool:
        """Whether the probability could be computed."""
        return bool(np.isfinite(self.probability))

    def column(self) -> np.ndarray:
        """One value per model: the probability on the estimated best's row, NaN elsewhere (the CSV's ``p_best``)."""
        out = np.full(len(self.models), np.nan)
        out[self.row] = self.probability
        return out
