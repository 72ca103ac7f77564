"""``aipw``: uniform random items, estimated by the cross-fitted AIPW (prediction-powered) estimator.

The k items are a uniform random sample of the pool, kept in draw order (the folds of the
cross-fit follow it). The predictor is the D=10 multidimensional 2PL fitted on the source
models (the tinyBenchmarks fit, shared when both run): a target's probability on every pool
item given its MAP ability from the answers of the other folds. The estimate is that
prediction corrected by the mean residual on the sample (mdad.estimators.aipw); it stays
unbiased when the predictor is wrong, e.g. for targets stronger than every source model.
See docs/adaptive.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.estimates import EstimateIntervals
from mdad.estimators.aipw import FOLDS, AIPWEstimate, aipw
from mdad.irt import check_binary, estimate_ability, predict_correct
from mdad.irt.guard import GuardFlags, guard
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView
from mdad.methods.tinybenchmarks import TinyPreparation


@dataclass(frozen=True, kw_only=True, eq=False)
class AIPWBenchmark(MicroBenchmark):
    """Random items (in draw order) plus the pool's item parameters; estimates by cross-fitted AIPW."""

    a: np.ndarray  # pool x D
    b: np.ndarray  # pool
    folds: int
    source_low: float  # the guard's range: source models' predicted pool accuracy
    source_high: float

    kind = "aipw"
    own_interval_name = "AIPW"

    def _predictor(self):
        a, b, items = self.a, self.b, self.items
        return lambda answers: predict_correct(estimate_ability(answers, a[items], b[items]), a, b)

    def interval(self, scores: np.ndarray, *, confidence: float = 0.95) -> AIPWEstimate:
        """Estimate, variance estimate and interval of each target (``scores``: targets x k, on ``items``)."""
        values = check_binary(np.atleast_2d(scores), "For AIPW the target models' answers")
        return aipw(values, self.items, len(self.b), self._predictor(), folds=self.folds, confidence=confidence)

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        return self.interval(scores).estimate

    def own_intervals(self, scores: np.ndarray, models: np.ndarray, *, level: float = 0.95) -> EstimateIntervals:
        """Each target's t interval at ``level`` from the cross-fitted estimate's variance estimate."""
        result = self.interval(scores, confidence=level)
        return EstimateIntervals(
            np.asarray(models),
            result.estimate,
            result.low,
            result.high,
            level,
            "AIPW: t interval from the cross-fitted estimate's variance estimate",
            "estimator",
        )

    def flags(self, scores: np.ndarray) -> GuardFlags:
        """The extrapolation guard at the ability estimated from all k answers."""
        values = check_binary(np.atleast_2d(scores), "For AIPW the target models' answers")
        theta = estimate_ability(values, self.a[self.items], self.b[self.items])
        on_pool = np.full((len(values), len(self.b)), np.nan)
        on_pool[:, self.items] = values
        return guard(theta, on_pool, self.a, self.b, low=self.source_low, high=self.source_high)


@METHODS.register(order=70)
class AIPW(SelectionMethod):
    name = "aipw"
    description = (
        "k random items; cross-fitted AIPW estimate (10-D 2PL prediction of the pool plus the sample's "
        "mean residual), unbiased even when the prediction is wrong; with a variance and interval."
    )
    scores = "binary"
    interval = "own"
    bounded = False  # not clipped: clipping would bias it (docs/adaptive.md)
    preparation = "tinybenchmarks-irt"
    default = False  # run on request, with the adaptive methods it is compared with

    def prepare(self, view: SourceView, rng: np.random.Generator) -> TinyPreparation:
        return TinyPreparation(view, rng)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared) -> AIPWBenchmark:
        fit = prepared.fit
        items = rng.permutation(view.n_items)[:k]  # draw order kept: the folds follow it
        low, high = prepared.guard_range
        return AIPWBenchmark(items=items, weights=np.full(k, 1.0 / k), a=fit.a, b=fit.b, folds=FOLDS, source_low=low, source_high=high)
