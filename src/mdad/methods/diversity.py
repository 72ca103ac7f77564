"""Diversity: k items drawn from a projection DPP that spreads them over the items' feature space.

An item's features are the source models' gold-option probabilities on it (their 0/1
correctness when the data has no option probabilities), reduced by PCA to 4
dimensions. Items outside the 1%-99% quantiles of any dimension are dropped, each
dimension is rescaled to [-0.99, 0.99], and k items are drawn from the discrete
orthogonal-polynomial-ensemble projection DPP on those points (see ``mdad.methods.dpp``).
The estimate is the plain mean of the target's correctness on the chosen items.

Degenerate cases, each defined rather than left to fail:
- fewer than 4 informative dimensions (few source models, items all alike): PCA keeps
  the dimensions of non-zero variance, and a dimension with no spread among the
  candidate items is left out of the monomials;
- a size k larger than the trimmed pool: the DPP runs on the whole pool, untrimmed;
- fewer than k linearly independent monomials (e.g. fewer than k distinct feature
  points): the DPP draws as many items as the monomials span and the rest are drawn
  uniformly from the remaining candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from mdad.exact import integer_grid, product_bits, snap
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView, plain_mean
from mdad.methods.dpp import ope_bases, ope_basis, sample_projection_dpp

N_COMPONENTS = 4
TRIM = 0.01
HALF_WIDTH = 0.99

# The decompositions here are small and many (one per run and size); multithreaded BLAS
# only adds synchronisation to them (10-20x slower on a busy machine), so they run on one
# thread. Parallelism comes from running tasks in several processes.
_BLAS = ThreadpoolController()


@dataclass(frozen=True)
class DiversityFeatures:
    """Size-independent work of one run: the candidate items and their rescaled features."""

    trimmed: np.ndarray  # pool positions inside the 1%-99% box of every dimension
    trimmed_points: np.ndarray  # their features, rescaled over the trimmed items
    all_points: np.ndarray  # every pool item's features, rescaled over the whole pool


def pca_scores(features: np.ndarray, n_components: int = N_COMPONENTS) -> np.ndarray:
    """Principal-component scores (rows x d) of the rows of ``features``, the same on every machine.

    d = min(n_components, number of components with non-zero variance). Computed from
    the top eigenvectors of the smaller Gram matrix of the centred features (a few times
    faster than a full SVD). The centred features are rounded to integers of
    ``product_bits`` bits (a relative precision of about 1e-6) so that the Gram matrix is
    exact; the scores are then rounded to 2**-20 of their largest magnitude (``snap``), so
    that rows equal in exact arithmetic get equal scores, and each component's sign is the
    one that makes its largest score (the first, among equal ones) positive
    (docs/reproducibility.md).
    """
    from scipy.linalg import eigh  # imported on first use: scipy.linalg costs start-up time of every command

    centred = np.asarray(features, dtype=np.float64)
    centred = centred - centred.mean(axis=0)
    rows_side = centred.shape[0] <= centred.shape[1]
    integers, unit = integer_grid(centred, product_bits(centred.shape[1] if rows_side else centred.shape[0]))
    gram = integers @ integers.T if rows_side else integers.T @ integers  # exact: integers below 2**53
    top = min(n_components, len(gram))
    values, vectors = eigh(gram, subset_by_index=[len(gram) - top, len(gram) - 1])
    values, vectors = values[::-1], vectors[:, ::-1]
    keep = values > (values[0] * 1e-10 if top else 0.0)  # zero variance, up to rounding
    scores = vectors * (np.sqrt(np.clip(values, 0.0, None)) * unit) if rows_side else (integers * unit) @ vectors
    scores = snap(scores[:, keep], axis=0)
    largest = np.argmax(np.abs(scores), axis=0)  # the first of equal magnitudes
    return scores * np.where(scores[largest, np.arange(scores.shape[1])] < 0, -1.0, 1.0)


def trim_mask(points: np.ndarray, fraction: float = TRIM) -> np.ndarray:
    """Rows inside the [fraction, 1 - fraction] quantiles of every column (bounds included)."""
    if points.shape[1] == 0:
        return np.ones(len(points), dtype=bool)
    low, high = np.quantile(points, [fraction, 1 - fraction], axis=0)
    return np.all((points >= low) & (points <= high), axis=1)


def rescale(points: np.ndarray, half_width: float = HALF_WIDTH) -> np.ndarray:
    """Each column mapped linearly onto [-half_width, half_width]; columns with no spread dropped."""
    low, high = points.min(axis=0, initial=np.inf), points.max(axis=0, initial=-np.inf)
    spread = high > low
    span = np.where(spread, high - low, 1.0)
    return (half_width * (2.0 * (points - low) / span - 1.0))[:, spread]


def diversity_features(gold_prob: np.ndarray) -> DiversityFeatures:
    """Features of every pool item from the source models' gold-option probabilities (sources x items)."""
    scores = pca_scores(np.asarray(gold_prob).T)
    keep = trim_mask(scores)
    return DiversityFeatures(trimmed=np.flatnonzero(keep), trimmed_points=rescale(scores[keep]), all_points=rescale(scores))


def dpp_items(candidates: np.ndarray, points: np.ndarray, k: int, rng: np.random.Generator, basis: np.ndarray | None = None) -> np.ndarray:
    """k distinct candidates: a DPP draw on their points, topped up uniformly if the monomials span fewer.

    ``basis`` is ``ope_basis(points, k)`` when already computed (``ope_bases``)."""
    chosen = candidates[sample_projection_dpp(ope_basis(points, k) if basis is None else basis, rng)]
    missing = k - len(chosen)
    if missing:
        rest = np.setdiff1d(candidates, chosen)
        chosen = np.concatenate([chosen, rng.choice(rest, size=missing, replace=False)])
    return chosen


@METHODS.register(order=40)
class Diversity(SelectionMethod):
    name = "diversity"
    description = (
        "k items from a projection DPP (orthogonal-polynomial ensemble) on 4 PCA features of the "
        "source models' gold-option probabilities (0/1 answers without option probabilities); plain mean."
    )

    def prepare(self, view: SourceView, rng: np.random.Generator) -> DiversityFeatures:
        with _BLAS.limit(limits=1):
            return diversity_features(view.gold_prob)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, features) -> MicroBenchmark:
        return self._choose(view, k, rng, features, None)

    def choose_sizes(
        self, view: SourceView, sizes: Sequence[int], rng_of: Callable[[int], np.random.Generator], prepared: Any
    ) -> dict[int, MicroBenchmark]:
        """Every size as ``choose`` would, the sizes drawn from the trimmed items sharing one QR
        (``ope_bases``): most of the cost of the smaller sizes."""
        features = self.prepare(view, rng_of(min(sizes))) if prepared is None else prepared
        trimmed = [k for k in sizes if k != view.n_items and len(features.trimmed) >= k]
        bases = {}
        if len(trimmed) > 1:
            with _BLAS.limit(limits=1):
                bases = ope_bases(features.trimmed_points, trimmed)
        return {k: self._choose(view, k, rng_of(k), features, bases.get(k)) for k in sizes}

    def _choose(self, view: SourceView, k: int, rng: np.random.Generator, features, basis: np.ndarray | None) -> MicroBenchmark:
        if k == view.n_items:
            return plain_mean(np.arange(k))
        if len(features.trimmed) >= k:
            candidates, points = features.trimmed, features.trimmed_points
        else:
            candidates, points = np.arange(view.n_items), features.all_points
        with _BLAS.limit(limits=1):
            return plain_mean(np.sort(dpp_items(candidates, points, k, rng, basis)))
