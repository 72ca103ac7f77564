"""Split-conformal intervals from held-out residuals, valid within each fifth of accuracies
(docs/intervals.md#conformal-intervals).

Methods that learn from source models have no sampling law to invert, but ``mdad.assess``
measures them: in each held-out run the targets' estimates are compared with their
full-benchmark accuracy. The residuals truth - estimate of those calibration targets say how
far a new model's estimate can be off. They depend on the true accuracy: a learned estimate is
pulled towards the sources' typical accuracy, so the best models' residuals are mostly positive
and the weakest models' mostly negative. The calibration targets are therefore cut into up to
``ACCURACY_BINS`` bins of their *true* accuracy, of equal counts (at least ``MIN_PER_BIN``
residuals each), and the interval is the set of accuracies t that the residuals of t's own bin
allow (label-conditional, or Mondrian, conformal prediction: a test inverted),

    {t : r_(lo)^b(t) <= t - estimate <= r_(hi)^b(t)},  lo = floor((n_b + 1) alpha/2), hi = ceil((n_b + 1)(1 - alpha/2)),

with r_(i)^b the i-th smallest of bin b's n_b residuals (beyond the sample: unbounded), its hull
taken, extended to hold the estimate, and clipped to [0, 1]. For a new model exchangeable with
the calibration targets whose accuracy falls in bin b this covers at least 1 - alpha, for every
bin: the promise holds in each fifth of accuracies, not only on average over them. The
hull and the extension only widen it.

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


@dataclass(frozen=True, eq=False)
class ConformalCalibration:
    """Held-out residuals (truth - estimate) grouped by bins of the true accuracy (or, in older files, of the estimate)."""

    edges: np.ndarray  # interior bin edges (bins - 1)
    residuals: tuple[np.ndarray, ...]  # sorted residuals per bin
    binned_on: str = "accuracy"  # "accuracy": the targets' true accuracy; "estimate": their estimate (older files)

    @classmethod
    def fit(cls, estimates: np.ndarray, truths: np.ndarray) -> ConformalCalibration:
        """Calibrate from calibration targets' estimates and full-benchmark accuracies (any matching shape)."""
        est = np.asarray(estimates, dtype=np.float64).ravel()
        tru = np.asarray(truths, dtype=np.float64).ravel()
        if est.shape != tru.shape or not len(est):
            raise MdadError("Calibration needs estimates and true accuracies of the same, non-empty shape.")
        keep = np.isfinite(est) & np.isfinite(tru)
        est, tru = est[keep], tru[keep]
        if not len(est):
            raise MdadError("Calibration needs at least one finite estimate with its true accuracy.")
        edges = equal_count_edges(tru, ACCURACY_BINS, MIN_PER_ACCURACY_BIN)
        which = np.searchsorted(edges, tru, side="right")
        residuals = tuple(np.sort(tru[which == b] - est[which == b]) for b in range(len(edges) + 1))
        return cls(edges=edges, residuals=residuals)

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
            low, high = np.full(est.shape, np.inf), np.full(est.shape, -np.inf)
            ends = np.concatenate([[0.0], self.edges, [1.0]])  # accuracies lie in [0, 1]
            ranks = [rank_bounds(res, alpha) for res in self.residuals]
            for b, (r_low, r_high) in enumerate(ranks):
                first, last = np.maximum(ends[b], est + r_low), np.minimum(ends[b + 1], est + r_high)
                allowed = first <= last  # accuracies of bin b that its residuals allow
                low = np.where(allowed, np.minimum(low, first), low)
                high = np.where(allowed, np.maximum(high, last), high)
            empty = low > high  # no bin allows any accuracy: every bin's residuals around the estimate instead
            low = np.where(empty, est + min(r for r, _ in ranks), low)
            high = np.where(empty, est + max(r for _, r in ranks), high)
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
            return f"split-conformal: {self.size} held-out residuals in {len(self.residuals)} bins of the true accuracy (the level holds within each)"
        return (
            f"split-conformal: {self.size} held-out residuals in {len(self.residuals)} bins of the estimate "
            "(a file of an older mdad: the level holds on average over models, not for the best or the weakest; select again)"
        )

    def to_json(self) -> dict:
        """The calibration as JSON-ready lists (bin edges and each bin's residuals), as micro.json stores it."""
        return {"binned_on": self.binned_on, "edges": self.edges.tolist(), "residuals": [r.tolist() for r in self.residuals]}

    @classmethod
    def from_json(cls, data: dict) -> ConformalCalibration:
        """Read :meth:`to_json`'s output (without ``binned_on``: an older file, binned on the estimate); a malformed
        one is one error sentence."""
        try:
            edges = np.asarray(data["edges"], dtype=np.float64)
            residuals = tuple(np.sort(np.asarray(r, dtype=np.float64)) for r in data["residuals"])
            binned_on = data.get("binned_on", "estimate")
        except (KeyError, TypeError, ValueError, AttributeError):
            raise MdadError("The micro-benchmark's interval calibration is malformed (edges and residuals per bin).") from None
        if len(residuals) != len(edges) + 1:
            raise MdadError("The micro-benchmark's interval calibration needs one residual list per bin.")
        if binned_on not in ("accuracy", "estimate"):
            raise MdadError(f"The micro-benchmark's interval calibration is binned on {binned_on!r}; expected 'accuracy' or 'estimate'.")
        return cls(edges=edges, residuals=residuals, binned_on=binned_on)
