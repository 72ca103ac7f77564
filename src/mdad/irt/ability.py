"""Ability of new models from their answers on some items, the item parameters held fixed; and
the reverse, parameters of new items from the answers of models whose abilities are held fixed.

MAP under theta ~ N(0, prior_scale^2 I): the negative log posterior of each model is
strictly convex, so damped Newton steps (batched D x D solves, step halving until the
objective decreases) converge for all models at once in a handful of iterations. An item's
(a_j, b_j) under the fit's Gaussian priors is the same problem with the roles swapped.
"""

from __future__ import annotations

import numpy as np

from mdad.errors import MdadError
from mdad.irt.model import Priors, check_binary, packed_outer, sigmoid, unpacked


def _objective(theta, a, b, y, mask, prior_prec) -> np.ndarray:
    eta = theta @ a.T - b
    nll = np.logaddexp(0.0, eta) - y * eta
    return (mask * nll).sum(axis=1) + 0.5 * prior_prec * np.sum(theta * theta, axis=1)


def estimate_ability(
    responses: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    prior_scale: float = 1.0,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> np.ndarray:
    """MAP abilities (models x D) from 0/1 ``responses`` (models x k, NaN = not answered)
    on k items with discriminations ``a`` (k x D) and difficulties ``b`` (k)."""
    values = check_binary(np.atleast_2d(responses), "The answers used to estimate abilities")
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != values.shape[1] or b.shape != (values.shape[1],):
        raise MdadError(f"Item parameters for {a.shape[0] if a.ndim == 2 else '?'} items do not match answers on {values.shape[1]} items.")
    mask = (~np.isnan(values)).astype(np.float64)
    y = np.nan_to_num(values)
    n, d = values.shape[0], a.shape[1]
    prior_prec = 1.0 / prior_scale**2
    eye = np.eye(d)
    outer = (a[:, :, None] * a[:, None, :]).reshape(len(a), -1)

    def objective(theta: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return _objective(theta, a, b, y[rows], mask[rows], prior_prec)

    def derivatives(theta: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tm = mask[rows]
        p = sigmoid(theta @ a.T - b)
        grad = (tm * (p - y[rows])) @ a + prior_prec * theta
        hess = ((tm * p * (1.0 - p)) @ outer).reshape(len(rows), d, d) + prior_prec * eye
        return grad, hess

    return damped_newton(np.zeros((n, d)), objective, derivatives, max_iter=max_iter, tol=tol)


def estimate_items(responses: np.ndarray, theta: np.ndarray, priors: Priors, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """MAP item parameters (a: items x D, b: items) from 0/1 ``responses`` (models x items, NaN = not
    answered) of models with abilities ``theta`` (models x D) held fixed, under ``priors``
    (a_jd ~ N(a_mean[d], a_scale[d]^2), b_j ~ N(b_mean, b_scale^2)).

    Each item is a logistic regression on x_i = (theta_i, -1) with a Gaussian prior (strictly
    convex), taken ``steps`` plain Newton steps (iteratively reweighted least squares, all items at
    once) from a = 0 and b at the item's smoothed accuracy: no step halving, whose objective
    evaluations would cost as much again, so the caller chooses a count that has converged for its
    use. The Hessians are summed over models on their upper triangles only (one matrix product)."""
    values = check_binary(np.atleast_2d(responses), "The answers used to estimate item parameters")
    theta = np.asarray(theta, dtype=np.float64)
    if theta.ndim != 2 or theta.shape[0] != values.shape[0]:
        raise MdadError(f"Abilities for {theta.shape[0] if theta.ndim == 2 else '?'} models do not match answers of {values.shape[0]} models.")
    missing = np.isnan(values)
    mask = None if not missing.any() else (~missing).astype(np.float64)
    y = np.where(missing, 0.0, values)  # models x items, as given: the products below take it transposed
    n, d = theta.shape
    x = np.column_stack([theta, -np.ones(n)])  # logit = (a_j, b_j) . x_i
    mean = np.append(priors.a_mean, priors.b_mean)
    prec = 1.0 / np.append(priors.a_scale, priors.b_scale) ** 2
    outer = packed_outer(x)  # models x (d + 1)(d + 2) / 2

    answered = n - missing.sum(axis=0)
    accuracy = (y.sum(axis=0) + 0.5) / (answered + 1.0)
    fitted = np.zeros((values.shape[1], d + 1))
    fitted[:, d] = np.log((1.0 - accuracy) / accuracy)  # b at the item's smoothed accuracy, a = 0
    diagonal = np.arange(d + 1)
    for _ in range(steps):
        p = sigmoid(x @ fitted.T)  # models x items
        resid = p - y
        p *= 1.0 - p
        if mask is not None:
            resid *= mask
            p *= mask
        grad = resid.T @ x + prec * (fitted - mean)
        hess = unpacked(p.T @ outer, d + 1)
        hess[:, diagonal, diagonal] += prec
        fitted -= np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
    return fitted[:, :d], fitted[:, d]


def damped_newton(theta: np.ndarray, objective, derivatives, *, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Minimise a strictly convex objective of each row of ``theta`` (models x D) by Newton steps,
    all models at once, each step halved until its model's objective decreases.

    ``objective(theta_rows, rows)`` gives the objective of the models ``rows`` at ``theta_rows``;
    ``derivatives(theta_rows, rows)`` their gradients (rows x D) and Hessians (rows x D x D). A model
    stops once its Newton decrement is below ``tol``: a converged model's rounding noise is not
    searched. ``theta`` is updated in place and returned.
    """
    active = np.arange(len(theta))
    current = objective(theta, active)
    for _ in range(max_iter):
        th = theta[active]
        grad, hess = derivatives(th, active)
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        keep = np.einsum("nd,nd->n", grad, step) >= tol
        if not keep.any():
            break
        active, th, step = active[keep], th[keep], step[keep]
        scale = np.ones(len(active))
        candidate = th - step
        value = objective(candidate, active)
        for _ in range(30):
            worse = value > current[active]
            if not worse.any():
                break
            scale[worse] *= 0.5
            candidate[worse] = th[worse] - scale[worse, None] * step[worse]
            value[worse] = objective(candidate[worse], active[worse])
        better = value <= current[active]
        theta[active[better]], current[active[better]] = candidate[better], value[better]
    return theta


def predict_correct(theta: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(correct) of each model (rows of ``theta``) on each item (rows of ``a``)."""
    return sigmoid(np.asarray(theta) @ np.asarray(a).T - np.asarray(b))
