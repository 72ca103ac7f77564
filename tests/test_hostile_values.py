"""Values that make no sense in otherwise well-formed data: log-likelihoods that are not finite numbers,
option probabilities that are no distribution, scores just beyond 1. Each gives one sentence, or the
right data with a note."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from test_hostile_inputs import one_error, runner, small_matrix

from mdad.cli import app
from mdad.data import ResponseMatrix, load
from mdad.errors import MdadError

FIXTURES = Path(__file__).parent / "fixtures"
MC_FILE = "model-a/samples_tiny_mc_2026-12-01T09-04-25.092509.jsonl"


def _logs_with_logliks(tmp_path: Path, values: list) -> Path:
    """The lm-eval fixture with the option log-likelihoods of model-a's first multiple-choice line replaced."""
    logs = Path(shutil.copytree(FIXTURES / "lm_eval", tmp_path / "logs"))
    path = logs / MC_FILE
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["filtered_resps"] = [[v, "False"] for v in values]
    row["resps"] = [[[v, "False"]] for v in values]
    lines[0] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    return logs


@pytest.mark.parametrize(
    "values",
    [["NaN", "-1", "-2", "-3"], ["Infinity", "-1", "-2", "-3"], ["-Infinity"] * 4, ["abc", "-1", "-2", "-3"]],
    ids=["nan", "+inf", "all -inf", "not a number"],
)
def test_log_likelihoods_that_are_not_finite_drop_the_task_probabilities_with_a_note(tmp_path, values):
    matrix = load(_logs_with_logliks(tmp_path, values))
    clean = load(FIXTURES / "lm_eval")
    mc = np.flatnonzero(matrix.subtasks == "tiny_mc")
    assert matrix.gold is None or (matrix.gold[mc] == -1).all(), "no NaN option probabilities are kept"
    assert any("option log-likelihoods" in note and "tiny_mc" in note for note in matrix.notes), matrix.notes
    np.testing.assert_array_equal(matrix.scores, clean.scores)  # the 0/1 scores are kept


def test_a_single_minus_infinity_is_a_probability_of_zero(tmp_path):
    matrix = load(_logs_with_logliks(tmp_path, ["-Infinity", "-1", "-2", "-3"]))
    assert not any("option log-likelihoods" in note for note in matrix.notes)
    row = matrix.option_probs[list(matrix.models).index("model-a"), list(matrix.items).index("tiny_mc/0")]
    assert row[0] == 0 and abs(float(np.nansum(row)) - 1) < 1e-6


@pytest.mark.parametrize("fill", [0.9, 0.0], ids=["each 0.9", "all zero"])
def test_option_probabilities_that_are_no_distribution_are_refused(tmp_path, fill):
    base = small_matrix(n_models=4, n_items=6)
    probs = np.full((4, 6, 3), 1 / 3)
    probs[2, 4] = fill
    with pytest.raises(MdadError, match=r"model 'model-2' on item 'q4' sum to .*not 1"):
        ResponseMatrix(
            scores=base.scores, models=base.models, items=base.items, subtasks=base.subtasks, option_probs=probs, gold=np.zeros(6, dtype=int)
        )


def test_a_score_just_beyond_one_is_named_as_it_is(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("model,i0,i1\nm0,1.0000001,0\nm1,0,1\n")
    one_error(runner.invoke(app, ["info", str(path)]), "1.0000001")
