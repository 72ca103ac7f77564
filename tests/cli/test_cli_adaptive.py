"""The CLI with adaptive tests and AIPW: run, select, and estimate from whatever items were answered."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from mdad.cli import app
from mdad.data import ResponseMatrix, simulate, write_npz
from mdad.micro import SelectedMicroBenchmark

runner = CliRunner()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("adaptive")
    matrix = simulate(seed=4, n_models=70, n_items=120, n_subtasks=3, dims=2, with_option_probs=False)
    write_npz(matrix, folder / "all.npz")
    return folder, matrix


def one_line(output: str) -> str:
    return " ".join(output.split())


def test_run_compares_adaptive_and_static_methods_with_the_strongest_models_as_targets(data):
    folder, _ = data
    out = folder / "run"
    result = runner.invoke(
        app,
        [
            "run",
            "--data",
            str(folder / "all.npz"),
            "--methods",
            "random,adaptive,aipw",
            "--sizes",
            "5,15",
            "--runs",
            "3",
            "--targets",
            "10",
            "--targets-from",
            "top",
            "--workers",
            "1",
            "--verbose",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "the 10 strongest models as targets" in one_line(result.output)
    assert "Flagged targets per run (model-based estimates that extrapolate): 5 items" in one_line(result.output)
    assert "\u2026" not in result.output  # rich's ellipsis: nothing is cut at 80 columns
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["method"]) == {"random", "adaptive", "aipw"}
    assert summary.loc[summary["method"] != "random", "flagged_per_run"].notna().all()
    resumed = runner.invoke(
        app,
        [
            "run",
            "--data",
            str(folder / "all.npz"),
            "--methods",
            "random,adaptive,aipw",
            "--sizes",
            "5,15",
            "--runs",
            "3",
            "--targets",
            "10",
            "--targets-from",
            "random",
            "--workers",
            "1",
            "--out",
            str(out),
        ],
    )
    assert resumed.exit_code == 2 and "targets_from" in resumed.output


def test_select_adaptive_then_estimate_names_each_models_next_item(data, tmp_path):
    folder, matrix = data
    result = runner.invoke(
        app,
        [
            "select",
            "--data",
            str(folder / "all.npz"),
            "--method",
            "adaptive",
            "--size",
            "6",
            "--assess-runs",
            "0",
            "--out",
            str(tmp_path / "test.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    test = SelectedMicroBenchmark.load(tmp_path / "test.json")
    first = test.first_item()
    assert f"starts with item {first}" in one_line(result.output)
    # two new models: one answered the first item only, one answered nothing in the pool yet but another item
    scores = np.full((2, 2), np.nan, dtype=np.float32)
    scores[0, 0] = 1.0
    scores[1, 1] = 0.0
    new = ResponseMatrix(
        scores=scores, models=np.array(["m-a", "m-b"]), items=np.array([first, "other/1"]), subtasks=np.array(["s", "s"]), source="new"
    )
    write_npz(new, tmp_path / "new.npz")
    shown = runner.invoke(app, ["estimate", str(tmp_path / "test.json"), str(tmp_path / "new.npz"), "--csv", str(tmp_path / "est.csv")])
    assert shown.exit_code == 0, shown.output
    details = test.details(new)
    assert details.loc["m-a", "answered"] == 1 and details.loc["m-b", "answered"] == 0
    assert details.loc["m-b", "next_item"] == first and details.loc["m-a", "next_item"] not in ("", first)
    assert details.loc["m-a", "next_item"] in one_line(shown.output)
    assert "Ask each model its next item" in shown.output


def test_select_aipw_then_estimate_prints_intervals(data, tmp_path):
    folder, matrix = data
    result = runner.invoke(
        app,
        ["select", "--data", str(folder / "all.npz"), "--method", "aipw", "--size", "20", "--assess-runs", "0", "--out", str(tmp_path / "m.json")],
    )
    assert result.exit_code == 0, result.output
    shown = runner.invoke(app, ["estimate", str(tmp_path / "m.json"), str(folder / "all.npz")])
    assert shown.exit_code == 0, shown.output
    assert "95% interval" in shown.output
    details = SelectedMicroBenchmark.load(tmp_path / "m.json").details(matrix)
    assert (details["low"] <= details["high"]).all() and {"flagged", "reason"} <= set(details.columns)


def test_adaptive_select_refuses_a_fixed_sample_list(data, tmp_path):
    folder, _ = data
    result = runner.invoke(
        app,
        [
            "select",
            "--data",
            str(folder / "all.npz"),
            "--method",
            "adaptive",
            "--size",
            "6",
            "--out",
            str(tmp_path / "t.json"),
            "--lm-eval-samples",
            str(tmp_path / "s.json"),
        ],
    )
    assert result.exit_code == 2 and "one at a time" in one_line(result.output)
    assert not (tmp_path / "t.json").exists()
