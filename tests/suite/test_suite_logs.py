"""A suite from one folder of harness logs holding several tasks (mdad.suite.tasks, docs/suites.md#one-folder-of-logs):
tasks (or the groups the harness logged) become benchmarks, a model not run on a task is missing there, and the suite
micro-benchmark chosen from the folder estimates models read from such a folder."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.paths import ROOT
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data.matrix import ResponseMatrix
from mdad.errors import MdadError
from mdad.suite import Suite
from mdad.suite.tasks import benchmark_tasks, split_tasks

runner = CliRunner()
FIXTURES = ROOT / "tests" / "fixtures"
LOOP = FIXTURES / "lm_eval_loop" / "sources"  # lm-eval logs of eight models on the tasks nb_zoo and nb_sums


def test_each_task_of_a_folder_of_lm_eval_logs_is_a_benchmark():
    whole = mdad.load(LOOP)
    suite = Suite.load(str(LOOP))
    assert sorted(suite.names) == ["nb_sums", "nb_zoo"] and int(suite.complete.sum()) == 8
    for name, part in suite.benchmarks.items():
        columns = whole.subtasks == name
        assert list(part.items) == list(whole.items[columns]) and list(part.models) == list(whole.models)
        np.testing.assert_array_equal(part.scores, whole.scores[:, columns])
    assert suite.scores()["suite"].to_numpy() == pytest.approx(whole.scores.astype(np.float64).mean(axis=1))  # 12 items each


def test_a_folder_with_missing_answers_takes_the_usual_missing_policy():
    with pytest.raises(MdadError, match="not evaluated"):
        Suite.load(str(FIXTURES / "lm_eval"))  # model-c was run with --limit 4: one document per task missing
    suite = Suite.load(str(FIXTURES / "lm_eval"), missing="drop-items")
    assert suite.names == ["tiny_gen", "tiny_mc"] and [m.n_items for m in suite.benchmarks.values()] == [4, 4]


def test_a_folder_of_one_task_is_refused_in_one_sentence():
    with pytest.raises(MdadError, match=r"holds the tasks of one benchmark \(tiny_qa\); a suite from one source needs the logs of two"):
        Suite.load(str(FIXTURES / "inspect"))


def test_groups_are_one_benchmark_and_a_model_not_run_on_a_task_is_missing_there():
    scores = np.array([[1, 0, 1, 1, 0], [0, 0, 1, 0, 1], [1, 1, np.nan, np.nan, 1]], dtype=np.float32)
    matrix = ResponseMatrix(
        scores=scores,
        models=["a", "b", "c"],
        items=["x0", "y0", "z0", "z1", "w0"],
        subtasks=["musr_a", "musr_b", "math", "math", "musr_c"],
        groups={"musr": ["musr_a", "musr_b", "musr_c"]},
        source="logs",
    )
    assert benchmark_tasks(matrix) == {"musr": ["musr_a", "musr_b", "musr_c"], "math": ["math"]}
    parts = split_tasks(matrix)
    assert list(parts["musr"].items) == ["x0", "y0", "w0"] and list(parts["musr"].models) == ["a", "b", "c"]
    assert list(parts["math"].models) == ["a", "b"]  # c answered none of math's items: missing there, not an error
    suite = Suite.of(parts, weights=np.array([0.5, 0.5]), baselines={})
    assert int(suite.complete.sum()) == 2 and np.isnan(suite.scores().loc["c", "suite"])


def test_select_and_estimate_a_suite_from_one_folder_of_logs(tmp_path):
    out, csv = tmp_path / "suite.json", tmp_path / "estimates.csv"
    command = ["select", "--suite", str(LOOP), "--budget", "8", "--method", "random", "--out", str(out), "--assess-runs", "0"]
    result = runner.invoke(app, command, env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "Allocation (optimal): nb_sums 4 of 12, nb_zoo 4 of 12." in " ".join(result.output.split())
    result = runner.invoke(app, ["estimate", str(out), str(LOOP), "--csv", str(csv)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(csv).set_index("model")
    chosen = mdad.SuiteMicroBenchmark.load(out)
    whole = mdad.load(LOOP)
    for name, part in chosen.parts.items():  # each benchmark's estimate is the mean of its chosen items (random)
        columns = [list(whole.items).index(item) for item in part.item_ids]
        expected = pd.Series(whole.scores[:, columns].astype(np.float64).mean(axis=1), index=whole.models)
        assert frame[name].to_numpy() == pytest.approx(expected.loc[frame.index].to_numpy())
    assert frame["suite"].to_numpy() == pytest.approx(frame[["nb_sums", "nb_zoo"]].mean(axis=1).to_numpy())
    one_task = ["select", "--suite", str(FIXTURES / "inspect"), "--budget", "2", "--method", "random", "--out", str(tmp_path / "x.json")]
    refused = runner.invoke(app, one_task, env={"COLUMNS": "300"})
    flat = " ".join(refused.output.split())
    assert refused.exit_code == 2 and "holds the tasks of one benchmark (tiny_qa)" in flat and "Traceback" not in refused.output
