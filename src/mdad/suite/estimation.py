"""New models estimated with a suite micro-benchmark: each benchmark's estimate and the suite average's.

The average's interval comes from the per-benchmark estimates (docs/suites.md#estimates): the benchmarks'
items are drawn independently, so the average's variance is sum_b c_b^2 Var_b (c_b: weight over (1 - baseline)).
For the uniform random design Var_b is exact, (1/k - 1/N) times the model's per-item variance, which is
estimated from its k answers (0/1 scores: from (x + 1/2) / (k + 1) right, so that a model with every item right
or wrong keeps a width); for the other methods it is read off the benchmark's own interval (half-width over
z). The interval, the order probabilities of neighbouring averages and P(best) use the normal approximation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_LEVEL
from mdad.errors import MdadError
from mdad.estimates import BestProbability, EstimateIntervals, OrderProbabilities
from mdad.intervals.finite import check_level
from mdad.micro.selected import SelectedMicroBenchmark
from mdad.seeding import rng_for
from mdad.suite.names import match_models
from mdad.suite.suite import normalise
from mdad.suite.tasks import unanswered

BEST_DRAWS = 20000  # normal draws behind P(best)
EXACT = "normal approximation with each benchmark's exact variance (random items)"
FROM_INTERVALS = "normal approximation with each benchmark's variance read off its interval"


@dataclass(frozen=True, eq=False)
class SuiteEstimate:
    """Every model's estimate on each benchmark (``benchmarks``: models x benchmarks, normalised where a baseline is
    set; NaN: not in that benchmark's results), each benchmark's own intervals (``parts``), and the suite average
    with its interval (``suite``), the order probabilities of neighbouring averages (``orders``) and P(best)."""

    benchmarks: pd.DataFrame
    parts: dict[str, EstimateIntervals]
    suite: EstimateIntervals
    orders: OrderProbabilities
    best: BestProbability
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """One row per model: a column per benchmark, then ``suite``, ``suite_low``, ``suite_high`` and ``p_best``
        (on the estimated best's row)."""
        frame = self.benchmarks.reset_index()
        frame["suite"], frame["suite_low"], frame["suite_high"] = self.suite.estimate, self.suite.low, self.suite.high
        frame["p_best"] = np.nan
        if self.best.available:
            frame.loc[frame["model"] == self.best.model, "p_best"] = self.best.probability
        return frame


def _matrices(names: list[str], results: Mapping[str, ResponseMatrix | str | Path]) -> dict[str, ResponseMatrix]:
    """The results of every benchmark, read (a source shared by several benchmarks, such as one folder of harness
    logs holding every task, read once); one sentence for an unknown or a missing benchmark."""
    from mdad.data.datasets import load

    unknown = [name for name in results if name not in names]
    if unknown:
        raise MdadError(f"Results are given for {unknown[0]!r}, which is not a benchmark of the suite ({', '.join(names)}).")
    lacking = [name for name in names if name not in results]
    if lacking:
        raise MdadError(f"No results for the benchmark {lacking[0]!r}; give NAME=PATH for each of {', '.join(names)}.")
    read: dict[str, ResponseMatrix] = {}
    out = {}
    for name in names:
        given = results[name]
        if isinstance(given, ResponseMatrix):
            out[name] = given
        else:
            out[name] = read[str(given)] if str(given) in read else read.setdefault(str(given), load(given))
    return out


def _answered(part: SelectedMicroBenchmark, matrix: ResponseMatrix) -> ResponseMatrix:
    """``matrix`` without the models that answered none of ``part``'s items present in it: results holding several
    benchmarks (one folder of logs) leave a model that was not run on a benchmark without answers there, and that
    model is missing from the benchmark, not an error. A model with some answers but not all is kept (and refused)."""
    lookup = {item: j for j, item in enumerate(matrix.items)}
    columns = [lookup[item] for item in part.item_ids if item in lookup]
    if not columns:
        return matrix
    missing = unanswered(matrix, columns)  # the rule of mdad.suite.tasks
    return matrix.take(models=~missing) if missing.any() and not missing.all() else matrix


def _item_variance(scores: np.ndarray) -> np.ndarray:
    """Per row: the variance (divisor k - 1) of its k item scores; for 0/1 scores from (x + 1/2) / (k + 1)."""
    k = scores.shape[1]
    if k < 2:
        return np.full(len(scores), np.nan)
    if np.isin(scores, (0.0, 1.0)).all():
        p = (scores.sum(axis=1) + 0.5) / (k + 1)
        return p * (1 - p) * k / (k - 1)
    return scores.var(axis=1, ddof=1)


def estimate_suite(
    parts: Mapping[str, SelectedMicroBenchmark],
    results: Mapping[str, ResponseMatrix | str | Path],
    *,
    weights: np.ndarray,
    baselines: Mapping[str, float],
    level: float = DEFAULT_LEVEL,
) -> SuiteEstimate:
    """Estimate the models of ``results`` (benchmark -> results) with each benchmark's micro-benchmark (``parts``) and on
    the suite average (``weights`` summing to 1, normalisation ``baselines``)."""
    check_level(level)
    z = float(ndtri((1 + level) / 2))
    names = list(parts)
    matrices = {name: _answered(parts[name], m) for name, m in _matrices(names, results).items()}
    keys, rows, notes = match_models({name: list(m.models) for name, m in matrices.items()})
    n = len(keys)
    estimate = np.full((n, len(names)), np.nan)
    variance = np.full((n, len(names)), np.nan)
    intervals_of: dict[str, EstimateIntervals] = {}
    item_scores: dict[int, tuple[np.ndarray, float]] = {}  # uniform benchmarks: models x k scores and 1/k - 1/N
    for b, name in enumerate(names):
        part, matrix = parts[name], matrices[name]
        intervals = part.intervals(matrix, level=level)
        intervals_of[name] = intervals
        have = rows[:, b] >= 0
        estimate[have, b] = intervals.estimate[rows[have, b]]
        if method_registry.get(part.method).design == "uniform":
            scores = np.full((n, part.size), np.nan)
            scores[have] = part.item_scores(matrix)[0][rows[have, b]]
            fpc = 1.0 / part.size - 1.0 / part.n_pool
            variance[:, b] = np.where(np.isnan(scores).any(axis=1), np.nan, _item_variance(scores) * fpc if fpc > 0 else 0.0)
            item_scores[b] = (scores, fpc)
        else:
            variance[have, b] = ((intervals.high - intervals.low) / (2 * z))[rows[have, b]] ** 2
    exact = len(item_scores) == len(names)
    base = np.array([baselines.get(name, 0.0) for name in names])
    scale = weights / (1.0 - base)
    normalised = normalise(estimate, base)
    average = normalised @ weights
    sd = np.sqrt(variance @ scale**2)
    calibration = EXACT if exact else FROM_INTERVALS
    suite = EstimateIntervals(
        keys, average, np.clip(average - z * sd, 0, 1), np.clip(average + z * sd, 0, 1), level, calibration, "exact" if exact else "calibrated"
    )
    ranked = [int(i) for i in np.argsort(-average, kind="stable") if np.isfinite(average[i])]
    orders = _neighbour_orders(keys, ranked, average, variance, item_scores, scale, calibration)
    best = _best(keys, ranked, average, sd, calibration)
    frame = pd.DataFrame(normalised, index=pd.Index(keys, name="model"), columns=names)
    missing = int(np.isnan(average).sum())
    if missing:
        notes.append(f"{missing} of the {n} models lack some benchmark's results and get no suite average.")
    return SuiteEstimate(frame, intervals_of, suite, orders, best, tuple(notes))


def _neighbour_orders(keys, ranked, average, variance, item_scores, scale, calibration) -> OrderProbabilities:
    """Each neighbouring pair of the ranking by average: the gap (points) and P(the full suite keeps the order). For a
    uniform benchmark the pair's difference has the exact variance of its paired item differences; otherwise the
    two models' variances add."""
    first, second = np.array(ranked[:-1], dtype=np.int64), np.array(ranked[1:], dtype=np.int64)
    pair_var = np.zeros(len(first))
    for b in range(variance.shape[1]):
        if b in item_scores:
            scores, fpc = item_scores[b]
            diff = scores[first] - scores[second]
            pair_var += scale[b] ** 2 * (diff.var(axis=1, ddof=1) if diff.shape[1] > 1 else np.nan) * fpc
        else:
            pair_var += scale[b] ** 2 * (variance[first, b] + variance[second, b])
    gap = average[first] - average[second]
    with np.errstate(divide="ignore", invalid="ignore"):
        probability = np.where(pair_var > 0, ndtr(gap / np.sqrt(pair_var)), np.where(gap > 0, 1.0, 0.5))
    probability = np.where(np.isnan(pair_var), np.nan, probability)
    return OrderProbabilities(keys[first], keys[second], 100.0 * gap, probability, calibration)


def _best(keys, ranked, average, sd, calibration) -> BestProbability:
    """P(the estimated best average is the true best), from independent normal draws around each average."""
    if not ranked:
        return BestProbability(keys, 0, float("nan"), "no model has every benchmark's results")
    top = ranked[0]
    if not np.isfinite(sd[ranked]).all():
        return BestProbability(keys, top, float("nan"), "some benchmark's estimates have no interval")
    rivals = np.array([i for i in ranked if average[i] + 8 * sd[i] >= average[top] - 8 * sd[top]], dtype=np.int64)
    draws = rng_for(0, "suite", "best").standard_normal((BEST_DRAWS, len(rivals))) * sd[rivals] + average[rivals]
    probability = float(np.mean(np.argmax(draws, axis=1) == 0)) if len(rivals) > 1 else 1.0
    return BestProbability(keys, top, probability, calibration + f", {BEST_DRAWS} draws")
