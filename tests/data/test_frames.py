"""Response matrices from and to pandas (and polars) data frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mdad
from mdad.errors import MdadError


def test_wide_frame_round_trip_keeps_scores_names_and_subtasks(small_sim):
    frame = mdad.to_frame(small_sim)
    assert frame.shape == (small_sim.n_models, small_sim.n_items)
    back = mdad.from_frame(frame, subtasks=frame.attrs["subtasks"])
    np.testing.assert_array_equal(back.scores, small_sim.scores)
    assert back.models.tolist() == small_sim.models.tolist() and back.items.tolist() == small_sim.items.tolist()
    assert back.subtasks.tolist() == small_sim.subtasks.tolist()
    in_order = mdad.from_frame(frame, subtasks=list(small_sim.subtasks))
    assert in_order.subtasks.tolist() == small_sim.subtasks.tolist()


def test_long_frame_gives_the_same_matrix_in_any_row_order(small_sim):
    long = mdad.to_frame(small_sim, long=True)
    assert len(long) == small_sim.n_models * small_sim.n_items
    shuffled = long.sample(frac=1.0, random_state=0)
    back = mdad.from_frame(shuffled)
    order = np.argsort(back.models), np.argsort(small_sim.models)
    items = np.argsort(back.items), np.argsort(small_sim.items)
    np.testing.assert_array_equal(back.scores[order[0]][:, items[0]], small_sim.scores[order[1]][:, items[1]])
    assert sorted(set(back.subtasks)) == sorted(set(small_sim.subtasks))


def test_the_frame_is_not_modified_and_missing_cells_stay_missing():
    frame = pd.DataFrame({"q1": [1.0, 0.0], "q2": [np.nan, 1.0]}, index=["model-a", "model-b"])
    before = frame.copy()
    matrix = mdad.from_frame(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert matrix.n_missing == 1 and matrix.accuracy()[1] == 0.5


def test_bad_frames_get_one_sentence():
    with pytest.raises(MdadError, match="model 'b' on item 'q2' is 'yes', not a number"):
        mdad.from_frame(pd.DataFrame({"q1": [1, 0], "q2": [0, "yes"]}, index=["a", "b"]))
    with pytest.raises(MdadError, match="subtasks has 1 entry but the frame has 2 items"):
        mdad.from_frame(pd.DataFrame({"q1": [1, 0], "q2": [0, 1]}, index=["a", "b"]), subtasks=["x"])
    with pytest.raises(MdadError, match="no subtask for item 'q2'"):
        mdad.from_frame(pd.DataFrame({"q1": [1, 0], "q2": [0, 1]}, index=["a", "b"]), subtasks={"q1": "x"})
    with pytest.raises(MdadError, match="pandas or polars data frame, got list"):
        mdad.from_frame([[1, 0]])
    with pytest.raises(MdadError, match="row 1, score of model 'b' on item 'q1'"):
        mdad.from_frame(pd.DataFrame({"model": ["a", "b"], "item": ["q1", "q1"], "score": ["1", "oops"]}))
    with pytest.raises(MdadError, match="empty"):
        mdad.from_frame(pd.DataFrame())


def test_polars_frames_are_read_like_pandas_ones(small_sim):
    polars = pytest.importorskip("polars", reason="polars is not installed (pip install -e '.[test]' installs it)")
    long = polars.from_pandas(mdad.to_frame(small_sim, long=True))
    back = mdad.from_frame(long)
    assert back.n_models == small_sim.n_models and back.n_items == small_sim.n_items
    assert back.accuracy().mean() == pytest.approx(small_sim.accuracy().mean(), abs=1e-6)
    wide = polars.from_pandas(mdad.to_frame(small_sim).reset_index())  # polars: model names in a column
    back = mdad.from_frame(wide, subtasks=list(small_sim.subtasks))
    assert back.models.tolist() == small_sim.models.tolist()
    np.testing.assert_array_equal(back.scores, small_sim.scores)
