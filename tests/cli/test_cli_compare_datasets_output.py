"""What mdad compare and mdad datasets print: model and dataset names, numbers and ids are never cut at
80 or 200 columns (a terminal, or a pipe where rich assumes 80); a name too wide for the table is shown
whole on its own line."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

import mdad
import mdad.data

LONG_NAMES = [f"org{i}__Some-Very-Long-Model-Name-{i}2B-Instruct-v0.{i}" for i in range(8)]


def _mdad(*args: str, columns: int, env: dict[str, str] | None = None) -> str:
    """The command's standard output, run with its output piped, at ``columns``."""
    done = subprocess.run(
        [sys.executable, "-m", "mdad.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {}), "COLUMNS": str(columns)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _nothing_cut(output: str) -> bool:
    """No ellipsis (rich's mark of a cut cell); lines longer than the console are whole lines the
    terminal wraps, not cells rich has cut."""
    return "…" not in output and "..." not in output.replace("... ", "")


@pytest.mark.parametrize("columns", [80, 200])
def test_compare_never_cuts_a_model_name_or_a_number(tmp_path, columns):
    matrix = mdad.simulate(seed=3, n_models=len(LONG_NAMES), n_items=40)
    frame = pd.DataFrame(matrix.scores, columns=[f"task/item-{j:03d}" for j in range(matrix.n_items)])
    frame.insert(0, "model", LONG_NAMES)
    data = tmp_path / "results.csv"
    frame.to_csv(data, index=False)
    pairs = tmp_path / "pairs.csv"
    output = _mdad("compare", "--data", str(data), "--size", "10", "--top", "0", "--csv", str(pairs), columns=columns)
    assert _nothing_cut(output)
    assert all(name in output for name in LONG_NAMES)
    for row in pd.read_csv(pairs).itertuples():
        assert f"{row.difference_points:.2f}" in output
        assert "tie" in output if row.difference_points == 0 else f"{row.p_correct_order:.3f}" in output


@pytest.mark.parametrize("columns", [80, 200])
def test_datasets_never_cuts_a_dataset_name(tmp_path, columns):
    names = ["org__Some-Very-Long-Model-Name-72B-Instruct-v0.3-results-on-a-long-benchmark", "short"]
    for name in names:
        (tmp_path / name).mkdir()
        mdad.data.write_npz(mdad.simulate(seed=1, n_models=4, n_items=12), str(tmp_path / name / "responses.npz"))
    output = _mdad("datasets", columns=columns, env={"MDAD_DATA_DIR": str(tmp_path)})
    assert _nothing_cut(output)
    lines = output.splitlines()
    for name in names:
        assert any(name in line for line in lines), output
    assert "4 x 12" in output


@pytest.mark.parametrize("columns", [80, 200])
def test_plan_of_several_methods_never_cuts_a_method_name_or_a_number(columns):
    """Every method's row of `plan --method A,B,C` whole: names not folded mid-word, numbers and the
    sizes tried uncut (the table is split rather than cut at 80 columns)."""
    methods = ["random", "random-stratified-equal", "random-stratified-proportional"]
    output = _mdad("plan", "--method", ",".join(methods), "--detect", "2.0", columns=columns)
    assert _nothing_cut(output)
    found = mdad.plan(mdad.load("gpqa"), detect=2.0, methods=methods)
    for row in found.rows:
        lines = [line for line in output.splitlines() if line.strip().startswith(f"{row.method} ")]
        assert lines, (row.method, output)
        assert f" {row.items} " in lines[0] and f"{row.value:.3f}" in lines[0], (row.method, output)
    assert "bisection" in output
