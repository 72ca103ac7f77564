"""The random designs print the estimate their exact interval belongs to (docs/intervals.md#stratified-designs).

On real data with unequal allocations (MuSR, 10-20 items over its subtasks): for every random
design the printed estimate is the design's estimator, sum_s N_s x_s / k_s / N over the pool's
subtasks (the plain mean for the uniform design), lies inside its own interval, and the ranking
the order probabilities are given for is the ranking of the printed estimates.
"""

from __future__ import annotations

import numpy as np
import pytest

import mdad

DESIGNS = ["random", "random-stratified-equal", "random-stratified-proportional", "random@per-subtask", "random-stratified-proportional@per-subtask"]


def design_estimator(chosen, scores: np.ndarray) -> np.ndarray:
    """sum_s N_s x_s / k_s / N, written out per subtask (a subtask without chosen items at the others' mean)."""
    seen = {name: size for name, size in chosen.pool_subtasks.items() if (chosen.subtasks == name).any()}
    total = sum(seen.values())
    return sum(size * scores[:, chosen.subtasks == name].mean(axis=1) / total for name, size in seen.items())


@pytest.mark.parametrize("method", DESIGNS)
def test_the_printed_estimate_is_the_designs_estimator_and_inside_its_interval(musr, method):
    differs = 0
    for size, seed in ((10, 0), (10, 1), (10, 2), (13, 3), (20, 4)):
        chosen = mdad.select(musr, method, size, seed=seed)
        scores = chosen.item_scores(musr)[0].astype(np.float64)
        printed = chosen.intervals(musr, level=0.9)
        assert printed.kind == "exact"
        expected = scores.mean(axis=1) if method == "random" else design_estimator(chosen, scores)
        np.testing.assert_allclose(printed.estimate, expected, atol=1e-9)
        assert ((printed.low <= printed.estimate + 1e-12) & (printed.estimate <= printed.high + 1e-12)).all()
        orders = chosen.order_probabilities(musr)
        ranked = np.argsort(-printed.estimate, kind="stable")
        assert orders.first.tolist() == printed.models[ranked[:-1]].tolist()
        np.testing.assert_allclose(orders.gap, 100 * -np.diff(printed.estimate[ranked]), atol=1e-9)
        differs += not np.allclose(printed.estimate, scores.mean(axis=1))
    if method.startswith("random-stratified"):
        assert differs  # unequal allocations: the plain mean is not the design's estimate
