"""Split-conformal intervals from held-out residuals, valid within each fifth of accuracies
(docs/intervals.md#conformal-intervals).

Methods that learn from source models have no sampling law to invert, but ``mdad.assess``
measures them: in each held-out run the targets' estimates are compared with their
full-benchmark accuracy. The residuals truth - estimate of those calibration targets say how
far a new model's estimate can be off. They depend on the true accuracy: a learned estimate is
pulled towards the sources' typical accuracy, so the best models' residuals are mostly positive
and the weakest models' mostly negative. The calibration targets are therefore cut into up to
``ACCURACY_BINS`` bins of their *true* accuracy, of equal counts (at least ``MIN_PER_ACCURACY_BIN``
each). Within a bin the residual still drifts with the accuracy (by one minus the slope of the
estimate on the accuracy), and the hull of what neighbouring bins allow then covers the middle
bins almost always; so each target's score is taken about the least-squares line of the
estimates on the true accuracy, s = a + b t - estimate (``trend`` = (a, b); b > 0), and the
interval is the set of accuracies t that the scores of t's own bin allow (label-conditional, or
Mondrian, conformal prediction: a test inverted),

    {t : s_(lo)^k(t) <= a + b t - estimate <= s_(hi)^k(t)},  lo = floor((n_k + 1) alpha/2), hi = ceil((n_k + 1)(1 - alpha/2)),

with s_(i)^k the i-th smallest of bin k's n_k scores (beyond the sample: unbounded), its hull
taken, extended to hold the estimate, and clipped to [0, 1]. For a line fixed in advance and a
new model exchangeable with the calibration targets whose accuracy falls in bin k this covers at
least 1 - alpha, for every bin; the line is fitted on the same targets (two numbers from
hundreds), so that is an approximation, measured (docs/intervals.md#conformal-intervals). The
hull and the extension only widen it. Files of the previous mdad have no trend: (0, 1), the
plain residual truth - estimate, as before.

Files of an older mdad hold residuals binned on the *estimate* (``binned_on="estimate"``);
they are read and give the older interval [estimate + r_(lo), estimate + r_(hi)] of the
estimate's bin, which covers at least 1 - alpha on average over models, not in each fifth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mdad.defaults import DEFAULT_LEVEL
from mdad.errors import MdadError
from mdad.intervals.finite import check_level

MAX_BINS = 4  # bins of the estimate (the order calibration's spreads; files of an older mdad)
MIN_PER_BIN = 200
ACCURACY_BINS = 5  # bins of the true accuracy: the promise holds in each fifth
MIN_PER_ACCURACY_BIN = 40  # the 95% interval's ranks stay inside the sample from 39 residuals on
MIN_TREND_SLOPE = 0.05  # a flatter line of the estimates on the accuracy: scores about the identity line instead
CEILING_SHARE = 0.2  # the ceiling of a method's estimates: the share of the calibration targets' estimates at or above it (tuned: docs/intervals.md)


def estimate_bin_edges(estimates: np.ndarray) -> np.ndarray:
    """Interior edges of up to ``MAX_BINS`` bins of equal counts of the estimates, ``MIN_PER_BIN`` each at least
    (fewer where many estimates are equal, e.g. at 0). A value on an edge belongs to the bin above it."""
    return equal_count_edges(estimates, MAX_BINS, MIN_PER_BIN)


def equal_count_edges(values: np.ndarray, bins: int, min_per_bin: int) -> np.ndarray:
    """Interior edges of up to ``bins`` bins of equal counts of ``values``, ``min_per_bin`` each at least."""
    values = np.asarray(values, dtype=np.float64).ravel()
    bins = int(np.clip(len(values) // min_per_bin, 1, bins))
    return np.unique(np.quantile(values, np.arange(1, bins) / bins)) if bins > 1 else np.zeros(0)


def rank_bounds(residuals: np.ndarray, alpha: float) -> tuple[float, float]:
    """The conformal quantiles of sorted residuals at two-sided level 1 - 2 alpha: the floor((n + 1) alpha)-th and
    ceil((n + 1)(1 - alpha))-th smallest, -inf / inf where the rank falls outside the sample."""
    n = len(residuals)
    lo_rank = math.floor((n + 1) * alpha + 1e-9)  # tolerance: (1 - 0.9) / 2 * 20 is 0.999...
    hi_rank = math.ceil((n + 1) * (1.0 - alpha) - 1e-9)
    low = float(residuals[lo_rank - 1]) if n and lo_rank >= 1 else -math.inf
    high = float(residuals[hi_rank - 1]) if n and hi_rank <= n else math.inf
    return low, high


def estimate_trend(estimates: np.ndarray, truths: np.ndarray) -> tuple[float, float]:
    """Intercept and slope of the least-squares line of the estimates on the true accuracies, (0, 1) (no trend:
    the score is the residual) when the slope is not positive or the accuracies do not vary. Sums of elementwise
    products, not a BLAS dot product, so that the line does not depend on the kernel."""
    t_mean, e_mean = float(np.mean(truths)), float(np.mean(estimates))
    spread = float(np.sum((truths - t_mean) ** 2))
    slope = float(np.sum((truths - t_mean) * (estimates - e_mean))) / spread if spread > 0 else 0.0
    if not slope > MIN_TREND_SLOPE:
        return 0.0, 1.0
    return e_mean - slope * t_mean, slope


@dataclass(frozen=True, eq=False)
class ConformalCalibration:
    """Held-out scores grouped by bins of the true accuracy (or, in older files, of the estimate).

    A calibration target's score is ``intercept + slope * truth - estimate``: how far its estimate lies below the
    line of the estimates on the true accuracy (``trend``; (0, 1), the plain residual truth - estimate, in files
    of an older mdad)."""

    edges: np.ndarray  # interior bin edges (bins - 1)
    residuals: tuple[np.ndarray, ...]  # sorted scores per bin
    binned_on: str = "accuracy"  # "accuracy": the targets' true accuracy; "estimate": their estimate (older files)
    trend: tuple[float, float] = (0.0, 1.0)  # intercept and slope of the estimates' line on the true accuracy
    ceiling: float = math.nan  # the calibration targets' estimates' top CEILING_SHARE starts here (NaN: a file of an older mdad)

    @classmethod
    def fit(
        cls, estimates: np.ndarray, truths: np.ndarray, *, bins: int = ACCURACY_BINS, min_per_bin: int = MIN_PER_ACCURACY_BIN, trend: bool = True
    ) -> ConformalCalibration:
        """Calibrate from calibration targets' estimates and full-benchmark accuracies (any matching shape), in up to
        ``bins`` bins of equal counts of the accuracy, ``min_per_bin`` scores each at least; ``trend=False``: scores
        about the identity line (the plain residuals, as an older mdad did)."""
        est = np.asarray(estimates, dtype=np.float64).ravel()
        tru = np.asarray(truths, dtype=np.float64).ravel()
        if est.shape != tru.shape or not len(est):
            raise MdadError("Calibration needs estimates and true accuracies of the same, non-empty shape.")
        keep = np.isfinite(est) & np.isfinite(tru)
        est, tru = est[keep], tru[keep]
        if not len(est):
            raise MdadError("Calibration needs at least one finite estimate with its true accuracy.")
        intercept, slope = estimate_trend(est, tru) if trend else (0.0, 1.0)
        edges = equal_count_edges(tru, bins, min_per_bin)
        which = np.searchsorted(edges, tru, side="right")
        scores = intercept + slope * tru - est
        residuals = tuple(np.sort(scores[which == b]) for b in range(len(edges) + 1))
        ceiling = float(np.quantile(est, 1.0 - CEILING_SHARE))
        return cls(edges=edges, residuals=residuals, trend=(intercept, slope), ceiling=ceiling)

    @property
    def size(self) -> int:
        """How many held-out residuals the calibration holds, over all its bins."""
        return sum(len(r) for r in self.residuals)

    def bounds(self, estimates, *, level: float = DEFAULT_LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of the interval around each estimate (accuracies in [0, 1]); each interval
        holds its estimate (clipped to [0, 1])."""
        alpha = (1.0 - check_level(level)) / 2.0
        est = np.asarray(estimates, dtype=np.float64)
        if self.binned_on == "estimate":
            low, high = self._estimate_binned(est, alpha)
        else:
            intercept, slope = self.trend
            low, high = np.full(est.shape, np.inf), np.full(est.shape, -np.inf)
            ends = np.concatenate([[0.0], self.edges, [1.0]])  # accuracies lie in [0, 1]
            ranks = [rank_bounds(res, alpha) for res in self.residuals]
            # t is allowed by bin b when r_low <= intercept + slope t - estimate <= r_high (slope > 0)
            spans = [((est + r_low - intercept) / slope, (est + r_high - intercept) / slope) for r_low, r_high in ranks]
            for b, (span_low, span_high) in enumerate(spans):
                first, last = np.maximum(ends[b], span_low), np.minimum(ends[b + 1], span_high)
                allowed = first <= last  # accuracies of bin b that its scores allow
                low = np.where(allowed, np.minimum(low, first), low)
                high = np.where(allowed, np.maximum(high, last), high)
            empty = low > high  # no bin allows any accuracy: every bin's scores around the estimate instead
            low = np.where(empty, np.min([s for s, _ in spans], axis=0), low)
            high = np.where(empty, np.max([s for _, s in spans], axis=0), high)
        inside = np.clip(est, 0.0, 1.0)
        return np.clip(np.minimum(low, inside), 0.0, 1.0), np.clip(np.maximum(high, inside), 0.0, 1.0)

    def _estimate_binned(self, est: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """The interval of files of an older mdad: the residuals of the estimate's own bin around the estimate."""
        which = np.searchsorted(self.edges, est, side="right")
        low, high = np.full(est.shape, -np.inf), np.full(est.shape, np.inf)
        for b, res in enumerate(self.residuals):
            r_low, r_high = rank_bounds(res, alpha)
            low[which == b], high[which == b] = est[which == b] + r_low, est[which == b] + r_high
        return low, high

    def describe(self) -> str:
        """Where the intervals come from, in words."""
        if self.binned_on == "accuracy":
            if self.trend == (0.0, 1.0):
                bins = len(self.residuals)
                return f"split-conformal: {self.size} held-out residuals in {bins} bins of the true accuracy (the level holds within each)"
            return (
                f"split-conformal: {self.size} held-out scores about the estimates' line on the true accuracy, in {len(self.residuals)} "
                "bins of it (the level holds within each, for the line as fitted: measured)"
            )
        return (
            f"split-conformal: {self.size} held-out residuals in {len(self.residuals)} bins of the estimate "
            "(a file of an older mdad: the level holds on average over models, not for the best or the weakest; select again)"
        )

    def to_json(self) -> dict:
        """The calibration as JSON-ready lists (bin edges, each bin's scores, the trend and, when known, the ceiling of
        the estimates), as micro.json stores it."""
        data = {
            "binned_on": self.binned_on,
            "edges": self.edges.tolist(),
            "residuals": [r.tolist() for r in self.residuals],
            "trend": list(self.trend),
        }
        if math.isfinite(self.ceiling):
            data["ceiling"] = self.ceiling
        return data

    @classmethod
    def from_json(cls, data: dict) -> ConformalCalibration:
        """Read :meth:`to_json`'s output (without ``binned_on``: an older file, binned on the estimate; without
        ``trend``: plain residuals); a malformed one is one error sentence."""
        try:
            edges = np.asarray(data["edges"], dtype=np.float64)
            residuals = tuple(np.sort(np.asarray(r, dtype=np.float64)) for r in data["residuals"])
            binned_on = data.get("binned_on", "estimate")
            intercept, slope = (float(v) for v in data.get("trend", (0.0, 1.0)))
            ceiling = float(data.get("ceiling", math.nan))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise MdadError("The micro-benchmark's interval calibration is malformed (edges and residuals per bin).") from None
        if not (math.isfinite(intercept) and math.isfinite(slope) and slope > 0):
            raise MdadError("The micro-benchmark's interval calibration has a trend that is not a finite line of positive slope.")
        if len(residuals) != len(edges) + 1:
            raise MdadError("The micro-benchmark's interval calibration needs one residual list per bin.")
        if binned_on not in ("accuracy", "estimate"):
            raise MdadError(f"The micro-benchmark's interval calibration is binned on {binned_on!r}; expected 'accuracy' or 'estimate'.")
        if math.isinf(ceiling):
            raise MdadError("The micro-benchmark's interval calibration has a ceiling of the estimates that is not a finite number.")
        return cls(edges=edges, residuals=residuals, binned_on=binned_on, trend=(intercept, slope), ceiling=ceiling)
