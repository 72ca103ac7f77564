"""Plain tables (CSV or parquet) of scores, long or wide.

Long: one row per result with columns model, item, score and optionally subtask.
Wide: models as rows, items as columns, the first column holding the model name; an
optional row whose model name is ``subtask`` gives each item's subtask.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from mdad.data.matrix import ResponseMatrix
from mdad.data.readers._cells import Cells
from mdad.errors import MdadError

LONG_COLUMNS = ("model", "item", "score")
SUBTASK = "subtask"
DEFAULT_SUBTASK = "all"
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")


def read_frame(path: Path) -> pd.DataFrame:
    """The table as text cells (parquet through pyarrow; nothing unpickled)."""
    try:
        if path.suffix == ".parquet":
            frame = pq.read_table(path).to_pandas()
        else:
            frame = pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
    except (pa.ArrowInvalid, OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise MdadError(f"{path} is not a readable table ({str(exc).splitlines()[0]}).") from None
    if frame.empty or frame.shape[1] < 2:
        raise MdadError(f"{path} has no scores (expected columns model, item, score or a wide table).")
    return frame


def is_long(frame: pd.DataFrame) -> bool:
    return set(LONG_COLUMNS) <= {str(c).strip().lower() for c in frame.columns}


def read_table(path: str | Path) -> ResponseMatrix:
    """A matrix from a long or a wide table (blank cells are missing results)."""
    path = Path(path)
    frame = read_frame(path)
    if is_long(frame):
        return read_long(frame, str(path), lambda i: f"row {i + 2}")
    return _read_wide(frame, path)


def _numbers(values: pd.Series, where) -> np.ndarray:
    """Cells as floats; blank is NaN; anything else that is not a number is an error naming the cell."""
    text = values.astype(str).str.strip()
    blank = values.isna().to_numpy() | (text == "").to_numpy() | text.str.lower().isin(["nan", "na", "none"]).to_numpy()
    numbers = pd.to_numeric(text.where(~blank, "nan"), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(numbers) & ~blank
    if bad.any():
        position = int(np.argmax(bad))
        raise MdadError(f"{where(position)} is {text.iloc[position]!r}, not a score.")
    return numbers


def read_long(frame: pd.DataFrame, source: str, row_label) -> ResponseMatrix:
    """A matrix from a long frame (model, item, score and optionally subtask); ``row_label(i)``
    names the i-th row in error messages (a file line, or a frame's index label)."""
    frame = frame.rename(columns={c: str(c).strip().lower() for c in frame.columns})
    models = frame["model"].astype(str).str.strip().to_numpy()
    items = frame["item"].astype(str).str.strip().to_numpy()
    subtasks = (
        frame[SUBTASK].astype(str).str.strip().to_numpy() if SUBTASK in frame else np.full(len(frame), DEFAULT_SUBTASK)
    )
    scores = _numbers(frame["score"],
                      lambda i: f"{source} {row_label(i)}, score of model {models[i]!r} on item {items[i]!r},")
    cells = Cells(source=source)
    cells.extend(
        list(models), list(zip(subtasks, items)), list(items), list(subtasks), list(scores),
        where=[f"{source} {row_label(i)}" for i in range(len(frame))],
        names=[f"item {i!r} of subtask {s!r}" for s, i in zip(subtasks, items)],
    )
    return cells.to_matrix()


def _read_wide(frame: pd.DataFrame, path: Path) -> ResponseMatrix:
    first = frame.columns[0]
    models = frame[first].astype(str).str.strip()
    is_subtask_row = models.str.lower() == SUBTASK
    items = [str(c).strip() for c in frame.columns[1:]]
    if is_subtask_row.any():
        subtasks = frame.loc[is_subtask_row].iloc[0, 1:].astype(str).str.strip().to_numpy()
    else:
        subtasks = np.full(len(items), DEFAULT_SUBTASK)
    body = frame.loc[~is_subtask_row]
    names = models[~is_subtask_row].to_numpy()
    cells = pd.Series(body.iloc[:, 1:].to_numpy(dtype=object).ravel())
    width = len(items)
    scores = _numbers(
        cells, lambda k: f"{path}: the score of model {names[k // width]!r} on item {items[k % width]!r}"
    ).reshape(len(body), width)
    try:
        return ResponseMatrix(scores=scores, models=names, items=items, subtasks=subtasks, source=str(path))
    except MdadError as exc:
        raise MdadError(f"{path}: {exc}") from None
