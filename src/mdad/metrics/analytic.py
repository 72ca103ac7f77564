"""Agreement curve and MDAD of the random designs computed from a response matrix alone.

What is computed (the "full pool" statement): every pair of models is judged on the items
both answered; a micro-benchmark of k of those items is drawn by the design, each model's
estimate is its plain mean on them, and the truth is its mean on all of them. The exact
probability that the micro-benchmark orders the pair as the truth does (ties disagree) is
averaged over the real pairs whose true difference falls in each 0.5-point bin: the
expected value of the simulated agreement curve of that design. In the paper's protocol
the micro-benchmark comes from a random seen half instead; :func:`pair_stats` accepts any
item subset and :func:`mdad.report.analytic.analytic_curves_for_store` computes that
version on a stored run's own splits.

0/1 scores use the exact results of :mod:`mdad.metrics.exact`; continuous scores the
normal approximation.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.methods.random import equal_allocation, equal_allocation_base
from mdad.metrics import exact
from mdad.metrics.pairwise import AgreementCurve, bin_of
from mdad.seeding import rng_for

DESIGNS = ("random", "random-stratified-equal", "random-stratified-proportional")
PAIR_BLOCK = 2048
ALLOCATION_DRAWS = 100


@dataclass(frozen=True)
class PairStats:
    """What the random designs need to know about every pair (first, second) of models.

    Per pair and stratum (subtask): ``sizes`` = items both models answered; for 0/1 scores
    ``n_plus`` / ``n_minus`` = items only the first / only the second got right; for any
    scores ``sum_d`` / ``sum_d2`` = sum of the per-item difference first - second and of its square.
    """

    first: np.ndarray
    second: np.ndarray
    sizes: np.ndarray  # pairs x strata
    n_plus: np.ndarray
    n_minus: np.ndarray
    sum_d: np.ndarray
    sum_d2: np.ndarray
    binary: bool
    strata: np.ndarray  # subtask names

    @property
    def n_pairs(self) -> int:
        return len(self.first)

    @property
    def pool(self) -> np.ndarray:
        return self.sizes.sum(axis=1)

    @property
    def diff_points(self) -> np.ndarray:
        """True accuracy difference first - second on the pair's pool, in points."""
        return 100.0 * self.sum_d.sum(axis=1) / np.maximum(self.pool, 1)

    def subset(self, mask: np.ndarray) -> PairStats:
        take = {f: getattr(self, f)[mask] for f in ("first", "second", "sizes", "n_plus", "n_minus", "sum_d", "sum_d2")}
        return PairStats(**take, binary=self.binary, strata=self.strata)


def pair_stats(matrix: ResponseMatrix, models=None, items=None, pairs: tuple[np.ndarray, np.ndarray] | None = None) -> PairStats:
    """Pair statistics of the given models (indices, default all) on the given items (default all).

    ``pairs`` = (first, second) index arrays into ``models`` picks pairs; by default every
    pair i < j. Cells that are NaN are left out pair by pair (a pair uses the items both answered).
    """
    models = np.arange(matrix.n_models) if models is None else np.asarray(models)
    items = np.arange(matrix.n_items) if items is None else np.asarray(items)
    scores = matrix.scores[np.ix_(models, items)].astype(np.float64)
    codes = matrix.subtask_codes[items]
    strata = np.unique(codes)
    valid = ~np.isnan(scores)
    z = np.where(valid, scores, 0.0)
    v = valid.astype(np.float64)
    first, second = pairs if pairs is not None else np.triu_indices(len(models), k=1)
    out = {key: np.empty((len(first), len(strata))) for key in ("sizes", "sum_d", "sum_d2", "n_plus", "n_minus")}
    for col, s in enumerate(strata):
        cols = codes == s
        zs, vs = z[:, cols], v[:, cols]
        zv = zs @ vs.T  # sum over common items of the row model's score
        zz = zs @ zs.T
        z2v = (zs * zs) @ vs.T
        out["sizes"][:, col] = (vs @ vs.T)[first, second]
        out["sum_d"][:, col] = zv[first, second] - zv[second, first]
        out["sum_d2"][:, col] = z2v[first, second] + z2v[second, first] - 2 * zz[first, second]
        out["n_plus"][:, col] = zv[first, second] - zz[first, second]
        out["n_minus"][:, col] = zv[second, first] - zz[first, second]
    binary = matrix.is_binary
    as_int = {key: np.rint(val).astype(np.int64) for key, val in out.items() if key in ("sizes", "n_plus", "n_minus")}
    return PairStats(
        first=models[first], second=models[second], sizes=as_int["sizes"], n_plus=as_int["n_plus"],
        n_minus=as_int["n_minus"], sum_d=out["sum_d"], sum_d2=out["sum_d2"], binary=binary,
        strata=matrix.subtask_names[strata],
    )


def check_design(design: str) -> None:
    if design not in DESIGNS:
        raise MdadError(f"No exact answer for method {design!r}; the analytic methods are {', '.join(DESIGNS)}.")


def sign_probabilities(stats: PairStats, k: int, design: str = "random", seed: int = 0) -> exact.SignProbabilities:
    """(P(estimate ranks first above second), P(below)) for every pair, for a k-item draw of ``design``.

    0/1 scores: exact for random and random-stratified-equal; for random-stratified-proportional
    exact given the allocation of items to subtasks, averaged over ALLOCATION_DRAWS allocations
    drawn from the design (seeded by ``seed``; see :func:`_allocation_groups` for missing cells). Other scores: normal approximation (finite-population
    corrected per subtask), averaged over the design's allocations.
    """
    check_design(design)
    if stats.n_pairs == 0:
        return exact.SignProbabilities(np.zeros(0), np.zeros(0))
    small = int(stats.pool.min())
    if k < 1 or k > small:
        raise MdadError(f"Size {k} must lie between 1 and the smallest pool of a pair ({small} items).")
    if design == "random" or stats.sizes.shape[1] == 1:
        if stats.binary:
            return exact.sign_probabilities(stats.pool, k, stats.n_plus.sum(axis=1), stats.n_minus.sum(axis=1))
        return exact.SignProbabilities(*_normal_scores(stats, np.full((1, 1), k), np.ones(1), pooled=True))
    pos, neg = np.zeros(stats.n_pairs), np.zeros(stats.n_pairs)
    for mask, law_sizes in _allocation_groups(design, stats.sizes, k):
        exact_equal = stats.binary and design == "random-stratified-equal"
        if not exact_equal:
            rng = rng_for(seed, "analytic-allocation", design, k, *law_sizes.tolist())
            allocations, weights = design_allocations(design, law_sizes, k, rng)
        members = np.flatnonzero(mask)
        # blocks of pairs bound the memory of the per-pair spectra (pairs x FFT length)
        for block in np.array_split(members, max(1, -(-len(members) // PAIR_BLOCK))):
            part = stats.subset(block)
            if exact_equal:
                pos[block], neg[block] = exact.equal_design_sign_probabilities(
                    law_sizes, part.n_plus, part.n_minus, k, part.sizes)
            elif stats.binary:
                pos[block], neg[block] = exact.stratified_sign_probabilities(
                    part.sizes, part.n_plus, part.n_minus, allocations, weights)
            else:
                pos[block], neg[block] = _normal_scores(part, allocations, weights, pooled=False)
    return exact.SignProbabilities(pos, neg)


def _allocation_groups(design: str, sizes: np.ndarray, k: int):
    """Pairs that share the law of their allocation to subtasks, with subtask sizes that give that law.

    Without missing cells every pair has the same subtask sizes: one group, exact. With
    missing cells pairs' sizes differ: the equal design is grouped by its exact allocation
    (the same for most pairs); for the proportional design all pairs use the allocation law
    of the largest size of each subtask, an approximation of the weights 1/size when a few
    items are missing.
    """
    rows, inverse = exact.unique_rows(*sizes.T)
    if len(rows) == 1 or design == "random-stratified-proportional":
        return [(np.ones(len(sizes), bool), rows.max(axis=0))]
    laws = [np.concatenate(equal_allocation_base(row, k)).tobytes() for row in rows]
    keys, law_of_row = np.unique(laws, return_inverse=True)
    law_of_pair = law_of_row.ravel()[inverse]
    return [(law_of_pair == g, rows[np.argmax(law_of_row.ravel() == g)]) for g in range(len(keys))]


def design_allocations(design: str, sizes: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Allocations of k items to subtasks under a stratified design, with their probabilities.

    Equal: every possible choice of the subtasks that get the remainder when there are at
    most ALLOCATION_DRAWS of them (exact), else that many draws. Proportional: Monte Carlo.
    """
    if design == "random-stratified-proportional":
        return exact.proportional_allocations(sizes, k, rng, ALLOCATION_DRAWS)
    base, room = equal_allocation_base(sizes, k)
    r = int(k - base.sum())
    if comb(len(room), r) <= ALLOCATION_DRAWS:
        allocs = []
        for extra in combinations(room.tolist(), r):
            alloc = base.copy()
            alloc[list(extra)] += 1
            allocs.append(alloc)
        return np.array(allocs), np.full(len(allocs), 1.0 / len(allocs))
    draws = np.array([equal_allocation(sizes, k, rng) for _ in range(ALLOCATION_DRAWS)])
    allocations, freq = np.unique(draws, axis=0, return_counts=True)
    return allocations, freq / ALLOCATION_DRAWS


def _normal_scores(stats: PairStats, allocations: np.ndarray, weights: np.ndarray, pooled: bool):
    """Normal approximation for any scores, mixed over allocations (A x strata)."""
    if pooled:
        sizes = stats.pool[:, None].astype(float)
        sum_d, sum_d2 = stats.sum_d.sum(axis=1, keepdims=True), stats.sum_d2.sum(axis=1, keepdims=True)
    else:
        sizes, sum_d, sum_d2 = stats.sizes.astype(float), stats.sum_d, stats.sum_d2
    mean = sum_d / np.maximum(sizes, 1)
    var = np.maximum(sum_d2 / np.maximum(sizes, 1) - mean**2, 0.0)
    pos, neg = np.zeros(stats.n_pairs), np.zeros(stats.n_pairs)
    for alloc, w in zip(allocations, weights):
        kk = alloc[None, :].astype(float)
        fpc = np.where(sizes > 1, (sizes - kk) / np.maximum(sizes - 1, 1), 0.0)
        total_mean = (kk * mean).sum(axis=1)
        total_var = (kk * var * fpc).sum(axis=1)
        p, n = exact.normal_tails(total_mean, total_var, 0.0)
        pos += w * p
        neg += w * n
    return pos, neg


def agreement_probabilities(stats: PairStats, k: int, design: str = "random", truth_sign=None, seed: int = 0) -> np.ndarray:
    """P(the k-item micro-benchmark orders each pair as the truth does); truth = the pair's pool by default."""
    pos, neg = sign_probabilities(stats, k, design, seed)
    truth = np.sign(stats.sum_d.sum(axis=1)) if truth_sign is None else truth_sign
    return exact.agreement(pos, neg, truth)


def mean_agreement_by_size(stats: PairStats, sizes, design: str = "random", seed: int = 0) -> np.ndarray:
    """Mean over the pairs of ``stats`` of P(correct order), for every size in ``sizes``.

    Uniform sampling of 0/1 scores evaluates all sizes in one broadcast call (pairs sharing
    (N, k, n+, n-) are computed once); the other designs take one call per size.
    """
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    truth = np.sign(stats.sum_d.sum(axis=1))
    if stats.binary and (design == "random" or stats.sizes.shape[1] == 1) and len(sizes):
        check_design(design)
        small = int(stats.pool.min())
        if sizes.min() < 1 or sizes.max() > small:
            raise MdadError(f"Sizes must lie between 1 and the smallest pool of a pair ({small} items).")
        k = sizes[:, None]
        pos, neg = exact.sign_probabilities(stats.pool[None, :], k, stats.n_plus.sum(axis=1)[None, :],
                                            stats.n_minus.sum(axis=1)[None, :])
        return exact.agreement(pos, neg, truth[None, :]).mean(axis=1)
    return np.array([agreement_probabilities(stats, int(k), design, seed=seed).mean() for k in sizes])


def expected_curve(probability: np.ndarray, diff_points: np.ndarray, *, bin_width: float = DEFAULT_BIN_WIDTH) -> AgreementCurve:
    """Bins of |true difference| with the expected number of agreeing pairs (a float) per bin."""
    bins = bin_of(np.ravel(diff_points), bin_width)
    pairs = np.bincount(bins)
    agreed = np.bincount(bins, weights=np.ravel(probability), minlength=len(pairs))
    keep = pairs > 0
    return AgreementCurve(lower=np.flatnonzero(keep) * bin_width, pairs=pairs[keep], agreed=agreed[keep], bin_width=bin_width)


def analytic_curve(
    matrix: ResponseMatrix, k: int, *, design: str = "random", models=None, bin_width: float = DEFAULT_BIN_WIDTH,
    seed: int = 0,
) -> AgreementCurve:
    """Expected agreement curve of a k-item ``design`` micro-benchmark over all pairs of ``models``."""
    stats = pair_stats(matrix, models)
    return expected_curve(agreement_probabilities(stats, k, design, seed=seed), stats.diff_points, bin_width=bin_width)


@dataclass(frozen=True, eq=False)
class ExactMdad:
    """MDAD of a random design computed exactly from the data (no simulation, so no interval).

    Attributes
    ----------
    value : float
        Lower edge (points) of the first bin of true difference whose mean probability of the
        correct order reaches ``threshold``; NaN when none does ("not reached").
    threshold : float
    curve : AgreementCurve
        The expected agreement curve it was read from (``agreed`` holds expected counts).
    """

    value: float
    threshold: float
    curve: AgreementCurve

    @property
    def reached(self) -> bool:
        return not np.isnan(self.value)

    def __float__(self) -> float:
        return self.value


def analytic_mdad(
    matrix: ResponseMatrix, k: int, *, design: str = "random", threshold: float = DEFAULT_THRESHOLD, models=None,
    seed: int = 0,
) -> ExactMdad:
    """MDAD of a k-item ``design`` micro-benchmark over all pairs of ``models`` (default all), exactly.

    Parameters
    ----------
    matrix : ResponseMatrix
    k : int
        Items of the micro-benchmark.
    design : str
        One of ``DESIGNS``.
    threshold : float
        Probability of the correct order that defines MDAD.
    models : array_like, optional
        Indices of the models whose pairs count.
    seed : int
        Seeds the allocation draws of the proportional design.

    Returns
    -------
    ExactMdad
    """
    check_threshold(threshold)
    curve = analytic_curve(matrix, k, design=design, models=models, seed=seed)
    return ExactMdad(value=curve.crossing(threshold), threshold=threshold, curve=curve)
