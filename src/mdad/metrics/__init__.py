"""Meta-evaluation metrics: estimation error, Kendall tau, pairwise agreement, MDAD."""

from mdad.metrics.estimation import estimation_error, kendall_tau
from mdad.metrics.pairwise import (
    AgreementCurve,
    Mdad,
    agreement_curve,
    bin_of,
    mdad_from_curve,
    pair_differences,
    pairwise_agreement,
)

__all__ = [
    "AgreementCurve",
    "Mdad",
    "agreement_curve",
    "bin_of",
    "estimation_error",
    "kendall_tau",
    "mdad_from_curve",
    "pair_differences",
    "pairwise_agreement",
]
