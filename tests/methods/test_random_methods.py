"""The three random designs: sizes, allocation, inclusion probabilities and reproducibility."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdad import methods
from mdad.errors import MdadError
from mdad.methods import SourceView
from mdad.methods.random import equal_allocation
from mdad.seeding import rng_for


def view_with_subtasks(sizes):
    subtasks = np.repeat(np.arange(len(sizes)), sizes)
    scores = np.random.default_rng(0).integers(0, 2, size=(5, len(subtasks))).astype(np.float32)
    return SourceView.from_arrays(scores, subtasks=subtasks)


@pytest.mark.parametrize("name", ["random", "random-stratified-equal", "random-stratified-proportional"])
@given(sizes=st.lists(st.integers(1, 30), min_size=1, max_size=6), frac=st.floats(0.01, 1.0), seed=st.integers(0, 99))
@settings(max_examples=40, deadline=None)
def test_exactly_k_distinct_items_plain_mean(name, sizes, frac, seed):
    view = view_with_subtasks(sizes)
    k = max(1, int(frac * view.n_items))
    micro = methods.get(name)(view, k, rng_for(seed, name))
    assert len(micro.items) == k == len(np.unique(micro.items))
    assert micro.items.min() >= 0 and micro.items.max() < view.n_items
    np.testing.assert_allclose(micro.weights, 1 / k)
    assert micro.estimate(np.ones((3, k)))[0] == pytest.approx(1.0)


@given(sizes=st.lists(st.integers(0, 20), min_size=1, max_size=8), frac=st.floats(0, 1), seed=st.integers(0, 99))
@settings(max_examples=100, deadline=None)
def test_equal_allocation_is_as_even_as_capacity_allows(sizes, frac, seed):
    sizes = np.array(sizes)
    k = int(frac * sizes.sum())
    alloc = equal_allocation(sizes, k, np.random.default_rng(seed))
    assert alloc.sum() == k and np.all(alloc <= sizes) and np.all(alloc >= 0)
    # a subtask below the largest allocation must be full
    assert np.all((alloc >= alloc.max() - 1) | (alloc == sizes))


def test_equal_allocation_shares_and_remainder():
    rng = np.random.default_rng(0)
    counts = np.zeros(4)
    for _ in range(2000):
        alloc = equal_allocation(np.array([50, 50, 50, 50]), 10, rng)
        assert sorted(alloc.tolist()) == [2, 2, 3, 3]
        counts += alloc
    # the two extra items go to random subtasks: each gets 2.5 on average
    np.testing.assert_allclose(counts / 2000, 2.5, atol=0.08)


def test_proportional_first_draw_gives_every_subtask_equal_chance():
    view = view_with_subtasks([5, 20, 75])
    method = methods.get("random-stratified-proportional")
    draws = np.array([method(view, 1, np.random.default_rng(i)).items[0] for i in range(3000)])
    share = np.bincount(view.subtasks[draws], minlength=3) / 3000
    np.testing.assert_allclose(share, 1 / 3, atol=0.035)


def test_proportional_inclusion_probabilities_match_successive_sampling():
    """Exact inclusion probabilities of successive weighted draws (brute force over orders), k=2."""
    view = view_with_subtasks([1, 2, 3])
    w = 1.0 / np.bincount(view.subtasks)[view.subtasks]
    n = view.n_items
    exact = np.zeros(n)
    for i, j in combinations(range(n), 2):
        p = w[i] / w.sum() * w[j] / (w.sum() - w[i]) + w[j] / w.sum() * w[i] / (w.sum() - w[j])
        exact[[i, j]] += p
    method = methods.get("random-stratified-proportional")
    hits = np.zeros(n)
    for s in range(6000):
        hits[method(view, 2, np.random.default_rng(s)).items] += 1
    np.testing.assert_allclose(hits / 6000, exact, atol=0.025)


def test_reproducible_and_size_errors():
    view = view_with_subtasks([10, 10])
    method = methods.get("random")
    assert np.array_equal(method(view, 5, rng_for(1, "x")).items, method(view, 5, rng_for(1, "x")).items)
    with pytest.raises(MdadError, match="Size 21 is larger than the pool of 20"):
        method(view, 21, rng_for(1))
    with pytest.raises(MdadError, match="Unknown method 'rnd'; known methods: random"):
        methods.get("rnd")
