"""Ability of new models from their answers on some items, the item parameters held fixed.

MAP under theta ~ N(0, prior_scale^2 I): the negative log posterior of each model is
strictly convex, so damped Newton steps (batched D x D solves, step halving until the
objective decreases) converge for all models at once in a handful of iterations.
"""

from __future__ import annotations

import numpy as np

from mdad.errors import MdadError
from mdad.irt.model import check_binary, sigmoid


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
