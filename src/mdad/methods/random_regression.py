"""Random items and a regression to the pool accuracy: the benchmark-prediction study's strongest simple baselines.

- ``random-regression`` (the reference's Random-Sampling-Learn): k pool items uniformly at
  random; a ridge regression (``mdad.methods.ridge``: scikit-learn's ``RidgeCV``, penalty by
  leave-one-out error) from the source models' scores on them to their pool accuracy. The
  estimate is its prediction for the target's scores, clipped to [0, 1].
- ``random-search-regression`` (Random-Search-Learn): SEARCH_DRAWS random draws of k items;
  the source models are split once per run into 75% for fitting and 25% for validation; the
  draw whose regression has the least mean absolute error on the validation models is kept and
  refitted on all source models.

Draws and splits come from the generator handed to ``choose``; validation errors are rounded
(``mdad.exact.snap``) before the least is taken, ties going to the earlier draw.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.exact import snap
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView
from mdad.methods.ridge import filled, item_means, pool_accuracy, regression_on, ridge_cv

SEARCH_DRAWS = 50  # the reference draws 10,000; 50 keep the grid's cost near tinyBenchmarks' (docs/protocol.md)
FIT_SHARE = 0.75  # the reference's share of source models that fit each draw's regression


@METHODS.register(order=80)
class RandomRegression(SelectionMethod):
    name = "random-regression"
    description = "k seen items uniformly at random; ridge regression (RidgeCV) from their scores to the pool accuracy."
    default = False
    fitted_estimate = True  # a regression fitted to the sources' scores on the chosen items (mdad.micro.trust)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared) -> MicroBenchmark:
        return regression_on(view.scores, np.sort(rng.choice(view.n_items, size=k, replace=False)))


def validation_error(scores: np.ndarray, items: np.ndarray, fit_rows: np.ndarray, check_rows: np.ndarray, truth: np.ndarray) -> float:
    """Mean absolute error on ``check_rows`` of the ridge regression fitted on ``fit_rows``, from ``items``."""
    on_items = scores[:, items]
    values = filled(on_items, item_means(on_items[fit_rows]))
    fit = ridge_cv(values[fit_rows], truth[fit_rows])
    predicted = fit.intercept + (values[check_rows] * fit.coef).sum(axis=1)
    return float(np.mean(np.abs(predicted - truth[check_rows])))


@METHODS.register(order=81)
class RandomSearchRegression(SelectionMethod):
    name = "random-search-regression"
    description = f"The best of {SEARCH_DRAWS} random draws of k items by validation error on the sources; ridge regression."
    default = False
    fitted_estimate = True  # a regression fitted to the sources' scores on the chosen items (mdad.micro.trust)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared) -> MicroBenchmark:
        n = view.scores.shape[0]
        order = rng.permutation(n)
        cut = min(max(2, int(n * FIT_SHARE)), n - 1)
        fit_rows, check_rows = np.sort(order[:cut]), np.sort(order[cut:])
        truth = pool_accuracy(view.scores)
        draws = [np.sort(rng.choice(view.n_items, size=k, replace=False)) for _ in range(SEARCH_DRAWS)]
        if n < 3:  # too few source models to hold some out: the first draw, as random-regression
            return regression_on(view.scores, draws[0])
        with threadpool_limits(limits=1, user_api="blas"):  # many small fits: BLAS threads cost more than they give
            errors = snap(np.array([validation_error(view.scores, d, fit_rows, check_rows, truth) for d in draws]))
        return regression_on(view.scores, draws[int(np.argmin(errors))])
