"""What the command-line tests share: a runner, the one-sentence-error check, and small inputs made on the spot."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from mdad.data import ResponseMatrix
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.store import ResultStore

runner = CliRunner()


def flat(text: str) -> str:
    return " ".join(text.split())


def one_error(result, *fragments: str) -> None:
    """Exit code 2, no traceback, one 'error:' line holding every fragment."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, result.output
    for fragment in fragments:
        assert fragment in flat(result.output), (fragment, result.output)


def small_matrix(names: list[str] | None = None, n_models: int = 12, n_items: int = 40, seed: int = 0) -> ResponseMatrix:
    rng = np.random.default_rng(seed)
    ability = np.linspace(-1.5, 1.5, n_models)[:, None]
    scores = (rng.random((n_models, n_items)) < 1 / (1 + np.exp(-(ability - rng.normal(size=n_items))))).astype(float)
    models = list(names or []) + [f"model-{i}" for i in range(n_models - len(names or []))]
    return ResponseMatrix(
        scores=scores,
        models=models,
        items=[f"q{j}" for j in range(n_items)],
        subtasks=["a" if j % 2 else "b" for j in range(n_items)],
        source="small",
    )


def wide_csv(path: Path, matrix: ResponseMatrix) -> Path:
    frame = pd.DataFrame(matrix.scores, columns=matrix.items)
    frame.insert(0, "model", matrix.models)
    frame.to_csv(path, index=False)
    return path


def small_experiment(out: Path, *, sizes=(5, 10), runs=3) -> Experiment:
    config = ExperimentConfig(methods=("random",), sizes=sizes, sources=(6,), runs=runs, targets=4, seed=0)
    return Experiment(small_matrix(), config, store=ResultStore(out))


def small_store(out: Path) -> dict:
    return small_experiment(out).run(workers=1).frames
