"""The probability that an order seen on a micro-benchmark holds on the full benchmark (docs/intervals.md).

Random designs (from the pair's own answers; docs/intervals.md#exact-order-probability). Two
models differ on the full benchmark only through the m pool items exactly one of them gets
right, M+ of them the first model's; the full benchmark ranks the first above the second when
M+ > m/2. Of the d such items among the chosen ones the first got K+; given d they are a
uniform draw of the m, so K+ is hypergeometric (m, M+, d). m is estimated as d N / k per
subtask (bounded by what the draw allows, so it is d once the whole pool is drawn), and the
subtasks' counts are pooled. The probability that the order holds is the posterior mass of
M+ > m/2 under a prior on the share pi = M+/m: the distribution of that share over the pairs of
models the micro-benchmark was chosen from (:class:`PairPrior`, stored with it), or uniform.
Leaderboards hold many close pairs (pi near 1/2); a uniform prior then overstates how sure an
order is, the leaderboard's own distribution does not.

Other methods (calibrated; docs/intervals.md#calibrated-order-probability). From the held-out
runs of ``mdad.assess``: for every pair of calibration targets of a run, the two estimates and
whether the full benchmark ordered the pair as the estimates did. How far apart two estimates
must be depends on where they sit: estimates are off by more mid-range than near 0 or 1. So the
gap is measured in units of the held-out residual spread s where the estimates lie (s: the
residuals' standard deviation in the conformal intervals' bins of the estimate; for two
estimates in one bin z = |g| / (sqrt(2) s), across bins the spread is integrated along the
way), and a logistic fit of "order held" on z (increasing in the gap at any fixed other
estimate) gives P(order holds) for a new pair. Files of an older mdad hold a fit on |g| alone, which still
loads and works.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from mdad.errors import MdadError
from mdad.intervals.conformal import estimate_bin_edges
from mdad.intervals.finite import hypergeometric_table
from mdad.metrics.exact import unique_rows
from mdad.metrics.pairwise import agreement_from_differences
from mdad.metrics.robust import logistic_coefficients

PRIOR_BINS = 50
PRIOR_FLOOR = 1e-3  # share of the prior spread uniformly, so that no share is ruled out beforehand


@dataclass(frozen=True, eq=False)
class PairPrior:
    """Distribution of pi = (items only model A gets right) / (items exactly one of A, B gets right) over pairs.

    Symmetric (each pair counts in both orders), as a histogram of ``PRIOR_BINS`` equal bins on [0, 1].
    """

    density: np.ndarray  # probability of each bin

    @classmethod
    def uniform(cls) -> PairPrior:
        return cls(np.full(PRIOR_BINS, 1.0 / PRIOR_BINS))

    @classmethod
    def from_scores(cls, scores: np.ndarray) -> PairPrior:
        """The histogram over every pair of models (rows) of complete 0/1 ``scores``."""
        x = np.asarray(scores, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] < 2 or np.isnan(x).any() or not np.isin(x, (0.0, 1.0)).all():
            raise MdadError("A pair prior needs complete 0/1 scores of at least 2 models.")
        only = x @ (1.0 - x).T  # only[a, b]: items a gets right and b does not
        i, j = np.triu_indices(x.shape[0], k=1)
        plus, minus = only[i, j], only[j, i]
        m = plus + minus
        keep = m > 0
        shares = np.concatenate([plus[keep] / m[keep], minus[keep] / m[keep]])  # both orders of each pair
        counts = np.histogram(shares, bins=PRIOR_BINS, range=(0.0, 1.0))[0]
        density = counts / counts.sum() if counts.sum() else np.full(PRIOR_BINS, 1.0 / PRIOR_BINS)
        return cls(density)

    def weights(self, m: int) -> np.ndarray:
        """Prior probability of M+ = j for j = 0..m."""
        share = np.arange(m + 1) / max(m, 1)
        bins = np.minimum((share * len(self.density)).astype(np.int64), len(self.density) - 1)
        w = (1.0 - PRIOR_FLOOR) * self.density[bins] + PRIOR_FLOOR / len(self.density)
        return w / w.sum()

    def to_json(self) -> dict:
        return {"bins": len(self.density), "density": self.density.tolist()}

    @classmethod
    def from_json(cls, data: dict) -> PairPrior:
        try:
            density = np.asarray(data["density"], dtype=np.float64)
        except (KeyError, TypeError, ValueError):
            raise MdadError("The micro-benchmark's pair prior is malformed (a list 'density').") from None
        if density.ndim != 1 or not len(density) or np.any(density < 0) or not density.sum() > 0:
            raise MdadError("The micro-benchmark's pair prior must be a non-empty list of non-negative numbers.")
        return cls(density / density.sum())


def discordant_pool_estimate(sizes: np.ndarray, drawn: np.ndarray, discordant: np.ndarray) -> np.ndarray:
    """Estimated discordant pool items per stratum, d N / k, kept within what the draw allows (0 where k = 0)."""
    sizes, drawn, d = (np.asarray(a, dtype=np.int64) for a in np.broadcast_arrays(sizes, drawn, discordant))
    with np.errstate(divide="ignore", invalid="ignore"):
        guess = np.where(drawn > 0, np.rint(d * sizes / np.maximum(drawn, 1)), 0).astype(np.int64)
    return np.where(drawn > 0, np.clip(guess, d, sizes - (drawn - d)), 0)


def split_posterior(m: int, d: int, plus: int, prior: PairPrior) -> np.ndarray:
    """P(M+ = j | K+ = plus) for j = 0..m: the prior's weights times the hypergeometric likelihood."""
    weights = prior.weights(m) * hypergeometric_table(m, d)[:, plus]
    return weights / weights.sum()


def exact_order_probability(sizes, drawn, plus, minus, *, prior: PairPrior | None = None) -> np.ndarray:
    """P(the full benchmark ranks the first model above the second), one per pair.

    ``sizes`` and ``drawn`` (strata,): pool and chosen items per stratum; ``plus`` and
    ``minus`` (pairs x strata, or pairs for one stratum): chosen items only the first /
    only the second model got right. ``prior``: the distribution of the share of discordant
    items the first model wins (default uniform).
    """
    prior = prior if prior is not None else PairPrior.uniform()
    sizes = np.atleast_1d(np.asarray(sizes, dtype=np.int64))
    drawn = np.atleast_1d(np.asarray(drawn, dtype=np.int64))
    plus = np.asarray(plus, dtype=np.int64).reshape(-1, len(sizes))
    minus = np.asarray(minus, dtype=np.int64).reshape(-1, len(sizes))
    if plus.shape != minus.shape or np.any(plus < 0) or np.any(minus < 0) or np.any(plus + minus > drawn):
        raise MdadError("Discordant counts must be non-negative, one per pair and stratum, and at most the items drawn.")
    m = discordant_pool_estimate(sizes[None, :], drawn[None, :], plus + minus).sum(axis=1)
    keys, inverse = unique_rows(m, (plus + minus).sum(axis=1), plus.sum(axis=1))
    out = np.empty(len(keys))
    for row, (mm, dd, pp) in enumerate(keys):
        posterior = split_posterior(int(mm), int(dd), int(pp), prior)
        out[row] = posterior[np.arange(mm + 1) > mm / 2.0].sum()
    return np.clip(out[inverse], 0.0, 1.0)


SPREAD_FLOOR = 0.05  # points: the smallest residual spread a bin is given (all-equal residuals would give 0)


@dataclass(frozen=True, eq=False)
class OrderCalibration:
    """P(order holds) = 1 / (1 + exp(-(intercept + slope z))) for a pair with estimates e1, e2.

    With ``spread`` (points, one per bin of the estimate cut at ``edges``): z = |T(e1) - T(e2)|,
    T(e) = integral from 0 to e of 100 / (sqrt(2) s(u)) du, the gap measured in units of the
    held-out residual spread s along the way (gap / (sqrt(2) s) when both lie in one bin; z grows
    with the gap at any fixed other estimate, so the probability does). Without (files of an
    older mdad): z = |e1 - e2| in points, whatever the level.
    """

    intercept: float
    slope: float  # per unit of z
    pairs: int  # calibration pairs it was fitted on
    edges: np.ndarray | None = None  # interior bin edges of the estimate (accuracies)
    spread: np.ndarray | None = None  # residual standard deviation per bin (points)

    @property
    def by_level(self) -> bool:
        """Whether the gap is scaled by the residual spread at the pair's estimates (else: the gap alone)."""
        return self.spread is not None

    @classmethod
    def fit(cls, estimates: np.ndarray, truths: np.ndarray, *, by_level: bool = True) -> OrderCalibration:
        """Fit on every pair of targets within each held-out run (runs x targets arrays, accuracies as fractions).

        ``by_level=False`` fits on the gap alone (as older mdad did; kept for comparison)."""
        est = np.atleast_2d(np.asarray(estimates, dtype=np.float64))
        tru = np.atleast_2d(np.asarray(truths, dtype=np.float64))
        if est.shape != tru.shape or est.shape[1] < 2:
            raise MdadError("Order calibration needs runs x targets estimates and truths of one shape, 2 targets or more.")
        edges = spread = None
        if by_level:
            ok = np.isfinite(est) & np.isfinite(tru)
            edges = estimate_bin_edges(est[ok])
            which = np.searchsorted(edges, est[ok], side="right")
            residuals = 100.0 * (tru[ok] - est[ok])
            spread = np.array([residuals[which == b].std() if (which == b).sum() > 1 else SPREAD_FLOOR
                               for b in range(len(edges) + 1)])
            spread = np.maximum(spread, SPREAD_FLOOR)
        i, j = np.triu_indices(est.shape[1], k=1)
        first, second = est[:, i].ravel(), est[:, j].ravel()
        de, dt = first - second, (tru[:, i] - tru[:, j]).ravel()
        keep = (de != 0) & np.isfinite(de) & np.isfinite(dt)
        if not keep.any():
            raise MdadError("Order calibration needs at least one pair whose estimates differ.")
        held = agreement_from_differences(de[keep], dt[keep]).astype(np.float64)
        fitted = cls(intercept=0.0, slope=0.0, pairs=int(keep.sum()), edges=edges, spread=spread)
        z = fitted.scaled_gap(first[keep], second[keep])
        intercept, slope = logistic_coefficients(z, held, np.ones_like(z))[0]
        return replace(fitted, intercept=float(intercept), slope=float(slope))

    @classmethod
    def fit_if_possible(cls, estimates: np.ndarray, truths: np.ndarray) -> OrderCalibration | None:
        """:meth:`fit`, or None when no pair's estimates differ (nothing to calibrate on)."""
        try:
            return cls.fit(estimates, truths)
        except MdadError:
            return None

    def spread_at(self, estimates) -> np.ndarray:
        """The held-out residual spread (points) at each estimate (accuracies); NaN for a gap-only fit."""
        est = np.asarray(estimates, dtype=np.float64)
        if self.spread is None:
            return np.full(est.shape, np.nan)
        return self.spread[np.searchsorted(self.edges, est, side="right")]

    def scale_position(self, estimates) -> np.ndarray:
        """T(e) = integral from 0 to e of 100 / (sqrt(2) s(u)) du: where an estimate (accuracy) lies on the scale
        of the residual spread (piecewise linear, increasing), so that T(e1) - T(e2) = gap / (sqrt(2) s)
        for two estimates in one bin of spread s (points)."""
        est = np.asarray(estimates, dtype=np.float64)
        lower, upper = np.r_[-np.inf, self.edges], np.r_[self.edges, np.inf]
        weight = 100.0 / (np.sqrt(2.0) * self.spread)
        return (np.clip(est[..., None], lower, upper) - np.clip(0.0, lower, upper)) @ weight

    def scaled_gap(self, first, second) -> np.ndarray:
        """z of pairs of estimates (accuracies): |T(e1) - T(e2)|, the gap in units of the residual spread
        between them (:meth:`scale_position`), or for a gap-only fit the gap in points."""
        e1, e2 = np.broadcast_arrays(np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64))
        if self.spread is None:
            return 100.0 * np.abs(e1 - e2)
        return np.abs(self.scale_position(e1) - self.scale_position(e2))

    def probability(self, first, second) -> np.ndarray:
        """P(the full benchmark keeps the order of pairs of estimates ``first``, ``second`` (accuracies))."""
        return 1.0 / (1.0 + np.exp(-(self.intercept + self.slope * self.scaled_gap(first, second))))

    def gap_for(self, probability: float, *, at: float) -> float:
        """The estimated gap (points) from which the order of two models estimated near accuracy ``at``
        holds with ``probability`` (inf if never)."""
        if self.slope <= 0:
            return float("inf")
        logit = np.log(probability / (1.0 - probability))
        z = max((logit - self.intercept) / self.slope, 0.0)
        return float(z if self.spread is None else z * np.sqrt(2.0) * self.spread_at(at))  # both in the bin of ``at``

    def describe(self) -> str:
        """One sentence: how the probability was calibrated."""
        if self.spread is None:
            return (f"calibrated: logistic fit of held-out orders on the estimated gap alone ({self.pairs} pairs; "
                    "saved by an older mdad, not adjusted to the models' level)")
        return (f"calibrated: logistic fit of held-out orders on the estimated gap in units of the residual spread where "
                f"the two estimates lie ({self.pairs} pairs, spread in {len(self.spread)} bins of the estimate)")

    def to_json(self) -> dict:
        if self.spread is None:
            return {"intercept": self.intercept, "slope_per_point": self.slope, "pairs": self.pairs}
        return {"intercept": self.intercept, "slope_per_spread": self.slope, "pairs": self.pairs,
                "edges": self.edges.tolist(), "spread_points": self.spread.tolist()}

    @classmethod
    def from_json(cls, data: dict) -> OrderCalibration:
        """Read :meth:`to_json`'s output, or the gap-only fit (intercept, slope_per_point) of an older mdad."""
        try:
            if "spread_points" not in data:
                return cls(intercept=float(data["intercept"]), slope=float(data["slope_per_point"]),
                           pairs=int(data["pairs"]))
            edges = np.asarray(data["edges"], dtype=np.float64).reshape(-1)
            spread = np.asarray(data["spread_points"], dtype=np.float64).reshape(-1)
            fit = cls(intercept=float(data["intercept"]), slope=float(data["slope_per_spread"]),
                      pairs=int(data["pairs"]), edges=edges, spread=spread)
        except (KeyError, TypeError, ValueError):
            raise MdadError("The micro-benchmark's order calibration is malformed (intercept, slope_per_spread, pairs, "
                            "edges, spread_points).") from None
        if len(spread) != len(edges) + 1 or not np.all(spread > 0) or np.any(np.diff(edges) <= 0):
            raise MdadError("The micro-benchmark's order calibration needs increasing edges and one positive spread "
                            "per bin.")
        return fit
