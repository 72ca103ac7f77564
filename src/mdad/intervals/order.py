"""The probability that an observed order holds on the full benchmark (docs/intervals.md).

Random designs (from the pair's own answers; docs/intervals.md#exact-order-probability). Two
models differ on the full benchmark only through the m pool items exactly one of them gets
right, M+ of them the first model's; the full benchmark ranks the first above the second when
M+ > m/2 (a tie is not an order). Of the k chosen items, d are such items (hypergeometric
(N, m, k) given m), and of those the first got K+ (hypergeometric (m, M+, d) given m, M+). The
probability that the order holds is the posterior mass of M+ > m/2 given (d, K+), summed exactly
over every m and M+ (to ``EXACTNESS``), under a joint prior on (m, M+): the distribution over
the pairs of models the micro-benchmark was chosen from (:class:`PairPrior`, stored with it). Both parts matter: a pair with one or two discordant
chosen items may have few or many in the pool, and pairs with few discordant items split them
far less evenly than the typical leaderboard pair (many items, share near 1/2). Stratified
designs pool the subtasks' counts and use the uniform design's likelihood with the number of
drawn items that matches the stratified estimate of m, sum_s d_s N_s / k_s.

Other methods (calibrated; docs/intervals.md#calibrated-order-probability). From the held-out
runs of ``mdad.assess``: for every pair of calibration targets of a run, the two estimates and
whether the full benchmark ordered the pair as the estimates did. How far apart two estimates
must be depends on where they sit: estimates are off by more mid-range than near 0 or 1. So the
gap is measured in units of the held-out residual spread s where the estimates lie (s: the
residuals' standard deviation in up to 4 bins of the estimate (conformal.estimate_bin_edges); for two
estimates in one bin z = |g| / (sqrt(2) s), across bins the spread is integrated along the
way), and a logistic fit of "order held" on z (increasing in the gap at any fixed other
estimate) gives P(order holds) for a new pair. Files of an older mdad hold a fit on |g| alone, which still
loads and works. Neighbouring pairs of a ranking of 3 or more models use the fit on held-out rankings stored
beside it (mdad.intervals.ranking.RankingCalibration; docs/intervals.md#neighbouring-pairs-of-a-ranking).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from mdad.errors import MdadError
from mdad.intervals.conformal import estimate_bin_edges
from mdad.intervals.ranking import EVEN, RankingCalibration
from mdad.metrics.exact import log_comb, log_factorials, unique_rows
from mdad.metrics.pairwise import agreement_from_differences
from mdad.metrics.robust import logistic_coefficients
from mdad.wording import plural

PRIOR_BINS = 50  # bins of the share M+/m
PRIOR_FLOOR = 1e-3  # share of the prior spread uniformly, so that no (m, M+) is ruled out beforehand
EXACT_M = 8  # m = 1..8 get a bin each; above, bins grow by GROWTH
GROWTH = 1.25
BEST_FIFTH = 0.8  # pairs of models both estimated at or above this quantile of the sources take the best fifth's prior
BEST_FIFTH_MODELS = 5  # ... when the best fifth holds at least this many source models (10 pairs)
SHRINK_PAIRS = 20  # a bin's share histogram borrows this many pairs' worth from its neighbouring bins
EXACTNESS = 1e-10  # largest error of an order probability from the values of m left out (see _m_support)
CHUNK = 500_000  # most hypergeometric probabilities evaluated at once (memory and cache)


def m_bin_edges(pool_items: int) -> np.ndarray:
    """Left edges of the bins of m (the first is 1): one bin per m up to ``EXACT_M``, then growing geometrically."""
    edges = list(range(1, min(EXACT_M, pool_items) + 1))
    while edges[-1] * GROWTH < pool_items:
        edges.append(max(edges[-1] + 1, int(np.ceil(edges[-1] * GROWTH))))
    return np.array(edges, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class PairPrior:
    """Joint distribution of (m, pi) over pairs of models: m the pool items exactly one of A, B gets right,
    pi = M+/m the share of them model A gets right.

    A table of probabilities over bins of m (``edges``: left edges; the last bin ends at the
    pool's size) and ``PRIOR_BINS`` equal bins of pi; symmetric (each pair counts in both orders).
    Each row's share histogram is smoothed towards its neighbours where the row has few pairs.
    ``best_fifth``: the same table over the pairs of the sources' best fifth, for pairs of models both
    estimated at or above ``best_fifth_line`` (the sources' 80th percentile of accuracy): the best
    models are closer to each other than the typical pair (docs/intervals.md#models-better-than-the-sources).
    """

    edges: np.ndarray  # left edges of the bins of m, from 1
    mass: np.ndarray  # (bins of m, PRIOR_BINS) probabilities
    best_fifth: PairPrior | None = None
    best_fifth_line: float = np.inf  # accuracy (fraction) from which both models of a pair take ``best_fifth``

    @classmethod
    def of_sources(cls, scores: np.ndarray) -> PairPrior:
        """The prior ``select`` stores: the table over every pair of source models (rows of complete 0/1
        ``scores``) and, when the sources' best fifth holds at least ``BEST_FIFTH_MODELS`` models, the table
        over their pairs with the line from which it applies."""
        prior = cls.from_scores(scores)
        accuracy = np.asarray(scores, dtype=np.float64).mean(axis=1)
        line = float(np.quantile(accuracy, BEST_FIFTH))
        best = accuracy >= line
        if best.sum() < BEST_FIFTH_MODELS:
            return prior
        return replace(prior, best_fifth=cls.from_scores(np.asarray(scores)[best]), best_fifth_line=line)

    def among_best(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Per pair of estimates (accuracies), whether both are at or above the best fifth's line: those pairs
        take ``best_fifth`` as their prior (all False without it)."""
        return (np.asarray(first) >= self.best_fifth_line) & (np.asarray(second) >= self.best_fifth_line)

    @classmethod
    def uniform(cls) -> PairPrior:
        """The prior that favours no number of discordant items and no share: one bin of m, every share equally likely."""
        return cls(np.array([1]), np.full((1, PRIOR_BINS), 1.0 / PRIOR_BINS))

    @classmethod
    def from_scores(cls, scores: np.ndarray) -> PairPrior:
        """The table over every pair of models (rows) of complete 0/1 ``scores``."""
        x = np.asarray(scores, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] < 2 or np.isnan(x).any() or not np.isin(x, (0.0, 1.0)).all():
            raise MdadError("A pair prior needs complete 0/1 scores of at least 2 models.")
        only = x @ (1.0 - x).T  # only[a, b]: items a gets right and b does not
        i, j = np.triu_indices(x.shape[0], k=1)
        return cls.from_pairs(x.shape[1], only[i, j], only[j, i])

    @classmethod
    def from_pairs(cls, pool_items: int, plus: np.ndarray, minus: np.ndarray) -> PairPrior:
        """The table over pairs given their discordant pool items: ``plus`` only the first model got right,
        ``minus`` only the second (each pair counts in both orders; pairs without discordant items are ties)."""
        plus, minus = np.asarray(plus, dtype=np.float64).ravel(), np.asarray(minus, dtype=np.float64).ravel()
        m = plus + minus
        keep = m > 0
        if not keep.any():
            return cls.uniform()
        edges = m_bin_edges(int(pool_items))
        rows = np.searchsorted(edges, np.concatenate([m[keep], m[keep]]), side="right") - 1
        shares = np.concatenate([plus[keep], minus[keep]]) / np.concatenate([m[keep], m[keep]])
        cols = np.minimum((shares * PRIOR_BINS).astype(np.int64), PRIOR_BINS - 1)
        counts = np.zeros((len(edges), PRIOR_BINS))
        np.add.at(counts, (rows, cols), 1.0)
        return cls(edges, _smoothed(counts))

    def m_weights(self, pool_items: int) -> np.ndarray:
        """Prior probability of m = 0..N (0 for m = 0: a pair with no discordant item is a tie)."""
        N = pool_items
        starts = np.minimum(self.edges, N + 1)
        ends = np.append(starts[1:], N + 1)  # exclusive
        per_m = np.zeros(N + 1)
        row_mass = self.mass.sum(axis=1)
        for start, end, mass in zip(starts, ends, row_mass, strict=True):
            if end > start:
                per_m[start:end] = mass / (end - start)
        if per_m.sum() == 0:
            per_m[1:] = 1.0
        per_m /= per_m.sum()
        per_m[1:] = (1.0 - PRIOR_FLOOR) * per_m[1:] + PRIOR_FLOOR / N
        per_m[0] = 0.0
        return per_m / per_m.sum()

    def share_weights(self, m: np.ndarray, j: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """Prior probability of M+ = j given m, one row per value of ``m`` (``j``: rows of the values of M+
        considered, ``valid`` marking the real ones; normalised over them)."""
        m = np.asarray(m, dtype=np.int64)
        w = np.where(valid, self._share_rows(m)[np.arange(len(m))[:, None], _share_bin(j, m[:, None])], 0.0)
        total = w.sum(axis=1, keepdims=True)
        count = valid.sum(axis=1, keepdims=True)
        w = np.where(total > 0, w / np.where(total > 0, total, 1.0), valid / count)
        return np.where(valid, (1.0 - PRIOR_FLOOR) * w + PRIOR_FLOOR / count, 0.0)

    def _share_rows(self, m: np.ndarray) -> np.ndarray:
        """The share histogram (PRIOR_BINS values summing to 1) of the bin of each ``m``."""
        rows = np.minimum(np.searchsorted(self.edges, m, side="right") - 1, len(self.edges) - 1)
        table = self.mass / np.maximum(self.mass.sum(axis=1, keepdims=True), 1e-300)
        table[self.mass.sum(axis=1) == 0] = 1.0 / PRIOR_BINS
        return table[rows]

    def share_bin_starts(self, m: np.ndarray) -> np.ndarray:
        """(values of m, PRIOR_BINS + 1): the first M+ of each share bin given m, and m + 1 at the end.

        M+ = j falls in the bin :meth:`share_weights` puts it in, floor(PRIOR_BINS j / m) in floating
        point (the last bin also holds j = m).
        """
        mm = np.asarray(m, dtype=np.int64)[:, None]
        b = np.arange(1, PRIOR_BINS)[None, :]
        start = (b * mm + PRIOR_BINS - 1) // PRIOR_BINS  # ceil(b m / PRIOR_BINS)
        start = np.where(_share_bin(np.maximum(start - 1, 0), mm) >= b, start - 1, start)  # rounding may cross
        start = np.where(_share_bin(start, mm) < b, start + 1, start)
        return np.concatenate([np.zeros_like(mm), np.minimum(start, mm + 1), mm + 1], axis=1)

    def share_bin_weights(self, m: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Prior probability of each single value of M+ in each share bin given m (values of m x PRIOR_BINS;
        ``starts``: :meth:`share_bin_starts`): :meth:`share_weights`, constant within a bin."""
        m = np.asarray(m, dtype=np.int64)
        height = self._share_rows(m)
        norm = (height * np.diff(starts, axis=1)).sum(axis=1, keepdims=True)
        height = np.where(norm > 0, height / np.where(norm > 0, norm, 1.0), 1.0 / (m + 1)[:, None])
        return (1.0 - PRIOR_FLOOR) * height + PRIOR_FLOOR / (m + 1)[:, None]

    def to_json(self) -> dict:
        """The table as JSON-ready lists (share bins, left edges of the bins of m, probabilities), as micro.json stores it,
        and the best fifth's table with its line when there is one."""
        out = {"share_bins": PRIOR_BINS, "m_edges": self.edges.tolist(), "mass": self.mass.tolist()}
        if self.best_fifth is not None:
            out["best_fifth"] = {**self.best_fifth.to_json(), "line": self.best_fifth_line}
        return out

    @classmethod
    def from_json(cls, data: dict) -> PairPrior:
        """Read :meth:`to_json`'s output (or an older mdad's share histogram); a malformed table is one error sentence."""
        try:
            if "m_edges" in data:
                edges = np.asarray(data["m_edges"], dtype=np.int64)
                mass = np.asarray(data["mass"], dtype=np.float64)
            else:  # an older mdad's share histogram alone: one bin of m
                edges, mass = np.array([1]), np.asarray(data["density"], dtype=np.float64)[None, :]
        except (KeyError, TypeError, ValueError):
            raise MdadError("The micro-benchmark's pair prior is malformed (m_edges and a table 'mass').") from None
        if (
            mass.ndim != 2
            or mass.shape[0] != len(edges)
            or not mass.shape[1]
            or np.any(mass < 0)
            or not mass.sum() > 0
            or edges.ndim != 1
            or edges[0] != 1
            or np.any(np.diff(edges) <= 0)
        ):
            raise MdadError("The micro-benchmark's pair prior must be increasing bins of m from 1 and a non-negative table with one row per bin.")
        if mass.shape[1] != PRIOR_BINS:
            raise MdadError(f"The micro-benchmark's pair prior must have {PRIOR_BINS} share bins per row.")
        prior = cls(edges, mass / mass.sum())
        best = data.get("best_fifth")  # absent from files of an older mdad: every pair takes the whole table
        if best is None:
            return prior
        line = best.get("line") if isinstance(best, dict) else None
        if not isinstance(line, int | float) or isinstance(line, bool) or not 0 <= line <= 1:
            raise MdadError("The micro-benchmark's pair prior has a best fifth without a line between 0 and 1.")
        return replace(prior, best_fifth=cls.from_json(best), best_fifth_line=float(line))


def _share_bin(j: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The share bin of M+ = j given m: floor(PRIOR_BINS j / m), the last bin also holding j = m."""
    return np.minimum((j / np.maximum(m, 1) * PRIOR_BINS).astype(np.int64), PRIOR_BINS - 1)


def _smoothed(counts: np.ndarray) -> np.ndarray:
    """Joint probabilities: each row's share histogram shrunk towards its neighbouring rows' by ``SHRINK_PAIRS``."""
    total = counts.sum(axis=1)
    pooled = counts.sum(axis=0) / counts.sum()
    shape = np.empty_like(counts)
    for b in range(len(counts)):
        around = counts[max(b - 1, 0) : b + 2].sum(axis=0)
        fallback = around / around.sum() if around.sum() > 0 else pooled
        shape[b] = (counts[b] + SHRINK_PAIRS * fallback) / (total[b] + SHRINK_PAIRS)
    return shape * (total / total.sum())[:, None]


def _m_support(weights: np.ndarray, discordant: int) -> np.ndarray:
    """Indices of the weights of m to sum: all but the smallest, whose omission moves no probability by more than
    ``EXACTNESS``.

    Given m, the likelihood of K+ summed under the share prior lies between PRIOR_FLOOR / (d + 1) (the
    prior's uniform part; the likelihood sums to (m + 1) / (d + 1) over M+) and 1, so weights below
    t = EXACTNESS * PRIOR_FLOOR / ((d + 1) * len(weights)) of the largest, left out, change the
    numerator and denominator of the posterior by at most t * len(weights) * max(weights), at most
    EXACTNESS times the denominator that remains.
    """
    threshold = EXACTNESS * PRIOR_FLOOR / ((discordant + 1) * len(weights))
    return np.flatnonzero(weights > weights.max() * threshold)


def _run_likelihood(m: np.ndarray, ends: np.ndarray, d: int, first: np.ndarray, lf: np.ndarray) -> np.ndarray:
    """sum over M+ = 0..e-1 of P(K+ | M+, m, d), for every m (rows), end e (``ends``: rows x ends) and K+ in ``first``.

    sum_{j=0}^{e-1} C(j, K) C(m-j, d-K) = C(m+1, d+1) P(X >= K+1), X hypergeometric (population
    m + 1, successes e, draws d + 1): a (d+1)-subset of {0..m} whose (K+1)-th smallest element
    is below e is a choice of that element j, K smaller and d - K larger. Divided by C(m, d),
    the factor is (m + 1) / (d + 1).
    """
    x = np.arange(int(first.min()) + 1, d + 2)  # P(X >= K+1) needs the terms from the smallest K+1 up
    o = (len(lf) - 1) // 2  # lf[i + o] = log i! (log_factorials); gathers kept to two over the 3-D array
    rest = m[:, None] + 1 - ends  # the population's failures
    log_2d = lf[ends + o] + lf[rest + o] - (lf[m + 1 + o] - lf[d + 1 + o] - lf[m - d + o])[:, None]
    log_pmf = (
        log_2d[:, :, None] - (lf[x + o] + lf[d + 1 - x + o])[None, None, :] - lf[ends[:, :, None] - x + o] - lf[rest[:, :, None] - (d + 1 - x) + o]
    )
    survival = np.cumsum(np.exp(log_pmf)[:, :, ::-1], axis=2)[:, :, ::-1]  # P(X >= x)
    return survival[:, :, first - int(first.min())] * ((m + 1) / (d + 1))[:, None, None]


def order_posterior(prior: PairPrior, pool_items: int, drawn: int, discordant: int, first=None) -> np.ndarray:
    """P(M+ > m/2 | d, K+) for the counts K+ in ``first`` (default every K+ = 0..d), d = ``discordant``
    of ``drawn`` items of ``pool_items``.

    Exact up to ``EXACTNESS``: every m the draw allows (but those of negligible weight, :func:`_m_support`)
    and every M+ = 0..m, the sum over M+ taken in closed form over each run of M+ where the prior is
    constant (:func:`_run_likelihood`)."""
    N, k, d = int(pool_items), int(drawn), int(discordant)
    first = np.arange(d + 1) if first is None else np.asarray(first, dtype=np.int64).ravel()
    lf = log_factorials(N + 2)
    m = np.arange(d, N - (k - d) + 1)  # what the draw allows
    if d == 0:
        m = m[m >= 1]
    if not len(m):
        return np.zeros(len(first))
    log_like = log_comb(m, np.full_like(m, d), lf) + log_comb(N - m, np.full_like(m, k - d), lf)
    weights = prior.m_weights(N)[m] * np.exp(log_like - log_like.max())
    keep = _m_support(weights, d)
    m, weights = m[keep], weights[keep]
    held = np.zeros(len(first))
    total = np.zeros(len(first))
    rows = max(1, CHUNK // ((PRIOR_BINS + 2) * (d + 2)))
    for lo in range(0, len(m), rows):
        mc, wc = m[lo : lo + rows], weights[lo : lo + rows]
        starts = prior.share_bin_starts(mc)  # (m, bins + 1)
        half = mc // 2 + 1  # the first M+ that puts the first model ahead
        ends = np.concatenate([starts, half[:, None]], axis=1)
        cum = _run_likelihood(mc, ends, d, first, lf)  # (m, ends, K+)
        at_start, at_half = cum[:, :-1], cum[:, -1:]
        per_bin = np.diff(at_start, axis=1)  # (m, bins, K+)
        above = np.diff(np.where((starts >= half[:, None])[:, :, None], at_start, at_half), axis=1)
        height = prior.share_bin_weights(mc, starts)  # (m, bins): the prior of each M+ of the bin
        total += wc @ (height[:, :, None] * per_bin).sum(axis=1)
        held += wc @ (height[:, :, None] * above).sum(axis=1)
    return np.where(total > 0, held / np.where(total > 0, total, 1.0), 0.0)


def exact_order_probability(sizes, drawn, plus, minus, *, prior: PairPrior | None = None) -> np.ndarray:
    """P(the full benchmark ranks the first model above the second), one per pair.

    ``sizes`` and ``drawn`` (strata,): pool and chosen items per stratum; ``plus`` and
    ``minus`` (pairs x strata, or pairs for one stratum): chosen items only the first /
    only the second model got right. ``prior``: the joint distribution of discordant pool items
    and the share the first model wins (default: uniform over both).
    """
    prior = prior if prior is not None else PairPrior.uniform()
    sizes = np.atleast_1d(np.asarray(sizes, dtype=np.int64))
    drawn = np.atleast_1d(np.asarray(drawn, dtype=np.int64))
    plus = np.asarray(plus, dtype=np.int64).reshape(-1, len(sizes))
    minus = np.asarray(minus, dtype=np.int64).reshape(-1, len(sizes))
    if plus.shape != minus.shape or np.any(plus < 0) or np.any(minus < 0) or np.any(plus + minus > drawn):
        raise MdadError("Discordant counts must be non-negative, one per pair and stratum, and at most the items drawn.")
    N, k = int(sizes.sum()), int(drawn.sum())
    d = (plus + minus).sum(axis=1)
    seen = drawn > 0
    m_hat = ((plus + minus)[:, seen] * (sizes[seen] / drawn[seen])).sum(axis=1) * N / sizes[seen].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        k_eff = np.where(d > 0, np.rint(N * d / np.maximum(m_hat, 1e-12)), k)
    k_eff = np.clip(k_eff, d, N).astype(np.int64)  # the uniform design's number of draws with the same estimate of m
    K = plus.sum(axis=1)
    keys, inverse = unique_rows(k_eff, d, K)
    out = np.empty(len(keys))
    groups, members = unique_rows(keys[:, 0], keys[:, 1])
    for g, (kk, dd) in enumerate(groups):
        rows = np.flatnonzero(members == g)
        out[rows] = order_posterior(prior, N, int(kk), int(dd), keys[rows, 2])
    out = out[inverse]
    return np.clip(out, 0.0, 1.0)


SPREAD_FLOOR = 0.05  # points: the smallest residual spread a bin is given (all-equal residuals would give 0)


@dataclass(frozen=True, eq=False)
class OrderCalibration:
    """P(order holds) = 1 / (1 + exp(-(intercept + slope z))) for a pair with estimates e1, e2.

    With ``spread`` (points, one per bin of the estimate cut at ``edges``): z = |T(e1) - T(e2)|,
    T(e) = integral from 0 to e of 100 / (sqrt(2) s(u)) du, the gap measured in units of the
    held-out residual spread s along the way (gap / (sqrt(2) s) when both lie in one bin; z grows
    with the gap at any fixed other estimate, so the probability does). Without (files of an
    older mdad): z = |e1 - e2| in points, whatever the level.
    """

    intercept: float
    slope: float  # per unit of z
    pairs: int  # calibration pairs it was fitted on
    edges: np.ndarray | None = None  # interior bin edges of the estimate (accuracies)
    spread: np.ndarray | None = None  # residual standard deviation per bin (points)
    rankings: RankingCalibration | None = None  # fits on held-out rankings of several sizes (None: older file)

    @property
    def by_level(self) -> bool:
        """Whether the gap is scaled by the residual spread at the pair's estimates (else: the gap alone)."""
        return self.spread is not None

    @classmethod
    def fit(cls, estimates: np.ndarray, truths: np.ndarray, *, by_level: bool = True, rankings: bool = True) -> OrderCalibration:
        """Fit on every pair of targets within each held-out run (runs x targets arrays, accuracies as fractions),
        and with ``rankings`` the fits on held-out rankings (:class:`RankingCalibration`, under a second for 20 runs
        of 50 targets) that neighbouring pairs and the best of a ranking use.

        ``by_level=False`` fits on the gap alone (as older mdad did; kept for comparison)."""
        est = np.atleast_2d(np.asarray(estimates, dtype=np.float64))
        tru = np.atleast_2d(np.asarray(truths, dtype=np.float64))
        if est.shape != tru.shape or est.shape[1] < 2:
            raise MdadError("Order calibration needs runs x targets estimates and truths of one shape, 2 targets or more.")
        edges = spread = None
        if by_level:
            ok = np.isfinite(est) & np.isfinite(tru)
            edges = estimate_bin_edges(est[ok])
            which = np.searchsorted(edges, est[ok], side="right")
            residuals = 100.0 * (tru[ok] - est[ok])
            spread = np.array([residuals[which == b].std() if (which == b).sum() > 1 else SPREAD_FLOOR for b in range(len(edges) + 1)])
            spread = np.maximum(spread, SPREAD_FLOOR)
        i, j = np.triu_indices(est.shape[1], k=1)
        first, second = est[:, i].ravel(), est[:, j].ravel()
        de, dt = first - second, (tru[:, i] - tru[:, j]).ravel()
        keep = (de != 0) & np.isfinite(de) & np.isfinite(dt)
        if not keep.any():
            raise MdadError("Order calibration needs at least one pair whose estimates differ.")
        held = agreement_from_differences(de[keep], dt[keep]).astype(np.float64)
        fitted = cls(intercept=0.0, slope=0.0, pairs=int(keep.sum()), edges=edges, spread=spread)
        z = fitted.scaled_gap(first[keep], second[keep])
        intercept, slope = logistic_coefficients(z, held, np.ones_like(z))[0]
        ranked = RankingCalibration.fit(est, tru, fitted.scaled_gap, fitted.spread_at) if by_level and rankings else None
        return replace(fitted, intercept=float(intercept), slope=float(slope), rankings=ranked)

    @classmethod
    def fit_if_possible(cls, estimates: np.ndarray, truths: np.ndarray, *, rankings: bool = True) -> OrderCalibration | None:
        """:meth:`fit`, or None when no pair's estimates differ (nothing to calibrate on)."""
        try:
            return cls.fit(estimates, truths, rankings=rankings)
        except MdadError:
            return None

    def spread_at(self, estimates) -> np.ndarray:
        """The held-out residual spread (points) at each estimate (accuracies); NaN for a gap-only fit."""
        est = np.asarray(estimates, dtype=np.float64)
        if self.spread is None or self.edges is None:  # both present or both absent
            return np.full(est.shape, np.nan)
        return self.spread[np.searchsorted(self.edges, est, side="right")]

    def scale_position(self, estimates) -> np.ndarray:
        """T(e) = integral from 0 to e of 100 / (sqrt(2) s(u)) du: where an estimate (accuracy) lies on the scale
        of the residual spread (piecewise linear, increasing), so that T(e1) - T(e2) = gap / (sqrt(2) s)
        for two estimates in one bin of spread s (points)."""
        est = np.asarray(estimates, dtype=np.float64)
        lower, upper = np.r_[-np.inf, self.edges], np.r_[self.edges, np.inf]
        weight = 100.0 / (np.sqrt(2.0) * self.spread)
        return (np.clip(est[..., None], lower, upper) - np.clip(0.0, lower, upper)) @ weight

    def scaled_gap(self, first, second) -> np.ndarray:
        """z of pairs of estimates (accuracies): |T(e1) - T(e2)|, the gap in units of the residual spread
        between them (:meth:`scale_position`), or for a gap-only fit the gap in points."""
        e1, e2 = np.broadcast_arrays(np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64))
        if self.spread is None:
            return 100.0 * np.abs(e1 - e2)
        return np.abs(self.scale_position(e1) - self.scale_position(e2))

    def probability(self, first, second) -> np.ndarray:
        """P(the full benchmark keeps the order of pairs of estimates ``first``, ``second`` (accuracies))."""
        z = self.scaled_gap(first, second)
        return np.where(z == 0, EVEN, 1.0 / (1.0 + np.exp(-(self.intercept + self.slope * z))))

    def gap_for(self, probability: float, *, at: float) -> float:
        """The estimated gap (points) from which the order of two models estimated near accuracy ``at``
        holds with ``probability`` (inf if never)."""
        if self.slope <= 0:
            return float("inf")
        logit = np.log(probability / (1.0 - probability))
        z = max((logit - self.intercept) / self.slope, 0.0)
        return float(z if self.spread is None else z * np.sqrt(2.0) * self.spread_at(at))  # both in the bin of ``at``

    def describe(self) -> str:
        """One sentence: how the probability was calibrated."""
        if self.spread is None:
            return (
                f"calibrated: logistic fit of held-out orders on the estimated gap alone ({self.pairs} pairs; "
                "saved by an older mdad, not adjusted to the models' level)"
            )
        return (
            f"calibrated: logistic fit of held-out orders on the estimated gap in units of the residual spread where "
            f"the two estimates lie ({self.pairs} pairs, spread in {plural(len(self.spread), 'bin')} of the estimate)"
        )

    def to_json(self) -> dict:
        """The fit as JSON-ready numbers, as micro.json stores it."""
        if self.spread is None or self.edges is None:  # both present or both absent
            return {"intercept": self.intercept, "slope_per_point": self.slope, "pairs": self.pairs}
        out = {
            "intercept": self.intercept,
            "slope_per_spread": self.slope,
            "pairs": self.pairs,
            "edges": self.edges.tolist(),
            "spread_points": self.spread.tolist(),
        }
        if self.rankings is not None:
            out["rankings"] = self.rankings.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict) -> OrderCalibration:
        """Read :meth:`to_json`'s output, or the gap-only fit (intercept, slope_per_point) of an older mdad."""
        try:
            if "spread_points" not in data:
                return cls(intercept=float(data["intercept"]), slope=float(data["slope_per_point"]), pairs=int(data["pairs"]))
            edges = np.asarray(data["edges"], dtype=np.float64).reshape(-1)
            spread = np.asarray(data["spread_points"], dtype=np.float64).reshape(-1)
            fit = cls(intercept=float(data["intercept"]), slope=float(data["slope_per_spread"]), pairs=int(data["pairs"]), edges=edges, spread=spread)
            rankings = data.get("rankings")
        except (KeyError, TypeError, ValueError):
            raise MdadError(
                "The micro-benchmark's order calibration is malformed (intercept, slope_per_spread, pairs, edges, spread_points)."
            ) from None
        if len(spread) != len(edges) + 1 or not np.all(spread > 0) or np.any(np.diff(edges) <= 0):
            raise MdadError("The micro-benchmark's order calibration needs increasing edges and one positive spread per bin.")
        return fit if rankings is None else replace(fit, rankings=RankingCalibration.from_json(rankings))
