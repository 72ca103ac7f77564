"""Estimators of a target's pool accuracy from a sample of its answers."""

from mdad.estimators.aipw import FOLDS, AIPWEstimate, aipw

__all__ = ["FOLDS", "AIPWEstimate", "aipw"]
