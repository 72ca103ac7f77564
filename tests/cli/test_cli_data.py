"""`mdad info` and `mdad convert` on harness output, and --data on every format through `mdad run`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.lm_eval_samples import DATE, MC_CONFIG, mc_row, write_jsonl, write_results
from support.paths import FIXTURES
from typer.testing import CliRunner

from mdad.cli import app
from mdad.data import read_npz, read_source

runner = CliRunner()


def test_info_reports_models_items_and_missing_cells():
    result = runner.invoke(app, ["info", str(FIXTURES / "lm_eval")])
    assert result.exit_code == 0, result.output
    assert "models: 3" in result.output and "items: 10" in result.output
    assert "model-c (2)" in result.output
    spelled_as_on_run = runner.invoke(app, ["info", "--data", str(FIXTURES / "lm_eval")])
    assert spelled_as_on_run.exit_code == 0 and spelled_as_on_run.output == result.output
    both = runner.invoke(app, ["info", str(FIXTURES / "lm_eval"), "--data", str(FIXTURES / "inspect")])
    assert both.exit_code == 2 and "Give the results once" in both.output


def test_info_names_the_best_models_and_lists_every_one_with_models():
    matrix = read_source(FIXTURES / "lm_eval")
    accuracy = dict(zip(matrix.models.tolist(), np.nanmean(matrix.scores, axis=1), strict=True))
    best = sorted(accuracy, key=lambda m: (-accuracy[m], m))
    shown = runner.invoke(app, ["info", str(FIXTURES / "lm_eval")])
    assert f"models: {', '.join(best)}" in shown.output  # three models: every one named, best first
    listed = runner.invoke(app, ["info", str(FIXTURES / "lm_eval"), "--models"])
    rows = [line.split() for line in listed.output.splitlines() if line.startswith("  ")]
    assert [name for _, name in rows] == best and [float(a) for a, _ in rows] == [round(accuracy[m], 3) for m in best]
    many = runner.invoke(app, ["info", "--dataset", "gpqa"])
    assert "models (best 5 of 420; --models lists every one):" in many.output


def test_info_unknown_metric_lists_available_ones():
    result = runner.invoke(app, ["info", str(FIXTURES / "lm_eval"), "--metric", "f1"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "No task has the metric 'f1'; the tasks have tiny_gen: exact_match; tiny_mc: acc, acc_norm." in result.output


def test_convert_writes_an_npz_that_reads_back_identically(tmp_path):
    out = tmp_path / "c.npz"
    result = runner.invoke(app, ["convert", str(FIXTURES / "lm_eval"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    back = read_npz(out)
    assert back.n_models == 3 and back.n_items == 10
    assert np.isnan(back.scores).sum() == 2


def write_lm_eval_folder(root: Path, n_models: int = 30, docs_per_task: int = 60) -> None:
    """lm-eval --log_samples output of many models on two multiple-choice tasks (mmlu_* group)."""
    rng = np.random.default_rng(0)
    ability = rng.normal(size=n_models)
    tasks = {"mmlu_alpha": docs_per_task, "mmlu_beta": docs_per_task}
    for m in range(n_models):
        folder = root / f"org__model-{m:02d}"
        rows_by_task = {}
        for t, (task, n) in enumerate(tasks.items()):
            rows = []
            for d in range(n):
                choices = [f"answer {c} of {task} {d}" for c in range(4)]
                doc = {"question": f"{task} question {d}?", "choices": choices, "label": d % 4}
                lls = rng.normal(-3, 1, size=4)
                lls[d % 4] += ability[m] + rng.normal(0, 1) - 0.5 + t
                rows.append(mc_row(d, doc, choices, d % 4, lls))
            rows_by_task[task] = rows
            write_jsonl(folder / f"samples_{task}_{DATE}.jsonl", rows)
        write_results(folder, f"org/model-{m:02d}", {t: {"task": t, **MC_CONFIG} for t in tasks}, rows_by_task)


def test_run_on_an_lm_eval_folder(tmp_path):
    write_lm_eval_folder(tmp_path / "lm")
    info = runner.invoke(app, ["info", str(tmp_path / "lm")])
    assert "models: 30" in info.output and "items: 120" in info.output and "option probabilities: yes" in info.output
    out = tmp_path / "o"
    result = runner.invoke(
        app,
        [
            "run",
            "--data",
            str(tmp_path / "lm"),
            "--metric",
            "acc_norm",
            "--methods",
            "random",
            "--sizes",
            "10,30",
            "--runs",
            "5",
            "--targets",
            "10",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(out / "summary.csv")
    assert sorted(summary["size"].unique()) == [10, 30] and (summary["sources"] == 20).all()
    assert "option probabilities" in (out / "report.html").read_text()


def test_info_prints_what_the_reader_dropped_merged_or_chose():
    result = runner.invoke(app, ["info", str(FIXTURES / "lm_eval_checkpoints"), "--metric", "acc_norm"])
    assert result.exit_code == 0, result.output
    assert "models: 5" in result.output
    assert "each run is a model of its own (EleutherAI/pythia-160m,revision=step1000," in result.output
    assert "Task 'tiny_gen' has no metric 'acc_norm'; its metric 'exact_match' is read." in result.output
    one = runner.invoke(app, ["info", str(FIXTURES / "lm_eval" / "model-a")])
    assert one.exit_code == 0 and "holds one model ('model-a')" in one.output


def test_reruns_option_refuses_in_one_sentence():
    result = runner.invoke(app, ["info", str(FIXTURES / "inspect_eval"), "--reruns", "error"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Model 'mockllm/alpha' on task 'tiny_qa' was run 2 times" in result.output
    bad = runner.invoke(app, ["info", str(FIXTURES / "inspect_eval"), "--reruns", "first"])
    assert bad.exit_code == 2 and "Invalid value for '--reruns': 'first' is not one of 'latest', 'error'" in bad.output


def test_convert_of_one_model_says_model_not_models(tmp_path):
    result = runner.invoke(app, ["convert", str(FIXTURES / "lm_eval" / "model-a"), "--out", str(tmp_path / "a.npz")])
    assert result.exit_code == 0 and "1 model x 10 items written" in result.output


def test_run_help_says_data_takes_every_format():
    result = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "300"})
    text = " ".join(result.output.replace("│", " ").split())
    assert "--data" in text and "lm-eval samples, lighteval details, inspect logs" in text


def test_select_and_estimate_on_inspect_default_eval_logs(tmp_path):
    micro = tmp_path / "micro.json"
    result = runner.invoke(
        app,
        [
            "select",
            "--data",
            str(FIXTURES / "inspect_eval"),
            "--method",
            "random",
            "--size",
            "3",
            "--out",
            str(micro),
            "--assess-runs",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output  # inspect logs: the command is printed without asking
    assert "inspect eval tasks.py@tiny_qa --model YOUR_MODEL --sample-id" in result.output
    assert "Skipped" in result.output and "status is 'error'" in result.output
    estimate = runner.invoke(app, ["estimate", str(micro), str(FIXTURES / "inspect")])
    assert estimate.exit_code == 0, estimate.output
    assert "mockllm/gamma" in estimate.output


def test_estimate_refuses_logs_of_another_task_version(tmp_path):
    micro = tmp_path / "micro.json"
    result = runner.invoke(
        app,
        [
            "select",
            "--data",
            str(FIXTURES / "lm_eval"),
            "--method",
            "random",
            "--size",
            "4",
            "--out",
            str(micro),
            "--assess-runs",
            "0",
            "--missing",
            "drop-items",
        ],
    )
    assert result.exit_code == 0, result.output
    refused = runner.invoke(app, ["estimate", str(micro), str(FIXTURES / "lm_eval_v2")])
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "version 2.0, but the micro-benchmark was built on version 1.0" in refused.output


@pytest.mark.parametrize("folder", ["lm_eval_checkpoints", "inspect_eval", "lighteval"])
def test_run_on_genuine_checkpoints_eval_logs_and_mixed_lighteval(tmp_path, folder):
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["run", "--data", str(FIXTURES / folder), "--methods", "random,anchor-points", "--runs", "2", "--workers", "1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["method"]) == {"random", "anchor-points"}
    report = (out / "report.html").read_text()
    notes = read_source(FIXTURES / folder).notes  # what the reader dropped, merged or chose, also in the report
    assert ("Reading notes" in report) == bool(notes) and all(n.replace("'", "&#39;") in report for n in notes)
    if folder != "inspect_eval":  # mixed multiple-choice and generation tasks
        assert "on the 5 of 10 items that have them, 0/1 correctness on the others" in report


def test_adaptive_micro_benchmark_from_genuine_lm_eval_logs_asks_one_item_at_a_time(tmp_path):
    """select --method adaptive on real lm-eval checkpoints; a new model's log holding only the first
    asked item (as `lm-eval --samples` writes it) is estimated and told its next item."""
    import json
    import re
    import shutil

    micro = tmp_path / "adaptive.json"
    chosen = runner.invoke(
        app,
        ["select", "--data", str(FIXTURES / "lm_eval_checkpoints"), "--method", "adaptive", "--size", "3", "--out", str(micro), "--assess-runs", "0"],
    )
    assert chosen.exit_code == 0, chosen.output
    first = re.search(r"starts with item (\S+?);", " ".join(chosen.output.split())).group(1)
    task, doc = first.rsplit("/", 1)
    new = tmp_path / "new"
    shutil.copytree(FIXTURES / "lm_eval" / "model-a", new / "model-a")
    for samples in (new / "model-a").glob("samples_*.jsonl"):  # keep only the asked document
        rows = [
            line
            for line in samples.read_text().splitlines()
            if samples.name.startswith(f"samples_{task}_") and json.loads(line)["doc_id"] == int(doc)
        ]
        samples.unlink() if not rows else samples.write_text("\n".join(rows) + "\n")
    estimate = runner.invoke(app, ["estimate", str(micro), str(new)])
    assert estimate.exit_code == 0, estimate.output
    text = " ".join(estimate.output.split())
    assert "model-a" in text and "Ask each model its next item" in text
    next_item = re.search(r"│\s+1\s+│\s+(\S+)\s+│", estimate.output)
    assert next_item is not None and next_item.group(1) != first, estimate.output


def test_an_npz_says_once_that_it_carries_the_notes_of_its_conversion(tmp_path):
    npz = tmp_path / "c.npz"
    converted = runner.invoke(app, ["convert", str(FIXTURES / "lm_eval_reruns"), "--out", str(npz)])
    assert converted.exit_code == 0, converted.output
    reading = read_source(FIXTURES / "lm_eval_reruns").notes
    assert len(reading) == 2 and all(note in converted.output for note in reading)
    info = runner.invoke(app, ["info", str(npz)])
    assert all(f"When converted: {note}" in info.output for note in reading)  # info shows them, marked as old
    chosen = runner.invoke(
        app, ["select", "--data", str(npz), "--method", "random", "--size", "2", "--assess-runs", "0", "--out", str(tmp_path / "m.json")]
    )
    assert chosen.exit_code == 0, chosen.output
    assert not any(note in chosen.output for note in reading)
    assert f"{npz} carries 2 notes from when it was converted" in " ".join(chosen.output.split())
    again = tmp_path / "again.npz"
    assert runner.invoke(app, ["convert", str(npz), "--out", str(again)]).exit_code == 0
    assert read_npz(again).notes == read_npz(npz).notes  # marked once, however often converted
