"""MAP fit of the multidimensional two-parameter logistic (2PL) IRT model.

P(model i answers item j correctly) = sigmoid(a_j . theta_i - b_j), with theta_i, a_j in R^D.
Priors: theta ~ N(0, I); a_jd ~ N(mu_d, s_d^2) (a mean and a scale per dimension);
b_j ~ N(mu_b, s_b^2). Hierarchical priors put N(0, 10^2) hyperpriors on the means and
inverse-gamma(1, 1) hyperpriors on the variances and estimate them by empirical Bayes;
fixed priors hold them at given values.

Given the priors, the posterior mode of (theta, a, b) is one L-BFGS-B problem on the joint
vector with an analytic gradient: each evaluation is three (models x D x items) matrix
products and a few element-wise passes over the response matrix. Missing cells (NaN) drop
out of the likelihood.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from mdad.errors import MdadError

HYPER_MEAN_SCALE = 10.0  # sd of the N(0, .) hyperprior on mu_a and mu_b
IG_SHAPE, IG_RATE = 1.0, 1.0  # inverse-gamma hyperprior on s_a^2 and s_b^2


@dataclass(frozen=True)
class IRTFit:
    """Posterior mode of the multidimensional 2PL model."""

    theta: np.ndarray  # models x D abilities
    a: np.ndarray  # items x D discriminations
    b: np.ndarray  # items difficulties
    priors: "Priors"  # the item priors at the mode (estimated when hierarchical)
    objective: float  # negative log posterior at the mode
    iterations: int
    converged: bool

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
        raise MdadError(
            f"{what} must be 0/1 correctness (NaN = missing) for IRT, but {int(bad.sum())} "
            f"values are not, e.g. {observed[bad][0]:g}."
        )
    return values


@dataclass(frozen=True)
class Priors:
    """Gaussian priors of the item parameters: a_jd ~ N(a_mean[d], a_scale[d]^2), b_j ~ N(b_mean, b_scale^2)."""

    a_mean: np.ndarray  # per dimension
    a_scale: np.ndarray  # per dimension
    b_mean: float
    b_scale: float

    def normaliser(self, n_items: int, hierarchical: bool) -> float:
        """The parts of the negative log prior that do not involve a and b: the log scales of
        the Gaussian densities, plus the hyperpriors when the means and scales are estimated."""
        dims = len(self.a_mean)
        value = n_items * float(np.log(self.a_scale).sum()) + n_items * float(np.log(self.b_scale))
        if hierarchical:
            scales = np.append(self.a_scale, self.b_scale)
            value += float(np.sum(2 * (IG_SHAPE + 1) * np.log(scales) + IG_RATE / scales**2))
            value += 0.5 * float(np.sum(np.append(self.a_mean, self.b_mean) ** 2)) / HYPER_MEAN_SCALE**2
        return value

    @classmethod
    def empirical_bayes(
        cls, a: np.ndarray, b: np.ndarray, var_a: np.ndarray, var_b: np.ndarray, previous: "Priors"
    ) -> "Priors":
        """One EM update of the hierarchical means and scales under the Laplace approximation.

        The posterior of (a_j, b_j) is approximated by a Gaussian at the mode with variances
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
    responses: np.ndarray, theta: np.ndarray, a: np.ndarray, b: np.ndarray, priors: Priors
) -> tuple[float, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Negative log posterior of (theta, a, b) up to a constant, and its gradient in each block."""
    posterior = _Posterior(check_binary(responses), *a.shape)
    f, g = posterior(np.concatenate([theta.ravel(), a.ravel(), b]), priors)
    return f, posterior.split(g)


class _Posterior:
    """Negative log posterior of the parameter vector (theta, a, b) for one response matrix."""

    def __init__(self, responses: np.ndarray, n_items: int, dims: int) -> None:
        missing = np.isnan(responses)
        self.mask = (~missing).astype(np.float64) if missing.any() else None
        self.y = np.where(missing, 0.0, responses)
        self.n_models, self.n_items, self.dims = responses.shape[0], n_items, dims

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n, m, d = self.n_models, self.n_items, self.dims
        return x[: n * d].reshape(n, d), x[n * d : (n + m) * d].reshape(m, d), x[(n + m) * d :]

    def item_variances(self, x: np.ndarray, priors: Priors) -> tuple[np.ndarray, np.ndarray]:
        """Laplace posterior variances of a_jd and b_j: the diagonal of the inverse of each
        item's (D+1) x (D+1) Hessian block, with the abilities held at the mode."""
        theta, a, b = self.split(x)
        p = sigmoid(theta @ a.T - b)
        w = p * (1.0 - p)
        if self.mask is not None:
            w *= self.mask
        design = np.column_stack([theta, -np.ones(len(theta))])
        d = self.dims
        outer = (design[:, :, None] * design[:, None, :]).reshape(len(design), -1)
        hess = (w.T @ outer).reshape(-1, d + 1, d + 1)
        idx = np.arange(d)
        hess[:, idx, idx] += 1.0 / priors.a_scale**2
        hess[:, d, d] += 1.0 / priors.b_scale**2
        var = np.diagonal(np.linalg.inv(hess), axis1=1, axis2=2)
        return var[:, :d], var[:, d]

    def __call__(self, x: np.ndarray, priors: Priors) -> tuple[float, np.ndarray]:
        theta, a, b = self.split(x)
        eta = theta @ a.T
        eta -= b
        # softplus(eta) - y * eta and its derivative sigmoid(eta) - y from one exp(-|eta|):
        # with q = 1 / (1 + exp(-|eta|)), sigmoid(eta) = 1/2 + sign(eta) (q - 1/2).
        e = np.exp(-np.abs(eta))
        loss = np.log1p(e)
        loss += np.maximum(eta, 0.0)
        loss -= self.y * eta
        e += 1.0
        resid = np.reciprocal(e, out=e)
        resid -= 0.5
        np.copysign(resid, eta, out=resid)
        resid += 0.5
        resid -= self.y
        if self.mask is not None:
            loss *= self.mask
            resid *= self.mask
        prec_a, prec_b = 1.0 / priors.a_scale**2, 1.0 / priors.b_scale**2
        da, db = a - priors.a_mean, b - priors.b_mean
        f = float(loss.sum()) + 0.5 * float(np.sum(theta * theta))
        f += 0.5 * float(np.sum(prec_a * da * da)) + 0.5 * prec_b * float(db @ db)
        grad = np.concatenate([
            (resid @ a + theta).ravel(),
            (resid.T @ theta + prec_a * da).ravel(),
            prec_b * db - resid.sum(axis=0),
        ])
        return f, grad


def _initial(responses: np.ndarray, dims: int, rng: np.random.Generator) -> np.ndarray:
    """Start near the mode: b from each item's smoothed accuracy; theta and a from the top D
    singular vectors of the centred responses (theta with unit variance, a rescaled from the
    probability to the logit scale), plus a little noise from ``rng``."""
    n, m = responses.shape
    observed = ~np.isnan(responses)
    acc = (np.where(observed, responses, 0.0).sum(axis=0) + 0.5) / (observed.sum(axis=0) + 1.0)
    b = -np.log(acc / (1 - acc))
    centred = np.where(observed, responses - acc, 0.0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    r = min(dims, len(s))
    theta = rng.normal(0.0, 0.01, size=(n, dims))
    a = rng.normal(0.0, 0.01, size=(m, dims))
    theta[:, :r] += u[:, :r] * np.sqrt(n)
    # the slope of the logit at the item's accuracy turns a linear loading into a logit one
    a[:, :r] += vt[:r].T * (s[:r] / np.sqrt(n)) / (acc * (1 - acc))[:, None]
    return np.concatenate([theta.ravel(), a.ravel(), b])


def fit_irt(
    responses: np.ndarray,
    dims: int = 10,
    rng: np.random.Generator | None = None,
    priors: str = "hierarchical",
    a_prior: tuple[float, float] = (0.0, 1.0),
    b_prior: tuple[float, float] = (0.0, 3.0),
    max_iter: int = 160,
    max_rounds: int = 8,
    tol: float = 1e-9,
    scale_tol: float = 0.02,
    threads: int | None = 1,
) -> IRTFit:
    """Posterior mode of the D-dimensional 2PL model for a models x items 0/1 matrix.

    ``priors`` is "hierarchical" (the mean and scale of a per dimension, and the mean and
    scale of b, are estimated too) or "fixed" (a_jd ~ N(a_prior[0], a_prior[1]^2), b_j ~
    N(b_prior[0], b_prior[1]^2)). Hierarchical fits alternate L-BFGS on (theta, a, b) given
    the priors with an empirical-Bayes (Laplace EM) update of the means and scales, warm
    started, for up to ``max_rounds`` rounds or until no scale moves by more than
    ``scale_tol`` (relative); the joint MAP of parameters and scales would be degenerate
    (scales collapse to zero), hence the EM step. ``max_iter`` L-BFGS iterations in all are
    shared among the rounds: with a handful of rounds the held-out likelihood is as good as
    after full convergence, at a fraction of the time (benchmarks/README.md).
    The random start comes from ``rng``: the fit is a deterministic function of the data and
    the generator. ``threads`` caps the BLAS threads of the fit (None: leave as set): its
    matrix products are small (models x D x items), and on 2 cores a second thread costs
    more than it saves (benchmarks/README.md).
    """
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
    with threadpool_limits(limits=threads, user_api="blas"):
        posterior = _Posterior(values, values.shape[1], dims)
        x = _initial(values, dims, rng)
        current = Priors(np.full(dims, float(a_prior[0])), np.full(dims, float(a_prior[1])),
                         float(b_prior[0]), float(b_prior[1]))
        iterations, converged = 0, False
        rounds = max(1, max_rounds) if hierarchical else 1
        for _ in range(rounds):
            result = minimize(
                posterior, x, args=(current,), jac=True, method="L-BFGS-B",
                options={"maxiter": max(1, max_iter // rounds), "maxcor": 20, "ftol": tol, "gtol": 1e-6},
            )
            x, iterations, converged = result.x, iterations + int(result.nit), bool(result.success)
            if not hierarchical:
                break
            updated = Priors.empirical_bayes(*posterior.split(x)[1:], *posterior.item_variances(x, current), current)
            change = np.max(np.abs(np.log(np.append(updated.a_scale, updated.b_scale)
                                          / np.append(current.a_scale, current.b_scale))))
            if change < scale_tol:
                break
            current = updated
        theta, a, b = posterior.split(x)
        value = posterior(x, current)[0] + current.normaliser(a.shape[0], hierarchical)
    return IRTFit(
        theta=theta.copy(), a=a.copy(), b=b.copy(), priors=current, objective=value,
        iterations=iterations, converged=converged,
    )
