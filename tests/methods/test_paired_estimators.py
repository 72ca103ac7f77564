"""NAME@estimator=EST: a method's own items with another registered estimator, through the API, a saved
micro-benchmark and the command line; names read and refused in one sentence."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import mdad
from mdad import methods
from mdad.cli import app
from mdad.errors import MdadError
from mdad.estimators.krr import kernel_ridge_on
from mdad.methods import MethodName, SourceView, parse
from mdad.methods.base import MicroBenchmark
from mdad.planning.method_sets import method_names
from mdad.seeding import rng_for


@pytest.fixture(scope="module")
def view(small_sim):
    return SourceView.from_arrays(small_sim.scores[:80], small_sim.gold_prob()[:80], small_sim.subtask_codes, has_option_probs=True)


def test_names_are_read_in_any_suffix_order_and_written_in_one():
    expected = MethodName("anchor-points", per_subtask=True, estimator="krr")
    assert parse("anchor-points@estimator=krr@per-subtask") == expected
    assert parse("anchor-points@per-subtask@estimator=krr") == expected
    assert str(expected) == "anchor-points@per-subtask@estimator=krr"
    assert methods.get("anchor-points@estimator=krr@per-subtask").name == str(expected)
    assert parse("random@estimator=krr").design is None  # a learned estimate: no random design, no exact interval


@pytest.mark.parametrize("estimator", ["krr", "ridge", "knn", "forest"])
def test_a_pair_keeps_the_methods_items_and_fits_the_estimator_on_them(view, estimator):
    own = methods.get("anchor-points").select(view, 15, rng_for(0, "pair"))
    paired = methods.get(f"anchor-points@estimator={estimator}").select(view, 15, rng_for(0, "pair"))
    np.testing.assert_array_equal(paired.items, own.items)
    assert paired.kind == {"krr": "kernel-ridge", "ridge": "ridge-regression", "knn": "nearest-neighbours", "forest": "random-forest"}[estimator]


def test_the_kernel_ridge_pair_estimates_as_kernel_ridge_on_the_same_items(view, small_sim):
    paired = methods.get("lasso@estimator=krr").select(view, 20, rng_for(1, "pair"))
    direct = kernel_ridge_on(view.scores, paired.items)
    targets = small_sim.scores[80:, paired.items]
    np.testing.assert_array_equal(paired.estimate(targets), direct.estimate(targets))


def test_a_saved_pair_estimates_the_same_after_loading(view, small_sim):
    for name in ("anchor-points@estimator=krr", "disco", "mrmr-krr@per-subtask", "disco@estimator=forest"):
        micro = methods.get(name).select(view, 12, rng_for(2, "pair"))
        rebuilt = MicroBenchmark.from_params(json.loads(json.dumps(micro.estimator_params())), micro.items)
        scores, gold = small_sim.scores[80:, micro.items], small_sim.gold_prob()[80:, micro.items]
        np.testing.assert_array_equal(rebuilt.estimate(scores, gold), micro.estimate(scores, gold))


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("random@estimator=bogus", "Unknown estimator 'bogus'"),
        ("random@estimator=", "takes the name of an estimator"),
        ("adaptive@estimator=krr", "cannot be paired"),
        ("nothing@estimator=krr", "Unknown method"),
    ],
)
def test_bad_pairs_are_one_sentence(name, words):
    with pytest.raises(MdadError, match=words) as raised:
        methods.get(name)
    assert str(raised.value).count(". ") == 0


def test_plan_all_considers_the_new_methods():
    names = method_names("all")
    assert "mrmr-krr" in names and "disco" in names


def test_select_records_the_pair_and_estimate_reads_it(tmp_path):
    data = tmp_path / "responses.npz"
    mdad.data.write_npz(mdad.simulate(seed=1, n_models=40, n_items=120, n_subtasks=2), data)
    out = tmp_path / "micro.json"
    runner = CliRunner()
    args = ["select", "--data", str(data), "--method", "anchor-points@estimator=krr", "--size", "10", "--out", str(out)]
    chosen = runner.invoke(app, [*args, "--assess-runs", "2", "--workers", "1"], env={"COLUMNS": "200"})
    assert chosen.exit_code == 0, chosen.output
    saved = json.loads(out.read_text())
    assert saved["method"] == "anchor-points@estimator=krr" and saved["estimator"]["kind"] == "kernel-ridge"
    estimated = runner.invoke(app, ["estimate", str(out), str(data)], env={"COLUMNS": "200"})
    assert estimated.exit_code == 0, estimated.output
    assert "anchor-points@estimator=krr" in estimated.output
