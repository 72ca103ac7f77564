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

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.methods import METHODS, designs
from mdad.methods.base import ExactDesign
from mdad.methods.random import equal_allocation, equal_allocation_base
from mdad.metrics import exact
from mdad.metrics.pairwise import AgreementCurve, bin_of
from mdad.seeding import rng_for

DESIGNS = designs()  # the methods that declare an exact random design (mdad.methods.base.SelectionMethod.exact_design)
# The key of each stratified design's seeded allocation draws: the name of the built-in method that first had them,
# kept so that every method declaring the design draws (and answers) the same as the built-in.
ALLOCATION_KEYS: dict[ExactDesign, str] = {
    "stratified-equal": "random-stratified-equal",
    "stratified-proportional": "random-stratified-proportional",
}
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
    Memory grows with the number of pairs; :func:`iter_pair_stats` visits every pair i < j in
    blocks of bounded size instead.
    """
    if pairs is None:
        blocks = list(iter_pair_stats(matrix, models, items))
        return concatenate(blocks) if blocks else _empty_stats(matrix, items)
    models = np.arange(matrix.n_models) if models is None else np.asarray(models)
    first, second = pairs
    used = np.unique(np.concatenate([first, second]))
    position = np.searchsorted(used, first), np.searchsorted(used, second)
    columns = _Columns(matrix, models[used], items)
    out = {key: np.empty((len(first), len(columns.strata))) for key in _COUNTS}
    for col, part in enumerate(columns.strata_parts()):
        for key, values in part.gram(slice(None), slice(None)).items():
            out[key][:, col] = values(*position)
    return _as_stats(out, models[first], models[second], matrix, columns)


_COUNTS = ("sizes", "sum_d", "sum_d2", "n_plus", "n_minus")
PAIR_BLOCK_ELEMENTS = 1 << 21  # pairs x strata held at once by iter_pair_stats (~16 MB per statistic)


class _Columns:
    """The scores of some models on some items, split by subtask, with what the pair sums need."""

    def __init__(self, matrix: ResponseMatrix, models: np.ndarray, items=None):
        items = np.arange(matrix.n_items) if items is None else np.asarray(items)
        everything = len(models) == matrix.n_models and np.array_equal(models, np.arange(matrix.n_models))
        scores = matrix.scores if everything else matrix.scores[models]
        if not np.array_equal(items, np.arange(matrix.n_items)):
            scores = scores[:, items]
        self.binary = matrix.is_binary
        # 0/1 scores: sums of products are counts below 2**24, exact in float32 (twice as fast as float64)
        self.scores = scores if self.binary else scores.astype(np.float64)
        self.codes = matrix.subtask_codes[items]
        self.strata = np.unique(self.codes)

    def strata_parts(self):
        for s in self.strata:
            cols = self.codes == s
            yield _Stratum(self.scores if cols.all() else self.scores[:, cols], self.binary)


class _Stratum:
    def __init__(self, scores: np.ndarray, binary: bool):
        self.valid = ~np.isnan(scores)
        self.complete = bool(self.valid.all())
        self.z = scores if self.complete else np.where(self.valid, scores, 0).astype(scores.dtype)
        self.v = None if self.complete else self.valid.astype(scores.dtype)
        self.z2 = self.z if binary else self.z * self.z
        self.n = scores.shape[1]
        if self.complete:
            self.row_z = self.z.sum(axis=1, dtype=np.float64)
            self.row_z2 = self.z2.sum(axis=1, dtype=np.float64)

    def gram(self, rows: slice, cols: slice) -> dict:
        """Per statistic, a function (i, j) -> values for pairs (row i of ``rows``, row j of ``cols``)."""
        zz = (self.z[rows] @ self.z[cols].T).astype(np.float64)
        if self.v is None:  # complete: no missing cells
            zr, z2r = self.row_z[rows], self.row_z2[rows]
            zc, z2c = self.row_z[cols], self.row_z2[cols]
            return {
                "sizes": lambda i, j: np.full(len(i), float(self.n)),
                "sum_d": lambda i, j: zr[i] - zc[j],
                "sum_d2": lambda i, j: z2r[i] + z2c[j] - 2 * zz[i, j],
                "n_plus": lambda i, j: zr[i] - zz[i, j],
                "n_minus": lambda i, j: zc[j] - zz[i, j],
            }
        zv = (self.z[rows] @ self.v[cols].T).astype(np.float64)  # row model's sum over common items
        vz = (self.v[rows] @ self.z[cols].T).astype(np.float64)  # column model's sum over common items
        z2v = (self.z2[rows] @ self.v[cols].T).astype(np.float64)
        vz2 = (self.v[rows] @ self.z2[cols].T).astype(np.float64)
        vv = (self.v[rows] @ self.v[cols].T).astype(np.float64)
        return {
            "sizes": lambda i, j: vv[i, j],
            "sum_d": lambda i, j: zv[i, j] - vz[i, j],
            "sum_d2": lambda i, j: z2v[i, j] + vz2[i, j] - 2 * zz[i, j],
            "n_plus": lambda i, j: zv[i, j] - zz[i, j],
            "n_minus": lambda i, j: vz[i, j] - zz[i, j],
        }


def _as_stats(out: dict, first: np.ndarray, second: np.ndarray, matrix: ResponseMatrix, columns: _Columns) -> PairStats:
    as_int = {key: np.rint(out[key]).astype(np.int64) for key in ("sizes", "n_plus", "n_minus")}
    return PairStats(
        first=first,
        second=second,
        sizes=as_int["sizes"],
        n_plus=as_int["n_plus"],
        n_minus=as_int["n_minus"],
        sum_d=out["sum_d"],
        sum_d2=out["sum_d2"],
        binary=columns.binary,
        strata=matrix.subtask_names[columns.strata],
    )


def _empty_stats(matrix: ResponseMatrix, items=None) -> PairStats:
    codes = matrix.subtask_codes if items is None else matrix.subtask_codes[np.asarray(items)]
    strata = np.unique(codes)
    none = np.zeros((0, len(strata)))
    return PairStats(
        first=np.zeros(0, np.int64),
        second=np.zeros(0, np.int64),
        sizes=none.astype(np.int64),
        n_plus=none.astype(np.int64),
        n_minus=none.astype(np.int64),
        sum_d=none,
        sum_d2=none,
        binary=matrix.is_binary,
        strata=matrix.subtask_names[strata],
    )


def concatenate(parts: list[PairStats]) -> PairStats:
    """One PairStats holding the pairs of several (same models' strata)."""
    take = {f: np.concatenate([getattr(p, f) for p in parts]) for f in ("first", "second", *_COUNTS)}
    return PairStats(**take, binary=parts[0].binary, strata=parts[0].strata)


def iter_pair_stats(matrix: ResponseMatrix, models=None, items=None, *, block_elements: int = PAIR_BLOCK_ELEMENTS) -> Iterator[PairStats]:
    """The statistics of every pair i < j of ``models`` (default all) on ``items``, in blocks of pairs.

    The pairs come in the order of ``np.triu_indices``; each block holds the pairs of a run of
    first models, about ``block_elements`` pairs x strata, so memory does not grow with the
    number of pairs.
    """
    models = np.arange(matrix.n_models) if models is None else np.asarray(models)
    columns = _Columns(matrix, models, items)
    parts = list(columns.strata_parts())
    n = len(models)
    rows_per_block = max(1, block_elements // max(1, n * len(parts)))
    for start in range(0, n - 1, rows_per_block):
        stop = min(n - 1, start + rows_per_block)
        r, c = np.triu_indices(stop - start, k=1, m=n - start)
        out = {key: np.empty((len(r), len(parts))) for key in _COUNTS}
        for col, part in enumerate(parts):
            for key, values in part.gram(slice(start, stop), slice(start, n)).items():
                out[key][:, col] = values(r, c)
        yield _as_stats(out, models[start + r], models[start + c], matrix, columns)


def streamed_curve(
    matrix: ResponseMatrix, k: int, design: str = "random", *, models=None, bin_width: float = DEFAULT_BIN_WIDTH, seed: int = 0
) -> AgreementCurve:
    """:func:`analytic_curve` over every pair of ``models``, computed block by block in bounded memory."""
    pairs, agreed = np.zeros(0), np.zeros(0)
    law = _law_sizes(matrix, models, design)
    for stats in iter_pair_stats(matrix, models):
        probs = agreement_probabilities(stats, k, design, seed=seed, law_sizes=law)
        bins = bin_of(stats.diff_points, bin_width)
        width = max(len(pairs), int(bins.max()) + 1 if len(bins) else 0)
        pairs = np.pad(pairs, (0, width - len(pairs))) + np.bincount(bins, minlength=width)
        agreed = np.pad(agreed, (0, width - len(agreed))) + np.bincount(bins, weights=probs, minlength=width)
    keep = pairs > 0
    return AgreementCurve(lower=np.flatnonzero(keep) * bin_width, pairs=pairs[keep].astype(np.int64), agreed=agreed[keep], bin_width=bin_width)


def pairs_within(matrix: ResponseMatrix, keep, *, models=None) -> PairStats:
    """The pairs of ``models`` for which ``keep(stats) -> mask`` holds, gathered block by block."""
    parts = [stats.subset(keep(stats)) for stats in iter_pair_stats(matrix, models)]
    parts = [p for p in parts if p.n_pairs]
    return concatenate(parts) if parts else _empty_stats(matrix)


def _law_sizes(matrix: ResponseMatrix, models, design: str) -> np.ndarray | None:
    """For the proportional design with missing cells: the largest size of each subtask over all pairs,
    the allocation law every pair uses (see :func:`_allocation_groups`), found before the blocks so
    that every block uses the same law."""
    if design_kind(design) != "stratified-proportional" or not matrix.n_missing or len(matrix.subtask_names) < 2:
        return None
    largest = None
    for stats in iter_pair_stats(matrix, models):
        top = stats.sizes.max(axis=0)
        largest = top if largest is None else np.maximum(largest, top)
    return largest


def design_kind(design: str) -> ExactDesign:
    """The exact random design the method named ``design`` declares (``exact_design``), what every answer here
    follows, so that a method declaring a built-in's design gets the built-in's answers; other methods are an error."""
    kind = METHODS.get(design).exact_design() if isinstance(design, str) and design in METHODS else None
    if kind is None:
        raise MdadError(f"No exact answer for method {design!r}; the analytic methods are {', '.join(designs())}.")
    return kind


def has_exact_answer(method: str) -> bool:
    """Whether the method named ``method`` declares an exact random design (``exact_design``)."""
    return method in METHODS and METHODS.get(method).exact_design() is not None


def check_design(design: str) -> None:
    """Refuse a method without an exact random design (see :func:`design_kind`)."""
    design_kind(design)


def sign_probabilities(
    stats: PairStats, k: int, design: str = "random", seed: int = 0, law_sizes: np.ndarray | None = None
) -> exact.SignProbabilities:
    """(P(estimate ranks first above second), P(below)) for every pair, for a k-item draw of ``design``.

    0/1 scores: exact for random and random-stratified-equal; for random-stratified-proportional
    exact given the allocation of items to subtasks, averaged over ALLOCATION_DRAWS allocations
    drawn from the design (seeded by ``seed``; see :func:`_allocation_groups` for missing cells).
    Other scores: normal approximation (finite-population
    corrected per subtask), averaged over the design's allocations.
    """
    kind = design_kind(design)
    if stats.n_pairs == 0:
        return exact.SignProbabilities(np.zeros(0), np.zeros(0))
    small = int(stats.pool.min())
    if k < 1 or k > small:
        raise MdadError(f"Size {k} must lie between 1 and the smallest pool of a pair ({small} items).")
    if kind == "uniform" or stats.sizes.shape[1] == 1:
        if stats.binary:
            return exact.sign_probabilities(stats.pool, k, stats.n_plus.sum(axis=1), stats.n_minus.sum(axis=1))
        return exact.SignProbabilities(*_normal_scores(stats, np.full((1, 1), k), np.ones(1), pooled=True))
    pos, neg = np.zeros(stats.n_pairs), np.zeros(stats.n_pairs)
    for mask, group_sizes in _allocation_groups(kind, stats.sizes, k, law_sizes):
        exact_equal = stats.binary and kind == "stratified-equal"
        if not exact_equal:
            rng = rng_for(seed, "analytic-allocation", ALLOCATION_KEYS[kind], k, *group_sizes.tolist())
            allocations, weights = design_allocations(kind, group_sizes, k, rng)
        members = np.flatnonzero(mask)
        # blocks of pairs bound the memory of the per-pair spectra (pairs x FFT length)
        for block in np.array_split(members, max(1, -(-len(members) // PAIR_BLOCK))):
            part = stats.subset(block)
            if exact_equal:
                pos[block], neg[block] = exact.equal_design_sign_probabilities(group_sizes, part.n_plus, part.n_minus, k, part.sizes)
            elif stats.binary:
                pos[block], neg[block] = exact.stratified_sign_probabilities(part.sizes, part.n_plus, part.n_minus, allocations, weights)
            else:
                pos[block], neg[block] = _normal_scores(part, allocations, weights, pooled=False)
    return exact.SignProbabilities(pos, neg)


def _allocation_groups(kind: ExactDesign, sizes: np.ndarray, k: int, law_sizes: np.ndarray | None = None):
    """Pairs that share the law of their allocation to subtasks, with subtask sizes that give that law.

    Without missing cells every pair has the same subtask sizes: one group, exact. With
    missing cells pairs' sizes differ: the equal design is grouped by its exact allocation
    (the same for most pairs); for the proportional design all pairs use the allocation law
    of the largest size of each subtask (``law_sizes`` when given: the largest over all pairs, not
    only these), an approximation of the weights 1/size when a few items are missing.
    """
    rows, inverse = exact.unique_rows(*sizes.T)
    if len(rows) == 1 or kind == "stratified-proportional":
        return [(np.ones(len(sizes), bool), rows.max(axis=0) if law_sizes is None else law_sizes)]
    laws = [np.concatenate(equal_allocation_base(row, k)).tobytes() for row in rows]
    keys, law_of_row = np.unique(laws, return_inverse=True)
    law_of_pair = law_of_row.ravel()[inverse]
    return [(law_of_pair == g, rows[np.argmax(law_of_row.ravel() == g)]) for g in range(len(keys))]


def design_allocations(kind: ExactDesign, sizes: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Allocations of k items to subtasks under the stratified design ``kind``, with their probabilities.

    Equal: every possible choice of the subtasks that get the remainder when there are at
    most ALLOCATION_DRAWS of them (exact), else that many draws. Proportional: Monte Carlo.
    """
    if kind == "stratified-proportional":
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
    for alloc, w in zip(allocations, weights, strict=True):
        kk = alloc[None, :].astype(float)
        fpc = np.where(sizes > 1, (sizes - kk) / np.maximum(sizes - 1, 1), 0.0)
        total_mean = (kk * mean).sum(axis=1)
        total_var = (kk * var * fpc).sum(axis=1)
        p, n = exact.normal_tails(total_mean, total_var, 0.0)
        pos += w * p
        neg += w * n
    return pos, neg


def agreement_probabilities(
    stats: PairStats, k: int, design: str = "random", truth_sign=None, seed: int = 0, law_sizes: np.ndarray | None = None
) -> np.ndarray:
    """P(the k-item micro-benchmark orders each pair as the truth does); truth = the pair's pool by default."""
    pos, neg = sign_probabilities(stats, k, design, seed, law_sizes)
    truth = np.sign(stats.sum_d.sum(axis=1)) if truth_sign is None else truth_sign
    return exact.agreement(pos, neg, truth)


def mean_agreement_by_size(stats: PairStats, sizes, design: str = "random", seed: int = 0) -> np.ndarray:
    """Mean over the pairs of ``stats`` of P(correct order), for every size in ``sizes``.

    Uniform sampling of 0/1 scores evaluates all sizes in one broadcast call (pairs sharing
    (N, k, n+, n-) are computed once); the other designs take one call per size.
    """
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    truth = np.sign(stats.sum_d.sum(axis=1))
    if stats.binary and (design_kind(design) == "uniform" or stats.sizes.shape[1] == 1) and len(sizes):
        small = int(stats.pool.min())
        if sizes.min() < 1 or sizes.max() > small:
            raise MdadError(f"Sizes must lie between 1 and the smallest pool of a pair ({small} items).")
        # pairs alike in (pool, n+, n-, truth) count once; blocks of them bound the sizes x pairs arrays
        rows, inverse = exact.unique_rows(
            stats.pool, stats.n_plus.sum(axis=1), stats.n_minus.sum(axis=1), truth.astype(np.int64) + 1
        )  # non-negative keys
        weight = np.bincount(inverse.ravel(), minlength=len(rows)) / stats.n_pairs
        total = np.zeros(len(sizes))
        step = max(1, PAIR_BLOCK_ELEMENTS // len(sizes))
        for start in range(0, len(rows), step):
            part = rows[start : start + step]
            pos, neg = exact.sign_probabilities(part[None, :, 0], sizes[:, None], part[None, :, 1], part[None, :, 2])
            total += exact.agreement(pos, neg, part[None, :, 3] - 1) @ weight[start : start + step]
        return total
    return np.array([agreement_probabilities(stats, int(k), design, seed=seed).mean() for k in sizes])


def expected_curve(probability: np.ndarray, diff_points: np.ndarray, *, bin_width: float = DEFAULT_BIN_WIDTH) -> AgreementCurve:
    """Bins of |true difference| with the expected number of agreeing pairs (a float) per bin."""
    bins = bin_of(np.ravel(diff_points), bin_width)
    pairs = np.bincount(bins)
    agreed = np.bincount(bins, weights=np.ravel(probability), minlength=len(pairs))
    keep = pairs > 0
    return AgreementCurve(lower=np.flatnonzero(keep) * bin_width, pairs=pairs[keep], agreed=agreed[keep], bin_width=bin_width)


def analytic_curve(
    matrix: ResponseMatrix,
    k: int,
    *,
    design: str = "random",
    models=None,
    bin_width: float = DEFAULT_BIN_WIDTH,
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
    matrix: ResponseMatrix,
    k: int,
    *,
    design: str = "random",
    threshold: float = DEFAULT_THRESHOLD,
    models=None,
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
