"""Plain long and wide tables, CSV and parquet."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdad.data import describe, read_source
from mdad.errors import MdadError

MODELS = ["m1", "m2", "m3"]
ITEMS = ["q1", "q2", "q3", "q4"]
SUBTASKS = ["alg", "alg", "geo", "geo"]
SCORES = np.array([[1, 0, 1, np.nan], [0, 0, 1, 1], [1, 1, 0.5, 0]])


def _long() -> pd.DataFrame:
    rows = [
        {"model": m, "item": it, "score": SCORES[a, i], "subtask": SUBTASKS[i]}
        for a, m in enumerate(MODELS)
        for i, it in enumerate(ITEMS)
        if not np.isnan(SCORES[a, i])
    ]
    return pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # row order must not matter


def _wide(with_subtasks: bool) -> pd.DataFrame:
    frame = pd.DataFrame(SCORES, columns=ITEMS)
    frame.insert(0, "model", MODELS)
    if with_subtasks:
        frame = pd.concat([pd.DataFrame([["subtask", *SUBTASKS]], columns=frame.columns), frame.astype(object)])
    return frame


def _save(frame: pd.DataFrame, path):
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pandas(frame.astype({c: str for c in frame.columns if frame[c].dtype == object}), preserve_index=False), path)
    else:
        frame.to_csv(path, index=False)
    return path


def _check(m, with_subtasks=True):
    m = m.take(m.model_index(MODELS), np.array([list(m.items).index(i) for i in ITEMS]))
    np.testing.assert_array_equal(m.scores, SCORES.astype(np.float32))
    assert list(m.subtasks) == (SUBTASKS if with_subtasks else ["all"] * 4)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_long_table(tmp_path, suffix):
    m = read_source(_save(_long(), tmp_path / f"scores{suffix}"))
    _check(m)
    info = describe(m)
    assert info["models_missing_items"] == {"m1": 1} and info["scores"] == "continuous"


def test_long_table_without_subtask_and_capitalised_columns(tmp_path):
    frame = _long().drop(columns="subtask").rename(columns={"model": "Model", "item": "Item", "score": "Score"})
    _check(read_source(_save(frame, tmp_path / "s.csv")), with_subtasks=False)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("with_subtasks", [True, False])
def test_wide_table(tmp_path, suffix, with_subtasks):
    frame = _wide(with_subtasks)
    if suffix == ".parquet":
        frame = frame.astype(str)
    _check(read_source(_save(frame, tmp_path / f"wide{suffix}")), with_subtasks)


def test_a_folder_with_one_table_reads_it(tmp_path):
    _save(_long(), tmp_path / "scores.csv")
    _check(read_source(tmp_path))


def test_conflicting_duplicates_name_model_and_item(tmp_path):
    frame = _long()
    clash = pd.DataFrame([{"model": "m2", "item": "q3", "score": 0.0, "subtask": "geo"}])
    with pytest.raises(MdadError, match=r"Model 'm2' has conflicting results for item 'q3' of subtask 'geo'.*row"):
        read_source(_save(pd.concat([frame, clash]), tmp_path / "s.csv"))


def test_a_non_numeric_cell_is_named(tmp_path):
    frame = _wide(False).astype(object)
    frame.iloc[1, 2] = "oops"
    with pytest.raises(MdadError, match=r"score of model 'm2' on item 'q2' is 'oops', not a score"):
        read_source(_save(frame, tmp_path / "w.csv"))
    long = _long().astype(object)
    long.iloc[0, 2] = "high"
    with pytest.raises(MdadError, match=r"row \d+, score of model .* is 'high', not a score"):
        read_source(_save(long, tmp_path / "l.csv"))


def test_scores_outside_zero_one_are_refused(tmp_path):
    frame = _long()
    frame.iloc[0, 2] = 3.0
    with pytest.raises(MdadError, match=r"s\.csv: scores must lie in \[0, 1\]"):
        read_source(_save(frame, tmp_path / "s.csv"))


def test_metric_or_filter_on_a_table_is_refused(tmp_path):
    path = _save(_long(), tmp_path / "s.csv")
    with pytest.raises(MdadError, match="plain score table, with no metrics to choose from"):
        read_source(path, metric="acc")
    with pytest.raises(MdadError, match="plain score table, with no filters to choose from"):
        read_source(path, filter_name="none")
