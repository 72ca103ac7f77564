"""tinyBenchmarks (Polo et al. 2024): IRT anchor points and the p-IRT and gp-IRT estimators.

Once per run a D=10 multidimensional 2PL model is fitted to the source models' 0/1 answers
on the pool; each item is embedded as (a_j, b_j). For size k, k-means (k clusters, exact
arithmetic: mdad.methods.kmeans) on the embeddings; each cluster's anchor is its member
nearest the centroid, weighted by the cluster's share of the pool. Three estimates of a target's pool accuracy:

- ``tinybenchmarks``: the weighted mean of its 0/1 answers on the anchors (the paper's).
- ``tinybenchmarks-pirt``: its ability, estimated from the anchors with the items fixed,
  predicts P(correct) on every other pool item; estimate = (observed anchor answers +
  predicted probabilities of the rest) / pool size.
- ``tinybenchmarks-gpirt``: lambda * weighted + (1 - lambda) * p-IRT with the paper's rule
  lambda = bias^2 / (bias^2 + v / (4k)): v is the mean over source models of the variance
  of their answers across the pool (v / (4k) stands for the variance of the weighted
  estimate), bias is p-IRT's mean absolute error on held-out source models (IRT fitted on
  the other 80% of sources, ability from a random half of the pool, error on the other half).

Abilities are MAP estimates under the fit's N(0, I) prior, where the reference uses maximum
likelihood: with 10 anchors and 10 dimensions the likelihood alone often has no finite
maximum (e.g. a target that answers every anchor correctly).

The three share one ``preparation``: the IRT fit is done once per run for every size and
estimator; the held-out fit behind lambda is done on first use, once per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mdad.errors import MdadError
from mdad.irt import IRTFit, check_binary, estimate_ability, estimate_items, fit_irt, predict_correct
from mdad.irt.guard import GuardFlags, guard, pool_accuracy_range
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView
from mdad.methods.kmeans import kmeans

DIMS = 10
KMEANS_STARTS = 1  # one k-means++ start, as tinyBenchmarks' own code (docs/deviations.md#k-means-starts)
VALIDATION_SHARE = 0.2
# The held-out fit behind lambda only feeds one mean absolute error, which half the main
# fit's schedule gives to within 0.05 points (simulated 300 x 500, six runs: 2.66-3.03 vs
# 2.69-3.03 points) at two thirds of its cost.
VALIDATION_ITERATIONS, VALIDATION_ROUNDS = 18, 6
# ... and the fit stops earlier once that error has converged: from round BIAS_FIRST_CHECK on, when
# a round moves it by less than BIAS_TOLERANCE (accuracy units; docs/deviations.md#gp-irt-lambda).
BIAS_FIRST_CHECK, BIAS_TOLERANCE = 3, 2e-4
# On a pool of more than VALIDATION_ITEMS items the held-out fit runs on that many of them (a seeded
# random subset; the whole schedule, as a check of the error would need every item's parameters) and
# the other items' parameters are estimated from the training sources' answers with their fitted
# abilities held fixed (ITEM_NEWTON_STEPS Newton steps: within 0.002 points of the error with three). The
# error is still measured on halves of the whole pool, so its expectation, which includes the sampling
# noise of the observed accuracy on half the pool, does not change; the fit costs about a quarter as much
# at 12,000 items (docs/deviations.md#gp-irt-lambda).
# Only with at least VALIDATION_MIN_SOURCES training sources: with few (32 of 40 simulated models,
# or 25 of MMLU-Pro's 31 real ones) each item's mode from so few answers is not what the fit on the
# whole pool gives, and the error drops by a third or more (that fit costs under a second there).
VALIDATION_ITEMS, ITEM_NEWTON_STEPS, VALIDATION_MIN_SOURCES = 1000, 2, 100


class TinyPreparation:
    """The per-run work shared by the three estimators: the IRT fit, and lambda's ingredients."""

    def __init__(self, view: SourceView, rng: np.random.Generator, dims: int = DIMS) -> None:
        self.scores = check_binary(view.scores, "For the IRT fit of tinyBenchmarks, adaptive and aipw the source models' scores")
        if self.scores.shape[0] < 2 or self.scores.shape[1] < 2:
            raise MdadError(f"tinyBenchmarks needs at least 2 source models and 2 pool items, got {self.scores.shape[0]} and {self.scores.shape[1]}.")
        self.dims = dims
        self.fit: IRTFit = fit_irt(self.scores, dims=dims, rng=rng)
        self._validation_seed = int(rng.integers(2**63))
        self._anchor_seed = int(rng.integers(2**63))
        self._anchors: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def anchors(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k anchors and their weights, computed once and shared by the three estimators."""
        if k not in self._anchors:
            self._anchors[k] = anchor_points(self.embedding, k, np.random.default_rng([self._anchor_seed, k]))
        return self._anchors[k]

    @property
    def embedding(self) -> np.ndarray:
        return self.fit.embedding

    @cached_property
    def guard_range(self) -> tuple[float, float]:
        """The source models' (lowest, highest) predicted pool accuracy, for the extrapolation guard."""
        return pool_accuracy_range(self.fit.theta, self.fit.a, self.fit.b)

    @cached_property
    def variance(self) -> float:
        """Mean over source models of the variance of their answers across the pool."""
        return float(np.nanmean(np.nanvar(self.scores, axis=1)))

    @cached_property
    def bias(self) -> float:
        """p-IRT's mean absolute error on held-out source models (the paper's validation)."""
        return pirt_bias(self.scores, self.dims, np.random.default_rng(self._validation_seed))

    def gpirt_lambda(self, k: int) -> float:
        return gpirt_lambda(self.bias, self.variance, k)


def gpirt_lambda(bias: float, variance: float, k: int) -> float:
    """The paper's weight of the weighted estimate: bias^2 / (bias^2 + variance / (4k)).

    When both terms are zero the two estimates agree and the weighted one is kept.
    """
    denominator = bias**2 + variance / (4 * k)
    return 1.0 if denominator == 0 else float(bias**2 / denominator)


def pirt_bias(scores: np.ndarray, dims: int, rng: np.random.Generator) -> float:
    """Mean |predicted - observed| accuracy on half the pool for held-out source models whose
    ability is estimated from the other half, with IRT fitted on the remaining sources.

    The fit's rounds stop once the error has converged: from round ``BIAS_FIRST_CHECK`` on, the
    error is computed after each round and the fit ends when a round moves it by less than
    ``BIAS_TOLERANCE`` (at most ``VALIDATION_ROUNDS`` rounds). On a pool of more than
    ``VALIDATION_ITEMS`` items with at least ``VALIDATION_MIN_SOURCES`` training sources, see
    ``pirt_bias_on_subset``."""
    n_models, n_items = scores.shape
    order = rng.permutation(n_models)
    n_val = min(max(1, round(VALIDATION_SHARE * n_models)), n_models - 1)
    val, train = np.sort(order[:n_val]), np.sort(order[n_val:])
    if n_items > VALIDATION_ITEMS and len(train) >= VALIDATION_MIN_SOURCES:
        return pirt_bias_on_subset(scores, val, train, dims, rng)
    found: list[float] = []
    halves: list[np.ndarray] = []  # drawn once the fit has drawn its start, so the draws keep their order

    def bias(fit: IRTFit) -> float:
        if not halves:
            items = rng.permutation(n_items)
            halves.extend((np.sort(items[: n_items // 2]), np.sort(items[n_items // 2 :])))
        seen, unseen = halves
        return held_out_error(scores[val], seen, unseen, fit.a, fit.b)

    rounds = 0

    def converged(fit: IRTFit) -> bool:  # called after every round, the last included
        nonlocal rounds
        rounds += 1
        if rounds < BIAS_FIRST_CHECK:
            return False
        found.append(bias(fit))
        return len(found) > 1 and abs(found[-1] - found[-2]) < BIAS_TOLERANCE

    fit = fit_irt(scores[train], dims=dims, rng=rng, max_iter=VALIDATION_ITERATIONS, max_rounds=VALIDATION_ROUNDS, until=converged)
    return found[-1] if found else bias(fit)


def pirt_bias_on_subset(scores: np.ndarray, val: np.ndarray, train: np.ndarray, dims: int, rng: np.random.Generator) -> float:
    """``pirt_bias`` on a large pool: the held-out IRT fit on ``VALIDATION_ITEMS`` random items, the other
    items' parameters given the training sources' fitted abilities, the error on halves of the whole pool."""
    n_items = scores.shape[1]
    subset = np.sort(rng.permutation(n_items)[:VALIDATION_ITEMS])
    rest = np.setdiff1d(np.arange(n_items), subset)
    fit = fit_irt(scores[np.ix_(train, subset)], dims=dims, rng=rng, max_iter=VALIDATION_ITERATIONS, max_rounds=VALIDATION_ROUNDS)
    a, b = np.empty((n_items, dims)), np.empty(n_items)
    a[subset], b[subset] = fit.a, fit.b
    a[rest], b[rest] = estimate_items(scores[np.ix_(train, rest)], fit.theta, fit.priors, ITEM_NEWTON_STEPS)
    items = rng.permutation(n_items)
    return held_out_error(scores[val], np.sort(items[: n_items // 2]), np.sort(items[n_items // 2 :]), a, b)


def held_out_error(scores: np.ndarray, seen: np.ndarray, unseen: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Mean over the models (rows of ``scores``) of |predicted - observed| accuracy on the ``unseen``
    items, the ability estimated from their answers on the ``seen`` items."""
    theta = estimate_ability(scores[:, seen], a[seen], b[seen])
    predicted = predict_correct(theta, a[unseen], b[unseen]).mean(axis=1)
    observed = np.nanmean(scores[:, unseen], axis=1)
    return float(np.nanmean(np.abs(predicted - observed)))


def anchor_points(embedding: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(anchors, weights): k-means on the item embeddings (KMEANS_STARTS starts, the best kept);
    each cluster's member nearest its centroid (the lowest pool position among equals),
    weighted by the cluster's share of items.

    The anchor is taken among the cluster's own members so that anchors are distinct; the
    k-means is exact (mdad.methods.kmeans), so the anchors are the same on every machine."""
    fit = kmeans(embedding, k, rng, n_init=KMEANS_STARTS)
    order = np.lexsort((fit.distance, fit.labels))
    first = np.flatnonzero(np.r_[True, fit.labels[order][1:] != fit.labels[order][:-1]])
    anchors = order[first]
    weights = np.bincount(fit.labels, minlength=k)[fit.labels[anchors]] / len(fit.labels)
    return anchors, weights


def pirt_estimate(scores: np.ndarray, items: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """p-IRT: (observed answers on ``items`` + predicted P(correct) on the other pool items) / pool size.

    ``scores`` is targets x len(items); ``a``, ``b`` are the whole pool's item parameters.
    An unanswered anchor (NaN) counts with its predicted probability."""
    scores = check_binary(np.atleast_2d(scores), "For p-IRT the target models' answers")
    theta = estimate_ability(scores, a[items], b[items])
    predicted = predict_correct(theta, a, b)
    observed = predicted[:, items]
    predicted[:, items] = np.where(np.isnan(scores), observed, scores)
    return predicted.mean(axis=1)


@dataclass(frozen=True, kw_only=True)
class PIRTBenchmark(MicroBenchmark):
    """Anchors plus the pool's item parameters; estimates by p-IRT."""

    a: np.ndarray  # pool x D
    b: np.ndarray  # pool
    source_low: float | None = None  # the extrapolation guard's range (mdad.irt.guard); None: no guard
    source_high: float | None = None

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        return pirt_estimate(scores, self.items, self.a, self.b)

    def flags(self, scores: np.ndarray) -> GuardFlags | None:
        """The extrapolation guard at the ability estimated from the anchors."""
        if self.source_low is None or self.source_high is None:
            return None
        values = check_binary(np.atleast_2d(scores), "For p-IRT the target models' answers")
        theta = estimate_ability(values, self.a[self.items], self.b[self.items])
        on_pool = np.full((len(values), len(self.b)), np.nan)
        on_pool[:, self.items] = values
        return guard(theta, on_pool, self.a, self.b, low=self.source_low, high=self.source_high)


@dataclass(frozen=True, kw_only=True)
class GPIRTBenchmark(PIRTBenchmark):
    """Anchors, weights, item parameters and lambda; estimates by gp-IRT."""

    lam: float

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        weighted = MicroBenchmark.estimate(self, scores)  # the weighted mean, as the plain estimator computes it
        return self.lam * weighted + (1.0 - self.lam) * super().estimate(scores, gold_prob)


@METHODS.register(order=50)
class TinyBenchmarks(SelectionMethod):
    name = "tinybenchmarks"
    description = "IRT anchor points (k-means on 10-D 2PL item embeddings); weighted mean of the anchors."
    scores = "binary"
    preparation = "tinybenchmarks-irt"

    def prepare(self, view: SourceView, rng: np.random.Generator) -> TinyPreparation:
        return TinyPreparation(view, rng)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared) -> MicroBenchmark:
        anchors, weights = prepared.anchors(k)
        return self._build(anchors, weights, prepared, k)

    def _build(self, anchors, weights, prepared: TinyPreparation, k: int) -> MicroBenchmark:
        return MicroBenchmark(items=anchors, weights=weights)


@METHODS.register(order=51)
class TinyBenchmarksPIRT(TinyBenchmarks):
    name = "tinybenchmarks-pirt"
    description = "IRT anchor points; p-IRT estimate (ability from the anchors predicts the rest of the pool)."
    ability_estimate = True

    def _build(self, anchors, weights, prepared: TinyPreparation, k: int) -> MicroBenchmark:
        low, high = prepared.guard_range
        return PIRTBenchmark(items=anchors, weights=weights, a=prepared.fit.a, b=prepared.fit.b, source_low=low, source_high=high)


@METHODS.register(order=52)
class TinyBenchmarksGPIRT(TinyBenchmarks):
    name = "tinybenchmarks-gpirt"
    description = "IRT anchor points; gp-IRT estimate (weighted mean and p-IRT blended by the paper's lambda)."
    ability_estimate = True

    def _build(self, anchors, weights, prepared: TinyPreparation, k: int) -> MicroBenchmark:
        low, high = prepared.guard_range
        return GPIRTBenchmark(
            items=anchors,
            weights=weights,
            a=prepared.fit.a,
            b=prepared.fit.b,
            lam=prepared.gpirt_lambda(k),
            source_low=low,
            source_high=high,
        )
