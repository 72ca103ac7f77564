"""Split-conformal intervals from held-out residuals (docs/intervals.md#conformal-intervals).

Methods that learn from source models have no sampling law to invert, but ``mdad.assess``
measures them: in each held-out run the targets' estimates are compared with their
full-benchmark accuracy. The residuals truth - estimate of those calibration targets say how
far a new model's estimate can be off. Residuals are larger mid-range than near 0 or 1, so
the calibration estimates are cut into up to ``MAX_BINS`` bins of equal counts (at least
``MIN_PER_BIN`` residuals each) and a new estimate uses the residuals of its bin (Mondrian
conformal prediction). At level 1 - alpha the interval is

    [estimate + r_(lo), estimate + r_(hi)],  lo = floor((n + 1) alpha/2), hi = ceil((n + 1)(1 - alpha/2)),

with r_(i) the i-th smallest of the bin's n residuals (beyond the sample the bound is the
end of [0, 1]); both ends are clipped to [0, 1]. For a new model exchangeable with the
calibration targets this covers at least 1 - alpha of the time (and at most 1 - alpha + 2/(n + 1)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mdad.defaults import DEFAULT_LEVEL
from mdad.errors import MdadError
from mdad.intervals.finite import check_level

MAX_BINS = 4
MIN_PER_BIN = 200


def estimate_bin_edges(estimates: np.ndarray) -> np.ndarray:
    """Interior edges of up to ``MAX_BINS`` bins of equal counts of the estimates, ``MIN_PER_BIN`` each at least
    (fewer where many estimates are equal, e.g. at 0). A value on an edge belongs to the bin above it."""
    est = np.asarray(estimates, dtype=np.float64).ravel()
    bins = int(np.clip(len(est) // MIN_PER_BIN, 1, MAX_BINS))
    return np.unique(np.quantile(est, np.arange(1, bins) / bins)) if bins > 1 else np.zeros(0)


@dataclass(frozen=True, eq=False)
class ConformalCalibration:
    """Held-out residuals (truth - estimate) grouped by bins of the estimate."""

    edges: np.ndarray  # interior bin edges of the estimate (bins - 1)
    residuals: tuple[np.ndarray, ...]  # sorted residuals per bin

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
        edges = estimate_bin_edges(est)
        which = np.searchsorted(edges, est, side="right")
        residuals = tuple(np.sort(tru[which == b] - est[which == b]) for b in range(len(edges) + 1))
        return cls(edges=edges, residuals=residuals)

    @property
    def size(self) -> int:
        """How many held-out residuals the calibration holds, over all its bins."""
        return sum(len(r) for r in self.residuals)

    def bounds(self, estimates, *, level: float = DEFAULT_LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of the interval around each estimate (accuracies in [0, 1])."""
        alpha = (1.0 - check_level(level)) / 2.0
        est = np.asarray(estimates, dtype=np.float64)
        which = np.searchsorted(self.edges, est, side="right")
        low = np.zeros_like(est)
        high = np.ones_like(est)
        for b, res in enumerate(self.residuals):
            n = len(res)
            here = which == b
            lo_rank = math.floor((n + 1) * alpha + 1e-9)  # tolerance: (1 - 0.9) / 2 * 20 is 0.999...
            hi_rank = math.ceil((n + 1) * (1.0 - alpha) - 1e-9)
            if n and lo_rank >= 1:
                low[here] = est[here] + res[lo_rank - 1]
            if n and hi_rank <= n:
                high[here] = est[here] + res[hi_rank - 1]
        return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)

    def to_json(self) -> dict:
        """The calibration as JSON-ready lists (bin edges and each bin's residuals), as micro.json stores it."""
        return {"edges": self.edges.tolist(), "residuals": [r.tolist() for r in self.residuals]}

    @classmethod
    def from_json(cls, data: dict) -> ConformalCalibration:
        """Read :meth:`to_json`'s output; a malformed one is one error sentence."""
        try:
            edges = np.asarray(data["edges"], dtype=np.float64)
            residuals = tuple(np.sort(np.asarray(r, dtype=np.float64)) for r in data["residuals"])
        except (KeyError, TypeError, ValueError):
            raise MdadError("The micro-benchmark's interval calibration is malformed (edges and residuals per bin).") from None
        if len(residuals) != len(edges) + 1:
            raise MdadError("The micro-benchmark's interval calibration needs one residual list per bin.")
        return cls(edges=edges, residuals=residuals)
