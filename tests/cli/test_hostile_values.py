"""Values that make no sense in otherwise well-formed data: log-likelihoods that are not finite numbers,
option probabilities that are no distribution, scores just beyond 1. Each gives one sentence, or the
right data with a note."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.cli_checks import one_error, runner, small_matrix
from support.paths import FIXTURES

from mdad.cli import app
from mdad.data import ResponseMatrix, from_frame, load
from mdad.data.matrix import MAX_NAME_LENGTH
from mdad.data.readers._cells import Cells
from mdad.errors import MdadError

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


# ---- names --------------------------------------------------------------------------------------
def test_a_huge_item_name_in_a_parquet_is_refused_before_the_names_are_padded(tmp_path):
    path = tmp_path / "scores.parquet"
    frame = pd.DataFrame(np.ones((2, 5000)), columns=[f"q{j}" for j in range(4999)] + ["x" * 200_000])
    frame.insert(0, "model", ["m0", "m1"])
    frame.to_parquet(path)
    one_error(runner.invoke(app, ["info", str(path)]), "One item name is 200,000 characters long", f"at most {MAX_NAME_LENGTH:,} characters")


def test_huge_model_names_in_an_npz_are_refused_before_they_are_read(tmp_path):
    path = tmp_path / "responses.npz"
    np.savez(
        path,
        scores=np.ones((40, 80), dtype=np.float32),
        models=np.array([f"m{i}" for i in range(38)] + ["a" * 10**6, "b" * 10**6]),
        items=np.array([f"q{j}" for j in range(80)]),
        subtasks=np.array(["all"] * 80),
    )
    one_error(runner.invoke(app, ["info", str(path)]), "names of up to 1,000,000 characters")


def test_a_csv_written_with_its_pandas_index_reads_the_index_as_the_models(tmp_path):
    matrix = small_matrix(n_models=4, n_items=6)
    wide = tmp_path / "wide.csv"
    pd.DataFrame(matrix.scores, index=matrix.models, columns=matrix.items).to_csv(wide)
    read = load(wide)
    assert list(read.models) == list(matrix.models)
    assert any("read as the model names" in note for note in read.notes)
    long = tmp_path / "long.csv"
    pd.DataFrame({"model": ["m0", "m1"], "item": ["a", "a"], "score": [1, 0]}).to_csv(long)
    read = load(long)
    assert list(read.models) == ["m0", "m1"] and read.n_items == 1
    assert any("read as row numbers" in note for note in read.notes)


class _ListFrame:
    def to_pandas(self):
        return [1, 2]


@pytest.mark.parametrize(
    ("frame", "options", "message"),
    [
        (pd.DataFrame(np.eye(2), index=pd.MultiIndex.from_tuples([(1, "a"), (2, "b")]), columns=["q0", "q1"]), {}, "2 levels of row labels"),
        (pd.DataFrame(np.eye(2), index=["a", "b"], columns=["q0", "q1"]), {"subtasks": 5}, "got int 5"),
        (_ListFrame(), {}, "gave a list, not a pandas data frame"),
    ],
    ids=["MultiIndex", "subtasks=5", "to_pandas gives a list"],
)
def test_from_frame_refuses_what_it_cannot_read_with_one_sentence(frame, options, message):
    with pytest.raises(MdadError, match=message):
        from_frame(frame, **options)


def test_models_named_na_or_none_are_models(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("model,item,score\nNA,a,1\nNA,b,1\nNone,a,0\nNone,b,1\nnull,a,1\nnull,b,0\n")
    assert sorted(load(path).models) == ["NA", "None", "null"]


def test_names_that_only_spaces_tell_apart_are_merged_with_a_note(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("model,item,score\nmX,a,1\nmX ,b,0\nmY,a,0\nmY,b,1\n")
    matrix = load(path)
    assert sorted(matrix.models) == ["mX", "mY"]
    assert any("'mX' and 'mX '" in note and "differ only in surrounding spaces" in note for note in matrix.notes)


@pytest.mark.parametrize("twin", ["cafe\u0301", "caf\u200b\u00e9"], ids=["NFD", "zero-width"])
def test_model_names_that_print_alike_are_noted(twin):
    matrix = ResponseMatrix(scores=np.eye(3), models=["caf\u00e9", twin, "m"], items=["a", "b", "c"], subtasks=["s"] * 3)
    assert matrix.n_models == 3
    assert any("print alike" in note for note in matrix.notes), matrix.notes


def test_a_group_listing_a_model_twice_counts_it_once():
    base = small_matrix(n_models=6, n_items=8)
    matrix = ResponseMatrix(
        scores=base.scores, models=base.models, items=base.items, subtasks=base.subtasks, groups={"g": ["model-0", "model-1", "model-0"]}
    )
    assert list(matrix.group_index("g")) == [0, 1]
    assert any("lists 'model-0' more than once" in note for note in matrix.notes)


# ---- wording ------------------------------------------------------------------------------------
def test_one_item_subtasks_say_each_needs_two(tmp_path):
    items = [f"i{j}" for j in range(100)]
    frame = pd.DataFrame(np.random.default_rng(0).integers(0, 2, (8, 100)), columns=items)
    frame.insert(0, "model", [f"m{i}" for i in range(8)])
    subtask_row = pd.DataFrame([["subtask", *[f"t{j}" for j in range(100)]]], columns=frame.columns)
    path = tmp_path / "one-item-tasks.csv"
    pd.concat([frame.astype(str), subtask_row]).to_csv(path, index=False)
    one_error(
        runner.invoke(app, ["run", "--data", str(path), "--out", str(tmp_path / "o"), "--workers", "1"]),
        "each subtask needs at least 2 items",
        "all 100 subtasks",
    )


def test_counted_words_agree(tmp_path):
    path = tmp_path / "d.csv"
    wide = pd.DataFrame(small_matrix().scores, columns=small_matrix().items)
    wide.insert(0, "model", small_matrix().models)
    wide.to_csv(path, index=False)
    one_error(runner.invoke(app, ["run", "--data", str(path), "--targets", "1", "--out", str(tmp_path / "o")]), "1 target model was asked for")
    result = runner.invoke(app, ["compare", "--data", str(path), "--size", "8"])
    assert result.exit_code == 0 and "MDAD of an 8-item random micro-benchmark" in result.output, result.output


def test_any_reader_sets_aside_option_scores_that_are_not_finite():
    """The assembly every harness reader shares (lighteval, inspect, lm-eval): an answer whose option
    scores hold NaN keeps its item's 0/1 scores alone, with a note; the other items keep their options."""
    cells = Cells(source="logs")
    for m, model in enumerate(["a", "b"]):
        for j in range(2):
            scores = [float("nan"), -1.0] if (model, j) == ("a", 0) else [-1.0, -2.0 - m]
            cells.add(model, ("t", j), f"t/{j}", "t", 1.0, f"file line {j}", option_scores=scores, gold=0)
    matrix = cells.to_matrix()
    assert list(matrix.gold) == [-1, 0]
    assert np.isfinite(matrix.option_probs[:, 1]).all()
    assert any("not finite numbers" in note and "file line 0" in note for note in matrix.notes), matrix.notes


def test_one_missing_item_is_one_item():
    from mdad.data import describe, format_description

    base = small_matrix(n_models=4, n_items=6)
    scores = base.scores.copy()
    scores[0, 0] = np.nan
    matrix = ResponseMatrix(scores=scores, models=base.models, items=base.items, subtasks=base.subtasks)
    text = " ".join(format_description(describe(matrix)))
    assert "missing cells: 1 on 1 item;" in text, text
