"""How likely a random micro-benchmark orders a pair of models as the pool does, without simulation.

Two models answer a pool of N items with 0/1 scores. Let n+ be the items only the first
gets right and n- those only the second gets right; the other n0 = N - n+ - n- items
cannot change the order. A micro-benchmark of k items drawn uniformly without
replacement holds (K+, K-, k - K+ - K-) of them, a multivariate hypergeometric draw, and
with the plain-mean estimate it ranks the first model above the second exactly when
K+ > K-. It agrees with the pool when that sign is the pool's; a tie (K+ = K-) is a
disagreement, as is every pair the pool itself ties (docs/deviations.md#ties).

Every public function here returns a :class:`SignProbabilities` (``higher``, ``lower``) =
(P(K+ > K-), P(K+ < K-)) for many pairs at once, which unpacks like a pair of arrays;
:func:`agreement` turns them into agreement for a given true order.

- :func:`sign_probabilities`: uniform design, exact. The probabilities are summed over
  the number D of discordant items drawn, with a recursion for P(K+ > D/2 | D) (O(k) per pair);
  exact up to floating-point rounding (below 1e-10 against enumeration in the tests).
- :func:`difference_pmf`: the whole distribution of K+ - K- (for strata), summed over the
  (K+, K-) grid cut to ``|K - E K| <= sqrt(k log(2/eps) / 2)`` in both coordinates, which by
  Hoeffding's bound for sampling without replacement leaves out a mass below ``2 eps``.
- :func:`stratified_sign_probabilities`: items drawn per stratum (subtask), the allocation
  itself possibly random: exact per stratum, convolved over strata (FFT), averaged over
  the allocations.
- :func:`equal_design_sign_probabilities`: the subtask-stratified equal design, exact,
  including the uniformly random choice of the subtasks that get the remainder.
- :func:`proportional_allocations`: the allocations of the proportional design (successive
  sampling with probability proportional to 1/subtask size), drawn by Monte Carlo: its
  answer is exact given the allocation and a Monte Carlo average over allocations.
- :func:`normal_tails`: the two tails of a normal approximation (continuous scores).
"""

from __future__ import annotations

from functools import lru_cache
from math import comb, log
from typing import NamedTuple

import numpy as np
from scipy.fft import irfft, next_fast_len, rfft
from scipy.special import gammaln, ndtr

from mdad.errors import MdadError
from mdad.methods.random import equal_allocation_base

DEFAULT_EPS = 1e-15


class SignProbabilities(NamedTuple):
    """For every pair: the probability that the micro-benchmark ranks the first model above the
    second (``higher``: K+ > K-) and below it (``lower``: K+ < K-); a tie has the rest."""

    higher: np.ndarray
    lower: np.ndarray


_CHUNK_ELEMENTS = 262_144


@lru_cache(maxsize=8)
def log_factorials(n: int) -> np.ndarray:
    """log(i!) at index i + n + 1 for i = 0..n+1, and +inf for negative i, so that
    :func:`log_comb` gives -inf for impossible counts without any masking."""
    table = np.concatenate([np.full(n + 1, np.inf), gammaln(np.arange(n + 2, dtype=np.float64) + 1.0)])
    table.setflags(write=False)
    return table


def log_comb(n: np.ndarray, r: np.ndarray, lf: np.ndarray) -> np.ndarray:
    """log C(n, r), -inf where r < 0 or r > n (0 <= n and |r| within the table)."""
    o = (len(lf) - 1) // 2
    return lf[n + o] - lf[r + o] - lf[n - r + o]


def _as_int_arrays(*arrays) -> list[np.ndarray]:
    out = np.broadcast_arrays(*[np.asarray(a) for a in arrays])
    return [np.asarray(a, dtype=np.int64).ravel() for a in out]


def unique_rows(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of non-negative integer columns and the inverse map (one 1-D sort when the keys fit)."""
    stacked = np.stack(columns, axis=1)
    if not len(stacked):
        return stacked, np.zeros(0, dtype=np.int64)
    spans = stacked.max(axis=0).astype(object) + 1
    if np.prod(spans) < 2**62:
        key = np.zeros(len(stacked), dtype=np.int64)
        for col, span in zip(stacked.T, spans, strict=True):
            key = key * int(span) + col
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        return stacked[first], inverse.ravel()
    keys, inverse = np.unique(stacked, axis=0, return_inverse=True)
    return keys, inverse.ravel()


def _check_counts(N, k, n_plus, n_minus) -> None:
    if np.any(k < 0) or np.any(k > N):
        raise MdadError("The number of items drawn must lie between 0 and the pool size.")
    if np.any(n_plus < 0) or np.any(n_minus < 0) or np.any(n_plus + n_minus > N):
        raise MdadError("Discordant item counts n+ and n- must be non-negative and sum to at most the pool size.")


def _window(count: np.ndarray, N: np.ndarray, k: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """First value and width of the range of a hypergeometric count kept by the Hoeffding cut."""
    half = np.ceil(np.sqrt(k * log(2.0 / eps) / 2.0)).astype(np.int64) + 1
    mean = k * count / np.maximum(N, 1)
    lo = np.maximum(0, np.floor(mean).astype(np.int64) - half)
    hi = np.minimum(np.minimum(count, k), np.ceil(mean).astype(np.int64) + half)
    return lo, np.maximum(hi - lo + 1, 1)


def _grid_chunks(N, k, n_plus, n_minus, eps):
    """Yield (type indices, a, b, P) with P[t, i, j] = P(K+ = a[t, i], K- = b[t, j]) over each window.

    Types are sorted by window width and processed in chunks of about _CHUNK_ELEMENTS cells.
    """
    lf = log_factorials(3 * int(N.max()) + 3 if N.size else 3)
    a0, wa = _window(n_plus, N, k, eps)
    b0, wb = _window(n_minus, N, k, eps)
    width = np.maximum(wa, wb)
    order = np.argsort(width, kind="stable")
    sorted_width = width[order]
    start = 0
    while start < len(order):
        cost = np.arange(1, len(order) - start + 1) * sorted_width[start:] ** 2
        stop = start + max(1, int(np.searchsorted(cost, _CHUNK_ELEMENTS, side="right")))
        idx = order[start:stop]
        A, B = int(wa[idx].max()), int(wb[idx].max())
        a = a0[idx, None] + np.arange(A)[None, :]
        b = b0[idx, None] + np.arange(B)[None, :]
        n, kk, npl, nmi = N[idx, None, None], k[idx, None, None], n_plus[idx, None, None], n_minus[idx, None, None]
        log_p = (
            log_comb(npl, a[:, :, None], lf)
            + log_comb(nmi, b[:, None, :], lf)
            + log_comb(n - npl - nmi, kk - a[:, :, None] - b[:, None, :], lf)
            - log_comb(n, kk, lf)
        )
        yield idx, a, b, np.exp(log_p)
        start = stop


def sign_probabilities(N, k, n_plus, n_minus) -> SignProbabilities:
    """Exact (P(K+ > K-), P(K+ < K-)) for k of N items drawn uniformly without replacement.

    Arguments broadcast together (one entry per pair); pairs sharing (N, k, n+, n-) are
    computed once. Method: D = K+ + K- is hypergeometric (N, m = n+ + n-, k) and, given
    D = d, K+ is hypergeometric (m, n+, d). G(d) = P(K+ > d/2 | D = d) obeys
    G(d+1) = G(d) + P(K+ = d/2 | d) (n+ - d/2) / (m - d) for even d and
    G(d+1) = G(d) - P(K+ = (d+1)/2 | d) (n- - (d-1)/2) / (m - d) for odd d
    (the next discordant item breaks or makes a tie), so
    P(K+ > K-) = sum_d P(D = d) G(d) costs O(min(m, k)) per pair, with no truncation.
    """
    shape = np.broadcast_shapes(*(np.shape(x) for x in (N, k, n_plus, n_minus)))
    N, k, n_plus, n_minus = _as_int_arrays(N, k, n_plus, n_minus)
    _check_counts(N, k, n_plus, n_minus)
    keys, inverse = unique_rows(N, k, n_plus, n_minus)
    pos = np.zeros(len(keys))
    neg = np.zeros(len(keys))
    lf = log_factorials(3 * int(keys[:, 0].max()) + 3 if len(keys) else 3)
    top = np.minimum(keys[:, 1], keys[:, 2] + keys[:, 3])  # largest possible D
    order = np.argsort(top, kind="stable")
    start = 0
    while start < len(order):
        cost = np.arange(1, len(order) - start + 1) * (top[order[start:]] + 1)
        stop = start + max(1, int(np.searchsorted(cost, _CHUNK_ELEMENTS, side="right")))
        idx = order[start:stop]
        n, kk, npl, nmi = (keys[idx, c][:, None] for c in range(4))
        pos[idx], neg[idx] = _sign_chunk(n, kk, npl, nmi, int(top[idx].max()), lf)
        start = stop
    return SignProbabilities(np.clip(pos[inverse], 0, 1).reshape(shape), np.clip(neg[inverse], 0, 1).reshape(shape))


def _sign_chunk(N, k, n_plus, n_minus, d_max, lf) -> tuple[np.ndarray, np.ndarray]:
    m = n_plus + n_minus
    d = np.arange(d_max + 1)[None, :]
    log_pd = log_comb(m, d, lf) + log_comb(N - m, k - d, lf) - log_comb(N, k, lf)
    p_d = np.exp(log_pd)
    even = d % 2 == 0
    j = d // 2
    mid = np.where(even, j, j + 1)  # the count that ties (even d) or just wins (odd d)
    room = np.maximum(m - d, 1)
    live = d < m
    out = []
    for first, second in ((n_plus, n_minus), (n_minus, n_plus)):
        with np.errstate(invalid="ignore"):  # -inf - -inf beyond d = m, masked by ``live``
            log_mid = log_comb(first, mid, lf) + log_comb(second, d - mid, lf) - log_comb(m, d, lf)
        factor = np.where(even, (first - j) / room, -(second - j) / room)
        step = np.where(live, np.exp(log_mid) * factor, 0.0)
        g = np.cumsum(step, axis=1) - step  # G(d) = sum of the steps before d
        out.append((p_d * g).sum(axis=1))
    return out[0], out[1]


def difference_pmf(N, k, n_plus, n_minus, eps: float = DEFAULT_EPS) -> tuple[np.ndarray, int]:
    """The distribution of X = K+ - K- for each pair: (pmf, offset) with pmf[t, x + offset].

    ``offset`` = max k, so every row covers -max k .. max k. Pairs sharing (N, k, n+, n-) are
    computed once.
    """
    N, k, n_plus, n_minus = _as_int_arrays(N, k, n_plus, n_minus)
    _check_counts(N, k, n_plus, n_minus)
    keys, inverse = unique_rows(N, k, n_plus, n_minus)
    offset = int(k.max()) if k.size else 0
    width = 2 * offset + 1
    pmf = np.zeros((len(keys), width))
    key_N, key_k, key_plus, key_minus = keys.T
    for idx, a, b, P in _grid_chunks(key_N, key_k, key_plus, key_minus, eps):
        x = a[:, :, None] - b[:, None, :] + offset
        rows = np.broadcast_to(np.arange(len(idx))[:, None, None], P.shape)
        flat = np.bincount((rows * width + np.clip(x, 0, width - 1)).ravel(), weights=P.ravel(), minlength=len(idx) * width)
        pmf[idx] = flat.reshape(len(idx), width)
    return pmf[inverse], offset


def normal_tails(mean: np.ndarray, var: np.ndarray, half: float) -> tuple[np.ndarray, np.ndarray]:
    """P(X > half-way) and P(X < -half-way) of a normal; a point mass where the variance is 0."""
    sd = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = np.where(sd > 0, 1.0 - ndtr((half - mean) / sd), (mean > 0).astype(float))
        neg = np.where(sd > 0, ndtr((-half - mean) / sd), (mean < 0).astype(float))
    return pos, neg


def agreement(p_pos: np.ndarray, p_neg: np.ndarray, truth_sign: np.ndarray) -> np.ndarray:
    """P(the micro-benchmark orders the pair as the truth does); 0 when the truth is a tie."""
    s = np.sign(truth_sign)
    return np.where(s > 0, p_pos, np.where(s < 0, p_neg, 0.0))


# ---- subtask-stratified designs ---------------------------------------------------------------


def _fft_length(n: int) -> int:
    return next_fast_len(max(n, 1), real=True)


def _stratum_spectra(sizes, n_plus, n_minus, ks, length, eps) -> dict[tuple[int, int], np.ndarray]:
    """FFT of the pmf of X_s for every stratum s and draw size in ks[s], x stored at index x mod length."""
    spectra = {}
    for s, values in enumerate(ks):
        for kk in values:
            pmf, off = difference_pmf(sizes[:, s], kk, n_plus[:, s], n_minus[:, s], eps)
            placed = np.zeros((pmf.shape[0], length))
            placed[:, np.arange(-off, off + 1) % length] = pmf
            spectra[(s, int(kk))] = rfft(placed, axis=1)
    return spectra


def _tails_from_spectrum(spectrum: np.ndarray, k: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """P(X > 0), P(X < 0) of a total X in [-k, k] stored at index X mod length (length > 2k)."""
    pmf = np.clip(irfft(spectrum, n=length, axis=1), 0.0, None)
    return pmf[:, 1 : k + 1].sum(axis=1).clip(0, 1), pmf[:, length - k :].sum(axis=1).clip(0, 1)


def _check_strata(sizes, n_plus, n_minus):
    sizes, n_plus, n_minus = (np.atleast_2d(np.asarray(x, dtype=np.int64)) for x in (sizes, n_plus, n_minus))
    sizes = np.broadcast_to(sizes, n_plus.shape)
    if n_plus.shape != n_minus.shape:
        raise MdadError("n+ and n- must have the same pairs x strata shape.")
    _check_counts(sizes, np.zeros_like(sizes), n_plus, n_minus)
    return sizes, n_plus, n_minus


def stratified_sign_probabilities(sizes, n_plus, n_minus, allocations, weights=None, eps: float = DEFAULT_EPS) -> SignProbabilities:
    """Exact sign probabilities when every stratum s gets its own uniform draw of alloc[s] items.

    ``sizes``, ``n_plus``, ``n_minus``: pairs x strata (``sizes`` may be one row shared by all
    pairs). ``allocations``: one allocation (strata,) or several (A x strata) with
    ``weights`` (their probabilities): the result is the mixture over allocations. X is the
    sum of the strata's independent K+_s - K-_s; its pmf is the convolution of theirs.
    """
    sizes, n_plus, n_minus = _check_strata(sizes, n_plus, n_minus)
    allocations = np.atleast_2d(np.asarray(allocations, dtype=np.int64))
    weights = np.full(len(allocations), 1.0 / len(allocations)) if weights is None else np.asarray(weights, float)
    if allocations.shape[1] != sizes.shape[1] or np.any(allocations > sizes.min(axis=0)) or np.any(allocations < 0):
        raise MdadError("Each allocation needs one count per stratum, between 0 and the stratum's size.")
    k = int(allocations.sum(axis=1).max())
    length = _fft_length(2 * k + 1)
    ks = [np.unique(allocations[:, s]) for s in range(sizes.shape[1])]
    spectra = _stratum_spectra(sizes, n_plus, n_minus, ks, length, eps)
    total = np.zeros((sizes.shape[0], length // 2 + 1), dtype=complex)
    for alloc, w in zip(allocations, weights, strict=True):
        prod = np.full_like(total, w)
        for s, kk in enumerate(alloc):
            prod *= spectra[(s, int(kk))]
        total += prod
    return SignProbabilities(*_tails_from_spectrum(total, k, length))


def equal_design_sign_probabilities(sizes, n_plus, n_minus, k: int, pair_sizes=None, eps: float = DEFAULT_EPS) -> SignProbabilities:
    """Exact sign probabilities of the subtask-stratified equal design (mdad.methods.random).

    Each subtask gets min(size, L) items and r of the R subtasks with room get one more,
    that r-subset being uniform. The mixture over the C(R, r) subsets is summed exactly by
    a recursion over subtasks on the generating polynomial in the number of extras handed
    out, in the Fourier domain. ``sizes`` (strata,) sets the allocation; ``pair_sizes``
    (pairs x strata, default ``sizes``) are the pools the items are drawn from, for pairs
    whose own sizes give the same allocation.
    """
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    sizes2, n_plus, n_minus = _check_strata(sizes if pair_sizes is None else pair_sizes, n_plus, n_minus)
    base, room = equal_allocation_base(sizes, k)
    r = int(k - base.sum())
    has_room = np.zeros(len(sizes), bool)
    has_room[room] = True
    max_k = base + has_room
    length = _fft_length(2 * k + 1)
    ks = [np.unique([base[s], max_k[s]]) for s in range(len(sizes))]
    spectra = _stratum_spectra(sizes2, n_plus, n_minus, ks, length, eps)
    poly = np.zeros((r + 1, n_plus.shape[0], length // 2 + 1), dtype=complex)
    poly[0] = 1.0
    for s in range(len(sizes)):
        f0 = spectra[(s, int(base[s]))]
        if has_room[s] and r > 0:
            f1 = spectra[(s, int(base[s]) + 1)]
            poly[1:] = poly[1:] * f0 + poly[:-1] * f1
            poly[0] *= f0
        else:
            poly *= f0
    return SignProbabilities(*_tails_from_spectrum(poly[r] / comb(len(room), r), k, length))


def proportional_allocations(sizes, k: int, rng: np.random.Generator, draws: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Allocations of the subtask-stratified proportional design and their Monte Carlo weights.

    The design draws k items one after another with probability proportional to 1/(size of
    the item's subtask) among those left (numpy's ``choice(replace=False, p=...)``). The
    same law is sampled in one array step by Efraimidis-Spirakis keys log(U)/w (the k
    largest). Returns the distinct allocations (A x strata) and their shares of ``draws``.
    Given its allocation the draw is uniform within each subtask, so the exact stratified
    answer averaged over these allocations is exact up to this Monte Carlo average.
    """
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    if k > sizes.sum():
        raise MdadError(f"Size {k} is larger than the pool of {int(sizes.sum())} items.")
    strata = np.repeat(np.arange(len(sizes)), sizes)
    keys = np.log(rng.random((draws, len(strata)))) * sizes[strata][None, :]
    top = np.argpartition(-keys, k - 1, axis=1)[:, :k] if k > 0 else np.zeros((draws, 0), int)
    counts = np.zeros((draws, len(sizes)), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(draws), k), strata[top].ravel()), 1)
    allocations, freq = np.unique(counts, axis=0, return_counts=True)
    return allocations, freq / draws
