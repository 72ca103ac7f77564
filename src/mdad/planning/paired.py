"""Standard errors of simulated shares that hold when held-out runs share their targets (docs/plan.md#errors-and-ties).

With few models the runs of a simulation hold out mostly the same target models, and with the
strongest models as targets every run holds out the same ones: runs are not independent, so an
error computed between runs is too small. Here every share is resampled by a two-way bootstrap
over runs and over target models together (a pair counts with the weight of its run times the
weights of its two models), which carries both sources of noise. Two methods simulated with the
same seed share their runs, targets and pairs, and so the same bootstrap weights: the standard
error of their difference is that of a paired difference, much smaller than either alone when
the methods err on the same pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.seeding import rng_for

BOOTSTRAP_DRAWS = 400  # draws of the two-way bootstrap; its own noise on a standard error is about 1/sqrt(2 * 400) = 4%


@dataclass(frozen=True, eq=False)
class PairsInBin:
    """The pairs of held-out targets in the difference bin, over every run, flattened: the run of each and its two models."""

    run: np.ndarray
    first: np.ndarray
    second: np.ndarray
    runs: int

    @classmethod
    def of(cls, in_bin: np.ndarray, target_ids: np.ndarray) -> PairsInBin:
        """From the runs x pairs mask of the bin (upper-triangle pair order) and the runs x targets model indices."""
        i, j = np.triu_indices(target_ids.shape[1], 1)
        run, pair = np.nonzero(in_bin)
        return cls(run=run, first=target_ids[run, i[pair]], second=target_ids[run, j[pair]], runs=in_bin.shape[0])

    def weights(self, seed: int) -> np.ndarray:
        """draws x pairs bootstrap weights: a run's multiplicity times its two models' (draws where no pair
        is drawn are left out). The same seed and pairs give the same weights: differences stay paired."""
        models, codes = np.unique(np.concatenate([self.first, self.second]), return_inverse=True)
        first, second = codes[: len(self.first)], codes[len(self.first) :]
        rng = rng_for(seed, "plan", "bootstrap")
        by_run = rng.multinomial(self.runs, np.full(self.runs, 1 / self.runs), size=BOOTSTRAP_DRAWS).astype(float)
        by_model = rng.multinomial(len(models), np.full(len(models), 1 / len(models)), size=BOOTSTRAP_DRAWS).astype(float)
        w = by_run[:, self.run] * by_model[:, first] * by_model[:, second]
        return w[w.sum(axis=1) > 0]


def bootstrap_shares(correct: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The share of pairs ordered correctly in each bootstrap draw (``correct``: one flag per pair of :class:`PairsInBin`)."""
    return weights @ correct.astype(float) / weights.sum(axis=1)


def bootstrap_se(correct: np.ndarray, weights: np.ndarray) -> float:
    """Standard error of the share of pairs ordered correctly, over the draws."""
    return float(np.std(bootstrap_shares(correct, weights), ddof=1)) if len(weights) > 1 else float("nan")


def paired_difference(correct_a: np.ndarray, correct_b: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """(share of A minus share of B, its standard error) for two methods judged on the same pairs."""
    difference = float(correct_a.mean() - correct_b.mean())
    draws = bootstrap_shares(correct_a, weights) - bootstrap_shares(correct_b, weights)
    return difference, float(np.std(draws, ddof=1)) if len(weights) > 1 else float("nan")
