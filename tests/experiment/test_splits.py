"""Splits follow docs/protocol.md#splits: per-subtask halves, disjoint targets and sources, one seed."""

from __future__ import annotations

import numpy as np
import pytest

from mdad.errors import MdadError
from mdad.experiment.splits import make_splits


def test_seen_half_per_subtask_and_disjoint(small_sim):
    splits = make_splits(small_sim, runs=5, n_targets=20, seed=1)
    codes = small_sim.subtask_codes
    for r in range(5):
        seen, unseen = splits.seen[r], splits.unseen[r]
        assert len(np.intersect1d(seen, unseen)) == 0
        assert len(seen) + len(unseen) == small_sim.n_items
        for s in range(len(small_sim.subtask_names)):
            assert (codes[seen] == s).sum() == (codes == s).sum() // 2
        targets, pool = splits.targets[r], splits.source_pool[r]
        assert len(np.intersect1d(targets, pool)) == 0 and len(targets) + len(pool) == small_sim.n_models
    assert not np.array_equal(splits.seen[0], splits.seen[1])


def test_reproducible_and_extending_runs_keeps_earlier_runs(small_sim):
    a = make_splits(small_sim, runs=3, n_targets=10, seed=4)
    b = make_splits(small_sim, runs=6, n_targets=10, seed=4)
    assert np.array_equal(a.targets, b.targets[:3]) and np.array_equal(a.seen, b.seen[:3])
    c = make_splits(small_sim, runs=3, n_targets=10, seed=5)
    assert not np.array_equal(a.targets, c.targets)


def test_smaller_source_sets_are_nested(small_sim):
    splits = make_splits(small_sim, runs=2, n_targets=10, seed=0)
    assert np.array_equal(splits.sources(20), splits.sources(50)[:, :20])
    with pytest.raises(MdadError, match="only 110 models are left"):
        splits.sources(200)


def test_targets_are_uniform_over_models(small_sim):
    splits = make_splits(small_sim, runs=400, n_targets=30, seed=0)
    counts = np.bincount(splits.targets.ravel(), minlength=small_sim.n_models)
    expected = 400 * 30 / small_sim.n_models
    # each model's count is Binomial(400, 30/120): mean 100, sd ~8.7
    assert abs(counts.mean() - expected) < 1e-9 and counts.min() > expected - 45 and counts.max() < expected + 45


def test_fixed_group_is_the_target_set(small_sim):
    name = next(iter(small_sim.groups))
    splits = make_splits(small_sim, runs=3, n_targets=50, seed=0, group=name)
    members = set(small_sim.group_index(name))
    for r in range(3):
        assert set(splits.targets[r]) == members and not members & set(splits.source_pool[r])
    with pytest.raises(MdadError, match="Unknown model group 'nope'"):
        make_splits(small_sim, runs=1, group="nope")


def test_impossible_target_count(small_sim):
    with pytest.raises(MdadError, match="500 target models were asked for"):
        make_splits(small_sim, runs=1, n_targets=500)
    with pytest.raises(MdadError, match="at least 2 targets and 2 source models"):
        make_splits(small_sim, runs=1, n_targets=small_sim.n_models - 1)
    make_splits(small_sim, runs=1, n_targets=small_sim.n_models - 2)  # two source models are enough
    with pytest.raises(MdadError, match="The data has only 3 models; an experiment needs at least 4"):
        make_splits(small_sim.take(models=np.arange(3)), runs=1, n_targets=1)


def test_targets_from_top_are_the_strongest_models_in_every_run(small_sim):
    splits = make_splits(small_sim, runs=4, n_targets=12, seed=2, targets_from="top")
    accuracy = np.nanmean(small_sim.scores, axis=1)
    threshold = np.sort(accuracy)[-12]
    for run in range(4):
        assert set(splits.targets[run]) == set(splits.targets[0])
        assert accuracy[splits.targets[run]].min() >= threshold >= accuracy[splits.source_pool[run]].max()
    assert len(set(splits.seen[0]) ^ set(splits.seen[1])) > 0  # the item halves still vary by run
    with pytest.raises(MdadError, match="not both"):
        make_splits(small_sim, runs=1, group="nope", targets_from="top")
    with pytest.raises(MdadError, match="random, top"):
        make_splits(small_sim, runs=1, targets_from="best")
