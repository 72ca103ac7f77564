"""A micro.json is a file a user may edit, copy or receive: every field is checked, and a file that fails
any check is refused with one sentence naming the field (mdad.micro.file_checks), never a traceback
or numbers that look right and are not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mdad
from mdad.errors import MdadError
from mdad.micro import SelectedMicroBenchmark


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[dict, mdad.ResponseMatrix]:
    """A random micro-benchmark of 10 items as saved JSON, with the data it was chosen from."""
    matrix = mdad.simulate(seed=0, n_models=24, n_items=80)
    path = tmp_path_factory.mktemp("micro") / "m.json"
    mdad.select(matrix, "random", 10, seed=0).save(path)
    return json.loads(path.read_text()), matrix


def _edited(tmp_path: Path, data: dict, **changes) -> Path:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**data, **changes}))
    return path


def _refused(path: Path, *fragments: str) -> str:
    with pytest.raises(MdadError) as caught:
        SelectedMicroBenchmark.load(path)
    message = str(caught.value)
    assert message.count(". ") == 0 or "e.g." in message, message  # one sentence
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def test_the_saved_file_loads_and_estimates_inside_its_intervals(saved, tmp_path):
    data, matrix = saved
    micro = SelectedMicroBenchmark.load(_edited(tmp_path, data))
    intervals = micro.intervals(matrix)
    assert ((intervals.low <= intervals.estimate) & (intervals.estimate <= intervals.high)).all()


@pytest.mark.parametrize("weights", [[1.0] * 10, [-0.1] * 10, [1e308] * 10, [0.2] * 5 + [0.0] * 5 + [0.0]])
def test_weights_that_are_not_a_weighted_mean_are_refused(saved, tmp_path, weights):
    data, _ = saved
    path = _edited(tmp_path, data, estimator={**data["estimator"], "weights": weights})
    _refused(path, "weights")


def test_weights_that_sum_to_one_within_rounding_are_accepted(saved, tmp_path):
    data, _ = saved
    weights = [0.1 + (1e-12 if i % 2 else -1e-12) for i in range(10)]
    assert SelectedMicroBenchmark.load(_edited(tmp_path, data, estimator={**data["estimator"], "weights": weights}))


def test_a_duplicated_item_is_refused(saved, tmp_path):
    data, _ = saved
    items = list(data["items"])
    items[1] = items[0]
    _refused(_edited(tmp_path, data, items=items), "'items'", repr(items[0]))
    positions = list(data["pool_positions"])
    positions[1] = positions[0]
    _refused(_edited(tmp_path, data, pool_positions=positions), "'pool_positions'")


@pytest.mark.parametrize("pool", [9, 10, 10**7])
def test_pool_sizes_are_cross_checked(saved, tmp_path, pool):
    data, _ = saved
    _refused(_edited(tmp_path, data, pool_items=pool), "'pool_items'")


def test_pool_subtasks_must_add_up_to_the_pool(saved, tmp_path):
    data, _ = saved
    grown = {name: 10**6 for name in data["pool_subtasks"]}
    _refused(_edited(tmp_path, data, pool_subtasks=grown), "'pool_subtasks'")
    shrunk = {name: 1 for name in data["pool_subtasks"]}
    _refused(_edited(tmp_path, data, pool_subtasks=shrunk), "'pool_subtasks'")


def test_priors_must_be_over_the_same_pool(saved, tmp_path):
    data, _ = saved
    prior = {**data["accuracy_prior"], "pool_items": 10**6}
    _refused(_edited(tmp_path, data, accuracy_prior=prior), "'accuracy_prior'")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("1e400", "'seed'"),
        ("Infinity", "'seed'"),
        ("1.5", "'seed'"),
        ("true", "'seed'"),
        ('"3"', "'seed'"),
        ("9" * 5000, "digits"),
    ],
)
def test_a_seed_that_is_not_a_whole_number_is_refused(saved, tmp_path, text, fragment):
    data, _ = saved
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**data, "seed": 0}).replace('"seed": 0', f'"seed": {text}'))
    _refused(path, fragment)


@pytest.mark.parametrize(
    "field, value",
    [
        ("tasks", [1]),
        ("tasks", {"a": 1}),
        ("items", "q1"),
        ("items", [1] * 10),
        ("subtasks", None),
        ("method", "nope"),
        ("method", 3),
        ("data_source", 7),
        ("size", 0),
        ("item_hashes", [1]),
        ("pool_positions", [-1] + list(range(1, 10))),
        ("assessment", [1]),
    ],
)
def test_each_field_of_the_wrong_type_or_range_is_named(saved, tmp_path, field, value):
    data, _ = saved
    _refused(_edited(tmp_path, data, **{field: value}), repr(field))


def test_an_estimator_of_another_kind_than_the_method_makes_is_refused(saved, tmp_path):
    data, _ = saved
    _refused(_edited(tmp_path, data, method="adaptive"), "adaptive")


def test_an_assessment_threshold_outside_0_and_1_is_refused(tmp_path):
    matrix = mdad.simulate(seed=1, n_models=24, n_items=60)
    micro = mdad.select(matrix, "random", 10, seed=0)
    micro = micro.with_assessment(mdad.assess(matrix, "random", 10, runs=2, seed=0))
    path = tmp_path / "m.json"
    micro.save(path)
    data = json.loads(path.read_text())
    _refused(_edited(tmp_path, data, assessment={**data["assessment"], "threshold": 2.0}), "threshold")
    _refused(_edited(tmp_path, data, assessment={**data["assessment"], "size": 11}), "'assessment'")
    _refused(_edited(tmp_path, data, assessment={**data["assessment"], "runs": 0}), "'assessment'", "runs")


@pytest.mark.parametrize("method", ["tinybenchmarks-pirt", "adaptive", "random@per-subtask", "aipw"])
def test_every_kind_of_estimator_saved_by_select_loads(tmp_path, method):
    matrix = mdad.simulate(seed=0, n_models=30, n_items=80)
    micro = mdad.select(matrix, method, 10, seed=0)
    micro.save(tmp_path / "m.json")
    loaded = SelectedMicroBenchmark.load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.estimate(matrix), micro.estimate(matrix))


def test_estimator_fractions_outside_0_and_1_are_refused(tmp_path):
    matrix = mdad.simulate(seed=0, n_models=30, n_items=80)
    mdad.select(matrix, "tinybenchmarks-pirt", 10, seed=0).save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    _refused(_edited(tmp_path, data, estimator={**data["estimator"], "source_high": 3.0}), "'source_high'")


def test_a_size_that_is_not_the_estimators_is_refused(saved, tmp_path):
    data, _ = saved
    _refused(_edited(tmp_path, data, size=11), "'size'")


def test_a_consistent_but_huge_pool_is_refused_before_its_intervals_are_computed(saved, tmp_path):
    data, matrix = saved
    huge = {key: value for key, value in data.items() if key not in ("accuracy_prior", "pair_prior")}
    sizes = dict(huge["pool_subtasks"])
    first = next(iter(sizes))
    sizes[first] += 10**12 - sum(sizes.values())
    path = _edited(tmp_path, huge, pool_items=10**12, pool_subtasks=sizes)
    micro = SelectedMicroBenchmark.load(path)
    with pytest.raises(MdadError, match="pool of 1,000,000,000,000 would need about .* of memory"):
        micro.intervals(matrix)


def test_item_parameters_that_do_not_cover_the_pool_are_refused(tmp_path):
    matrix = mdad.simulate(seed=0, n_models=30, n_items=80)
    mdad.select(matrix, "tinybenchmarks-pirt", 10, seed=0).save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    estimator = {**data["estimator"], "b": data["estimator"]["b"][:40], "a": data["estimator"]["a"][:40]}
    _refused(_edited(tmp_path, data, estimator=estimator), "item parameters")
