"""Pairwise agreement, agreement curves and MDAD (docs/protocol.md#meta-evaluation).

Accuracy differences are reported in points (percentage points); bins are floored to
``bin_width`` points (DEFAULT_BIN_WIDTH, 0.5). The binning (:func:`bin_of`) and the rule
"the first bin whose agreement reaches the threshold" (:func:`first_crossing`) live here
only; every MDAD of mdad (simulated, exact, fitted) uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD
from mdad.errors import MdadError

# Accuracies are ratios of counts; a tiny tolerance keeps e.g. 0.035 from flooring to 3.0.
_FLOOR_TOLERANCE = 1e-9
# Agreement rates are ratios or sums of probabilities; one that reaches the threshold up to
# rounding (0.7999999999999999) counts as reaching it.
_THRESHOLD_TOLERANCE = 1e-12


@lru_cache(maxsize=64)
def _upper_triangle(n: int) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(n, k=1)
    i.setflags(write=False)
    j.setflags(write=False)
    return i, j


def pair_differences(values: np.ndarray) -> np.ndarray:
    """values[..., i] - values[..., j] for every pair i < j of the last axis (upper triangle order)."""
    values = np.asarray(values)
    i, j = _upper_triangle(values.shape[-1])
    return values[..., i] - values[..., j]


def matching_arrays(estimates, truth) -> tuple[np.ndarray, np.ndarray]:
    """Estimates and truth as float runs x targets arrays, or an error when their shapes differ."""
    est = np.atleast_2d(np.asarray(estimates, dtype=np.float64))
    tru = np.atleast_2d(np.asarray(truth, dtype=np.float64))
    if est.shape != tru.shape or est.ndim != 2:
        raise MdadError(
            f"Estimates and true accuracies must be arrays of the same runs x targets shape, got "
            f"{np.shape(estimates)} and {np.shape(truth)}."
        )
    return est, tru


def pairwise_agreement(estimates: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every pair of targets in every run: does the micro-benchmark order it as the truth does?

    A pair agrees when the estimated difference has the sign of the true difference and is not
    zero: a tie in the estimate, or a true tie, counts as disagreement (docs/protocol.md#meta-evaluation).

    Parameters
    ----------
    estimates, truth : array_like
        Accuracies, runs x targets.

    Returns
    -------
    agree : numpy.ndarray
        runs x pairs booleans, pairs i < j in upper-triangle order.
    difference : numpy.ndarray
        runs x pairs true differences truth_i - truth_j in points.

    Examples
    --------
    >>> agree, diff = pairwise_agreement([[0.5, 0.6, 0.6]], [[0.4, 0.7, 0.5]])
    >>> agree.tolist(), diff.round(1).tolist()
    ([[True, True, False]], [[-30.0, -10.0, 20.0]])
    """
    est, tru = matching_arrays(estimates, truth)
    de, dt = pair_differences(est), pair_differences(tru)
    return agreement_from_differences(de, dt), dt * 100.0


def agreement_from_differences(de: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """Agreement of estimated and true pair differences (ties are disagreements)."""
    return (np.sign(de) == np.sign(dt)) & (de != 0)


def bin_of(diff_points: np.ndarray, bin_width: float = DEFAULT_BIN_WIDTH) -> np.ndarray:
    """Integer bin of each |difference|: floor(|d| / bin_width)."""
    return np.floor(np.abs(diff_points) / bin_width + _FLOOR_TOLERANCE).astype(np.int64)


@dataclass(frozen=True, eq=False)
class AgreementCurve:
    """Agreement rate per bin of |true difference| (bins with no pairs are left out)."""

    lower: np.ndarray  # lower edge of each bin, in points
    pairs: np.ndarray  # number of pairs in the bin
    agreed: np.ndarray  # number of those the micro-benchmark ordered correctly
    bin_width: float

    @property
    def rate(self) -> np.ndarray:
        return self.agreed / self.pairs

    def crossing(self, threshold: float = DEFAULT_THRESHOLD) -> float:
        """MDAD of the curve: lower edge of the first bin whose agreement reaches ``threshold`` (NaN: none)."""
        return first_crossing(self.rate, self.lower, threshold)


def agreement_curve(agree: np.ndarray, diff_points: np.ndarray, *, bin_width: float = DEFAULT_BIN_WIDTH) -> AgreementCurve:
    """Bin pairs by |true difference| (points, floored to ``bin_width``) and count agreements per bin.

    Parameters
    ----------
    agree : array_like of bool
        Whether each pair was ordered correctly (any shape).
    diff_points : array_like
        The pairs' true differences in points (same shape).
    bin_width : float
        Width of the bins in points.

    Returns
    -------
    AgreementCurve
        Only bins holding pairs; ``curve.crossing(threshold)`` is the MDAD without interval.
    """
    bins = bin_of(np.ravel(diff_points), bin_width)
    agree = np.ravel(agree)
    pairs = np.bincount(bins)
    agreed = np.bincount(bins, weights=agree, minlength=len(pairs)).astype(np.int64)
    keep = pairs > 0
    return AgreementCurve(
        lower=np.flatnonzero(keep) * bin_width, pairs=pairs[keep], agreed=agreed[keep], bin_width=bin_width
    )


@dataclass(frozen=True)
class Mdad:
    """Minimum detectable ability difference (points) with its bootstrap interval.

    ``value`` is NaN and ``reached`` False when no bin reaches the threshold; ``high`` is
    NaN when no bin's lower confidence bound reaches it.
    """

    value: float
    low: float
    high: float
    threshold: float

    @property
    def reached(self) -> bool:
        return not np.isnan(self.value)

    def __str__(self) -> str:
        if not self.reached:
            return "not reached"
        high = "not reached" if np.isnan(self.high) else f"{self.high:g}"
        return f"{self.value:g} [{self.low:g}, {high}]"


def first_crossing(values: np.ndarray, edges: np.ndarray, threshold: float = DEFAULT_THRESHOLD):
    """Lower edge of the first bin whose agreement reaches ``threshold`` (NaN: none does).

    ``values`` holds one agreement rate per bin (``edges`` their lower edges), or rows of
    them (e.g. bootstrap resamples): then one edge per row is returned.
    """
    values = np.asarray(values, dtype=np.float64)
    edges = np.asarray(edges, dtype=np.float64)
    hit = values >= threshold - _THRESHOLD_TOLERANCE
    if values.ndim == 1:
        hits = np.flatnonzero(hit)
        return float(edges[hits[0]]) if len(hits) else float("nan")
    first = hit.argmax(axis=-1)
    return np.where(hit.any(axis=-1), edges[first], np.nan)


def mdad_from_curve(
    curve: AgreementCurve,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Mdad:
    """MDAD: the smallest bin whose agreement rate reaches ``threshold``, and its interval.

    Each bin's rate is bootstrapped (resampling its pairs, i.e. a binomial draw); the first
    bin whose upper bound reaches the threshold is the interval's low end, the first whose
    lower bound does is its high end (docs/protocol.md#mdad).

    Parameters
    ----------
    curve : AgreementCurve
    threshold : float
        Agreement rate that defines MDAD.
    rng : numpy.random.Generator, optional
        Draws the bootstrap (default: a fixed seed).
    n_boot : int
        Bootstrap resamples.
    confidence : float
        Level of the interval.

    Returns
    -------
    Mdad
        ``value`` NaN when not reached; ``high`` NaN when no bin's lower bound reaches it.

    Examples
    --------
    >>> import numpy as np
    >>> curve = AgreementCurve(lower=np.array([0.0, 0.5, 1.0]), pairs=np.array([50, 50, 50]),
    ...                        agreed=np.array([30, 42, 49]), bin_width=0.5)
    >>> mdad_from_curve(curve).value
    0.5
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    rate = curve.rate
    boot = rng.binomial(curve.pairs[:, None], rate[:, None], size=(len(rate), n_boot)) / curve.pairs[:, None]
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha], axis=1)
    return Mdad(
        value=first_crossing(rate, curve.lower, threshold),
        low=first_crossing(hi, curve.lower, threshold),
        high=first_crossing(lo, curve.lower, threshold),
        threshold=threshold,
    )
