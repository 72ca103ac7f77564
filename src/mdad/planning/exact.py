"""Exact answers for the random designs, from the data alone (``mdad.metrics.analytic``).

Every pair of models, k items drawn by the design from the items both answered, compared with
their accuracy on all those items: the smallest size that orders pairs D points apart, and the
MDAD of a given size. No simulation, so no Monte Carlo error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import hypergeom

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD, PLAN_SIZES, check_threshold
from mdad.errors import MdadError
from mdad.metrics import analytic
from mdad.metrics.pairwise import AgreementCurve, bin_of
from mdad.planning.bins import bin_label, bin_lower


@dataclass(frozen=True, eq=False)
class ExactSmallestSize:
    """The smallest size whose mean probability of ordering pairs in one bin correctly reaches the threshold.

    Attributes
    ----------
    smallest : int or None
        That size; None when not even the whole pool reaches the threshold.
    at_smallest, below : float
        Mean probability of the correct order at ``smallest`` and at one item fewer (with
        ``smallest`` None: both are the value with every item).
    lower : float
        Lower edge (points) of the bin of full-benchmark difference.
    pairs, pool : int
        Pairs of models in the bin; items of the smallest pool two of them share.
    sizes, agreement : ndarray
        Sizes around the answer and the mean probability at each (see :meth:`to_frame`).
    """

    method: str
    source: str
    threshold: float
    lower: float
    pairs: int
    pool: int
    smallest: int | None
    at_smallest: float
    below: float
    sizes: np.ndarray
    agreement: np.ndarray

    @property
    def label(self) -> str:
        return bin_label(self.lower)

    def to_frame(self) -> pd.DataFrame:
        """One row per size: the mean probability that pairs of the bin keep their order."""
        return pd.DataFrame({"items": self.sizes, "p_correct_order": self.agreement})


@dataclass(frozen=True, eq=False)
class ExactMdadAtSize:
    """MDAD of one size from the exact agreement curve over every pair of models (NaN: not reached)."""

    method: str
    source: str
    size: int
    threshold: float
    mdad: float
    curve: AgreementCurve

    @property
    def reached(self) -> bool:
        return not np.isnan(self.mdad)

    @property
    def pairs(self) -> int:
        """Pairs of models behind the curve."""
        return int(self.curve.pairs.sum())

    def to_frame(self) -> pd.DataFrame:
        """One row per bin of full-benchmark difference: its pairs and mean probability of the correct order."""
        return pd.DataFrame({"difference_low": self.curve.lower, "pairs": self.curve.pairs, "p_correct_order": self.curve.rate})


def check_pairs(matrix: ResponseMatrix) -> None:
    """Comparing needs at least two models."""
    if matrix.n_models < 2:
        raise MdadError(f"{matrix.source} holds a single model; comparing needs at least two.")


def pairs_in_bin(matrix: ResponseMatrix, detect: float) -> tuple[float, analytic.PairStats]:
    """The lower edge of ``detect``'s bin and every pair of models whose full-benchmark difference lies in it."""
    lower = bin_lower(detect)
    part = analytic.pairs_within(matrix, lambda stats: bin_of(stats.diff_points) == round(lower / DEFAULT_BIN_WIDTH))
    if not part.n_pairs:
        raise MdadError(f"No pair of models in {matrix.source} differs by {bin_label(lower)} points; choose another --detect.")
    return lower, part


def exact_agreement_at_size(
    matrix: ResponseMatrix, *, detect: float, size: int, design: str = "random", seed: int = 0, part: analytic.PairStats | None = None
) -> tuple[float, int, float]:
    """Mean probability that a ``size``-item ``design`` micro-benchmark orders pairs ``detect`` points apart
    correctly, exactly; returns (lower edge of the bin, pairs in it, that probability). ``part``: the
    bin's pairs (:func:`pairs_in_bin`) when already computed, saving a pass over every pair.

    Examples
    --------
    >>> import mdad
    >>> lower, pairs, p = exact_agreement_at_size(mdad.simulate(seed=0, n_models=40, n_items=300), detect=10, size=25)
    >>> lower, p >= 0.8
    (10.0, True)
    """
    analytic.check_design(design)
    check_pairs(matrix)
    lower, part = pairs_in_bin(matrix, detect) if part is None else (bin_lower(detect), part)
    pool = int(part.pool.min())
    if not 1 <= size <= pool:
        raise MdadError(f"Size {size} must lie between 1 and the smallest pool of a pair ({pool} items).")
    return lower, part.n_pairs, _mean_agreement(part, size, design, seed)


def _mean_agreement(stats: analytic.PairStats, k: int, design: str, seed: int) -> float:
    return float(analytic.agreement_probabilities(stats, k, design, seed=seed).mean())


SCAN_POOL = 64  # pools at most this small are scanned size by size (cheap; agreement can dip there)


def smallest_size(stats: analytic.PairStats, design: str, threshold: float, seed: int, start: int | None = None) -> tuple[int | None, float, float]:
    """The smallest k whose mean agreement over ``stats`` reaches the threshold, by bisection.

    k doubles until it reaches the threshold (the whole pool is evaluated only when needed), then
    bisection between the last size below and the first above finds a k that reaches it while
    k - 1 does not: O(log pool) evaluations instead of one per size, which matters on a
    leaderboard of thousands of models and tens of thousands of items. The mean agreement over
    the pairs of a bin rises with k on real pools; ties count as errors, so one pair on a tiny
    pool can dip (N = 20, n+ = 10, n- = 8: 0.717, 0.700, 0.816, 0.763, 1.0 at k = 15..19),
    and pools of at most SCAN_POOL items are therefore scanned size by size (docs/plan.md).
    ``start`` (e.g. uniform random's answer, for a stratified design) replaces the doubling from 1
    by galloping up or down from the guess: fewer evaluations when the guess is near.

    Returns (k or None when even the whole pool does not, agreement at k, agreement at k - 1).
    """
    pool = int(stats.pool.min())
    if pool <= SCAN_POOL:
        values = analytic.mean_agreement_by_size(stats, np.arange(1, pool + 1), design, seed)
        hits = np.flatnonzero(values >= threshold)
        if not len(hits):
            return None, float(values[-1]), float(values[-1])
        first = int(hits[0])
        return first + 1, float(values[first]), float(values[first - 1]) if first else 0.0
    lo, at_lo, hi = 0, 0.0, 1 if start is None else min(max(int(start), 1), pool)  # agreement(lo) < threshold (k = 0 orders nothing)
    step = hi if start is None else 1
    while (at_hi := _mean_agreement(stats, hi, design, seed)) < threshold:  # gallop up
        if hi == pool:
            return None, at_hi, at_hi
        lo, at_lo, hi = hi, at_hi, min(hi + step, pool)
        step *= 2
    if start is not None and lo == 0:  # gallop down from the guess until a size below the threshold
        step = 1
        while hi > lo + 1:
            below = max(hi - step, lo)
            if below == lo:
                break
            at_below = _mean_agreement(stats, below, design, seed)
            if at_below < threshold:
                lo, at_lo = below, at_below
                break
            hi, at_hi = below, at_below
            step *= 2
    while hi - lo > 1:  # agreement(lo) < threshold <= agreement(hi)
        mid = (lo + hi) // 2
        at_mid = _mean_agreement(stats, mid, design, seed)
        if at_mid >= threshold:
            hi, at_hi = mid, at_mid
        else:
            lo, at_lo = mid, at_mid
    return hi, at_hi, at_lo


def exact_smallest_size(
    matrix: ResponseMatrix,
    *,
    detect: float,
    design: str = "random",
    threshold: float = DEFAULT_THRESHOLD,
    seed: int = 0,
    start: int | None = None,
    part: analytic.PairStats | None = None,
) -> ExactSmallestSize:
    """How many items a ``design`` micro-benchmark needs to order pairs ``detect`` points apart, exactly.

    The pairs are those whose full-benchmark difference falls in the bin of ``detect``; the answer
    is the smallest size whose probability of the correct order, averaged over them, reaches
    ``threshold``. ``start`` is a guess to gallop from (see :func:`smallest_size`); ``part`` the bin's
    pairs when already computed (:func:`pairs_in_bin`).

    Examples
    --------
    >>> import mdad
    >>> found = exact_smallest_size(mdad.simulate(seed=0, n_models=40, n_items=300), detect=10)
    >>> found.label, found.smallest, round(found.at_smallest, 3) >= 0.8
    ('10 to 10.5', 25, True)
    """
    check_threshold(threshold)
    analytic.check_design(design)
    check_pairs(matrix)
    lower, part = pairs_in_bin(matrix, detect) if part is None else (bin_lower(detect), part)
    pool = int(part.pool.min())
    k, at_k, below = smallest_size(part, design, threshold, seed, start)
    sizes = np.array([], dtype=int) if k is None else np.array(sorted({s for s in PLAN_SIZES if s <= min(pool, 2 * k)} | {k}), dtype=int)
    agreement = np.array([_mean_agreement(part, int(s), design, seed) for s in sizes])
    return ExactSmallestSize(
        method=design,
        source=matrix.source,
        threshold=threshold,
        lower=lower,
        pairs=len(part.first),
        pool=pool,
        smallest=k,
        at_smallest=at_k,
        below=below,
        sizes=sizes,
        agreement=agreement,
    )


def exact_mdad_at_size(
    matrix: ResponseMatrix, *, size: int, design: str = "random", threshold: float = DEFAULT_THRESHOLD, seed: int = 0
) -> ExactMdadAtSize:
    """MDAD of a ``size``-item ``design`` micro-benchmark over every pair of models, exactly (bounded memory).

    Examples
    --------
    >>> import mdad
    >>> found = exact_mdad_at_size(mdad.simulate(seed=0, n_models=40, n_items=300), size=50)
    >>> found.reached, found.pairs
    (True, 780)
    """
    check_threshold(threshold)
    analytic.check_design(design)
    check_pairs(matrix)
    curve = analytic.streamed_curve(matrix, size, design, seed=seed)
    return ExactMdadAtSize(method=design, source=matrix.source, size=size, threshold=threshold, mdad=curve.crossing(threshold), curve=curve)


def exact_estimation_error(matrix: ResponseMatrix, size: int) -> float:
    """The expected estimation error, in points, of a ``size``-item uniform random micro-benchmark:
    the mean over models of E|X/k - p|, X hypergeometric (k items drawn without replacement from the
    pool, p the model's accuracy on it). Exact for 0/1 results without missing cells; NaN otherwise.

    Examples
    --------
    >>> import mdad
    >>> round(exact_estimation_error(mdad.simulate(seed=0, n_models=40, n_items=300), 300), 9)
    0.0
    """
    if not matrix.is_binary or matrix.n_missing or not 1 <= size <= matrix.n_items:
        return math.nan
    pool = matrix.n_items
    counts, models = np.unique(np.rint(np.nansum(matrix.scores, axis=1)).astype(int), return_counts=True)
    drawn = np.arange(size + 1)
    errors = [float(hypergeom.pmf(drawn, pool, c, size) @ np.abs(drawn / size - c / pool)) for c in counts]
    return 100.0 * float(np.dot(errors, models) / models.sum())
