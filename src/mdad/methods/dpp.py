"""Discrete orthogonal-polynomial-ensemble (OPE) projection DPP on a finite set of points.

The kernel is K = Q Q^T, where Q is an orthonormal basis of the columns of the
multivariate monomial Vandermonde matrix of the points (k monomials in graded order).
A projection DPP with a rank-k kernel draws exactly k distinct points, with
P(S) = det(K_S); points that span the polynomial space well (spread out, near the
edges of the cloud) are favoured, close duplicates repel each other.

Sampling is the standard sequential chain rule: the next point j is drawn with
probability proportional to the squared norm of its row of Q projected off the rows
already chosen (K_jj - K_jS K_SS^-1 K_Sj), i.e. the Gram-Schmidt sampler, with the
squared norms updated in blocks and the draws made exact by rejection.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# A monomial column whose part independent of the previous columns is below this
# fraction of its norm counts as linearly dependent (rank-deficient Vandermonde).
RANK_TOLERANCE = 1e-9
# The sampler brings the conditional variances up to date when what is left of them falls below
# this share of the proposal it draws from (the mean number of proposals per step stays below 1 / it).
UPDATE_SHARE = 0.5
# Directions of the sampler multiplied by every row of the basis together (one matrix-matrix product).
CHUNK = 256
# Below this condition number of the column-normalised monomials, Q is the triangular solve A R^-1
# (orthonormal to about 1e-16 times it); above, Householder's Q (``orthonormal_columns``).
SOLVE_CONDITION = 1e8


def graded_exponents(k: int, d: int) -> np.ndarray:
    """Exponents (k x d) of the first k monomials in d variables, in graded order.

    The grading is the one of the public reference implementation (and of DPPy's
    multivariate OPE): monomials are grouped by their largest exponent (0, 1, 2, ...),
    and within a group listed in lexicographic order of the exponent tuples.
    """
    if d == 0:
        return np.zeros((min(k, 1), 0), dtype=np.int64)
    top = 0
    while (top + 1) ** d < k:
        top += 1
    grid = np.indices((top + 1,) * d).reshape(d, -1).T  # lexicographic order
    order = np.argsort(grid.max(axis=1), kind="stable")
    return grid[order[:k]]


def vandermonde(points: np.ndarray, k: int) -> np.ndarray:
    """The n x k matrix of the first k graded monomials evaluated at the points (n x d).

    Each monomial but the constant one is an earlier monomial times one variable (its exponents less one
    in their last non-zero place: earlier in the graded order, whose every prefix is closed under lowering
    an exponent), so each column is one product of two columns. Built column by column (Fortran order), the
    layout LAPACK's QR works in, so that ``orthonormal_columns`` needs no copy of it."""
    points = np.asarray(points, dtype=np.float64)
    exponents = graded_exponents(k, points.shape[1])
    columns = np.empty((len(points), len(exponents)), order="F")
    if len(exponents):
        columns[:, 0] = 1.0  # the constant: the first in the graded order
    place = {tuple(e): j for j, e in enumerate(exponents.tolist())}
    for j in range(1, len(exponents)):
        dim = int(np.flatnonzero(exponents[j])[-1])
        lower = exponents[j].copy()
        lower[dim] -= 1
        np.multiply(columns[:, place[tuple(lower.tolist())]], points[:, dim], out=columns[:, j])
    return columns


def orthonormal_columns(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An orthonormal basis Q (n x k, C order) of the columns of ``columns`` (n x k) and their R (k x k).

    R comes from LAPACK's Householder QR (geqrf). When R is well conditioned (its columns scaled to unit
    norm: the condition of the column-normalised monomials, below ``SOLVE_CONDITION``), Q is the triangular
    solve Q = A R^-1 (one BLAS trsm, written straight in row order), in about half the time of forming
    Householder's Q (orgqr) and copying it to row order, and orthonormal to about the unit roundoff
    times that condition (2e-11 to 4e-11 at the grid's 6e5-1.5e6). Otherwise Q is Householder's
    (orgqr), orthonormal to rounding whatever the condition (docs/protocol.md#diversity,
    docs/benchmarks.md#earlier-measurements).
    ``columns`` is overwritten: a Fortran-ordered array from ``vandermonde`` is not copied."""
    from scipy.linalg import get_blas_funcs, get_lapack_funcs  # on first use: scipy.linalg costs every command start-up time

    rows = np.ascontiguousarray(columns)  # the same numbers in row order: trsm turns them into Q in place
    columns = np.asfortranarray(columns)
    geqrf, orgqr, trcon = get_lapack_funcs(("geqrf", "orgqr", "trcon"), (columns,))
    k = columns.shape[1]
    work = int(geqrf(columns, lwork=-1)[2][0])
    factored, tau, _, info = geqrf(columns, lwork=max(work, 1), overwrite_a=True)
    if info != 0:
        raise ArithmeticError(f"LAPACK geqrf failed (info {info}).")
    r = np.triu(factored[:k])
    norms = np.linalg.norm(r, axis=0)  # the columns' norms (Q is orthogonal)
    scaled = r / np.where(norms > 0, norms, 1.0)
    rcond = trcon(scaled, norm="1", uplo="U", diag="N")[0] if k else 1.0
    if rcond * SOLVE_CONDITION > 1.0:
        trsm = get_blas_funcs("trsm", (columns,))
        return trsm(1.0, r, rows.T, side=0, lower=0, trans_a=1, overwrite_b=True).T, r
    work = int(orgqr(factored, tau, lwork=-1)[1][0])
    q, _, info = orgqr(factored, tau, lwork=max(work, 1), overwrite_a=True)
    if info != 0:
        raise ArithmeticError(f"LAPACK orgqr failed (info {info}).")
    return np.ascontiguousarray(q), r


def ope_basis(points: np.ndarray, k: int) -> np.ndarray:
    """An orthonormal basis (n x r) of the span of the first k graded monomials at the points.

    r = k when the Vandermonde matrix has full column rank (the usual case: at least k
    points in general position); otherwise r is its numerical rank (for instance when
    there are fewer than k distinct points) and the basis spans what the monomials span.
    """
    columns = vandermonde(points, k)
    norms = np.linalg.norm(columns, axis=0)
    if columns.shape[1] <= len(np.unique(points, axis=0)):  # else surely rank-deficient
        q, r = orthonormal_columns(columns)
        if np.all(np.abs(np.diag(r)) > RANK_TOLERANCE * norms):
            return q
    columns = np.ascontiguousarray(vandermonde(points, k))  # afresh (the QR overwrites it), in row order
    norms = np.linalg.norm(columns, axis=0)  # summed row after row: the SVD's input as ever
    u, s = left_singular(columns / np.where(norms > 0, norms, 1.0))
    rank = int(np.sum(s > RANK_TOLERANCE * s[0])) if s.size and s[0] > 0 else 0
    return u[:, :rank]


def left_singular(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The left singular vectors and singular values of ``matrix`` (thin SVD).

    LAPACK's divide-and-conquer driver (gesdd, numpy's) fails to converge on some rank-deficient monomial matrices,
    depending on the BLAS threads (one 9,885 x 250 matrix of MMLU-Pro's items failed with 1 thread and not with
    2); the QR-iteration driver (gesvd) is slower but converges there. gesdd stays first, so that every selection
    it served keeps its items."""
    try:
        u, s, _ = np.linalg.svd(matrix, full_matrices=False)
    except np.linalg.LinAlgError:
        from scipy.linalg import svd  # imported on first use: scipy.linalg costs start-up time of every command

        u, s, _ = svd(matrix, full_matrices=False, lapack_driver="gesvd")
    return u, s


def ope_bases(points: np.ndarray, sizes: Sequence[int]) -> dict[int, np.ndarray]:
    """``ope_basis(points, k)`` for every k of ``sizes``, from one QR of the largest size's monomials.

    The monomials of a smaller size are the first columns of a larger size's (the graded order is
    the same), and the first k columns of Q in a QR are an orthonormal basis of the first k
    columns: one Householder QR serves every size whose columns are independent in it (the same
    test as ``ope_basis``). A size whose monomials are rank-deficient gets its own ``ope_basis``.
    The bases agree with separate QRs to rounding, which moves a DPP draw only when a uniform
    number lands within rounding of a cumulative probability (docs/reproducibility.md)."""
    largest = max(sizes)
    columns = vandermonde(points, largest)
    norms = np.linalg.norm(columns, axis=0)
    distinct = len(np.unique(points, axis=0))
    bases: dict[int, np.ndarray] = {}
    if largest <= distinct:
        q, r = orthonormal_columns(columns)  # ``columns`` is overwritten
        independent = np.abs(np.diag(r)) > RANK_TOLERANCE * norms
        first_dependent = int(np.argmin(independent)) if not independent.all() else largest
        for k in sizes:
            if k <= first_dependent:
                bases[k] = q if k == largest else np.ascontiguousarray(q[:, :k])
    for k in sizes:
        if k not in bases:
            bases[k] = ope_basis(points, k)
    return bases


def sample_projection_dpp(basis: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exactly r distinct row indices from the projection DPP with kernel basis @ basis.T.

    ``basis`` must have orthonormal columns (n x r). The chain rule draws each next row with
    probability proportional to its conditional variance (its squared norm off the directions
    of the rows already chosen). Those variances are brought up to date only now and then, for
    a block of new directions at once (one matrix-matrix product, not one matrix-vector
    product per step); in between, a row is proposed from the last update's variances, which
    can only be larger, and accepted with probability current / proposed, its current variance
    computed for that row alone. That is the chain rule's distribution exactly (rejection
    sampling). An update comes when the variances left (r - step) fall below half the proposal's
    total (r minus the step of the last update: counts, so that rounding cannot move the
    schedule), so a step needs at most two proposals on average and there are about log2(r)
    updates; the cost stays O(n r^2) but in matrix-matrix products (docs/benchmarks.md#earlier-measurements).

    Every row's products with the directions are kept (``products``), computed CHUNK directions at
    a time: a chosen row's coordinates on the earlier directions are then read, not computed, and
    its new direction is orthogonalised once against all directions and a second time only against
    the directions of the chunk not yet multiplied; the chunk is orthogonalised a second time
    against the earlier directions all at once, before its products. The Gram-Schmidt of a step
    thus reads the directions once instead of four times (the same projections up to rounding).
    """
    basis = np.asarray(basis, dtype=np.float64)
    n, rank = basis.shape
    proposal = np.einsum("ij,ij->i", basis, basis)  # K_jj, then the variances at the last update
    cumulative = np.cumsum(proposal)
    chosen = np.empty(rank, dtype=np.int64)
    taken = np.zeros(n, dtype=bool)
    directions = np.zeros((rank, rank))  # orthonormal directions spanned by the chosen rows
    products = np.empty((n, rank))  # products[:, :done] = basis @ directions[:done].T
    fresh = done = 0  # directions[:fresh] are accounted for in ``proposal``; fresh <= done <= step
    for step in range(rank):
        # the variances left sum to rank - step, the proposal's to rank - fresh (exactly, for an
        # orthonormal basis): the schedule is decided on those counts, not on rounded sums
        if step > fresh and rank - step < UPDATE_SHARE * (rank - fresh):
            done = _multiply(basis, directions, products, done, step)
            block = products[:, fresh:step]
            proposal -= np.einsum("ij,ij->i", block, block)
            np.maximum(proposal, 0.0, out=proposal)  # rounding can leave tiny negatives
            proposal[taken] = 0.0
            np.cumsum(proposal, out=cumulative)
            fresh = step
        pending = directions[done:step]  # not yet multiplied by every row
        while True:
            j = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
            if j >= n:  # the (rounding) case u * total == total: the last item with mass
                j = int(np.flatnonzero(proposal)[-1])
            tail = pending @ basis[j]
            current = proposal[j] - products[j, fresh:done] @ products[j, fresh:done] - tail @ tail
            if not taken[j] and rng.random() * proposal[j] < current:
                break
        chosen[step] = j
        taken[j] = True
        v = basis[j] - directions[:step].T @ np.concatenate([products[j, :done], tail])
        v -= pending.T @ (pending @ v)  # twice against the pending directions; the others at _multiply
        v /= np.linalg.norm(v)
        directions[step] = v
        if step + 1 - done == CHUNK and step + 1 < rank:
            done = _multiply(basis, directions, products, done, step + 1)
    return chosen


def _multiply(basis: np.ndarray, directions: np.ndarray, products: np.ndarray, done: int, upto: int) -> int:
    """Directions done..upto orthogonalised a second time against the earlier ones, then multiplied by
    every row of the basis (products[:, done:upto]); returns ``upto``."""
    if upto > done:
        new = directions[done:upto]
        if done:
            new -= (new @ directions[:done].T) @ directions[:done]
        products[:, done:upto] = basis @ new.T
    return upto
