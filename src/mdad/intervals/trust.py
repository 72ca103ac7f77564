"""Intervals and order probabilities for one saved micro-benchmark: which calibration applies, and applying it.

- Random designs on 0/1 scores: exact finite-population answers (mdad.intervals.finite and
  mdad.intervals.order), from the pool's size (per subtask for the stratified designs and the
  per-subtask variants) and the model's answers alone: nothing is calibrated.
- Every other method, and any method on continuous scores: the calibration of its held-out
  assessment (split-conformal residuals, logistic order fit), stored with the micro-benchmark.
- Neither available: NaN, and the sentence says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mdad.intervals.finite import check_level, count_interval, stratified_count_interval
from mdad.intervals.order import exact_order_probability
from mdad.intervals.results import EstimateIntervals, OrderProbabilities
from mdad.methods.per_subtask import base_name, is_per_subtask

if TYPE_CHECKING:
    from mdad.microbenchmark import SelectedMicroBenchmark

RANDOM_DESIGNS = {"random": "uniform", "random-stratified-equal": "stratified",
                  "random-stratified-proportional": "stratified"}


def design_of(method: str) -> str | None:
    """'uniform' or 'stratified' for the random designs (items uniform within each stratum given its count), else None."""
    design = RANDOM_DESIGNS.get(base_name(method))
    if design is None:
        return None
    return "stratified" if is_per_subtask(method) else design


def _strata(chosen: SelectedMicroBenchmark) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(pool sizes, drawn items, stratum of each chosen item) of the exact design, or None when unknown."""
    design = design_of(chosen.method)
    if design == "uniform":
        return np.array([chosen.n_pool]), np.array([len(chosen.item_ids)]), np.zeros(len(chosen.item_ids), np.int64)
    if design == "stratified" and chosen.pool_subtasks:
        names = sorted(chosen.pool_subtasks)
        codes = np.searchsorted(names, chosen.subtasks)
        sizes = np.array([chosen.pool_subtasks[name] for name in names], dtype=np.int64)
        return sizes, np.bincount(codes, minlength=len(names)), codes
    return None


def _exact_strata(chosen: SelectedMicroBenchmark, scores: np.ndarray):
    strata = _strata(chosen)
    binary = bool(np.isin(scores, (0.0, 1.0)).all())
    return strata if strata is not None and binary else None


def _why_not(chosen: SelectedMicroBenchmark) -> str:
    if design_of(chosen.method) == "stratified" and not chosen.pool_subtasks:
        return ("no interval: the file does not record the pool's subtask sizes (saved by an older mdad); "
                "select it again")
    return "no interval: the micro-benchmark carries no held-out assessment (select it with assessment runs)"


def estimate_intervals(chosen: SelectedMicroBenchmark, scores: np.ndarray, estimates: np.ndarray,
                       models: np.ndarray, *, level: float = 0.9) -> EstimateIntervals:
    """Intervals around ``estimates`` (models) from the models' ``scores`` on the chosen items (models x k)."""
    level = check_level(level)
    strata = _exact_strata(chosen, scores)
    calibration = chosen.assessment.interval_calibration if chosen.assessment is not None else None
    if strata is not None:
        sizes, drawn, codes = strata
        correct = np.stack([scores[:, codes == s].sum(axis=1) for s in range(len(sizes))], axis=1).round()
        if len(sizes) == 1:
            low, high = count_interval(int(sizes[0]), int(drawn[0]), correct[:, 0].astype(np.int64), level=level)
            how = "exact: finite-population (hypergeometric) mid-p interval"
        else:
            low, high = stratified_count_interval(sizes, drawn, correct.astype(np.int64), level=level)
            how = f"exact per subtask: finite-population mid-p confidence distributions of {len(sizes)} subtasks, combined"
        total = sizes.sum()
        return EstimateIntervals(models, estimates, low / total, high / total, level, how)
    if calibration is not None:
        low, high = calibration.bounds(estimates, level=level)
        how = (f"split-conformal: {calibration.size} held-out residuals in {len(calibration.residuals)} "
               "bins of the estimate")
        return EstimateIntervals(models, estimates, low, high, level, how)
    nan = np.full(len(estimates), np.nan)
    return EstimateIntervals(models, estimates, nan, nan, level, _why_not(chosen))


def neighbour_orders(chosen: SelectedMicroBenchmark, scores: np.ndarray, estimates: np.ndarray,
                     models: np.ndarray) -> OrderProbabilities:
    """For each neighbouring pair of the ranking by estimate (best first): gap and P(the order holds)."""
    order = np.argsort(-estimates, kind="stable")
    first, second = order[:-1], order[1:]
    gap = 100.0 * (estimates[first] - estimates[second])
    strata = _exact_strata(chosen, scores)
    calibration = chosen.assessment.order_calibration if chosen.assessment is not None else None
    if strata is not None:
        sizes, drawn, codes = strata
        a, b = scores[first], scores[second]
        only_a = ((a == 1) & (b == 0)).astype(np.int64)
        only_b = ((a == 0) & (b == 1)).astype(np.int64)
        plus = np.stack([only_a[:, codes == s].sum(axis=1) for s in range(len(sizes))], axis=1)
        minus = np.stack([only_b[:, codes == s].sum(axis=1) for s in range(len(sizes))], axis=1)
        probability = exact_order_probability(sizes, drawn, plus, minus)
        how = "exact: from the items only one model of the pair got right (finite population)"
    elif calibration is not None:
        probability = calibration.probability(gap)
        how = f"calibrated: logistic fit of held-out orders on the estimated gap ({calibration.pairs} pairs)"
    else:
        probability = np.full(len(gap), np.nan)
        how = _why_not(chosen).replace("no interval", "no order probability")
    return OrderProbabilities(models[first], models[second], gap, probability, how)
