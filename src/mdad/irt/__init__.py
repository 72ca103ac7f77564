"""Item response theory: the multidimensional 2PL fit and ability estimation with fixed items."""

from mdad.irt.ability import estimate_ability, estimate_items, predict_correct
from mdad.irt.model import IRTFit, Priors, check_binary, fit_irt, neg_log_posterior, sigmoid

__all__ = ["IRTFit", "Priors", "check_binary", "estimate_ability", "estimate_items", "fit_irt", "neg_log_posterior", "predict_correct", "sigmoid"]
