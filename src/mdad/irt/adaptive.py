"""Computerized adaptive testing with a fitted 2PL model, vectorised over models.

Every model starts at one ability (the source models' mean), then repeatedly answers the
unanswered pool item that is most informative at its current ability and has its ability
re-estimated (MAP under the fit's N(0, I) prior) from all its answers so far. All models
advance one item per step, so a step is a handful of (models x answered x D) array
operations whatever the number of models.

Item choice for D > 1 is Bayesian D-optimality (Segall 1996): the item that most increases
the determinant of the ability's posterior precision P = I + sum_j w_j a_j a_j'
(w_j = p_j (1 - p_j) at the current ability). By the matrix determinant lemma
det(P + w a a') = det(P) (1 + w a' P^-1 a), so the item maximising w_j a_j' P^-1 a_j is
chosen. With D = 1 this is the item of maximum Fisher information w_j a_j^2, the rule of
Fluid Benchmarking. Ties go to the lowest pool position. See docs/adaptive.md.

Two options, both off by default:

- a stopping rule (``stop_se``): a model's test ends once its ability's posterior standard
  deviation (the largest over the D coordinates, from the inverse posterior precision) falls
  below ``stop_se``, or at the item budget; each size is then a budget, and a model that stopped
  earlier keeps the ability and estimate it had when it stopped (``AdaptiveOutcome.used``);
- exposure control (``randomesque`` = r > 1): the next item is drawn uniformly among the r
  unasked items of largest information (ties in pool order), so that the most informative
  items are not shown to every model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.irt.ability import damped_newton
from mdad.irt.model import check_binary, sigmoid


def _objective(theta, a, b, y, mask, prior_prec) -> np.ndarray:
    eta = np.matmul(a, theta[:, :, None])[:, :, 0] - b
    nll = np.logaddexp(0.0, eta) - y * eta
    return (mask * nll).sum(axis=1) + 0.5 * prior_prec * np.sum(theta * theta, axis=1)


def map_abilities(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    start: np.ndarray | None = None,
    prior_scale: float = 1.0,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> np.ndarray:
    """MAP abilities (models x D) when each model answered its own items.

    ``y`` (models x t) are 0/1 answers, ``a`` (models x t x D) and ``b`` (models x t) the
    parameters of the item behind each answer, ``mask`` (models x t, default all) which
    answers count. Prior theta ~ N(0, prior_scale^2 I); damped Newton from ``start``
    (default 0), step halving until the objective decreases: the objective is strictly
    convex, so every model converges to its unique optimum.
    """
    y = np.asarray(y, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n, _, d = a.shape
    mask = np.ones_like(y) if mask is None else np.asarray(mask, dtype=np.float64)
    prior_prec = 1.0 / prior_scale**2
    theta = np.zeros((n, d)) if start is None else np.array(start, dtype=np.float64)
    eye = np.eye(d)

    def objective(th: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return _objective(th, a[rows], b[rows], y[rows], mask[rows], prior_prec)

    def derivatives(th: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ta, tm = a[rows], mask[rows]
        p = sigmoid(np.matmul(ta, th[:, :, None])[:, :, 0] - b[rows])
        grad = np.matmul((tm * (p - y[rows]))[:, None, :], ta)[:, 0, :] + prior_prec * th
        hess = np.matmul((tm * p * (1.0 - p))[:, None, :] * ta.transpose(0, 2, 1), ta) + prior_prec * eye
        return grad, hess

    return damped_newton(theta, objective, derivatives, max_iter=max_iter, tol=tol)


def posterior_precision(theta: np.ndarray, a: np.ndarray, b: np.ndarray, *, prior_scale: float = 1.0) -> np.ndarray:
    """I / prior_scale^2 + sum_j w_j a_j a_j' at ``theta`` (models x D) over each model's
    answered items ``a`` (models x t x D), ``b`` (models x t): models x D x D."""
    d = theta.shape[1]
    w = sigmoid(np.matmul(a, theta[:, :, None])[:, :, 0] - b)
    w = w * (1.0 - w)
    return np.matmul(w[:, None, :] * a.transpose(0, 2, 1), a) + np.eye(d) / prior_scale**2


def d_optimal_gain(theta: np.ndarray, precision: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """w_j(theta) a_j' P^-1 a_j for every model (rows of ``theta``) and pool item (rows of ``a``):
    the relative increase of det(P) if item j were answered next (models x items)."""
    inverse = np.linalg.inv(precision)
    w = sigmoid(theta @ a.T - b)
    w = w * (1.0 - w)
    return w * (np.matmul(inverse, a.T) * a.T).sum(axis=1)


@dataclass(frozen=True, eq=False)
class AdaptiveOutcome:
    """What an adaptive pass gives for every requested size (sizes nest: the first k items of
    the longest test are the k-item test)."""

    sizes: tuple[int, ...]
    items: np.ndarray  # models x max(sizes): pool positions in the order they were asked
    theta: np.ndarray  # sizes x models x D: the ability after each size's last answer
    estimates: np.ndarray  # sizes x models: predicted pool accuracy, answered items as answered
    used: np.ndarray | None = None  # sizes x models: items each model answered (None: every model all k)

    def estimate(self, k: int) -> np.ndarray:
        return self.estimates[self.sizes.index(k)]

    def items_used(self, k: int) -> np.ndarray:
        """How many items each model answered in the test of budget ``k``."""
        return np.full(self.items.shape[0], k) if self.used is None else self.used[self.sizes.index(k)]


def posterior_sd(precision: np.ndarray) -> np.ndarray:
    """The largest posterior standard deviation over the D ability coordinates (models x D x D precisions)."""
    return np.sqrt(np.diagonal(np.linalg.inv(precision), axis1=1, axis2=2).max(axis=1))


def next_items(gain: np.ndarray, randomesque: int, rng: np.random.Generator | None) -> np.ndarray:
    """Each model's next item: the largest gain (the lowest pool position among equals), or with
    ``randomesque`` = r > 1 one drawn uniformly among its r largest (unasked items have finite gain)."""
    if randomesque <= 1:
        return np.argmax(gain, axis=1)
    if rng is None:
        raise MdadError("Exposure control draws among the most informative items, so it needs a random generator.")
    best = np.argsort(-gain, axis=1, kind="stable")[:, :randomesque]
    available = np.minimum(randomesque, np.isfinite(gain).sum(axis=1))
    pick = np.floor(rng.random(len(gain)) * available).astype(np.int64)
    return best[np.arange(len(gain)), pick]


def pool_accuracy(theta: np.ndarray, a: np.ndarray, b: np.ndarray, answered: np.ndarray, answers: np.ndarray) -> np.ndarray:
    """(answers on the ``answered`` items + predicted P(correct) of every other pool item) / pool size.

    ``answered`` (models x t) are pool positions, ``answers`` their 0/1 values (models x t)."""
    predicted = sigmoid(theta @ a.T - b)
    on_answered = np.take_along_axis(predicted, answered, axis=1)
    return (predicted.sum(axis=1) + answers.sum(axis=1) - on_answered.sum(axis=1)) / a.shape[0]


def run_adaptive(
    answers: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    *,
    sizes: Sequence[int],
    start: np.ndarray,
    prior_scale: float = 1.0,
    stop_se: float | None = None,
    randomesque: int = 1,
    rng: np.random.Generator | None = None,
) -> AdaptiveOutcome:
    """Adaptive tests of every model (rows of ``answers``, its 0/1 answers on the whole pool)
    up to max(sizes) items, with the pool's item parameters ``a`` (pool x D), ``b`` (pool).

    ``start`` (D) is the ability at which the first item is chosen; ``stop_se`` ends a model's
    test early, ``randomesque`` draws the next item among the most informative ones with ``rng``
    (module docstring). A stopped model's row of ``items`` is -1 after its last item."""
    values = check_binary(np.atleast_2d(answers), "The answers of an adaptive test")
    if np.isnan(values).any():
        raise MdadError("An adaptive test needs every model's answer on every pool item it may ask.")
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n_models, pool = values.shape
    if a.shape[0] != pool or b.shape != (pool,):
        raise MdadError(f"Item parameters for {a.shape[0]} items do not match answers on {pool} pool items.")
    sizes = tuple(int(k) for k in sizes)
    if not sizes or min(sizes) < 1 or max(sizes) > pool:
        raise MdadError(f"Adaptive test sizes must lie between 1 and the pool of {pool} items, got {sizes}.")
    d = a.shape[1]
    longest = max(sizes)
    rows = np.arange(n_models)
    items = np.full((n_models, longest), -1, dtype=np.int64)
    asked = np.zeros((n_models, pool), dtype=bool)
    theta = np.tile(np.asarray(start, dtype=np.float64).reshape(1, d), (n_models, 1))
    precision = np.tile(np.eye(d) / prior_scale**2, (n_models, 1, 1))
    used = np.full(n_models, longest)  # items answered when the test ended
    final = np.zeros(n_models)  # the estimate when the test ended (stopped models)
    live = rows  # models still being tested: all of them without a stopping rule
    thetas, estimates, used_at = [], [], []
    for step in range(longest):
        if not live.size:  # every test has stopped: the remaining budgets keep their estimates
            so_far, y = np.zeros((0, step + 1), dtype=np.int64), np.zeros((0, step + 1))
        else:
            gain = d_optimal_gain(theta[live], precision[live], a, b)
            gain[asked[live]] = -np.inf
            chosen = next_items(gain, randomesque, rng)
            items[live, step] = chosen
            asked[live, chosen] = True
            so_far = items[live, : step + 1]
            y, ia, ib = values[live[:, None], so_far], a[so_far], b[so_far]
            theta[live] = map_abilities(y, ia, ib, start=theta[live], prior_scale=prior_scale)
            precision[live] = posterior_precision(theta[live], ia, ib, prior_scale=prior_scale)
            if stop_se is not None:
                done = posterior_sd(precision[live]) < stop_se
                if done.any():
                    used[live[done]] = step + 1
                    final[live[done]] = pool_accuracy(theta[live[done]], a, b, so_far[done], y[done])
                    live, so_far, y = live[~done], so_far[~done], y[~done]
        if step + 1 in sizes:
            current = final.copy()
            current[live] = pool_accuracy(theta[live], a, b, so_far, y)
            thetas.append(theta.copy())
            estimates.append(current)
            used_at.append(np.minimum(used, step + 1))
    order = [sorted(set(sizes)).index(k) for k in sizes]
    return AdaptiveOutcome(
        sizes=sizes,
        items=items,
        theta=np.array(thetas)[order],
        estimates=np.array(estimates)[order],
        used=None if stop_se is None else np.array(used_at)[order],
    )
