"""Estimators of a target's pool accuracy from a sample of its answers: AIPW and the audit's correction, and the
registered estimators any selection can be paired with (``ESTIMATORS``: ridge, krr, knn, forest; mdad.estimators.base)."""

from mdad.estimators.aipw import FOLDS, AIPWEstimate, aipw
from mdad.estimators.base import ESTIMATORS, Estimator

__all__ = ["ESTIMATORS", "FOLDS", "AIPWEstimate", "Estimator", "aipw"]
