"""The audit-corrected estimate (mdad.estimators.audit) against independent calculations:
enumeration of every audit draw on a tiny pool (exact unbiasedness and variance), a direct
optimiser for the item curves, and a simulation with known truth and a biased learned estimate
(docs/intervals.md#audit-items)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy import optimize

from mdad.data import simulate
from mdad.errors import MdadError
from mdad.estimators.audit import RIDGE, ItemCurves, audit_estimate, draw_audit_items


def _tiny_case():
    rng = np.random.default_rng(5)
    pool = 10
    y = (rng.random(pool) < 0.6).astype(float)  # one target's answers on the whole pool
    chosen = np.array([1, 4, 7])
    predicted = rng.random(pool)  # any prediction, deliberately unrelated to y
    return y, chosen, predicted


def test_every_audit_draw_averages_to_the_pool_accuracy_exactly():
    y, chosen, predicted = _tiny_case()
    rest = np.setdiff1d(np.arange(len(y)), chosen)
    learned = y.mean() - 0.2  # a learned estimate far off
    estimates, variances = [], []
    for audit in combinations(rest.tolist(), 3):
        audit = np.array(audit)
        found = audit_estimate([learned], y[chosen][None], y[audit][None], chosen, audit, predicted[None], level=0.9)
        estimates.append(found.estimate[0])
        variances.append(found.variance[0])
    assert np.mean(estimates) == pytest.approx(y.mean(), abs=1e-12)
    # the variance over all draws is the finite-population formula, and its estimate is unbiased for it
    residual = y[rest] - predicted[rest]
    n_rest, m = len(rest), 3
    formula = (n_rest / len(y)) ** 2 * (1 - m / n_rest) * residual.var(ddof=1) / m
    assert np.var(estimates) == pytest.approx(formula, rel=1e-10)
    assert np.mean(variances) == pytest.approx(formula, rel=1e-10)


def test_the_audit_draws_only_items_not_chosen_and_is_reproducible():
    chosen = np.array([0, 3, 5])
    first = draw_audit_items(20, chosen, 6, np.random.default_rng(1))
    again = draw_audit_items(20, chosen, 6, np.random.default_rng(1))
    assert np.array_equal(first, again) and len(set(first.tolist())) == 6 and not set(first.tolist()) & {0, 3, 5}
    with pytest.raises(MdadError, match="between 2 and the 17 pool items"):
        draw_audit_items(20, chosen, 18, np.random.default_rng(1))
    with pytest.raises(MdadError, match="between 2 and"):
        draw_audit_items(20, chosen, 1, np.random.default_rng(1))


def test_item_curves_are_the_penalised_logistic_fit():
    matrix = simulate(seed=2, n_models=60, n_items=30, n_subtasks=1)
    curves = ItemCurves.fit(matrix.scores)
    acc = np.clip(matrix.scores.mean(axis=1), 0.5 / 30, 1 - 0.5 / 30)
    z = np.log(acc / (1 - acc))
    z = (z - z.mean()) / z.std()
    for j in (0, 7, 19):
        y = matrix.scores[:, j]

        def loss(w, y=y):
            eta = w[0] + w[1] * z
            return np.sum(np.logaddexp(0, eta) - y * eta) + RIDGE / 2 * (w @ w)

        best = optimize.minimize(loss, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
        assert curves.intercept[j] == pytest.approx(best[0], abs=1e-5)
        assert curves.slope[j] == pytest.approx(best[1], abs=1e-5)
    assert ItemCurves.from_json(curves.to_json()).predict(np.array([0.4]), 30) == pytest.approx(curves.predict(np.array([0.4]), 30))


def test_corrected_estimate_is_unbiased_and_covers_for_a_model_beyond_the_sources():
    """Known truth: the best model of a simulated leaderboard is the target, the others the sources; its
    learned estimate is 8 points low. Over many audit draws the corrected estimate averages to its true
    pool accuracy and the 90% interval covers it about 90% of the time."""
    matrix = simulate(seed=7, n_models=200, n_items=600, n_subtasks=1)
    accuracy = matrix.scores.mean(axis=1)
    best = int(np.argmax(accuracy))
    sources = np.delete(matrix.scores, best, axis=0)
    y, truth = matrix.scores[best], accuracy[best]
    chosen = np.random.default_rng(0).choice(600, size=50, replace=False)
    learned = truth - 0.08
    predicted = ItemCurves.fit(sources).predict(np.array([learned]), 600)
    rng = np.random.default_rng(11)
    draws, m = 2000, 25
    flat = np.full((1, 600), learned)  # no item curves: the plain design estimate of the remaining items
    estimates, covered, widths, flat_widths = np.empty(draws), np.empty(draws, dtype=bool), np.empty(draws), np.empty(draws)
    for d in range(draws):
        audit = draw_audit_items(600, chosen, m, rng)
        found = audit_estimate([learned], y[chosen][None], y[audit][None], chosen, audit, predicted, level=0.9)
        estimates[d], covered[d], widths[d] = found.estimate[0], found.low[0] <= truth <= found.high[0], found.high[0] - found.low[0]
        plain = audit_estimate([learned], y[chosen][None], y[audit][None], chosen, audit, flat, level=0.9)
        flat_widths[d] = plain.high[0] - plain.low[0]
    se = estimates.std() / np.sqrt(draws)
    assert abs(estimates.mean() - truth) < 3 * se
    assert 0.86 <= covered.mean() <= 0.95
    # the item curves narrow the interval against the plain mean of the audit items
    assert np.median(widths) < 0.95 * np.median(flat_widths)
