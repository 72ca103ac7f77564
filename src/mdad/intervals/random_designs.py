"""Exact answers of the random designs: intervals and order probabilities from 0/1 scores on drawn items.

A design is given by the pool size and the number of drawn items per stratum and the stratum of
each drawn item (one stratum: uniform random items). Intervals come from mdad.intervals.finite
(mid-p, nominal on average over accuracies; Clopper-Pearson, at least nominal for each) or mdad.intervals.posterior (empirical Bayes, with the source
models' accuracies as prior); order probabilities from mdad.intervals.order.
"""

from __future__ import annotations

import numpy as np

from mdad.intervals.finite import count_interval, kish_effective
from mdad.intervals.order import PairPrior, exact_order_probability
from mdad.intervals.posterior import AccuracyPrior, posterior_count_interval


def per_stratum(values: np.ndarray, codes: np.ndarray, n_strata: int) -> np.ndarray:
    """Row sums of ``values`` (rows x chosen items) within each stratum: rows x strata whole numbers."""
    return np.stack([values[:, codes == s].sum(axis=1) for s in range(n_strata)], axis=1).round().astype(np.int64)


def exact_bounds(
    sizes: np.ndarray,
    drawn: np.ndarray,
    codes: np.ndarray,
    scores: np.ndarray,
    *,
    level: float,
    prior: AccuracyPrior | None = None,
    mid_p: bool = True,
) -> tuple[np.ndarray, np.ndarray, str]:
    """Interval (accuracies) of every model from its 0/1 ``scores`` on the chosen items, and how it was made.

    ``sizes``/``drawn``: pool and chosen items per stratum; ``codes``: the stratum of each chosen
    item. With an accuracy ``prior`` (the source models', over this pool): the empirical-Bayes
    posterior interval; without: the finite-population mid-p interval (nominal coverage on average over
    pool counts), or with ``mid_p=False`` the Clopper-Pearson one (at least nominal for every pool count
    of a uniform draw; docs/intervals.md#what-each-interval-promises)."""
    correct = per_stratum(scores, codes, len(sizes))
    if len(sizes) == 1:
        total, k, x = int(sizes[0]), int(drawn[0]), correct[:, 0]
        design = "hypergeometric"
    else:
        total, k, x = kish_effective(sizes, drawn, correct)
        design = f"{len(sizes)}-subtask stratified estimate with Kish's effective number of items"
    if prior is not None:
        low, high = posterior_count_interval(prior, k, x, level=level)
        how = (
            f"empirical Bayes: posterior interval, prior from {len(prior.counts)} source models' full-benchmark "
            f"accuracies ({100 * prior.uniform_weight:g}% uniform), finite-population ({design}) likelihood"
        )
    else:
        low, high = count_interval(total, k, x, level=level, mid_p=mid_p)
        how = f"exact: finite-population ({design}) " + (
            "mid-p interval, nominal coverage on average over accuracies, less for some (for at least nominal "
            "coverage for every accuracy: the Clopper-Pearson interval, estimate --clopper-pearson)"
            if mid_p
            else "Clopper-Pearson interval, at least nominal coverage for every accuracy"
            + ("" if len(sizes) == 1 else " of a uniform draw, here applied to the stratified estimate")
        )
    return low / total, high / total, how


def exact_pair_probabilities(
    sizes: np.ndarray,
    drawn: np.ndarray,
    codes: np.ndarray,
    scores: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    *,
    prior: PairPrior | None = None,
) -> np.ndarray:
    """P(the full benchmark ranks model ``first`` above ``second``) for pairs of rows of 0/1 ``scores``."""
    a, b = scores[first], scores[second]
    plus = per_stratum((a == 1) & (b == 0), codes, len(sizes))
    minus = per_stratum((a == 0) & (b == 1), codes, len(sizes))
    return exact_order_probability(sizes, drawn, plus, minus, prior=prior)
