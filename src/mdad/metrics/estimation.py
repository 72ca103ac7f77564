"""Estimation error and rank correlation, vectorised over runs (rows) and targets (columns)."""

from __future__ import annotations

import numpy as np

from mdad.metrics.pairwise import matching_arrays, pair_differences


def estimation_error(estimates: np.ndarray, truth: np.ndarray) -> float:
    """Mean absolute error over all runs and targets (accuracy units)."""
    est, tru = matching_arrays(estimates, truth)
    return float(np.mean(np.abs(est - tru)))


def kendall_tau(estimates: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between estimates and truth of the targets, one value per run.

    Computed on all target pairs at once; equals scipy.stats.kendalltau (tau-b).
    NaN for a run where either side is constant.
    """
    est, tru = matching_arrays(estimates, truth)
    return kendall_tau_from_differences(pair_differences(est), pair_differences(tru))


def kendall_tau_from_differences(de: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """Kendall's tau-b per run from the pair differences of estimates and truth (runs x pairs)."""
    se = np.sign(de)
    st = np.sign(dt)
    n_pairs = se.shape[1]
    untied_e = n_pairs - (se == 0).sum(axis=1)
    untied_t = n_pairs - (st == 0).sum(axis=1)
    denom = np.sqrt(untied_e.astype(float) * untied_t)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (se * st).sum(axis=1) / denom, np.nan)
