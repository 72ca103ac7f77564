"""metabench (Kipnis et al., ICLR 2025): informative items of a 1-D IRT model, score from the ability.

Once per run, on the source models' 0/1 answers:

1. items are screened: an item is eligible when the source models' answers on it vary (standard
   deviation at least MIN_SD) and it correlates with the rest of the pool (item-rest point-biserial
   correlation at least MIN_REST_CORRELATION);
2. a one-dimensional 2PL model (``mdad.irt.fit_irt`` with ``dims=1``: the variational fit with
   hierarchical item priors) is fitted to every pool item: the fit of ``adaptive-1d``, shared
   with it (one ``preparation``);
3. each item's Fisher information a^2 p (1 - p) is summed over a grid of GRID_QUANTILES quantiles
   of the source models' abilities.

For size k the k eligible items of largest summed information are chosen (the others follow the
eligible ones when too few are eligible). The estimate reconstructs the pool accuracy from the
target's ability, its MAP estimate from its answers on the chosen items, and its plain mean on
them: a ridge regression (``mdad.methods.ridge``) on a cubic spline of the ability
(scikit-learn's ``SplineTransformer``, SPLINE_KNOTS knots at quantiles of the source models'
abilities, linear beyond them) plus the plain mean as a linear term, fitted on the source models,
whose abilities are estimated the same way from the same items. Summed information is rounded
(``mdad.exact.snap``) before it is ranked, and ties go to the lower pool position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.exact import snap
from mdad.irt import IRTFit, check_binary, estimate_ability, predict_correct
from mdad.methods.adaptive import IRTPreparation
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView
from mdad.methods.ridge import filled, item_means, pool_accuracy, ridge_cv

MIN_SD = 0.1  # items whose source answers vary less (fewer than about 1% of them differ) are screened out
MIN_REST_CORRELATION = 0.05  # items that track the rest of the pool less are screened out
GRID_QUANTILES = 9  # ability quantiles 0.1, 0.2, ..., 0.9 of the source models
SPLINE_KNOTS = 5
SPLINE_DEGREE = 3


def screened(scores: np.ndarray) -> np.ndarray:
    """Whether each item passes the screen: enough spread of answers and an item-rest correlation."""
    values = filled(scores, item_means(scores))
    sd = values.std(axis=0)
    rest = values.sum(axis=1, keepdims=True) - values
    centred, rest_centred = values - values.mean(axis=0), rest - rest.mean(axis=0)
    denominator = np.sqrt((centred**2).sum(axis=0) * (rest_centred**2).sum(axis=0))
    correlation = np.where(denominator > 0, (centred * rest_centred).sum(axis=0) / np.where(denominator > 0, denominator, 1.0), 0.0)
    return (sd >= MIN_SD) & (correlation >= MIN_REST_CORRELATION)


def information(a: np.ndarray, b: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    """Fisher information a^2 p (1 - p) of each item (rows) at each ability of ``thetas`` (columns), 1-D 2PL."""
    p = predict_correct(np.asarray(thetas, dtype=np.float64)[:, None], np.asarray(a, dtype=np.float64)[:, None], b).T
    return np.asarray(a, dtype=np.float64)[:, None] ** 2 * p * (1.0 - p)


def information_order(a: np.ndarray, b: np.ndarray, thetas: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """Pool positions by summed information over ``thetas``, largest first, eligible items before the others."""
    total = snap(information(a, b, thetas).sum(axis=1))
    return np.lexsort((np.arange(len(total)), -total, ~np.asarray(eligible, dtype=bool)))


def ranked_items(fit: IRTFit, scores: np.ndarray) -> np.ndarray:
    """The pool items of a 1-D ``fit`` by information summed over the grid of the source models' ability
    quantiles, largest first, the items that pass the screen on ``scores`` first."""
    thetas = np.quantile(fit.theta[:, 0], np.arange(1, GRID_QUANTILES + 1) / (GRID_QUANTILES + 1))
    return information_order(fit.a[:, 0], fit.b, thetas, screened(scores))


def spline_features(theta: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """The cubic B-spline basis of each ability at ``knots`` (linear beyond them); the ability itself
    when the knots are fewer than two distinct values."""
    from sklearn.preprocessing import SplineTransformer  # imported on use: listing the methods does not load scikit-learn

    theta = np.asarray(theta, dtype=np.float64).reshape(-1, 1)
    if len(knots) < 2:
        return theta
    spline = SplineTransformer(knots=np.asarray(knots, dtype=np.float64).reshape(-1, 1), degree=SPLINE_DEGREE, extrapolation="linear")
    return spline.fit(knots.reshape(-1, 1)).transform(theta)


def reconstruction_features(scores: np.ndarray, theta: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """The spline basis of each model's ability and its plain mean on the items (NaN: not answered)."""
    return np.column_stack([spline_features(theta, knots), np.nanmean(np.asarray(scores, dtype=np.float64), axis=1)])


@dataclass(frozen=True, kw_only=True, eq=False)
class AbilitySplineEstimate(MicroBenchmark):
    """Estimate = regression on a spline of the target's ability (MAP from its answers on the items)
    and on its plain mean on them, clipped to [0, 1]."""

    a: np.ndarray  # the items' discriminations (1-D)
    b: np.ndarray  # the items' difficulties
    knots: np.ndarray
    intercept: float
    coef: np.ndarray

    kind = "ability-spline"

    def ability(self, scores: np.ndarray) -> np.ndarray:
        values = check_binary(np.atleast_2d(scores), "For metabench the models' answers")
        return estimate_ability(values, np.asarray(self.a, dtype=np.float64)[:, None], self.b)[:, 0]

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        features = reconstruction_features(np.atleast_2d(scores), self.ability(scores), np.asarray(self.knots, dtype=np.float64))
        return np.clip(self.intercept + (features * np.asarray(self.coef, dtype=np.float64)).sum(axis=1), 0.0, 1.0)


@METHODS.register(order=83)
class Metabench(SelectionMethod):
    name = "metabench"
    description = "The k most informative items of a 1-D 2PL across the sources' ability quantiles; spline of the ability."
    scores = "binary"
    preparation = "irt-1d"  # the 1-D fit of adaptive-1d, done once per run for both
    default = False
    fitted_estimate = True  # a spline of the ability fitted to the sources' accuracies (mdad.micro.trust)

    def prepare(self, view: SourceView, rng: np.random.Generator) -> IRTPreparation:
        return IRTPreparation(view, rng, dims=1)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared: IRTPreparation) -> MicroBenchmark:
        scores = check_binary(view.scores, "For metabench the source models' scores")
        items = np.sort(ranked_items(prepared.fit, scores)[:k])
        a, b = prepared.fit.a[items, 0], prepared.fit.b[items]
        theta = estimate_ability(scores[:, items], a[:, None], b)[:, 0]
        knots = np.unique(snap(np.quantile(theta, np.linspace(0.0, 1.0, SPLINE_KNOTS))))
        fit = ridge_cv(reconstruction_features(scores[:, items], theta, knots), pool_accuracy(scores))
        return AbilitySplineEstimate(items=items, weights=np.full(k, 1.0 / k), a=a, b=b, knots=knots, intercept=fit.intercept, coef=fit.coef)
