"""Response matrices from and to data frames (pandas, or anything with ``to_pandas()`` such as polars).

Two shapes are read, as for CSV/parquet files:

- wide: one row per model and one column per item, the model names in the index (or, with a
  default index as polars frames have, in a first column of text);
- long: columns ``model``, ``item``, ``score`` and optionally ``subtask``, one row per result.

Missing values are results that were not evaluated (NaN).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from mdad.data.matrix import ResponseMatrix, check_name_lengths
from mdad.data.readers.tables import DEFAULT_SUBTASK, SUBTASK, is_long, read_long
from mdad.errors import MdadError
from mdad.wording import plural


def from_frame(frame, *, subtasks: Mapping[str, str] | Sequence[str] | None = None, source: str = "data frame") -> ResponseMatrix:
    """A response matrix from a wide or long data frame (module docstring); the frame is not modified.

    Parameters
    ----------
    frame : pandas.DataFrame or polars.DataFrame
        Wide (models x items) or long (``model``, ``item``, ``score`` and optionally ``subtask``).
    subtasks : mapping or sequence, optional
        For a wide frame, each item's subtask: a mapping from item to subtask or a sequence in
        column order (default: one subtask). A long frame carries them in its ``subtask`` column.
    source : str
        How errors and reports name the data.

    Returns
    -------
    ResponseMatrix

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"q1": [1, 0], "q2": [1, 1]}, index=["model-a", "model-b"])
    >>> from_frame(frame).accuracy().tolist()
    [1.0, 0.5]
    """
    if not isinstance(frame, pd.DataFrame):
        if not hasattr(frame, "to_pandas"):
            raise MdadError(f"Expected a pandas or polars data frame, got {type(frame).__name__}.")
        frame = frame.to_pandas()
        if not isinstance(frame, pd.DataFrame):
            raise MdadError(f"to_pandas() of the {source} gave a {type(frame).__name__}, not a pandas data frame.")
    for axis, labels in (("row", frame.index), ("column", frame.columns)):
        if isinstance(labels, pd.MultiIndex):
            raise MdadError(
                f"The {source} has {labels.nlevels} levels of {axis} labels (a MultiIndex); give one "
                "level, e.g. frame.reset_index() or columns joined into one name."
            )
    if subtasks is not None and (isinstance(subtasks, (str, bytes)) or not isinstance(subtasks, (Mapping, Sequence, np.ndarray, pd.Series))):
        raise MdadError(f"subtasks must map each item to its subtask or list them in column order, got {type(subtasks).__name__} {subtasks!r:.40}.")
    if frame.empty:
        raise MdadError(f"The {source} is empty.")
    if is_long(frame):
        if subtasks is not None:
            raise MdadError("A long frame gives subtasks in its 'subtask' column; do not pass subtasks too.")
        return read_long(frame, source, lambda i: f"row {frame.index[i]!r}")
    return _from_wide(frame, subtasks, source)


def _from_wide(frame: pd.DataFrame, subtasks, source: str) -> ResponseMatrix:
    if isinstance(frame.index, pd.RangeIndex) and not pd.api.types.is_numeric_dtype(frame.iloc[:, 0]):
        frame = frame.set_index(frame.columns[0])  # model names in the first column (polars has no index)
    unnamed = pd.isna(frame.index) | (frame.index.astype(str).str.strip() == "")
    if unnamed.any():
        raise MdadError(
            f"In the {source}, row {int(np.argmax(unnamed)) + 1} has no model name (its index label is {frame.index[int(np.argmax(unnamed))]!r})."
        )
    models = [str(m) for m in frame.index]
    items = [str(c) for c in frame.columns]
    check_name_lengths(models, "model")
    check_name_lengths(items, "item")
    for column, dtype in frame.dtypes.items():
        if dtype.kind not in "biufO" and not pd.api.types.is_string_dtype(dtype):
            raise MdadError(f"In the {source}, the column {str(column)!r} holds {dtype} values, not scores.")
    values = frame.to_numpy()
    if values.dtype.kind in "biuf":
        scores = values.astype(np.float64)
    else:
        scores = np.array([pd.to_numeric(frame[c].astype(object).map(_real), errors="coerce").to_numpy(np.float64) for c in frame.columns]).T
        bad = np.isnan(scores) & ~pd.isna(frame).to_numpy()
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise MdadError(f"In the {source}, the score of model {models[i]!r} on item {items[j]!r} is {values[i, j]!r}, not a number.")
    return ResponseMatrix(
        scores=scores, models=np.array(models, dtype=str), items=np.array(items, dtype=str), subtasks=_item_subtasks(subtasks, items), source=source
    )


def _real(value):
    """A cell as something ``pd.to_numeric`` reads only when it is a real number (complex, timedelta: not)."""
    return value if isinstance(value, (int, float, str, np.integer, np.floating)) or value is None else "not a number"


def _item_subtasks(subtasks, items: list[str]) -> np.ndarray:
    if subtasks is None:
        return np.full(len(items), DEFAULT_SUBTASK)
    if isinstance(subtasks, Mapping):
        missing = [item for item in items if item not in subtasks]
        if missing:
            raise MdadError(f"subtasks gives no subtask for item {missing[0]!r}.")
        return np.array([str(subtasks[item]) for item in items])
    values = np.asarray([str(s) for s in subtasks])
    if len(values) != len(items):
        raise MdadError(f"subtasks has {len(values)} {'entry' if len(values) == 1 else 'entries'} but the frame has {plural(len(items), 'item')}.")
    return values


def to_frame(matrix: ResponseMatrix, *, long: bool = False) -> pd.DataFrame:
    """The scores as a wide frame (models x items; ``columns.name`` 'item', subtasks in
    ``frame.attrs['subtasks']``) or, with ``long``, one row per result (model, item, subtask, score)."""
    if long:
        n_models, n_items = matrix.scores.shape
        return pd.DataFrame(
            {
                "model": np.repeat(matrix.models, n_items),
                "item": np.tile(matrix.items, n_models),
                SUBTASK: np.tile(matrix.subtasks, n_models),
                "score": matrix.scores.ravel(),
            }
        )
    frame = pd.DataFrame(matrix.scores, index=pd.Index(matrix.models, name="model"), columns=pd.Index(matrix.items, name="item"))
    frame.attrs["subtasks"] = dict(zip(matrix.items.tolist(), matrix.subtasks.tolist(), strict=True))
    return frame
