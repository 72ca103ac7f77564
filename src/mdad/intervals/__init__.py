"""How far to trust one micro-benchmark's numbers: intervals for estimates, probabilities for orders.

``finite``: exact finite-population intervals of the random designs; ``posterior``: their
empirical-Bayes intervals, with the source models' accuracies as prior; ``conformal``:
split-conformal intervals from held-out residuals; ``order``: the probability that an
observed order holds (exact for random designs, calibrated otherwise); ``random_designs``:
both exact answers from a random design's strata (the result objects are in mdad.estimates). Which of
them applies to a saved micro-benchmark is decided in mdad.micro.trust; this package is the
mathematics only.
"""

from mdad.estimates import EstimateIntervals, OrderProbabilities
from mdad.intervals.conformal import ConformalCalibration
from mdad.intervals.finite import count_interval, stratified_count_interval
from mdad.intervals.order import OrderCalibration, PairPrior, exact_order_probability
from mdad.intervals.posterior import AccuracyPrior, posterior_count_interval

__all__ = [
    "AccuracyPrior",
    "ConformalCalibration",
    "EstimateIntervals",
    "OrderCalibration",
    "OrderProbabilities",
    "PairPrior",
    "count_interval",
    "exact_order_probability",
    "posterior_count_interval",
    "stratified_count_interval",
]
