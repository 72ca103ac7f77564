"""Intervals and order probabilities for one saved micro-benchmark: which answer applies (docs/intervals.md#which-answer-applies), and applying it.

- Random designs on 0/1 scores: finite-population answers from the pool's size (per subtask
  for the stratified designs and the per-subtask variants), the model's answers and the priors
  ``select`` stored from the source models (mdad.intervals.posterior: the empirical-Bayes
  interval, or the exact mid-p one of mdad.intervals.finite without a prior; mdad.intervals.order):
  nothing is calibrated on held-out runs.
- Every other method, and any method on continuous scores: the calibration of its held-out
  assessment (split-conformal residuals, logistic order fit on the gap over the residual spread
  at the two estimates), stored with the micro-benchmark.
- Neither available: NaN, and the sentence says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mdad.defaults import DEFAULT_LEVEL
from mdad.intervals.finite import check_level, count_interval, kish_effective
from mdad.intervals.order import PairPrior, exact_order_probability
from mdad.intervals.posterior import AccuracyPrior, posterior_count_interval
from mdad.intervals.results import EstimateIntervals, OrderProbabilities
from mdad.methods.names import parse

if TYPE_CHECKING:
    from mdad.microbenchmark import SelectedMicroBenchmark

def design_of(method: str) -> str | None:
    """'uniform' or 'stratified' for the random designs (items uniform within each stratum given its count), else None."""
    return parse(method).design


def _strata(chosen: SelectedMicroBenchmark) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(pool sizes, drawn items, stratum of each chosen item) of the exact design, or None when unknown."""
    design = design_of(chosen.method)
    if design == "uniform":
        return np.array([chosen.n_pool]), np.array([len(chosen.item_ids)]), np.zeros(len(chosen.item_ids), np.int64)
    if design == "stratified" and chosen.pool_subtasks and set(chosen.subtasks.tolist()) <= set(chosen.pool_subtasks):
        names = sorted(chosen.pool_subtasks)
        codes = np.searchsorted(names, chosen.subtasks)
        sizes = np.array([chosen.pool_subtasks[name] for name in names], dtype=np.int64)
        return sizes, np.bincount(codes, minlength=len(names)), codes
    return None


def _per_stratum(values: np.ndarray, codes: np.ndarray, n_strata: int) -> np.ndarray:
    """Row sums of ``values`` (rows x chosen items) within each stratum: rows x strata whole numbers."""
    return np.stack([values[:, codes == s].sum(axis=1) for s in range(n_strata)], axis=1).round().astype(np.int64)


def exact_bounds(sizes: np.ndarray, drawn: np.ndarray, codes: np.ndarray, scores: np.ndarray, *,
                 level: float, prior: AccuracyPrior | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """Interval (accuracies) of every model from its 0/1 ``scores`` on the chosen items, and how it was made.

    ``sizes``/``drawn``: pool and chosen items per stratum; ``codes``: the stratum of each chosen
    item. With an accuracy ``prior`` (the source models', over this pool): the empirical-Bayes
    posterior interval; without: the finite-population mid-p interval, valid for every pool count."""
    correct = _per_stratum(scores, codes, len(sizes))
    if len(sizes) == 1:
        total, k, x = int(sizes[0]), int(drawn[0]), correct[:, 0]
        design = "hypergeometric"
    else:
        total, k, x = kish_effective(sizes, drawn, correct)
        design = f"{len(sizes)}-subtask stratified estimate with Kish's effective number of items"
    if prior is not None:
        low, high = posterior_count_interval(prior, k, x, level=level)
        how = (f"empirical Bayes: posterior interval, prior from {len(prior.counts)} source models' full-benchmark "
               f"accuracies ({100 * prior.uniform_weight:g}% uniform), finite-population ({design}) likelihood")
    else:
        low, high = count_interval(total, k, x, level=level)
        how = f"exact: finite-population ({design}) mid-p interval, valid for every model"
    return low / total, high / total, how


def exact_pair_probabilities(sizes: np.ndarray, drawn: np.ndarray, codes: np.ndarray, scores: np.ndarray,
                             first: np.ndarray, second: np.ndarray, *, prior: PairPrior | None = None) -> np.ndarray:
    """P(the full benchmark ranks model ``first`` above ``second``) for pairs of rows of 0/1 ``scores``."""
    a, b = scores[first], scores[second]
    plus = _per_stratum((a == 1) & (b == 0), codes, len(sizes))
    minus = _per_stratum((a == 0) & (b == 1), codes, len(sizes))
    return exact_order_probability(sizes, drawn, plus, minus, prior=prior)


def _exact_strata(chosen: SelectedMicroBenchmark, scores: np.ndarray):
    strata = _strata(chosen)
    binary = bool(np.isin(scores, (0.0, 1.0)).all())
    return strata if strata is not None and binary else None


def _why_not(chosen: SelectedMicroBenchmark, scores: np.ndarray) -> str:
    if design_of(chosen.method) is not None and not np.isin(scores, (0.0, 1.0)).all():
        return ("no interval: exact answers need 0/1 scores and the micro-benchmark carries no held-out assessment "
                "(select it with assessment runs)")
    if design_of(chosen.method) == "stratified" and _strata(chosen) is None:
        return ("no interval: the file does not record the pool's subtask sizes (saved by an older mdad); "
                "select it again")
    return "no interval: the micro-benchmark carries no held-out assessment (select it with assessment runs)"


def estimate_intervals(chosen: SelectedMicroBenchmark, scores: np.ndarray, estimates: np.ndarray,
                       models: np.ndarray, *, level: float = DEFAULT_LEVEL, population: bool = False) -> EstimateIntervals:
    """Intervals around ``estimates`` (models) from the models' ``scores`` on the chosen items (models x k).

    Random designs get the mid-p interval, valid for every model; with ``population``, the
    empirical-Bayes interval for models like the sources (the accuracy prior stored by ``select``)."""
    level = check_level(level)
    strata = _exact_strata(chosen, scores)
    calibration = chosen.assessment.interval_calibration if chosen.assessment is not None else None
    if strata is not None:
        prior = chosen.accuracy_prior
        if not population or prior is None or prior.pool_items != int(strata[0].sum()):
            prior = None
        low, high, how = exact_bounds(*strata, scores, level=level, prior=prior)
        return EstimateIntervals(models, estimates, low, high, level, how, "exact" if prior is None else "population")
    if calibration is not None:
        low, high = calibration.bounds(estimates, level=level)
        how = (f"split-conformal: {calibration.size} held-out residuals in {len(calibration.residuals)} "
               "bins of the estimate")
        return EstimateIntervals(models, estimates, low, high, level, how, "calibrated")
    nan = np.full(len(estimates), np.nan)
    return EstimateIntervals(models, estimates, nan, nan, level, _why_not(chosen, scores), "none")


def neighbour_orders(chosen: SelectedMicroBenchmark, scores: np.ndarray, estimates: np.ndarray,
                     models: np.ndarray) -> OrderProbabilities:
    """For each neighbouring pair of the ranking by estimate (best first): gap and P(the order holds)."""
    order = np.argsort(-estimates, kind="stable")
    first, second = order[:-1], order[1:]
    gap = 100.0 * (estimates[first] - estimates[second])
    strata = _exact_strata(chosen, scores)
    calibration = chosen.assessment.order_calibration if chosen.assessment is not None else None
    if strata is not None:
        probability = exact_pair_probabilities(*strata, scores, first, second, prior=chosen.pair_prior)
        prior = ("the source leaderboard's pairs (how many items they differ on, how they split them) as prior"
                 if chosen.pair_prior is not None else "a uniform prior")
        how = f"exact: from the items only one model of the pair got right (finite population), with {prior}"
    elif calibration is not None:
        probability = calibration.probability(estimates[first], estimates[second])
        how = calibration.describe()
    else:
        probability = np.full(len(gap), np.nan)
        how = _why_not(chosen, scores).replace("no interval", "no order probability")
    return OrderProbabilities(models[first], models[second], gap, probability, how)
