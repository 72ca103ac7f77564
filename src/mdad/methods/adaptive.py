"""Adaptive testing: every target gets its own items, each chosen from its answers so far.

``adaptive`` uses the D=10 multidimensional 2PL fit of the tinyBenchmarks methods (the
same ``preparation``: one fit per run serves all of them); ``adaptive-1d`` a one-dimensional
2PL, as Fluid Benchmarking (Hofmann et al. 2025) does. Both start at the source models'
mean ability, ask the unanswered pool item of maximum information (D-optimality for D > 1,
see mdad.irt.adaptive), re-estimate the ability (MAP) after each answer, and estimate the
pool accuracy as p-IRT does: answered items count as answered, the others by their
predicted probability. Sizes nest, so one pass per run up to the largest size serves every
size. See docs/adaptive.md.

The micro-benchmark of an adaptive method is the whole pool plus the rule: its item
parameters, the start ability and the number of items to ask. ``administer`` runs the test
on targets that can answer any pool item (the experiment); ``estimate`` and ``next_items``
serve new models that answered whatever items they were asked.

Options, off in the registered methods and given in the method's name
(``adaptive-1d@stop-se=0.3``, ``adaptive@randomesque=5``; mdad.methods.names): a stopping rule
ends a model's test once its ability's posterior standard deviation falls below S, so each size
is a budget that a model uses only as far as it needs; exposure control draws each next item
among the r most informative (mdad.irt.adaptive).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mdad.errors import MdadError
from mdad.irt import IRTFit, check_binary, fit_irt, sigmoid
from mdad.irt.adaptive import AdaptiveOutcome, d_optimal_gain, map_abilities, run_adaptive
from mdad.irt.guard import GuardFlags, guard, pool_accuracy_range
from mdad.methods.base import METHODS, MicroBenchmark, Outcome, SelectionMethod, SourceView
from mdad.methods.tinybenchmarks import TinyPreparation


@dataclass(frozen=True, kw_only=True, eq=False)
class AdaptiveBenchmark(MicroBenchmark):
    """An adaptive test: ``items`` is the whole pool, ``length`` the number of items each model is asked."""

    a: np.ndarray  # pool x D
    b: np.ndarray  # pool
    start: np.ndarray  # D: the ability at which the first item is chosen
    length: int
    source_low: float  # the guard's range: source models' predicted pool accuracy
    source_high: float
    stop_se: float = 0.0  # a model's test ends once its ability's posterior sd is below this (0: never early)
    randomesque: int = 1  # the next item is drawn among this many most informative ones

    kind = "adaptive"

    @property
    def size(self) -> int:
        return int(self.length)

    def administer(
        self,
        answers: np.ndarray,
        sizes: Sequence[int],
        rng: np.random.Generator | None = None,
    ) -> tuple[AdaptiveOutcome, list[GuardFlags]]:
        """Adaptive tests of models that can answer every pool item (``answers``: models x pool),
        for every size (at most ``length``), and the extrapolation guard at each size; ``rng``
        draws the items under exposure control."""
        values = check_binary(answers, "For adaptive testing the target models' answers")
        outcome = run_adaptive(
            values, self.a, self.b, sizes=sizes, start=self.start, stop_se=self.stop_se or None, randomesque=int(self.randomesque), rng=rng
        )
        rows = np.arange(len(values))[:, None]
        flags = []
        for k, theta in zip(outcome.sizes, outcome.theta, strict=True):
            asked = np.full(values.shape, np.nan)
            chosen = outcome.items[:, :k]
            taken = chosen >= 0  # a test that stopped early has -1 after its last item
            asked[np.broadcast_to(rows, chosen.shape)[taken], chosen[taken]] = values[np.broadcast_to(rows, chosen.shape)[taken], chosen[taken]]
            flags.append(guard(theta, asked, self.a, self.b, low=self.source_low, high=self.source_high))
        return outcome, flags

    def _abilities(self, answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The answers as 0/1 with NaN for items not asked (models x pool), and the MAP abilities."""
        values = check_binary(np.atleast_2d(answers), "For adaptive testing the models' answers")
        if values.shape[1] != len(self.b):
            raise MdadError(f"Answers on {values.shape[1]} items do not match the adaptive test's pool of {len(self.b)}.")
        mask = ~np.isnan(values)
        n = len(values)
        theta = map_abilities(np.nan_to_num(values), np.broadcast_to(self.a, (n, *self.a.shape)), np.broadcast_to(self.b, values.shape), mask=mask)
        return values, theta

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        """Estimated pool accuracy from whatever pool items each model answered (NaN = not asked)."""
        values, theta = self._abilities(scores)
        predicted = sigmoid(theta @ self.a.T - self.b)
        return np.where(np.isnan(values), predicted, values).mean(axis=1)

    def next_items(self, scores: np.ndarray) -> np.ndarray:
        """The pool position each model would be asked next (-1 once it answered ``length`` items)."""
        values, theta = self._abilities(scores)
        answered = ~np.isnan(values)
        d = self.a.shape[1]
        w = sigmoid(theta @ self.a.T - self.b)
        outer = (self.a[:, :, None] * self.a[:, None, :]).reshape(len(self.b), -1)
        precision = ((answered * w * (1.0 - w)) @ outer).reshape(-1, d, d) + np.eye(d)
        gain = d_optimal_gain(theta, precision, self.a, self.b)
        gain[answered] = -np.inf
        nxt = np.argmax(gain, axis=1)
        finished = answered.sum(axis=1) >= self.length
        if self.stop_se:
            finished |= np.sqrt(np.diagonal(np.linalg.inv(precision), axis1=1, axis2=2).max(axis=1)) < self.stop_se
        return np.where(finished, -1, nxt)

    def flags(self, scores: np.ndarray) -> GuardFlags:
        values, theta = self._abilities(scores)
        return guard(theta, values, self.a, self.b, low=self.source_low, high=self.source_high)


class IRTPreparation:
    """A per-run IRT fit of the source models' 0/1 answers on the pool (``fit``)."""

    def __init__(self, view: SourceView, rng: np.random.Generator, dims: int) -> None:
        scores = check_binary(view.scores, "For adaptive testing the source models' scores")
        if scores.shape[0] < 2 or scores.shape[1] < 2:
            raise MdadError(f"IRT needs at least 2 source models and 2 pool items, got {scores.shape[0]} and {scores.shape[1]}.")
        self.fit: IRTFit = fit_irt(scores, dims=dims, rng=rng)


def adaptive_benchmark(fit: IRTFit, length: int, stop_se: float | None = None, randomesque: int = 1) -> AdaptiveBenchmark:
    """The adaptive test of at most ``length`` items over the pool of ``fit``, with its options (module docstring)."""
    low, high = pool_accuracy_range(fit.theta, fit.a, fit.b)
    pool = len(fit.b)
    return AdaptiveBenchmark(
        items=np.arange(pool),
        weights=np.full(pool, 1.0 / pool),
        a=fit.a,
        b=fit.b,
        start=fit.theta.mean(axis=0),
        length=int(length),
        source_low=low,
        source_high=high,
        stop_se=float(stop_se or 0.0),
        randomesque=int(randomesque),
    )


@METHODS.register(order=60)
class Adaptive(SelectionMethod):
    name = "adaptive"
    description = (
        "Adaptive test per model: 10-D 2PL (shared with tinyBenchmarks), next item by D-optimal "
        "information, MAP ability after each answer; p-IRT estimate."
    )
    scores = "binary"
    preparation = "tinybenchmarks-irt"
    adaptive = True
    ability_estimate = True
    default = False  # costlier than the static methods: run on request
    stop_se: float | None = None  # the stopping rule's threshold (None: every test runs to its budget)
    randomesque: int = 1  # exposure control: the next item among this many most informative

    def with_options(self, stop_se: float | None = None, randomesque: int = 1) -> Adaptive:
        """This test with a stopping rule and exposure control; its name says them (mdad.methods.names)."""
        from mdad.methods.names import MethodName

        variant = type(self)()
        variant.stop_se, variant.randomesque = stop_se, int(randomesque)
        variant.name = str(MethodName(self.name, stop_se=stop_se or 0.0, randomesque=int(randomesque)))
        return variant

    def prepare(self, view: SourceView, rng: np.random.Generator) -> TinyPreparation | IRTPreparation:
        return TinyPreparation(view, rng)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared) -> AdaptiveBenchmark:
        return adaptive_benchmark(prepared.fit, k, self.stop_se, self.randomesque)

    def outcomes(
        self,
        view: SourceView,
        sizes: Sequence[int],
        *,
        scores: np.ndarray,
        gold_prob: np.ndarray,
        rng_of: Callable[[int], np.random.Generator],
        prepared: Any = None,
    ) -> dict[int, Outcome]:
        """One adaptive pass up to the largest size serves every size (sizes nest)."""
        rng = rng_of(max(sizes))
        test = self.choose(view, max(sizes), rng, self.prepare(view, rng) if prepared is None else prepared)
        outcome, flags = test.administer(scores, sizes, rng)
        used = (lambda k: outcome.items_used(k)) if self.stop_se else (lambda k: None)
        return {
            k: Outcome(outcome.estimate(k), flagged=f.flagged, items=outcome.items[:, :k], used=used(k))
            for k, f in zip(outcome.sizes, flags, strict=True)
        }


@METHODS.register(order=61)
class Adaptive1D(Adaptive):
    name = "adaptive-1d"
    description = "Adaptive test per model as Fluid Benchmarking: 1-D 2PL, maximum Fisher information, MAP; p-IRT estimate."
    preparation = "irt-1d"

    def prepare(self, view: SourceView, rng: np.random.Generator) -> IRTPreparation:
        return IRTPreparation(view, rng, dims=1)
