"""The probability that an order seen on a micro-benchmark holds on the full benchmark (docs/intervals.md).

Random designs (exact, from the pair's own answers). Two models differ on the full benchmark
only through the items exactly one of them gets right: m pool items, M+ of them right for
the first model only. The full benchmark ranks the first above the second when M+ > m/2.
Of the d discordant items among the chosen ones, the first model got K+ right; given d they
are a uniform draw from the m, so K+ is hypergeometric (m, M+, d). The probability that
the order holds is the mass above m/2 of the mid-p confidence distribution of M+
(mdad.intervals.finite), i.e. one minus the mid-p value of the exact test of "the first
model is not ahead". m is estimated as d N / k (bounded by what the draw allows); with
strata, each stratum has its own m_s and M+_s and the order holds when the sum of M+_s
exceeds half the sum of m_s (the confidence distributions are convolved). A stratum without
chosen items is left out (taken as balanced).

Other methods (calibrated). From the held-out runs of ``mdad.assess``: for every pair of
calibration targets of a run, the estimated gap |g| (points) and whether the full benchmark
ordered the pair as the estimates did. A logistic fit of "order held" on |g| (monotone in the
gap) gives P(order holds | g) for a new pair; two numbers, stored with the micro-benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.intervals.finite import _convolve_rows, hypergeometric_table
from mdad.metrics.exact import unique_rows
from mdad.metrics.pairwise import agreement_from_differences, pair_differences
from mdad.metrics.robust import logistic_coefficients


def discordant_pool_estimate(sizes: np.ndarray, drawn: np.ndarray, discordant: np.ndarray) -> np.ndarray:
    """Estimated discordant pool items per stratum, d N / k, kept within what the draw allows (0 where k = 0)."""
    sizes, drawn, d = (np.asarray(a, dtype=np.int64) for a in np.broadcast_arrays(sizes, drawn, discordant))
    with np.errstate(divide="ignore", invalid="ignore"):
        guess = np.where(drawn > 0, np.rint(d * sizes / np.maximum(drawn, 1)), 0).astype(np.int64)
    return np.where(drawn > 0, np.clip(guess, d, sizes - (drawn - d)), 0)


def split_distribution(m: int, d: int, plus: int) -> np.ndarray:
    """P(M+ = j | K+ = plus) for j = 0..m (one row): uniform prior over j, hypergeometric likelihood."""
    weights = hypergeometric_table(m, d)[:, plus]
    return (weights / weights.sum())[None, :]


def exact_order_probability(sizes, drawn, plus, minus) -> np.ndarray:
    """P(the full benchmark ranks the first model above the second), one per pair.

    ``sizes`` and ``drawn`` (strata,): pool and chosen items per stratum; ``plus`` and
    ``minus`` (pairs x strata, or pairs for one stratum): chosen items only the first /
    only the second model got right.
    """
    sizes = np.atleast_1d(np.asarray(sizes, dtype=np.int64))
    drawn = np.atleast_1d(np.asarray(drawn, dtype=np.int64))
    plus = np.asarray(plus, dtype=np.int64).reshape(-1, len(sizes))
    minus = np.asarray(minus, dtype=np.int64).reshape(-1, len(sizes))
    if plus.shape != minus.shape or np.any(plus < 0) or np.any(minus < 0) or np.any(plus + minus > drawn):
        raise MdadError("Discordant counts must be non-negative, one per pair and stratum, and at most the items drawn.")
    d = plus + minus
    m = discordant_pool_estimate(sizes[None, :], drawn[None, :], d)
    keys, inverse = unique_rows(*m.T, *d.T, *plus.T)
    S = len(sizes)
    out = np.empty(len(keys))
    for row, key in enumerate(keys):
        m_s, d_s, p_s = key[:S], key[S:2 * S], key[2 * S:]
        total = _convolve_rows([split_distribution(int(mm), int(dd), int(pp)) for mm, dd, pp in zip(m_s, d_s, p_s)])[0]
        half = m_s.sum() / 2.0
        out[row] = total[np.arange(len(total)) > half].sum()
    return np.clip(out[inverse], 0.0, 1.0)


@dataclass(frozen=True)
class OrderCalibration:
    """P(order holds | estimated gap g points) = 1 / (1 + exp(-(intercept + slope g)))."""

    intercept: float
    slope: float
    pairs: int  # calibration pairs it was fitted on

    @classmethod
    def fit(cls, estimates: np.ndarray, truths: np.ndarray) -> OrderCalibration:
        """Fit on every pair of targets within each held-out run (runs x targets arrays, accuracies as fractions)."""
        est = np.atleast_2d(np.asarray(estimates, dtype=np.float64))
        tru = np.atleast_2d(np.asarray(truths, dtype=np.float64))
        if est.shape != tru.shape or est.shape[1] < 2:
            raise MdadError("Order calibration needs runs x targets estimates and truths of one shape, 2 targets or more.")
        de, dt = pair_differences(est).ravel(), pair_differences(tru).ravel()
        keep = (de != 0) & np.isfinite(de) & np.isfinite(dt)
        if not keep.any():
            raise MdadError("Order calibration needs at least one pair whose estimates differ.")
        held = agreement_from_differences(de[keep], dt[keep]).astype(np.float64)
        gap = 100.0 * np.abs(de[keep])
        intercept, slope = logistic_coefficients(gap, held, np.ones_like(gap))[0]
        return cls(intercept=float(intercept), slope=float(slope), pairs=int(keep.sum()))

    def probability(self, gap_points) -> np.ndarray:
        """P(order holds) for estimated gaps (points; the sign is ignored)."""
        g = np.abs(np.asarray(gap_points, dtype=np.float64))
        return 1.0 / (1.0 + np.exp(-(self.intercept + self.slope * g)))

    def gap_for(self, probability: float) -> float:
        """The estimated gap (points) from which an order holds with ``probability`` (inf if never)."""
        if self.slope <= 0:
            return float("inf")
        logit = np.log(probability / (1.0 - probability))
        return float(max((logit - self.intercept) / self.slope, 0.0))

    def to_json(self) -> dict:
        return {"intercept": self.intercept, "slope_per_point": self.slope, "pairs": self.pairs}

    @classmethod
    def from_json(cls, data: dict) -> OrderCalibration:
        try:
            return cls(intercept=float(data["intercept"]), slope=float(data["slope_per_point"]), pairs=int(data["pairs"]))
        except (KeyError, TypeError, ValueError):
            raise MdadError("The micro-benchmark's order calibration is malformed (intercept, slope_per_point, pairs).") from None
