"""Every registered method, reader and metric keeps its contract (mdad.testing), and the checks catch a broken one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.paths import FIXTURES

from mdad import methods, simulate
from mdad.data.npz import write_npz
from mdad.data.readers import READERS, Reader
from mdad.methods.base import MicroBenchmark, SelectionMethod, plain_mean
from mdad.metrics.base import METRICS, Metric
from mdad.testing import check_method, check_metric, check_reader


@pytest.mark.parametrize("name", methods.available())
def test_every_method_keeps_the_contract(name):
    check_method(name)


@pytest.mark.parametrize("name", [n for n in methods.available() if not methods.get(n).adaptive])
def test_every_per_subtask_variant_keeps_the_contract(name):
    check_method(name + "@per-subtask")


def reader_samples(tmp_path: Path) -> dict[str, Path]:
    """A small sample of every built-in format."""
    write_npz(simulate(seed=0, n_models=5, n_items=20, n_subtasks=2), tmp_path / "responses.npz")
    (tmp_path / "scores.csv").write_text("model,item,score\na,q1,1\na,q2,0\nb,q1,0\nb,q2,1\n")
    return {
        "npz": tmp_path / "responses.npz",
        "table": tmp_path / "scores.csv",
        "lm-eval": FIXTURES / "lm_eval",
        "lighteval": FIXTURES / "lighteval",
        "inspect": FIXTURES / "inspect",
    }


def test_every_reader_keeps_the_contract(tmp_path):
    samples = reader_samples(tmp_path)
    assert set(samples) == set(READERS.names()), "every registered reader needs a sample here"
    for name in READERS.names():
        check_reader(name, samples[name])


@pytest.mark.parametrize("key", METRICS.names())
def test_every_metric_keeps_the_contract(key):
    check_metric(key)


class Repeats(SelectionMethod):
    name = "repeats"
    description = "The first item k times."

    def choose(self, view, k, rng, prepared):
        return plain_mean(np.zeros(k, dtype=np.int64))


class SaysBinary(SelectionMethod):
    name = "says-binary"
    description = "Declares 0/1 scores but takes anything."
    scores = "binary"

    def choose(self, view, k, rng, prepared):
        return plain_mean(np.arange(k))


class PeeksAtSources(SelectionMethod):
    name = "peeks"
    description = "Declares a random design but picks the items the sources find easiest."
    design = "uniform"
    interval = "exact"

    def choose(self, view, k, rng, prepared):
        return plain_mean(np.sort(np.argsort(-view.scores.mean(axis=0), kind="stable")[:k]))


class Overshoots(SelectionMethod):
    name = "overshoots"
    description = "Estimates above one."

    def choose(self, view, k, rng, prepared):
        return MicroBenchmark(items=np.arange(k), weights=np.full(k, 2.0))


class Unseeded(SelectionMethod):
    name = "unseeded"
    description = "Draws from its own generator."

    def choose(self, view, k, rng, prepared):
        return plain_mean(np.sort(np.random.default_rng().choice(view.n_items, size=k, replace=False)))


@pytest.mark.parametrize(
    ("method", "message"),
    [
        (Repeats, "'repeats' chose 4 item\\(s\\) twice at size 5"),
        (SaysBinary, "'says-binary' says it needs 0/1 scores but accepted fractional ones"),
        (PeeksAtSources, "'peeks' declares the uniform random design but its items depend on the source models"),
        (Overshoots, "'overshoots' gave an estimate outside \\[0, 1\\]"),
        (Unseeded, "'unseeded' chose different items from the same seed"),
    ],
)
def test_check_method_names_what_broke(method, message):
    with pytest.raises(AssertionError, match=message):
        check_method(method)


def test_check_reader_names_what_broke(tmp_path):
    sample = tmp_path / "scores.csv"
    sample.write_text("model,item,score\na,q1,1\nb,q1,0\n")

    claims_all = Reader("greedy", lambda path: True, READERS.get("table").read, expects="anything", fallback=True)
    with pytest.raises(AssertionError, match="The reader 'greedy' claims an empty folder"):
        check_reader(claims_all, sample)
    returns_rows = Reader(
        "rows", lambda path: path.suffix == ".csv", lambda path, options: path.read_text().splitlines(), expects="a CSV file", fallback=True
    )
    with pytest.raises(AssertionError, match="The reader 'rows' returned list, not a ResponseMatrix"):
        check_reader(returns_rows, sample)
    # harness commands without the harness's name on its tasks: no micro-benchmark would ever find them
    table = READERS.get("table")
    unnamed = Reader("unnamed", table.detect, table.read, expects="a CSV file", fallback=True, commands=READERS.get("inspect").commands)
    with pytest.raises(AssertionError, match="The reader 'unnamed' writes harness commands but records its tasks' harness as ''"):
        check_reader(unnamed, sample)


def test_check_metric_names_what_broke():
    backwards = Metric(
        "backwards", "backwards", "error said to be better when higher", lambda d: float(np.mean(np.abs(d.estimates - d.truth))), better="higher"
    )
    with pytest.raises(AssertionError, match="'backwards' says higher is better, but perfect estimates score 0"):
        check_metric(backwards)
