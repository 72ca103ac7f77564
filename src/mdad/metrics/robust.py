"""A robust MDAD beside the paper's first-crossing definition.

The paper's MDAD is the first 0.5-point bin whose agreement rate reaches the threshold.
With few pairs in a bin a single lucky bin at a small difference decides it, so it jumps
between draws of the target models (or is "not reached" because one unlucky bin is
missing). Agreement rises with the true difference, so we fit a monotone curve to the
bins and report the lower edge of the first bin whose fitted agreement (at the bin's
centre) reaches the threshold, on the same grid as the first-crossing MDAD:

- ``logistic`` (default): agreement = 1 / (1 + exp(-(a + b x))), a binomial fit weighted by
  each bin's pairs, in two steps (:func:`logistic_crossings`). The first fit leaves out bin 0,
  which holds the true ties (counted as disagreements, so below any smooth curve through the
  other bins); the second refits only the bins whose centre lies within ROBUST_WINDOW (75%)
  of the first fit's crossing, so that the many pairs at small differences, where the curve
  is not logistic, do not pull the crossing (measured in benchmarks/bench_mdad_coverage.py).
  The fit is read from bin 1 on; bin 0 counts by its own rate.
- ``isotonic``: the weighted least-squares increasing step function (equal to sklearn's
  IsotonicRegression): no shape assumed, a lucky bin is pooled with its neighbours.

The interval comes from the same bootstrap as the first-crossing MDAD (runs resampled,
:meth:`~mdad.metrics.pairwise.AgreementCurve.resample`), refitting every resample, its
window included (all resamples in one array computation).
"""

from __future__ import annotations

import numpy as np

from mdad.defaults import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD, ROBUST_WINDOW
from mdad.errors import MdadError
from mdad.metrics.pairwise import AgreementCurve, Mdad, crossing_interval, estimability_note, first_crossing

FITS = ("logistic", "isotonic")
_RIDGE = 1e-6
_MIN_WINDOW_BINS = 3  # fewer bins in the window than this: the first fit's crossing stands


def logistic_fit(
    x: np.ndarray, agreed: np.ndarray, pairs: np.ndarray, at: np.ndarray | None = None, iterations: int = 50, tol: float = 1e-10
) -> np.ndarray:
    """Fitted agreement at ``at`` (default ``x``) of a binomial logistic regression, one fit per row of ``agreed``.

    Newton-Raphson on the two parameters (a, b) for every row at once, each row until its step
    is below ``tol`` (at most ``iterations`` steps); a tiny ridge keeps the parameters finite
    when the data separate perfectly. Several rows (bootstrap resamples of one curve) start
    from the fit of their mean, which is close to each: a few steps then suffice. The ridge
    makes each fit's optimum unique, so the start does not change the answer.
    """
    x = np.asarray(x, dtype=np.float64)
    beta = logistic_coefficients(x, agreed, pairs, iterations=iterations, tol=tol)
    v = x if at is None else np.asarray(at, dtype=np.float64)
    return 1.0 / (1.0 + np.exp(-(beta[:, :1] + beta[:, 1:] * v[None, :])))


def logistic_coefficients(x: np.ndarray, agreed: np.ndarray, pairs: np.ndarray, *, iterations: int = 50, tol: float = 1e-10) -> np.ndarray:
    """(intercept, slope per unit of ``x``) of the fit of :func:`logistic_fit`, one row per row of ``agreed``."""
    agreed = np.atleast_2d(np.asarray(agreed, dtype=np.float64))
    n = np.asarray(pairs, dtype=np.float64)  # per bin, or per row and bin (resampled runs)
    x = np.asarray(x, dtype=np.float64)
    scale = max(float(np.abs(x).max()), 1.0)
    u = x / scale
    ridge = _RIDGE * float(np.atleast_2d(n).sum(axis=1).mean())
    start = np.zeros((1, 2))
    if agreed.shape[0] > 1:
        mean_n = n.mean(axis=0) if n.ndim == 2 else n
        start = _newton(u, agreed.mean(axis=0, keepdims=True), mean_n, ridge, start, iterations, tol)
    beta = _newton(u, agreed, n, ridge, np.repeat(start, agreed.shape[0], axis=0), iterations, tol)
    return np.column_stack([beta[:, 0], beta[:, 1] / scale])


def _newton(u: np.ndarray, agreed: np.ndarray, n: np.ndarray, ridge: float, beta: np.ndarray, iterations: int, tol: float) -> np.ndarray:
    """Ridge-penalised binomial logistic fits (rows of ``agreed``) by Newton steps from ``beta``."""
    beta = beta.copy()
    active = np.arange(agreed.shape[0])
    rows_n = n.ndim == 2
    for _ in range(iterations):
        b, y = beta[active], agreed[active]
        n_active = n[active] if rows_n else n
        p = 1.0 / (1.0 + np.exp(-(b[:, :1] + b[:, 1:] * u[None, :])))
        resid = y - n_active * p
        w = n_active * p * (1.0 - p)
        g0 = resid.sum(axis=1) - ridge * b[:, 0]
        g1 = resid @ u - ridge * b[:, 1]
        h00 = w.sum(axis=1) + ridge
        h01 = w @ u
        h11 = w @ (u * u) + ridge
        det = h00 * h11 - h01**2
        step = np.clip(np.column_stack([(h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det]), -5, 5)
        beta[active] = b + step
        active = active[np.abs(step).max(axis=1) > tol]
        if active.size == 0:
            break
    return beta


def isotonic_increasing(y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted increasing least-squares fit of each row of ``y`` (rows x bins), all rows at once.

    Uses the min-max formula fit[i] = max_{j <= i} min_{l >= i} mean(y[j..l]) (weighted), with
    prefix sums for the block means and cumulative min / max for the two extrema:
    O(bins^2) array work per row, no loop over rows. Equals sklearn's IsotonicRegression.
    """
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64), y.shape)  # per bin, or per row and bin
    n_bins = y.shape[1]
    zero = np.zeros((y.shape[0], 1))
    cw = np.concatenate([zero, np.cumsum(w, axis=1)], axis=1)
    cy = np.concatenate([zero, np.cumsum(np.where(w > 0, y * w, 0.0), axis=1)], axis=1)
    j, last = np.meshgrid(np.arange(n_bins), np.arange(n_bins), indexing="ij")
    valid = last >= j
    denom = np.where(valid[None], cw[:, last + 1] - cw[:, j], 1.0)
    empty = denom <= 0  # a block of bins without pairs (a resample that drew none) constrains nothing
    means = np.where(valid[None] & ~empty, (cy[:, last + 1] - cy[:, j]) / np.where(empty, 1.0, denom), np.where(valid[None], np.nan, np.inf))
    means = np.where(np.isnan(means), np.inf, means)
    suffix_min = np.minimum.accumulate(means[:, :, ::-1], axis=2)[:, :, ::-1]  # [row, j, i] = min over last >= i
    suffix_min = np.where(valid[None], suffix_min, -np.inf)  # only blocks that start at j <= i
    return suffix_min.max(axis=1)


def fit_grid(curve: AgreementCurve, fit: str = "logistic") -> np.ndarray:
    """Lower edges of the bins where a fit is read: every bin up to the last one for the logistic
    fit (a curve, defined between observed bins too), the observed bins for the isotonic step function."""
    if fit == "logistic":
        return np.arange(round(curve.lower[-1] / curve.bin_width) + 1) * curve.bin_width
    return curve.lower


def monotone_fit(curve: AgreementCurve, fit: str = "logistic", agreed: np.ndarray | None = None, pairs: np.ndarray | None = None) -> np.ndarray:
    """Fitted agreement at the centre of every bin of :func:`fit_grid` (rows: ``agreed`` resamples with
    their ``pairs``, default the curve's own counts)."""
    agreed = np.atleast_2d(curve.agreed if agreed is None else agreed)
    pairs = curve.pairs if pairs is None else pairs
    if fit == "logistic":
        half = curve.bin_width / 2
        return logistic_fit(curve.lower + half, agreed, pairs, at=fit_grid(curve, fit) + half)
    if fit == "isotonic":
        rate = np.divide(agreed, pairs, out=np.zeros(agreed.shape), where=np.asarray(pairs) > 0)
        return isotonic_increasing(rate, pairs)
    raise MdadError(f"Unknown fit {fit!r}; use {' or '.join(FITS)}.")


def logistic_crossings(
    curve: AgreementCurve,
    agreed: np.ndarray | None = None,
    pairs: np.ndarray | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    window: float = ROBUST_WINDOW,
) -> np.ndarray:
    """Robust MDAD of each row of ``agreed`` (default: the curve's own counts) by the two-step logistic fit.

    Step 1 fits every bin but bin 0 and reads its crossing c on the bins of :func:`fit_grid` from
    bin 1 on; step 2 refits the bins whose centre lies in [c (1 - window), c (1 + window)] and
    reads the crossing again. A row whose first fit does not reach the threshold, or whose window
    holds fewer than three bins, keeps the first fit's answer (NaN: not reached). Bin 0, left out
    of the fits, is judged by its own rate: where it reaches the threshold the answer is 0."""
    agreed = np.atleast_2d(curve.agreed if agreed is None else agreed).astype(np.float64)
    pairs = np.broadcast_to(np.asarray(curve.pairs if pairs is None else pairs, dtype=np.float64), agreed.shape)
    half = curve.bin_width / 2
    grid = fit_grid(curve, "logistic")
    centres = curve.lower + half
    use = curve.lower > 0
    if not use.any():  # every pair within the first bin: its rate is the whole curve
        return first_crossing(np.divide(agreed, pairs, out=np.zeros(agreed.shape), where=pairs > 0), curve.lower, threshold)
    grid = grid[grid > 0]
    crossing = first_crossing(logistic_fit(centres, np.where(use, agreed, 0.0), np.where(use, pairs, 0.0), at=grid + half), grid, threshold)
    with np.errstate(invalid="ignore"):
        near = use & (centres >= crossing[:, None] * (1 - window)) & (centres <= crossing[:, None] * (1 + window))
    local = near.sum(axis=1) >= _MIN_WINDOW_BINS
    if local.any():
        near = near[local]
        fitted = logistic_fit(centres, np.where(near, agreed[local], 0.0), np.where(near, pairs[local], 0.0), at=grid + half)
        crossing[local] = first_crossing(fitted, grid, threshold)
    if curve.lower[0] == 0:
        bin_0 = np.divide(agreed[:, 0], pairs[:, 0], out=np.zeros(len(agreed)), where=pairs[:, 0] > 0)
        crossing = np.where(bin_0 >= threshold - 1e-12, 0.0, crossing)
    return crossing


def robust_mdad(
    curve: AgreementCurve,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = DEFAULT_CONFIDENCE,
    fit: str = "logistic",
    targets: int | None = None,
) -> Mdad:
    """Lower edge (points) of the first bin where the monotone fit of the agreement curve reaches ``threshold``
    (the logistic fit: :func:`logistic_crossings`).

    The interval is the (1 - confidence)/2 and (1 + confidence)/2 quantiles of the same
    quantity over ``n_boot`` bootstrap copies of the curve (runs resampled); a resample that never reaches
    the threshold counts as infinitely large (so ``high`` is NaN when more than the upper
    tail of resamples do not reach it). ``value`` is NaN when the fit never reaches it; with
    ``targets`` the result says when MDAD cannot be estimated at all.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    agreed, pairs = curve.resample(rng, n_boot)
    if fit == "logistic":
        value = float(logistic_crossings(curve, threshold=threshold)[0])
        crossings = logistic_crossings(curve, agreed, pairs, threshold)
    else:
        grid = fit_grid(curve, fit)
        value = float(first_crossing(monotone_fit(curve, fit), grid, threshold)[0])
        chunk = max(1, 4_000_000 // max(len(grid) ** 2, 1))  # isotonic: bins^2 per row
        crossings = np.concatenate(
            [first_crossing(monotone_fit(curve, fit, agreed[i : i + chunk], pairs[i : i + chunk]), grid, threshold) for i in range(0, n_boot, chunk)]
        )
    low, high = crossing_interval(crossings, confidence)
    return Mdad(value=value, low=low, high=high, threshold=threshold, note=estimability_note(targets, curve.runs) if targets is not None else "")
