"""A micro-benchmark that draws every item of the pool (k = N) estimates the full benchmark exactly:
neighbouring models the full benchmark ties are shown as "tied" (as --compare says) and are not counted
among the unreliable orders (docs/own-results.md)."""

from __future__ import annotations

import numpy as np

import mdad
from mdad.micro.estimation import estimate_report


def _tied_neighbours_by_hand(scores: np.ndarray) -> int:
    """Neighbouring pairs of the ranking by number right that got as many right (brute force)."""
    totals = np.sort(scores.sum(axis=1))[::-1]
    return int(np.sum(totals[:-1] == totals[1:]))


def _check_whole_pool(matrix) -> None:
    chosen = mdad.select(matrix, "random", matrix.n_items, seed=0)
    report = estimate_report(chosen, matrix)
    probability = next(column for column in report.columns if column.name == "P(order holds)")
    ties = _tied_neighbours_by_hand(matrix.scores)
    assert ties > 0  # the case under test
    assert probability.cells.count("tied") == ties
    assert not any(w for cell, w in zip(probability.cells, probability.warned, strict=True) if cell == "tied")
    # each tied pair got as many right; every other pair's order is certain on the full benchmark
    totals = dict(zip(matrix.models, matrix.scores.sum(axis=1), strict=True))
    orders = report.orders
    for first, second, tied in zip(orders.first, orders.second, orders.ties, strict=True):
        assert tied == (totals[first] == totals[second])
    assert report.unreliable_orders == int(np.sum(orders.probability[~orders.ties] < report.threshold))
    assert any(note.text.startswith(f"{ties} neighbouring pair") and "tied" in note.text for note in report.notes)
    # the same pairs compared directly are tied too
    some = [(str(a), str(b)) for a, b, t in zip(orders.first, orders.second, orders.ties, strict=True) if t][:5]
    assert all(comparison.tied for comparison in chosen.comparisons(matrix, some))


def test_a_whole_pool_micro_benchmark_shows_full_benchmark_ties_as_tied():
    _check_whole_pool(mdad.simulate(seed=2, n_models=40, n_items=30))


def test_whole_pool_ties_on_real_gpqa(gpqa):
    _check_whole_pool(gpqa)


def test_a_smaller_micro_benchmark_knows_no_full_benchmark_tie(small_sim):
    report = estimate_report(mdad.select(small_sim, "random", 20, seed=1), small_sim.take(models=np.arange(30)))
    assert not report.orders.ties.any()
    assert "tied" not in next(column for column in report.columns if column.name == "P(order holds)").cells


def test_the_pairs_csv_marks_ties_with_no_probability():
    matrix = mdad.simulate(seed=2, n_models=40, n_items=30)
    frame = mdad.select(matrix, "random", matrix.n_items, seed=0).order_probabilities(matrix).to_frame()
    assert frame["tied"].sum() == _tied_neighbours_by_hand(matrix.scores)
    assert frame.loc[frame["tied"], "probability"].isna().all() and frame.loc[~frame["tied"], "probability"].notna().all()
