"""Selection per subtask: allocation, the combined estimate, and the variant for every registered method."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdad import methods
from mdad.errors import MdadError
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.store import Cell, ResultStore
from mdad.methods.names import MethodName, parse
from mdad.methods.per_subtask import PerSubtask, SubtaskMicroBenchmark, allocate
from mdad.seeding import rng_for


def tiny_view(sizes=(5, 9, 3), n_sources=6, seed=0):
    rng = np.random.default_rng(seed)
    subtasks = np.repeat(np.arange(len(sizes)), sizes)
    scores = (rng.random((n_sources, len(subtasks))) < 0.5).astype(np.float32)
    probs = np.clip(scores * 0.6 + rng.random(scores.shape) * 0.4, 0, 1).astype(np.float32)
    return methods.SourceView.from_arrays(scores, probs, subtasks, has_option_probs=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=12), st.data())
def test_allocation_is_proportional_with_one_item_floor(sizes, data):
    sizes = np.array(sizes)
    k = data.draw(st.integers(len(sizes), int(sizes.sum())))
    alloc = allocate(sizes, k)
    assert alloc.sum() == k and (alloc >= 1).all() and (alloc <= sizes).all()
    quota = k * sizes / sizes.sum()
    if (np.floor(quota) >= 1).all():  # no floor was bumped: Hamilton's method, each within one of its quota
        assert (np.abs(alloc - quota) < 1).all()


def test_allocation_brute_force_on_a_small_case():
    # quotas 10 * (2, 3, 5) / 10 = (2, 3, 5): exact; 7 * (2, 3, 5) / 10 = (1.4, 2.1, 3.5) -> floors (1, 2, 3) + the 0.5 remainder
    assert allocate(np.array([2, 3, 5]), 10).tolist() == [2, 3, 5]
    assert allocate(np.array([2, 3, 5]), 7).tolist() == [1, 2, 4]
    assert allocate(np.array([1, 1, 98]), 3).tolist() == [1, 1, 1]
    with pytest.raises(MdadError, match="size 2 is below the 3 subtasks"):
        allocate(np.array([2, 3, 5]), 2)


def test_names_and_registry():
    assert parse("random@per-subtask") == MethodName("random", per_subtask=True)
    assert parse("random") == MethodName("random") and str(parse("random@per-subtask")) == "random@per-subtask"
    method = methods.get("random-stratified-equal@per-subtask")
    assert isinstance(method, PerSubtask) and method.name == "random-stratified-equal@per-subtask"
    with pytest.raises(MdadError, match="Unknown method 'nope@per-subtask'"):
        methods.get("nope@per-subtask")


@pytest.mark.parametrize("name", sorted(n for n, cls in methods.REGISTRY.items() if not cls.adaptive))
def test_every_method_selects_its_share_within_each_subtask(name):
    view = tiny_view()
    k = 8
    method = methods.get(name + "@per-subtask")
    rng = rng_for(0, "test", name)
    micro = method.select(view, k, rng, method.prepare(view, rng))
    assert isinstance(micro, SubtaskMicroBenchmark)
    assert len(np.unique(micro.items)) == k and micro.items.min() >= 0 and micro.items.max() < view.n_items
    counts = np.bincount(view.subtasks[micro.items], minlength=view.n_subtasks)
    np.testing.assert_array_equal(counts, allocate(np.bincount(view.subtasks), k))
    est = micro.estimate(view.scores[:, micro.items], view.gold_prob[:, micro.items])
    assert est.shape == (view.scores.shape[0],) and np.isfinite(est).all()


def test_estimate_is_share_weighted_mean_of_subtask_means():
    view = tiny_view()
    micro = methods.get("random@per-subtask")(view, 7, np.random.default_rng(1))
    scores = view.scores[:, micro.items].astype(float)
    sub = view.subtasks[micro.items]
    shares = np.bincount(view.subtasks) / view.n_items
    brute = sum(shares[s] * scores[:, sub == s].mean(axis=1) for s in range(view.n_subtasks))
    np.testing.assert_allclose(micro.estimate(scores, None), brute, atol=1e-12)
    # the linear weights tell the same story
    np.testing.assert_allclose(scores @ micro.weights, brute, atol=1e-12)


def test_full_size_recovers_the_seen_accuracy_and_random_is_unbiased():
    view = tiny_view(sizes=(4, 10, 6), n_sources=5, seed=2)
    method = methods.get("random@per-subtask")
    whole = method(view, view.n_items, np.random.default_rng(0))
    truth = view.scores.mean(axis=1)
    np.testing.assert_allclose(whole.estimate(view.scores[:, whole.items]), truth, atol=1e-12)
    rng = np.random.default_rng(5)
    micros = [method(view, 6, rng) for _ in range(3000)]
    draws = np.array([m.estimate(view.scores[:, m.items]) for m in micros])
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert (np.abs(draws.mean(axis=0) - truth) < 4.5 * se + 1e-12).all()


def test_one_subtask_per_subtask_equals_the_method_itself():
    view = tiny_view(sizes=(12,))
    plain = methods.get("random")(view, 5, np.random.default_rng(3))
    split = methods.get("random@per-subtask")(view, 5, np.random.default_rng(3))
    np.testing.assert_array_equal(plain.items, split.items)
    np.testing.assert_allclose(plain.estimate(view.scores[:, plain.items]), split.estimate(view.scores[:, split.items]))


def test_grid_stores_both_variants_as_distinct_cells(small_sim, tmp_path):
    config = ExperimentConfig(methods=("random", "random@per-subtask"), sizes=(8, 40), sources=(30,), runs=3, targets=10, seed=1)
    store = ResultStore(tmp_path)
    frames = Experiment(small_sim, config, store=store).run().frames
    assert set(store.cells()) == {Cell(m, k, 30) for m in config.methods for k in (8, 40)}
    assert (tmp_path / "cells" / "random@per-subtask" / "k8-s30.parquet").is_file()
    a, b = frames[Cell("random", 40, 30)], frames[Cell("random@per-subtask", 40, 30)]
    assert a[["run", "model", "seen"]].equals(b[["run", "model", "seen"]])
    assert not np.allclose(a["estimate"], b["estimate"])
    with pytest.raises(MdadError, match="size 3 is below the 4 subtasks"):
        Experiment(small_sim, ExperimentConfig(methods=("random@per-subtask",), sizes=(3,), sources=(30,), runs=2, targets=10))


def test_a_per_subtask_micro_benchmark_survives_save_and_load(small_sim, tmp_path):
    from mdad.methods.base import KINDS, MicroBenchmark
    from mdad.micro import SelectedMicroBenchmark, select

    chosen = select(small_sim, "random@per-subtask", 12, seed=4)
    chosen.save(tmp_path / "micro.json")
    loaded = SelectedMicroBenchmark.load(tmp_path / "micro.json")
    assert isinstance(loaded.micro, SubtaskMicroBenchmark) and len(loaded.micro.parts) == 4
    pd.testing.assert_series_equal(loaded.estimate(small_sim), chosen.estimate(small_sim))
    assert KINDS.get("weighted") is MicroBenchmark and KINDS.get("per-subtask") is SubtaskMicroBenchmark  # each its own kind
