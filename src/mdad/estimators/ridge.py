"""``ridge``: the ridge regression of the regression baselines (mdad.methods.ridge) as an estimator any selection can use.

Ridge regression from the source models' scores on the chosen items to their pool accuracy, the
penalty by leave-one-out error (scikit-learn's ``RidgeCV`` defaults), clipped to [0, 1]: what
``random-regression`` and ``lasso`` estimate with, behind another method's items.
"""

from __future__ import annotations

import numpy as np

from mdad.estimators.base import ESTIMATORS, Estimator
from mdad.methods.base import MicroBenchmark, SourceView
from mdad.methods.ridge import regression_on


@ESTIMATORS.register(order=10)
class RidgeEstimator(Estimator):
    name = "ridge"
    description = "ridge regression (RidgeCV, penalty by leave-one-out error) from the item scores to the pool accuracy."

    def fit(self, view: SourceView, items: np.ndarray, rng: np.random.Generator) -> MicroBenchmark:
        return regression_on(view.scores, items)
