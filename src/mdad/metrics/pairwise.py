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

from mdad.defaults import (
    DEFAULT_BIN_WIDTH,
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE,
    DEFAULT_THRESHOLD,
    MIN_CONFIRMING_PAIRS,
    MIN_CROSSING_PAIRS,
    MIN_RUN_TARGETS,
    MIN_TARGET_PAIRS,
    percent,
)
from mdad.errors import MdadError
from mdad.wording import plural, points

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
            f"Estimates and true accuracies must be arrays of the same runs x targets shape, got {np.shape(estimates)} and {np.shape(truth)}."
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
    """Agreement rate per bin of |true difference| (bins with no pairs are left out).

    ``run_pairs`` and ``run_agreed`` (runs x bins, aligned with ``lower``) keep the counts of
    each run when the curve pools several runs: the bootstrap of MDAD resamples them.
    """

    lower: np.ndarray  # lower edge of each bin, in points
    pairs: np.ndarray  # number of pairs in the bin
    agreed: np.ndarray  # number of those the micro-benchmark ordered correctly
    bin_width: float
    run_pairs: np.ndarray | None = None
    run_agreed: np.ndarray | None = None

    @property
    def rate(self) -> np.ndarray:
        """Each bin's agreement rate: agreeing pairs over pairs (NaN for an empty bin)."""
        return self.agreed / self.pairs

    @property
    def runs(self) -> int:
        """Runs pooled in the curve (1 when their counts are not kept)."""
        return 1 if self.run_pairs is None else int(self.run_pairs.shape[0])

    def crossing(self, threshold: float = DEFAULT_THRESHOLD) -> float:
        """MDAD of the curve: lower edge of the first bin whose agreement reaches ``threshold`` (NaN: none)."""
        return first_crossing(self.rate, self.lower, threshold)

    def pairs_at(self, edge: float) -> int:
        """Pairs in the bin whose lower edge is ``edge`` (0 for NaN or a bin without pairs)."""
        if np.isnan(edge):
            return 0
        hit = np.flatnonzero(np.isclose(self.lower, edge))
        return int(self.pairs[hit[0]]) if len(hit) else 0

    def falls_back(self, edge: float, threshold: float = DEFAULT_THRESHOLD, min_pairs: int = MIN_CROSSING_PAIRS) -> bool:
        """Whether a bin beyond ``edge`` holding at least ``min_pairs`` pairs is below ``threshold`` again."""
        if np.isnan(edge):
            return False
        later = (self.lower > edge + 1e-9) & (self.pairs >= min_pairs)
        return bool((self.rate[later] < threshold - _THRESHOLD_TOLERANCE).any())

    def resample(self, rng: np.random.Generator, n_boot: int) -> tuple[np.ndarray, np.ndarray]:
        """(agreed, pairs) of ``n_boot`` bootstrap copies of the curve, each n_boot x bins.

        With several runs the runs are resampled with replacement: a run is one draw of the
        micro-benchmark, and all its pairs share that draw, so they err together. With one run
        (or when the runs' counts are not kept) each bin's pairs are resampled (a binomial draw).
        The choice is measured in benchmarks/bench_mdad_coverage.py (docs/protocol.md#mdad-intervals).
        """
        if self.run_pairs is not None and self.run_agreed is not None and self.runs >= 2:
            weights = rng.multinomial(self.runs, np.full(self.runs, 1.0 / self.runs), size=n_boot).astype(np.float64)
            return weights @ self.run_agreed, weights @ self.run_pairs
        pairs = np.broadcast_to(self.pairs.astype(np.float64), (n_boot, len(self.pairs)))
        agreed = rng.binomial(self.pairs[None, :], self.rate[None, :], size=(n_boot, len(self.pairs)))
        return agreed.astype(np.float64), pairs


def agreement_curve(agree: np.ndarray, diff_points: np.ndarray, *, bin_width: float = DEFAULT_BIN_WIDTH) -> AgreementCurve:
    """Bin pairs by |true difference| (points, floored to ``bin_width``) and count agreements per bin.

    Parameters
    ----------
    agree : array_like of bool
        Whether each pair was ordered correctly (any shape; runs x pairs keeps each run's counts).
    diff_points : array_like
        The pairs' true differences in points (same shape).
    bin_width : float
        Width of the bins in points.

    Returns
    -------
    AgreementCurve
        Only bins holding pairs; ``curve.crossing(threshold)`` is the MDAD without interval.
    """
    agree = np.asarray(agree)
    bins = bin_of(np.ravel(diff_points), bin_width)
    flat = np.ravel(agree)
    pairs = np.bincount(bins)
    agreed = np.bincount(bins, weights=flat, minlength=len(pairs)).astype(np.int64)
    keep = pairs > 0
    run_pairs = run_agreed = None
    if agree.ndim == 2 and agree.shape[0] > 1:
        n_bins, runs = len(pairs), agree.shape[0]
        index = np.repeat(np.arange(runs), agree.shape[1]) * n_bins + bins
        run_pairs = np.bincount(index, minlength=runs * n_bins).reshape(runs, n_bins)[:, keep].astype(np.float64)
        run_agreed = np.bincount(index, weights=flat, minlength=runs * n_bins).reshape(runs, n_bins)[:, keep]
    return AgreementCurve(
        lower=np.flatnonzero(keep) * bin_width,
        pairs=pairs[keep],
        agreed=agreed[keep],
        bin_width=bin_width,
        run_pairs=run_pairs,
        run_agreed=run_agreed,
    )


def count_pairs(n: int) -> str:
    """'1 pair', '1,799 pairs'."""
    return f"{n:,} pair" + ("" if n == 1 else "s")


def target_pairs(targets: int) -> int:
    """Distinct pairs of ``targets`` models."""
    return targets * (targets - 1) // 2


def estimability_note(targets: int, runs: int) -> str:
    """Why MDAD (and Kendall tau) cannot be estimated from ``targets`` models and ``runs`` runs, or "".

    Below MIN_TARGET_PAIRS distinct target pairs, or MIN_RUN_TARGETS runs x targets, a bin of
    0.5 points holds a handful of pairs and its agreement is a coin toss: any crossing is an
    accident of which pairs landed where (measured in benchmarks/bench_mdad_coverage.py).
    """
    n_pairs = target_pairs(targets)
    if n_pairs >= MIN_TARGET_PAIRS and runs * targets >= MIN_RUN_TARGETS:
        return ""
    need = next(t for t in range(2, 10_000) if target_pairs(t) >= MIN_TARGET_PAIRS)
    if n_pairs < MIN_TARGET_PAIRS:
        return (
            f"cannot be estimated from {plural(n_pairs, 'target pair')} ({targets} targets x {plural(runs, 'run')}); "
            f"it needs at least "
            f"{MIN_TARGET_PAIRS} target pairs ({need} target models): add models, or use `mdad plan` for the "
            "random designs, which answers exactly from the data"
        )
    return (
        f"cannot be estimated from {plural(runs, 'run')} x {targets} targets; it needs at least {MIN_RUN_TARGETS} runs x "
        "targets: add runs, or use `mdad plan` for the random designs, which answers exactly from the data"
    )


@dataclass(frozen=True)
class Mdad:
    """Minimum detectable ability difference (points) with its bootstrap interval.

    ``value`` is NaN and ``reached`` False when no bin reaches the threshold; ``high`` is
    NaN when no bin's lower confidence bound reaches it. ``pairs`` is the number of pairs in
    the crossing bin and ``falls_back`` whether a later bin with enough pairs is below the
    threshold again; ``note`` says why the number cannot be estimated at all (empty when it can).
    """

    value: float
    low: float
    high: float
    threshold: float
    pairs: int | None = 0  # None: not known (an assessment saved by older mdad)
    falls_back: bool = False
    note: str = ""

    @property
    def reached(self) -> bool:
        """Whether the agreement curve reached the threshold in some bin (MDAD is a number)."""
        return not np.isnan(self.value)

    @property
    def estimable(self) -> bool:
        """Whether there were enough target pairs and runs to estimate MDAD at all (else ``note`` says why)."""
        return not self.note

    @property
    def few_pairs(self) -> bool:
        """The crossing bin holds fewer than MIN_CROSSING_PAIRS pairs: one lucky bin can decide it."""
        return self.reached and self.pairs is not None and self.pairs < MIN_CROSSING_PAIRS

    def disagrees_with(self, other: Mdad) -> bool:
        """Whether ``other`` (the robust or exact MDAD) lies outside this interval and this value outside its."""
        if not self.reached or not other.reached:
            return self.reached != other.reached
        return not (_inside(other.value, self.low, self.high) or _inside(self.value, other.low, other.high))

    def warning(self, robust: Mdad | None = None) -> str:
        """One sentence saying why this first crossing is not to be trusted, or "" (see docs/protocol.md#mdad-trust)."""
        if not self.estimable:
            return f"MDAD and Kendall tau {self.note}."
        reasons = []
        if self.few_pairs and self.pairs is not None:
            reasons.append(f"its {self.value:g}-point bin holds {count_pairs(self.pairs)} (fewer than {MIN_CROSSING_PAIRS})")
        if robust is not None and self.disagrees_with(robust):
            reasons.append(f"the robust MDAD ({robust}) disagrees beyond both intervals")
        if not reasons:
            return ""
        tail = "; the curve also falls back below the threshold later" if self.falls_back else ""
        return f"the first crossing at {points(self.value)} is noise: {' and '.join(reasons)}{tail}."

    def phrase(self, robust: Mdad | None = None) -> str:
        """The MDAD as a clause with what stands behind it, e.g. '17* points [95% interval 14, 18.5]
        (77 pairs in its bin; robust MDAD 21 [18, 24])'; marked (*) when :meth:`warning` is not empty."""
        if not self.estimable:
            return f"MDAD {self.note}"
        beside = f"robust MDAD {robust}" if robust is not None else ""
        if not self.reached:
            return "MDAD not reached" + (f" ({beside})" if beside else "")
        mark = "*" if self.warning(robust) else ""
        high = "not reached" if np.isnan(self.high) else f"{self.high:g}"
        behind = "; ".join(([] if self.pairs is None else [f"{count_pairs(self.pairs)} in its bin"]) + ([beside] if beside else []))
        unit = "point" if self.value == 1 else "points"
        return f"MDAD {self.value:g}{mark} {unit} [{percent(DEFAULT_CONFIDENCE)} interval {self.low:g}, {high}]" + (f" ({behind})" if behind else "")

    def __str__(self) -> str:
        if not self.estimable:
            return "cannot be estimated"
        if not self.reached:
            return "not reached"
        if np.isnan(self.low) and np.isnan(self.high):  # no interval (an assessment saved by older mdad)
            return f"{self.value:g}"
        high = "not reached" if np.isnan(self.high) else f"{self.high:g}"
        return f"{self.value:g} [{self.low:g}, {high}]"


def _inside(value: float, low: float, high: float) -> bool:
    low = -np.inf if np.isnan(low) else low
    high = np.inf if np.isnan(high) else high
    return bool(low - 1e-9 <= value <= high + 1e-9)


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
    targets: int | None = None,
    band: bool = True,
) -> Mdad:
    """MDAD: the smallest bin whose agreement rate reaches ``threshold``, and its interval.

    The interval holds the (1 - confidence)/2 and (1 + confidence)/2 quantiles of the first
    crossing over ``n_boot`` bootstrap copies of the curve (:meth:`AgreementCurve.resample`:
    runs resampled when there are several); a copy that never reaches the threshold counts
    as infinitely large, so ``high`` is NaN when more than the upper tail do not reach it
    (docs/protocol.md#mdad-intervals).

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
    targets : int, optional
        Target models per run: with them the result says when MDAD cannot be estimated at all.

    Returns
    -------
    Mdad
        ``value`` NaN when not reached; ``high`` NaN when the upper tail of copies does not reach it.

    Examples
    --------
    >>> import numpy as np
    >>> curve = AgreementCurve(lower=np.array([0.0, 0.5, 1.0]), pairs=np.array([50, 50, 50]),
    ...                        agreed=np.array([30, 42, 49]), bin_width=0.5)
    >>> mdad_from_curve(curve).value
    0.5
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    agreed, pairs = curve.resample(rng, n_boot)
    rates = np.divide(agreed, pairs, out=np.full(agreed.shape, np.nan), where=pairs > 0)
    value = first_crossing(curve.rate, curve.lower, threshold)
    if band:
        alpha = (1.0 - confidence) / 2.0
        with np.errstate(all="ignore"):
            lo, hi = np.nanquantile(rates, [alpha, 1.0 - alpha], axis=0)
        confirms = curve.pairs >= MIN_CONFIRMING_PAIRS  # too few pairs cannot confirm a crossing (high end)
        low = first_crossing(hi, curve.lower, threshold)
        high = first_crossing(np.where(confirms, lo, 0.0), curve.lower, threshold)
    else:
        low, high = crossing_interval(first_crossing(np.nan_to_num(rates), curve.lower, threshold), confidence)
    return Mdad(
        value=value,
        low=low,
        high=high,
        threshold=threshold,
        pairs=curve.pairs_at(value),
        falls_back=curve.falls_back(value, threshold),
        note=estimability_note(targets, curve.runs) if targets is not None else "",
    )


def crossing_interval(crossings: np.ndarray, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Percentile interval of bootstrap crossings (NaN: not reached, counted as infinitely large)."""
    crossings = np.where(np.isnan(crossings), np.inf, crossings)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(crossings, [alpha, 1.0 - alpha], method="inverted_cdf")
    return (float(low) if np.isfinite(low) else float("nan"), float(high) if np.isfinite(high) else float("nan"))
