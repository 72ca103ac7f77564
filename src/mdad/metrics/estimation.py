"""Estimation error and rank correlation, vectorised over runs (rows) and targets (columns).

docs/protocol.md#meta-evaluation. Both return a small result object (as scipy.stats does):
the value over all runs and the value of every run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.metrics.base import METRICS, Metric
from mdad.metrics.pairwise import matching_arrays, pair_differences


@dataclass(frozen=True, eq=False)
class EstimationErrorResult:
    """How far estimates are from the truth, in accuracy units (0.01 = one point).

    Attributes
    ----------
    mean : float
        Mean absolute error over all runs and targets (the paper's estimation error).
    per_run : numpy.ndarray
        Mean absolute error of each run.
    bias : float
        Mean signed error (estimate minus truth): systematic over- or under-estimation.
    """

    mean: float
    per_run: np.ndarray
    bias: float

    def __float__(self) -> float:
        return self.mean


@dataclass(frozen=True, eq=False)
class KendallTauResult:
    """Kendall's tau-b between estimated and true accuracies of the targets.

    Attributes
    ----------
    per_run : numpy.ndarray
        tau-b of each run (NaN where either side is constant).
    mean : float
        Mean over the runs where it is defined (the paper's rank correlation).
    """

    per_run: np.ndarray
    mean: float

    def __float__(self) -> float:
        return self.mean


def estimation_error(estimates: np.ndarray, truth: np.ndarray) -> EstimationErrorResult:
    """Absolute and signed estimation error of runs x targets estimates against the truth.

    Parameters
    ----------
    estimates, truth : array_like
        Accuracies, runs x targets (a single run may be one-dimensional).

    Returns
    -------
    EstimationErrorResult

    Examples
    --------
    >>> error = estimation_error([[0.5, 0.7]], [[0.6, 0.7]])
    >>> round(error.mean, 3), round(error.bias, 3)
    (0.05, -0.05)
    """
    est, tru = matching_arrays(estimates, truth)
    diff = est - tru
    absolute = np.abs(diff)
    return EstimationErrorResult(mean=float(absolute.mean()), per_run=absolute.mean(axis=1), bias=float(diff.mean()))


def kendall_tau(estimates: np.ndarray, truth: np.ndarray) -> KendallTauResult:
    """Kendall's tau-b between estimates and truth of the targets, per run and on average.

    Computed on all target pairs at once; equals scipy.stats.kendalltau (tau-b).

    Parameters
    ----------
    estimates, truth : array_like
        Accuracies, runs x targets.

    Returns
    -------
    KendallTauResult
    """
    est, tru = matching_arrays(estimates, truth)
    return kendall_tau_from_differences(pair_differences(est), pair_differences(tru))


def kendall_tau_from_differences(de: np.ndarray, dt: np.ndarray) -> KendallTauResult:
    """Kendall's tau-b per run from the pair differences of estimates and truth (runs x pairs)."""
    se = np.sign(de)
    st = np.sign(dt)
    n_pairs = se.shape[1]
    untied_e = n_pairs - (se == 0).sum(axis=1)
    untied_t = n_pairs - (st == 0).sum(axis=1)
    denom = np.sqrt(untied_e.astype(float) * untied_t)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_run = np.where(denom > 0, (se * st).sum(axis=1) / denom, np.nan)
    defined = per_run[~np.isnan(per_run)]
    return KendallTauResult(per_run=per_run, mean=float(defined.mean()) if defined.size else float("nan"))


METRICS.add(
    Metric(
        "error",
        "error",
        "mean |estimate - accuracy|",
        lambda d: estimation_error(d.estimates, d.truth).mean,
        scale=100.0,
        unit="pts",
        digits=2,
        better="lower",
    ),
    order=10,
)
METRICS.add(
    Metric(
        "kendall_tau",
        "tau",
        "Kendall tau with the true ranking",
        lambda d: kendall_tau_from_differences(d.estimate_differences, d.truth_differences).mean,
    ),
    order=20,
)
