"""What mdad select and mdad estimate print and write: tables that never cut a number or an id at 80
and 200 columns (a terminal, or a pipe where rich assumes 80), the --compare and --clopper-pearson
answers, and outputs that never overwrite an input or each other."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.micro import SelectedMicroBenchmark
from mdad.micro.estimation import estimate_report

runner = CliRunner()
LONG_NAMES = [f"organisation-{i}__Some-Rather-Long-Model-Name-{i}-Instruct-v1.{i}-abliterated" for i in range(24)]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """A wide CSV whose model names and item ids are long, with separators inside them."""
    matrix = mdad.simulate(seed=5, n_models=24, n_items=90)
    frame = pd.DataFrame(matrix.scores, columns=[f"planets/pl-{j:04d}" for j in range(matrix.n_items)])
    frame.insert(0, "model", LONG_NAMES)
    path = tmp_path_factory.mktemp("wide") / "results.csv"
    frame.to_csv(path, index=False)
    return path


def _mdad(*args: str, columns: int) -> str:
    """The command's standard output, run as a user runs it with its output piped, at ``columns``."""
    env = {**os.environ, "COLUMNS": str(columns)}
    done = subprocess.run([sys.executable, "-m", "mdad.cli", *args], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _column_text(output: str, index: int) -> str:
    """The pieces of one column of the printed tables' rows (0: the first, the model's name; -1: the last), in order and
    joined: a name wrapped over lines within its row reads whole here."""
    return "".join(line.split("│")[1:-1][index].strip() for line in output.splitlines() if line.startswith("│"))


def _select(data: Path, folder: Path, method: str) -> Path:
    out = folder / f"{method}.json"
    result = runner.invoke(app, ["select", "--data", str(data), "--method", method, "--size", "12", "--assess-runs", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("method", ["random", "adaptive"])
@pytest.mark.parametrize("columns", [80, 200])
def test_estimate_never_cuts_a_number_or_an_id(data, tmp_path, method, columns):
    micro = _select(data, tmp_path, method)
    if method == "adaptive":  # new models that answered a few items: the table names the item to ask next
        frame = pd.read_csv(data)
        data = tmp_path / "new.csv"
        frame.iloc[:, :4].to_csv(data, index=False)
    output = _mdad("estimate", str(micro), str(data), columns=columns)
    assert max(len(line) for line in output.splitlines() if "│" in line) <= columns  # tables fit
    assert "\u2026" not in output and not re.search(r"^\s*1\s{2}organisation", output, re.MULTILINE)  # nothing cut, no legend below
    report = estimate_report(SelectedMicroBenchmark.load(micro), mdad.load(data))
    first, last = _column_text(output, 0), _column_text(output, -1)
    for column in report.columns:
        for cell in column.cells:
            if column.identifier:  # a name or item id whole in its row, wrapped over lines when the console is narrow
                assert cell in output or cell in first or cell in last, (column.name, cell, output)
            else:
                assert cell in output, (column.name, cell, output)  # every number whole, on one line
    for row in (line for line in output.splitlines() if line.startswith("│")):
        assert row.split("│")[1].strip(), row  # every table line begins with a piece of the model's name
    if method == "adaptive":
        assert re.search(r"planets/pl-\d{4}", output)


@pytest.mark.parametrize("columns", [80, 200])
def test_select_never_cuts_an_id(data, tmp_path, columns):
    out = tmp_path / "a-micro-benchmark-file-with-a-rather-long-name-in-a-folder-of-its-own.json"
    output = _mdad("select", "--data", str(data), "--method", "adaptive", "--size", "12", "--assess-runs", "0", "--out", str(out), columns=columns)
    first = SelectedMicroBenchmark.load(out).first_item()
    assert first in output and str(out) in output


def test_compare_prints_both_estimates_the_gap_the_order_and_the_paired_test(data, tmp_path):
    micro = _select(data, tmp_path, "random")
    a, b = LONG_NAMES[0], LONG_NAMES[20]
    result = runner.invoke(app, ["estimate", str(micro), str(data), "--compare", f"{a},{b}", "--compare-csv", str(tmp_path / "pairs.csv")])
    assert result.exit_code == 0, result.output
    expected = SelectedMicroBenchmark.load(micro).compare(mdad.load(data), a, b)
    text = " ".join(result.output.split())
    assert f"{100 * expected.estimate_first:.1f}%" in text and f"gap {expected.gap:.1f} points" in text
    assert "McNemar mid-p" in text and "P(the full benchmark orders them the same way)" in text
    written = pd.read_csv(tmp_path / "pairs.csv")
    assert written["p_value"].iloc[0] == pytest.approx(expected.p_value)


def test_pairs_all_compares_every_pair(data, tmp_path):
    micro = _select(data, tmp_path, "random")
    result = runner.invoke(app, ["estimate", str(micro), str(data), "--pairs", "all", "--compare-csv", str(tmp_path / "all.csv")])
    assert result.exit_code == 0, result.output
    assert len(pd.read_csv(tmp_path / "all.csv")) == 24 * 23 // 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["--compare", "nope,other"], "No model 'nope'"),
        (["--compare", "justone"], "No model 'justone'"),
        (["--compare", LONG_NAMES[0]], "has no partner"),
        (["--compare", f"{LONG_NAMES[0]},{LONG_NAMES[0]}"], "twice in one pair"),
        (["--compare", " "], "--compare takes a model name"),
        (["--pairs", "some"], "--pairs takes 'all'"),
        (["--clopper-pearson", "--population"], "choose one"),
    ],
)
def test_bad_comparisons_are_one_sentence(data, tmp_path, args, message):
    micro = _select(data, tmp_path, "random")
    result = runner.invoke(app, ["estimate", str(micro), str(data), *args])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert message in " ".join(result.output.split())


def test_clopper_pearson_gives_the_wider_interval_nominal_for_every_accuracy(data, tmp_path):
    micro = _select(data, tmp_path, "random")
    mid_p, exact = tmp_path / "mid.csv", tmp_path / "cp.csv"
    assert runner.invoke(app, ["estimate", str(micro), str(data), "--csv", str(mid_p)]).exit_code == 0
    result = runner.invoke(app, ["estimate", str(micro), str(data), "--csv", str(exact), "--clopper-pearson"])
    assert result.exit_code == 0 and "Clopper-Pearson" in result.output
    narrow, wide = pd.read_csv(mid_p), pd.read_csv(exact)
    assert (wide["low"] <= narrow["low"] + 1e-12).all() and (wide["high"] >= narrow["high"] - 1e-12).all()
    expected = SelectedMicroBenchmark.load(micro).intervals(mdad.load(data), mid_p=False)
    np.testing.assert_allclose(wide["low"], expected.low)
    help_text = " ".join(runner.invoke(app, ["estimate", "--help"], env={"COLUMNS": "200"}).output.split())
    assert "at least at the level for every accuracy" in help_text and "on average over accuracies" in help_text


def test_no_output_is_an_input_or_another_output(data, tmp_path):
    micro = _select(data, tmp_path, "random")
    before = micro.read_text()
    result = runner.invoke(app, ["estimate", str(micro), str(data), "--csv", str(micro)])
    assert result.exit_code == 2 and "micro-benchmark file" in result.output and micro.read_text() == before
    result = runner.invoke(app, ["estimate", str(micro), str(data), "--csv", str(data)])
    assert result.exit_code == 2 and "results" in result.output
    same = tmp_path / "e.csv"
    result = runner.invoke(app, ["estimate", str(micro), str(data), "--csv", str(same), "--pairs-csv", str(tmp_path / "." / "e.csv")])
    assert result.exit_code == 2 and "same path" in " ".join(result.output.split()) and not same.exists()
    result = runner.invoke(app, ["select", "--data", str(data), "--method", "random", "--size", "5", "--assess-runs", "0", "--out", str(data)])
    assert result.exit_code == 2 and "the data" in result.output


def test_csv_to_standard_output(data, tmp_path):
    micro = _select(data, tmp_path, "random")
    output = _mdad("estimate", str(micro), str(data), "--csv", "/dev/stdout", columns=200)
    assert "model,estimate,low,high,level" in output


def test_assessment_runs_that_cannot_fit_are_refused_before_the_selection(data, tmp_path):
    result = runner.invoke(
        app, ["select", "--data", str(data), "--method", "random", "--size", "5", "--assess-runs", "100000000000", "--out", str(tmp_path / "m.json")]
    )
    assert result.exit_code == 2 and "100,000,000,000 held-out runs of" in " ".join(result.output.split())
    assert not (tmp_path / "m.json").exists()


def test_select_gives_uniform_randoms_exact_mdad_as_plan_does(tmp_path):
    """select's held-out runs estimate MDAD with their noise; for uniform random it also states the exact
    MDAD over every pair of the data's models, the number `mdad plan --size` gives; other methods do not."""
    from mdad.data import write_npz
    from mdad.planning.exact import exact_mdad_at_size

    matrix = mdad.simulate(seed=3, n_models=30, n_items=120)
    path = tmp_path / "m.npz"
    write_npz(matrix, path)
    exact = exact_mdad_at_size(matrix, size=20).mdad
    text = " ".join(
        _mdad(
            "select", "--data", str(path), "--method", "random", "--size", "20", "--assess-runs", "3", "--out", str(tmp_path / "r.json"), columns=200
        ).split()
    )
    assert "Exactly, over all 435 pairs of the 30 models" in text
    assert f"MDAD {exact:g} point" in text
    in_bin = exact_mdad_at_size(matrix, size=20).curve.pairs_at(exact)
    assert (f"bin holds {in_bin} pairs (fewer than 200)" in text) == (in_bin < 200)  # a sparse crossing bin says so
    plan = " ".join(_mdad("plan", "--data", str(path), "--size", "20", "--method", "random", columns=200).split())
    assert f"MDAD = {exact:g} point" in plan
    other = _mdad(
        "select",
        "--data",
        str(path),
        "--method",
        "random-stratified-equal",
        "--size",
        "20",
        "--assess-runs",
        "3",
        "--out",
        str(tmp_path / "s.json"),
        columns=200,
    )
    assert "Exactly, over all" not in other
