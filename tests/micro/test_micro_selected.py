"""One micro-benchmark from all models: save, load, and estimate new models with it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from support.lm_eval_samples import DATE, build_known
from support.paths import FIXTURES
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import write_npz
from mdad.errors import MdadError
from mdad.micro import SelectedMicroBenchmark


def test_round_trip_and_plain_mean_estimate(small_sim, tmp_path):
    chosen = mdad.select(small_sim, "random-stratified-equal", 24, seed=3)
    assert len(set(chosen.item_ids)) == 24
    assert sorted(np.unique(chosen.subtasks, return_counts=True)[1]) == [6, 6, 6, 6]
    chosen.save(tmp_path / "m.json")
    back = SelectedMicroBenchmark.load(tmp_path / "m.json")
    assert back.item_ids.tolist() == chosen.item_ids.tolist()
    est = back.estimate(small_sim)
    cols = [small_sim.items.tolist().index(i) for i in chosen.item_ids]
    np.testing.assert_allclose(est.to_numpy(), small_sim.scores[:, cols].mean(axis=1))
    assert mdad.select(small_sim, "random-stratified-equal", 24, seed=3).item_ids.tolist() == chosen.item_ids.tolist()


def test_estimate_needs_the_items(small_sim, tmp_path):
    chosen = mdad.select(small_sim, "random", 10, seed=0)
    other = small_sim.take(items=np.flatnonzero(~np.isin(small_sim.items, chosen.item_ids[:1])))
    with pytest.raises(MdadError, match="1 of the 10 micro-benchmark items are not in"):
        chosen.estimate(other)


def test_bad_micro_files(tmp_path):
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(MdadError, match="not valid JSON"):
        SelectedMicroBenchmark.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"format": "something"}))
    with pytest.raises(MdadError, match="not an mdad micro-benchmark file"):
        SelectedMicroBenchmark.load(tmp_path / "other.json")


def test_select_and_estimate_commands(small_sim, tmp_path):
    write_npz(small_sim, tmp_path / "data.npz")
    runner = CliRunner()
    result = runner.invoke(
        app, ["select", "--data", str(tmp_path / "data.npz"), "--method", "random", "--size", "40", "--out", str(tmp_path / "m.json")]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["estimate", str(tmp_path / "m.json"), str(tmp_path / "data.npz"), "--csv", str(tmp_path / "est.csv")])
    assert result.exit_code == 0, result.output
    assert small_sim.models[0] in result.output
    result = runner.invoke(
        app, ["select", "--data", str(tmp_path / "data.npz"), "--method", "random", "--size", "4000", "--out", str(tmp_path / "m.json")]
    )
    assert result.exit_code == 2 and "Size 4000 is larger than the pool of 400" in result.output


@pytest.mark.parametrize("method", [*mdad.methods.available(), "random@per-subtask", "anchor-points@per-subtask"])
def test_every_method_saves_and_estimates_the_same_after_loading(method, tmp_path):
    matrix = mdad.simulate(seed=2, n_models=60, n_items=160, n_subtasks=4, dims=2)
    chosen = mdad.select(matrix, method, 40, seed=1)  # a quarter of the items: enough to track accuracies
    chosen.save(tmp_path / "m.json")
    back = SelectedMicroBenchmark.load(tmp_path / "m.json")
    assert type(back.micro) is type(chosen.micro)
    np.testing.assert_allclose(back.estimate(matrix).to_numpy(), chosen.estimate(matrix).to_numpy(), atol=1e-12)
    # estimates are accuracies and track the true ones
    est = chosen.estimate(matrix).to_numpy()
    assert np.all((est >= -1e-9) & (est <= 1 + 1e-9))
    assert np.corrcoef(est, matrix.accuracy())[0, 1] > 0.5


def test_a_size_must_be_a_whole_number(small_sim):
    with pytest.raises(MdadError, match="size must be a whole number of items, got 10.5"):
        mdad.select(small_sim, "random", 10.5)
    assert len(mdad.select(small_sim, "random", np.int64(10)).item_ids) == 10


def test_lm_eval_loop_select_writes_samples_that_lm_eval_results_line_up_with(tmp_path):
    """select -> lm-eval --samples JSON -> a new model evaluated on those documents only -> estimate."""
    truth = build_known(tmp_path / "all")
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "select",
            "--data",
            str(tmp_path / "all"),
            "--method",
            "random",
            "--size",
            "3",
            "--out",
            str(tmp_path / "m.json"),
            "--lm-eval-samples",
            str(tmp_path / "s.json"),
            "--metric",
            "acc",
        ],
    )
    assert result.exit_code == 0, result.output
    samples = json.loads((tmp_path / "s.json").read_text())
    chosen = SelectedMicroBenchmark.load(tmp_path / "m.json")
    assert sorted(f"{task}/{doc}" for task, docs in samples.items() for doc in docs) == sorted(chosen.item_ids)
    # what lm-eval --samples logs for a new model: only those documents, under their original doc_id
    source, new = tmp_path / "all" / "org__model-x", tmp_path / "new" / "org__model-x"
    new.mkdir(parents=True)
    for path in source.glob("samples_*.jsonl"):
        task = path.name.split("_" + DATE)[0].removeprefix("samples_")
        lines = [line for line in path.read_text().splitlines() if json.loads(line)["doc_id"] in samples.get(task, [])]
        (new / path.name).write_text("\n".join(lines) + "\n")
    for path in source.glob("results_*.json"):
        (new / path.name).write_text(path.read_text())
    result = runner.invoke(app, ["estimate", str(tmp_path / "m.json"), str(tmp_path / "new"), "--metric", "acc", "--csv", str(tmp_path / "e.csv")])
    assert result.exit_code == 0, result.output
    columns = [truth["items"].index(item) for item in chosen.item_ids]
    estimate = float(pd.read_csv(tmp_path / "e.csv")["estimate"].iloc[0])
    assert estimate == pytest.approx(truth["acc"][0, columns].mean())


def test_harness_sample_lists_need_harness_logs(small_sim):
    with pytest.raises(MdadError, match=r"samples file is written only for the logs of a harness that reads one \(lm-eval\)"):
        mdad.select(small_sim, "random", 5).harness_samples()
    with pytest.raises(MdadError, match=r"only be written for a micro-benchmark built from the logs of one harness \(lm-eval, inspect\)"):
        mdad.select(small_sim, "random", 5).harness_commands()


def test_inspect_commands_list_each_tasks_sample_ids():
    matrix = mdad.load(FIXTURES / "inspect")  # sample ids 1, 2, 3 and 'q4' of task tiny_qa
    chosen = mdad.select(matrix, "random", 4)
    # the task file the logs recorded, so that the command runs as printed
    (command,) = chosen.harness_commands(output="logs").commands
    assert command.endswith("@tiny_qa --model YOUR_MODEL --sample-id 1,2,3,q4 --log-dir logs")
    with pytest.raises(MdadError, match="samples file is written only for the logs of a harness that reads one"):
        chosen.harness_samples()


def test_inspect_loop_select_then_estimate_from_logs_of_those_samples_only(tmp_path):
    matrix = mdad.load(FIXTURES / "inspect")
    chosen = mdad.select(matrix, "random", 2, seed=3)
    ids = {item.split("/", 1)[1] for item in chosen.item_ids}
    source = next(FIXTURES.glob("inspect/*.json"))
    log = json.loads(source.read_text())  # what `inspect eval --sample-id` logs: those samples only
    log["samples"] = [sample for sample in log["samples"] if str(sample["id"]) in ids]
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / source.name).write_text(json.dumps(log))
    estimate = chosen.estimate(mdad.load(tmp_path / "new"))
    model = log["eval"]["model"]
    columns = [matrix.items.tolist().index(item) for item in chosen.item_ids]
    row = matrix.models.tolist().index(model)
    assert estimate[model] == pytest.approx(matrix.scores[row, columns].mean())
