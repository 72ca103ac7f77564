"""Fit of the multidimensional two-parameter logistic (2PL) IRT model.

P(model i answers item j correctly) = sigmoid(a_j . theta_i - b_j), with theta_i, a_j in R^D.
Priors: theta ~ N(0, I); a_jd ~ N(mu_d, s_d^2) (a mean and a scale per dimension);
b_j ~ N(mu_b, s_b^2). Hierarchical priors put N(0, 10^2) hyperpriors on the means and
inverse-gamma(1, 1) hyperpriors on the variances and estimate them by empirical Bayes;
fixed priors hold them at given values.

By default the estimates are the means of a mean-field Gaussian approximation of the
posterior (what py-irt, the tinyBenchmarks reference, computes by stochastic variational
inference), found here deterministically: rounds of L-BFGS-B on the means, each round's
objective being the negative log posterior plus the second-order cost of the parameters'
posterior spread (``_Spread``), alternating with closed-form updates of the covariances and
of the hierarchical means and scales. ``variational=False`` gives the plain posterior mode
(MAP), which over-fits with D=10 (lower held-out likelihood; benchmarks/results/irt.md).
Each objective evaluation is three (models x D x items) matrix products and a few
element-wise passes over the response matrix, with an analytic gradient. Missing cells
(NaN) drop out of the likelihood.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.errors import MdadError

HYPER_MEAN_SCALE = 10.0  # sd of the N(0, .) hyperprior on mu_a and mu_b
IG_SHAPE, IG_RATE = 1.0, 1.0  # inverse-gamma hyperprior on s_a^2 and s_b^2
VARIATIONAL_SCHEDULE = (36, 12)  # L-BFGS iterations in all, rounds (covariance and prior updates)
MODE_SCHEDULE = (160, 8)
# A variational fit ends before its schedule once a round, from round STOP_MIN_ROUNDS on, moves the
# fitted probabilities of the observed cells by less than STOP_TOLERANCE on average and no hierarchical
# scale by more than STOP_SCALE_TOLERANCE (|log ratio|) (docs/deviations.md#irt-fit-stopping).
STOP_MIN_ROUNDS, STOP_TOLERANCE, STOP_SCALE_TOLERANCE = 6, 2e-3, 0.025
# Cells per block of the objective's logits and element-wise work (float64: 512 KB per array, which
# with the block's few arrays stays in a core's cache; docs/benchmarks.md#earlier-measurements).
BLOCK_CELLS = 65_536


@dataclass(frozen=True, eq=False)
class IRTFit:
    """A fitted multidimensional 2PL model (approximate posterior means, or the mode)."""

    theta: np.ndarray  # models x D abilities
    a: np.ndarray  # items x D discriminations
    b: np.ndarray  # items difficulties
    priors: Priors  # the item priors used (estimated when hierarchical)
    objective: float  # the minimised objective (negative log posterior, plus the spread term)
    iterations: int  # L-BFGS iterations in all rounds (the schedule and the stopping rule set the count; see fit_irt)

    @property
    def dims(self) -> int:
        return self.a.shape[1]

    def logits(self) -> np.ndarray:
        """a_j . theta_i - b_j for every model and item."""
        return self.theta @ self.a.T - self.b

    def probabilities(self) -> np.ndarray:
        """Fitted P(correct), models x items."""
        return sigmoid(self.logits())

    @property
    def embedding(self) -> np.ndarray:
        """Item embedding (a_j, b_j), items x (D + 1): what tinyBenchmarks clusters."""
        return np.column_stack([self.a, self.b])


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Logistic function, stable for large |z|."""
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0, e) / (1.0 + e)


def check_binary(responses: np.ndarray, what: str = "The response matrix") -> np.ndarray:
    """The responses as float64, or an error when a cell is neither 0, 1 nor missing."""
    values = np.asarray(responses, dtype=np.float64)
    observed = values[~np.isnan(values)]
    bad = (observed != 0) & (observed != 1)
    if bad.any():
        raise MdadError(f"{what} must be 0/1 correctness (NaN = missing) for IRT, but {int(bad.sum())} values are not, e.g. {observed[bad][0]:g}.")
    return values


@dataclass(frozen=True, eq=False)
class Priors:
    """Gaussian priors of the item parameters: a_jd ~ N(a_mean[d], a_scale[d]^2), b_j ~ N(b_mean, b_scale^2)."""

    a_mean: np.ndarray  # per dimension
    a_scale: np.ndarray  # per dimension
    b_mean: float
    b_scale: float

    def normaliser(self, n_items: int, hierarchical: bool) -> float:
        """The parts of the negative log prior that do not involve a and b: the log scales of
        the Gaussian densities, plus the hyperpriors when the means and scales are estimated."""
        value = n_items * float(np.log(self.a_scale).sum()) + n_items * float(np.log(self.b_scale))
        if hierarchical:
            scales = np.append(self.a_scale, self.b_scale)
            value += float(np.sum(2 * (IG_SHAPE + 1) * np.log(scales) + IG_RATE / scales**2))
            value += 0.5 * float(np.sum(np.append(self.a_mean, self.b_mean) ** 2)) / HYPER_MEAN_SCALE**2
        return value

    @classmethod
    def empirical_bayes(cls, a: np.ndarray, b: np.ndarray, var_a: np.ndarray, var_b: np.ndarray, previous: Priors) -> Priors:
        """One EM update of the hierarchical means and scales under the Laplace approximation.

        The posterior of (a_j, b_j) is approximated by a Gaussian around the estimates with variances
        ``var_a`` (items x D) and ``var_b`` (items); each variance becomes (expected sum of
        squares + 2 * IG rate) / (count + 2 * (IG shape + 1)), each mean the shrunk sample mean.
        Using expected rather than plug-in squares is what keeps the scales from collapsing
        to zero, the degenerate joint mode of a hierarchical MAP fit. Each dimension has its
        own scale, so dimensions the data do not need are shrunk towards zero.
        """
        m = a.shape[0]
        a_mean = a.sum(axis=0) / (m + previous.a_scale**2 / HYPER_MEAN_SCALE**2)
        b_mean = float(b.sum()) / (m + previous.b_scale**2 / HYPER_MEAN_SCALE**2)
        c = 2 * (IG_SHAPE + 1)
        a_scale = np.sqrt((np.sum((a - a_mean) ** 2, axis=0) + var_a.sum(axis=0) + 2 * IG_RATE) / (m + c))
        b_scale = float(np.sqrt((np.sum((b - b_mean) ** 2) + var_b.sum() + 2 * IG_RATE) / (m + c)))
        return cls(a_mean=a_mean, a_scale=a_scale, b_mean=b_mean, b_scale=b_scale)


def neg_log_posterior(
    responses: np.ndarray,
    theta: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    priors: Priors,
    spread: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[float, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The objective fit_irt minimises, up to a constant, and its gradient in each block.

    Without ``spread`` it is the negative log posterior. With ``spread`` = (P, Q), per-model
    and per-item D x D matrices, it adds 1/2 theta_i' P_i theta_i + 1/2 a_j' Q_j a_j: the
    second-order cost of the other parameters' posterior spread (see ``_Spread``).
    """
    posterior = _Posterior(check_binary(responses), *a.shape)
    f, g = posterior(np.concatenate([theta.ravel(), a.ravel(), b]), priors, spread)
    return f, posterior.split(g)


class _Posterior:
    """Negative log posterior of the parameter vector (theta, a, b) for one response matrix."""

    def __init__(self, responses: np.ndarray, n_items: int, dims: int) -> None:
        missing = np.isnan(responses)
        self.mask = (~missing).astype(np.float64) if missing.any() else None
        self.y = np.where(missing, 0.0, responses)
        self.observed = int(missing.size - missing.sum())
        self.n_models, self.n_items, self.dims = responses.shape[0], n_items, dims
        self._last: _Likelihood | None = None
        # the residuals of the last point (``_last.resid``) and one block's logits and losses: written
        # again at every new point, never allocated anew (a fresh array of megabytes is mapped, and its
        # pages faulted in, on every evaluation; docs/benchmarks.md#earlier-measurements)
        rows = min(self.n_models, max(1, BLOCK_CELLS // n_items))
        self._resid = np.empty(responses.shape)
        self._w = np.empty(responses.shape)  # the last spread's weights (``_Spread.w``)
        self._block = np.empty((3, rows, n_items))

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n, m, d = self.n_models, self.n_items, self.dims
        return x[: n * d].reshape(n, d), x[n * d : (n + m) * d].reshape(m, d), x[(n + m) * d :]

    def spread(self, x: np.ndarray, priors: Priors) -> _Spread:
        """Mean-field Gaussian posterior covariances around the current estimates.

        Its weights ``w`` are written over by the next spread's.

        Each model's ability covariance S_i and each item's (a_j, b_j) covariance C_j is
        the inverse of its expected Hessian block, the other side's second moments
        included (one fixed-point pass from the item side). With w_ij = p_ij (1 - p_ij):
        C_j^-1 = sum_i w_ij E[x_i x_i'] + prior precision, x_i = (theta_i, -1);
        S_i^-1 = sum_j w_ij E[a_j a_j'] + I.
        """
        theta, a, b = self.split(x)
        n, d = self.n_models, self.dims
        # P(correct) (0 where missing: the residual is masked), then p (1 - p), into the same array every time
        w = np.add(self.likelihood(x).resid, self.y, out=self._w)
        scratch = self._block[0]
        for start in range(0, n, len(scratch)):
            part = w[start : start + len(scratch)]
            part *= np.subtract(1.0, part, out=scratch[: len(part)])
        eye = np.eye(d)
        # every sum over models or items of symmetric matrices is taken on their upper triangles only
        second_a = w @ packed_outer(a)  # sum_j w_ij a_j a_j'
        cov_theta = spd_inverses(unpacked(second_a, d) + eye)
        second = packed_outer(np.column_stack([theta, -np.ones(n)]))  # x_i x_i', x_i = (theta_i, -1)
        second[:, _within(d)] += _packed(cov_theta)
        hess = unpacked(w.T @ second, d + 1)
        idx = np.arange(d)
        hess[:, idx, idx] += 1.0 / priors.a_scale**2
        hess[:, d, d] += 1.0 / priors.b_scale**2
        cov_item = spd_inverses(hess)
        spread_a = w @ _packed(cov_item[:, :d, :d])  # sum_j w_ij V_j: P_i, and part of S_i^-1
        cov_theta = spd_inverses(unpacked(second_a + spread_a, d) + eye)
        return _Spread(w, cov_theta, cov_item, unpacked(spread_a, d))

    def likelihood(self, x: np.ndarray) -> _Likelihood:
        """The negative log-likelihood part of the objective at ``x``, kept for the last ``x``.

        A round of the fit starts where the last one ended, with other priors and spread penalties
        but the same likelihood; the spread update between rounds needs the same probabilities too. So
        each is computed once per point (the same arithmetic, hence the same numbers). The residuals
        it holds are those of the last point only: the next point's are written over them."""
        last = self._last
        if last is not None and np.array_equal(last.x, x):
            return last
        theta, a, b = self.split(x)
        n = self.n_models
        resid = self._resid
        rows = self._block.shape[1]
        by_item = np.ascontiguousarray(a.T)
        value, g_theta = 0.0, np.empty_like(theta)
        for start in range(0, n, rows):  # blocks of rows that stay in the CPU cache: the logits and losses never reach memory
            block = slice(start, start + rows)
            logits, loss, scratch = self._block[:, : len(resid[block])]
            eta = np.matmul(theta[block], by_item, out=logits)
            eta -= b
            _loss_and_residual(eta, self.y[block], loss, resid[block], scratch)
            if self.mask is not None:
                loss *= self.mask[block]
                resid[block] *= self.mask[block]
            value += float(loss.sum())
            np.matmul(resid[block], a, out=g_theta[block])  # while the block's residuals are in the cache
        # the sums over models, the b gradient's with theta's: one product (a column of ones)
        by_model = resid.T @ np.column_stack([theta, np.ones(n)])
        self._last = _Likelihood(x.copy(), resid, value, g_theta, by_model[:, :-1], by_model[:, -1].copy())
        return self._last

    def __call__(self, x: np.ndarray, priors: Priors, spread=None) -> tuple[float, np.ndarray]:
        theta, a, b = self.split(x)
        part = self.likelihood(x)
        prec_a, prec_b = 1.0 / priors.a_scale**2, 1.0 / priors.b_scale**2
        da, db = a - priors.a_mean, b - priors.b_mean
        f = part.value + 0.5 * float(np.sum(theta * theta))
        f += 0.5 * float(np.sum(prec_a * da * da)) + 0.5 * prec_b * float(db @ db)
        g_theta = part.g_theta + theta
        g_a = part.g_a + prec_a * da
        if spread is not None:
            p_theta = np.einsum("nde,ne->nd", spread[0], theta)
            q_a = np.einsum("mde,me->md", spread[1], a)
            f += 0.5 * float(np.sum(theta * p_theta) + np.sum(a * q_a))
            g_theta += p_theta
            g_a += q_a
        return f, np.concatenate([g_theta.ravel(), g_a.ravel(), prec_b * db - part.resid_sum])


@dataclass(frozen=True, eq=False)
class _Likelihood:
    """The negative log-likelihood at ``x`` (``value``), its gradient in theta, a and (negated) b, and the logits."""

    x: np.ndarray
    resid: np.ndarray  # models x items: sigmoid(eta) - y (0 where missing)
    value: float
    g_theta: np.ndarray
    g_a: np.ndarray
    resid_sum: np.ndarray  # per item: sum over models of sigmoid(eta) - y, the negative of the b gradient


def _loss_and_residual(eta: np.ndarray, y: np.ndarray, loss: np.ndarray, resid: np.ndarray, scratch: np.ndarray) -> None:
    """softplus(eta) - y * eta into ``loss`` and its derivative sigmoid(eta) - y into ``resid``, from
    one exp(-|eta|) = e: softplus(eta) = log(1 + e) + max(eta, 0), and with q = 1 / (1 + e),
    sigmoid(eta) = 1/2 + sign(eta) (q - 1/2). ``eta`` is overwritten; ``scratch`` is working space.

    log(1 + e) rather than log1p(e): with e <= 1 its error is that of rounding 1 + e, at most 1.1e-16
    in absolute value, like the sum's own rounding, and numpy's log is vectorised where log1p is not;
    a division rather than a reciprocal, the same bits in half the time (docs/benchmarks.md#earlier-measurements). Element by
    element, so the caller can pass blocks: each cell's value is the same whatever the blocks, and a
    block that fits in the cache saves the passes over memory of whole arrays."""
    e = np.abs(eta, out=resid)
    np.negative(e, out=e)
    np.exp(e, out=e)
    e += 1.0
    np.log(e, out=loss)
    np.divide(1.0, e, out=e)
    e -= 0.5
    np.copysign(e, eta, out=e)
    e += 0.5
    e -= y
    loss += np.maximum(eta, 0.0, out=scratch)
    eta *= y
    loss -= eta


def spd_inverses(matrices: np.ndarray) -> np.ndarray:
    """The inverses of a stack (rows x k x k) of small symmetric positive definite matrices.

    Cholesky factor, its triangular inverse L^-1, then (L^-1)' L^-1, each step one array operation over
    the whole stack (the matrices' entries laid out k x k x rows). ``np.linalg.inv`` calls LAPACK once per
    matrix, and at k = 11 that per-call cost is most of the time: this takes 1.6x less on 6,016 items
    (docs/benchmarks.md#earlier-measurements). The result is symmetric to the bit; it agrees with LU inversion to rounding."""
    k = matrices.shape[-1]
    c = np.moveaxis(matrices, 0, -1).copy(order="C")  # c[i, j] holds entry (i, j) of every matrix (a copy, always)
    for j in range(k):  # Cholesky, lower: c[i, j] becomes L_ij for i >= j
        if j:
            c[j:, j] -= np.einsum("itm,tm->im", c[j:, :j], c[j, :j])
        np.sqrt(c[j, j], out=c[j, j])
        c[j + 1 :, j] /= c[j, j]
    inverse = np.zeros_like(c)  # L^-1, lower, row by row (forward substitution)
    for i in range(k):
        inverse[i, i] = 1.0 / c[i, i]
        if i:
            inverse[i, :i] = np.einsum("tm,tjm->jm", c[i, :i], inverse[:i, :i]) * -inverse[i, i]
    out = np.zeros_like(c)
    for t in range(k):  # (L^-1)' L^-1 as a sum over the rows t of L^-1: symmetric by construction
        out[: t + 1, : t + 1] += inverse[t, : t + 1, None] * inverse[t, None, : t + 1]
    return np.moveaxis(out, -1, 0)


def packed_outer(v: np.ndarray) -> np.ndarray:
    """Row-wise outer products, packed (their upper triangles, ``_packed``): rows x cols (cols + 1) / 2."""
    upper, right = np.triu_indices(v.shape[1])
    return v[:, upper] * v[:, right]


def _packed(matrices: np.ndarray) -> np.ndarray:
    """The upper triangles (diagonal included, row by row) of symmetric rows x k x k matrices:
    rows x k (k + 1) / 2. A sum of symmetric matrices needs no more (55 of 100 entries at D = 10)."""
    upper, right = np.triu_indices(matrices.shape[-1])
    return matrices[:, upper, right]


def unpacked(packed: np.ndarray, k: int) -> np.ndarray:
    """The symmetric rows x k x k matrices whose upper triangles ``packed`` holds (one gather)."""
    upper, right = np.triu_indices(k)
    where = np.empty((k, k), dtype=np.intp)  # each entry's place in the packed triangle
    where[upper, right] = where[right, upper] = np.arange(len(upper))
    return np.take(packed, where.ravel(), axis=1).reshape(len(packed), k, k)


def _within(k: int) -> np.ndarray:
    """Where the packed upper triangle of a (k + 1) x (k + 1) matrix holds that of its top-left k x k block."""
    upper, right = np.triu_indices(k + 1)
    return np.flatnonzero(right < k)


@dataclass(frozen=True)
class _Spread:
    """Posterior covariances of abilities (models x D x D) and items (items x (D+1) x (D+1)).

    Under a mean-field Gaussian posterior, the expected log-likelihood is, to second order,
    the log-likelihood at the means minus 1/2 sum_ij w_ij Var(eta_ij), and Var(eta_ij)
    holds theta_i' V_j theta_i + a_j' S_i a_j (V_j: covariance of a_j). Those two terms,
    with w and the covariances held from the last round, are the quadratic penalties
    P_i = sum_j w_ij V_j and Q_j = sum_i w_ij S_i: they shrink directions the data do not
    pin down, which is how a variational fit prunes the dimensions it does not need.
    """

    w: np.ndarray
    cov_theta: np.ndarray
    cov_item: np.ndarray
    theta_penalty: np.ndarray  # P (models x D x D), computed on the way to the covariances

    def penalties(self) -> tuple[np.ndarray, np.ndarray]:
        return self.theta_penalty, unpacked(self.w.T @ _packed(self.cov_theta), self.cov_theta.shape[1])

    def item_variances(self) -> tuple[np.ndarray, np.ndarray]:
        """Posterior variances of a_jd (items x D) and of b_j."""
        var = np.diagonal(self.cov_item, axis1=1, axis2=2)
        return var[:, :-1], var[:, -1]


def _initial(responses: np.ndarray, dims: int, rng: np.random.Generator) -> np.ndarray:
    """Start near the mode: b from each item's smoothed accuracy; theta and a from the top D
    singular vectors of the centred responses (theta with unit variance, a rescaled from the
    probability to the logit scale), plus a little noise from ``rng``."""
    n, m = responses.shape
    observed = ~np.isnan(responses)
    acc = (np.where(observed, responses, 0.0).sum(axis=0) + 0.5) / (observed.sum(axis=0) + 1.0)
    b = -np.log(acc / (1 - acc))
    centred = np.where(observed, responses - acc, 0.0)
    u, s, vt = _top_singular(centred, dims)
    r = len(s)
    theta = rng.normal(0.0, 0.01, size=(n, dims))
    a = rng.normal(0.0, 0.01, size=(m, dims))
    theta[:, :r] += u[:, :r] * np.sqrt(n)
    # the slope of the logit at the item's accuracy turns a linear loading into a logit one
    a[:, :r] += vt[:r].T * (s[:r] / np.sqrt(n)) / (acc * (1 - acc))[:, None]
    return np.concatenate([theta.ravel(), a.ravel(), b])


def _top_singular(matrix: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The top ``count`` singular triplets (u, s, vt) of ``matrix``, from the eigenvectors of its
    Gram matrix on the smaller side (a start needs no more accuracy, and a full SVD of 350 x 12,000
    costs 25 times as much). Each pair's sign is fixed: the largest entry of u in magnitude (the
    first among equals) is positive, so the start does not depend on the LAPACK kernel's signs."""
    n, m = matrix.shape
    by_rows = n <= m
    values, vectors = np.linalg.eigh(matrix @ matrix.T if by_rows else matrix.T @ matrix)
    top = np.arange(len(values) - 1, len(values) - 1 - min(count, len(values)), -1)
    s = np.sqrt(np.maximum(values[top], 0.0))
    known = vectors[:, top]  # u (by rows) or v
    other = (known.T @ matrix if by_rows else matrix @ known).astype(np.float64)
    scale = np.divide(1.0, s, out=np.zeros_like(s), where=s > 0)
    if by_rows:
        u, vt = known, other * scale[:, None]
    else:
        u, vt = other * scale[None, :], known.T
    flip = np.sign(u[np.argmax(np.abs(u), axis=0), np.arange(u.shape[1])])
    flip[flip == 0] = 1.0
    return u * flip, s, vt * flip[:, None]


def fit_irt(
    responses: np.ndarray,
    dims: int = 10,
    rng: np.random.Generator | None = None,
    priors: str = "hierarchical",
    a_prior: tuple[float, float] = (0.0, 1.0),
    b_prior: tuple[float, float] = (0.0, 3.0),
    max_iter: int | None = None,
    max_rounds: int | None = None,
    tol: float = 1e-9,
    scale_tol: float = 0.02,
    threads: int | None = 1,
    variational: bool = True,
    until: Callable[[IRTFit], bool] | None = None,
    stop_tol: float | None = None,
) -> IRTFit:
    """The D-dimensional 2PL model fitted to a models x items 0/1 matrix (NaN = missing).

    ``priors`` is "hierarchical" (the mean and scale of a per dimension, and the mean and
    scale of b, are estimated by empirical Bayes) or "fixed" (a_jd ~ N(a_prior[0],
    a_prior[1]^2), b_j ~ N(b_prior[0], b_prior[1]^2)). With ``variational`` (default) the
    estimates are approximate posterior means (module docstring), else the posterior mode.
    The work is ``max_rounds`` rounds of L-BFGS-B sharing ``max_iter`` iterations, warm started;
    between rounds the posterior covariances (variational) and the hierarchical means and scales are
    updated in closed form. Variational fits default to at most 12 rounds of 3 iterations: frequent
    covariance updates reach a better fixed point than long rounds against stale covariances (higher
    held-out likelihood at half the cost of 8 rounds of 20; benchmarks/results/irt.md). They end earlier
    once a round, from round ``STOP_MIN_ROUNDS`` (6) on, moves the fitted probabilities of the
    observed cells by less than ``stop_tol`` on average (default ``STOP_TOLERANCE``, 0.2 points; 0:
    every round) and no hierarchical scale by more than ``STOP_SCALE_TOLERANCE`` (2.5%, as |log
    ratio|): by then the held-out likelihood has stopped moving, while a fit still pruning
    dimensions runs on (docs/deviations.md#irt-fit-stopping). Posterior modes default to 8 rounds of
    20 iterations. The joint MAP of parameters and scales would be degenerate (scales collapse to
    zero), hence the empirical-Bayes step, whose expected squares include the posterior variances. A
    plain MAP with fixed priors is one round. ``scale_tol`` ends a hierarchical MAP early once no
    scale moves by more than that (relative). ``until``, when given, sees the fit after each round
    (what a fit with that many rounds of the same length returns) and ends it early by returning
    True: a caller whose quantity has stopped moving need not pay for the remaining rounds.
    The random start comes from ``rng``: the fit is a deterministic function of the data and
    the generator. ``threads`` caps the BLAS threads of the fit (None: leave as set): its
    matrix products are small (models x D x items), and on 2 cores a second thread costs
    more than it saves (benchmarks/results/irt.md).
    """
    from scipy.optimize import minimize  # imported on first use: scipy.optimize costs start-up time of every command

    values = check_binary(responses)
    if values.ndim != 2 or min(values.shape) < 1:
        raise MdadError(f"IRT needs a models x items matrix, got shape {values.shape}.")
    if dims < 1:
        raise MdadError(f"The IRT dimension must be at least 1, got {dims}.")
    if priors not in ("hierarchical", "fixed"):
        raise MdadError(f"Unknown IRT priors {priors!r}; use 'hierarchical' or 'fixed'.")
    empty = np.flatnonzero(np.isnan(values).all(axis=0))
    if empty.size:
        raise MdadError(f"Item {int(empty[0])} has no answers to fit IRT on.")
    rng = np.random.default_rng(0) if rng is None else rng
    hierarchical = priors == "hierarchical"
    default_iter, default_rounds = VARIATIONAL_SCHEDULE if variational else MODE_SCHEDULE
    max_iter = default_iter if max_iter is None else max_iter
    max_rounds = default_rounds if max_rounds is None else max_rounds
    with threadpool_limits(limits=threads, user_api="blas"):
        posterior = _Posterior(values, values.shape[1], dims)
        x = _initial(values, dims, rng)
        current = Priors(np.full(dims, float(a_prior[0])), np.full(dims, float(a_prior[1])), float(b_prior[0]), float(b_prior[1]))
        iterations, penalty, fitted, spare = 0, None, None, None
        stop_tol = STOP_TOLERANCE if stop_tol is None else stop_tol
        rounds = max(1, max_rounds) if (hierarchical or variational) else 1
        for done in range(1, rounds + 1):  # rounds done once this one ends
            result = minimize(
                posterior,
                x,
                args=(current, penalty),
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": max(1, max_iter // rounds), "maxcor": 20, "ftol": tol, "gtol": 1e-6},
            )
            x, iterations = result.x, iterations + int(result.nit)
            if rounds == 1:
                break
            spread = posterior.spread(x, current)
            if variational:
                penalty = spread.penalties()
            if hierarchical:
                updated = Priors.empirical_bayes(*posterior.split(x)[1:], *spread.item_variances(), current)
                change = np.max(np.abs(np.log(np.append(updated.a_scale, updated.b_scale) / np.append(current.a_scale, current.b_scale))))
                if change < scale_tol and not variational:
                    break
                current = updated
            else:
                change = 0.0
            if until is not None and until(_result(posterior, x, current, penalty, hierarchical, iterations)):
                break
            if variational and stop_tol > 0 and STOP_MIN_ROUNDS - 1 <= done < rounds:
                # fitted P(correct) where observed, 0 elsewhere; the last round's array is the next one's
                probs = np.add(posterior.likelihood(x).resid, posterior.y, out=spare)
                if fitted is not None and change < STOP_SCALE_TOLERANCE:
                    np.subtract(probs, fitted, out=fitted)
                    if float(np.abs(fitted, out=fitted).sum()) < stop_tol * posterior.observed:
                        break
                spare, fitted = fitted, probs
        return _result(posterior, x, current, penalty, hierarchical, iterations)


def _result(posterior: _Posterior, x: np.ndarray, priors: Priors, penalty, hierarchical: bool, iterations: int) -> IRTFit:
    """The fit at ``x``: its parameters (copies), priors and objective."""
    theta, a, b = posterior.split(x)
    value = posterior(x, priors, penalty)[0] + priors.normaliser(a.shape[0], hierarchical)
    return IRTFit(theta=theta.copy(), a=a.copy(), b=b.copy(), priors=priors, objective=value, iterations=iterations)
