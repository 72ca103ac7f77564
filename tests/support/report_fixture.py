"""One small run with every report feature, built once per test session and shared by the report tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mdad.cli import app
from mdad.data import simulate, write_npz

FIGURE_KEYS = [
    "mdad_vs_size",
    "agreement_curves",
    "exact_vs_simulated_0",
    "exact_vs_simulated_1",
    "error_and_tau",
    "mdad_vs_sources",
    "seen_vs_unseen",
    "group_histogram",
    "decision_curves",
]
GROUP = "close"  # ten models of nearly equal accuracy: small sizes cannot order them (MDAD not reached)
RUN_ARGS = [
    "--methods",
    "random,random-stratified-equal",
    "--per-subtask",
    "--sizes",
    "8,4%,40,120",
    "--sources",
    "20,60",
    "--runs",
    "4",
    "--group",
    GROUP,
    "--threshold",
    "0.9",
    "--seed",
    "2",
]


def make_data(folder: Path) -> Path:
    """A small simulated leaderboard (120 models x 400 items, 4 subtasks) as npz with its groups.json."""
    matrix = simulate(seed=3, n_models=120, n_items=400, n_subtasks=4)
    folder.mkdir(parents=True, exist_ok=True)
    write_npz(matrix, folder / "responses.npz")
    accuracy = matrix.scores.mean(axis=1)
    close = np.argsort(np.abs(accuracy - np.median(accuracy)), kind="stable")[:10]
    groups = {**matrix.groups, GROUP: [str(matrix.models[i]) for i in close]}
    (folder / "groups.json").write_text(json.dumps(groups))
    return folder


@pytest.fixture(scope="session", name="built_report")
def built_report_fixture(tmp_path_factory) -> Path:
    """The output folder of ``mdad run`` with a group, a source sweep, per-subtask variants and share sizes."""
    root = tmp_path_factory.mktemp("report")
    data = make_data(root / "data")
    out = root / "out"
    result = CliRunner().invoke(app, ["run", "--data", str(data), *RUN_ARGS, "--figures", "svg", "--workers", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out
