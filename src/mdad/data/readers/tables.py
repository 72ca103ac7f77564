"""Plain tables (CSV or parquet) of scores, long or wide.

Long: one row per result with columns model, item, score and optionally subtask.
Wide: models as rows, items as columns, the first column holding the model name; an
optional row whose model name is ``subtask`` gives each item's subtask.

A malformed table is an error naming the file and what is wrong, never a guess: a column
without a name (a trailing comma), a name given twice, a first row of scores where the item
names belong, a row without a model name, rows of different lengths.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from mdad.data.matrix import ResponseMatrix, check_name_lengths
from mdad.data.readers._cells import unique_names
from mdad.data.readers.files import checked_file
from mdad.errors import MdadError
from mdad.memory import human, require_memory

# Memory per byte of a table file while it is read, at the least: its text (or decompressed columns)
# and the parsed values. A table beyond what memory can hold at this rate is refused before it is read.
TABLE_BYTES_PER_FILE_BYTE = 2

LONG_COLUMNS = ("model", "item", "score")
SUBTASK = "subtask"
DEFAULT_SUBTASK = "all"
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")
BLANK = ("", "nan", "na", "none", "null")


def read_frame(path: Path) -> pd.DataFrame:
    """The table as text cells (parquet through pyarrow; nothing unpickled), its header checked."""
    try:
        if path.suffix == ".parquet":
            table = pq.read_table(path)
            binary = [f.name for f in table.schema if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
            if binary:
                raise MdadError(f"{path}: the column {binary[0]!r} holds binary data, not text or numbers.")
            frame = table.to_pandas()
        else:
            sep = "\t" if path.suffix == ".tsv" else ","
            raw = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, header=None, index_col=False)
            frame = _with_header(raw, path, sep)
    except pd.errors.EmptyDataError:
        raise MdadError(f"{path} is empty.") from None
    except (pa.ArrowException, OSError, pd.errors.ParserError, UnicodeDecodeError, ValueError, csv.Error) as exc:
        if isinstance(exc, MdadError):
            raise
        raise MdadError(f"{path} is not a readable table ({str(exc).strip().splitlines()[0]}).") from None
    if frame.empty or frame.shape[1] < 2:
        raise MdadError(f"{path} has no scores (expected columns model, item, score or a wide table).")
    names = [str(c).strip() for c in frame.columns]
    blank = [j for j, name in enumerate(names) if name.lower() in BLANK or name.startswith("Unnamed:")]
    if blank == [0]:  # what pandas writes for its index: the model names, or (in a long table) row numbers
        frame, names, blank = _unnamed_first_column(frame, names, path), names[1:], []
    if blank:
        raise MdadError(f"{path}: column {blank[0] + 1} has no name in the header row (a trailing comma or tab?).")
    repeated = pd.Index(names)[pd.Index(names).duplicated()]
    if len(repeated):
        hint = " (does the file lack a header row naming the items?)" if _looks_like_scores(names[1:]) else ""
        raise MdadError(f"{path}: the column name {repeated[0]!r} appears more than once in the header row{hint}.")
    return frame


def _unnamed_first_column(frame: pd.DataFrame, names: list[str], path: Path) -> pd.DataFrame:
    """A first column without a name: the model names of a wide table, or the row numbers of a long one
    (dropped), with a note saying which."""
    if is_long(frame.iloc[:, 1:]) or any(name.lower() == "model" for name in names[1:]):
        frame = frame.iloc[:, 1:]
        frame.attrs["notes"] = [f"{path}: column 1 has no name in the header row; it is read as row numbers and left out."]
        return frame
    frame = frame.set_axis(["model", *frame.columns[1:]], axis=1)
    frame.attrs["notes"] = [f"{path}: column 1 has no name in the header row; it is read as the model names."]
    return frame


def _with_header(raw: pd.DataFrame, path: Path, sep: str) -> pd.DataFrame:
    """The first row as column names; a row with fewer fields than the header is an error naming the line
    (the parser pads short rows, so they are counted here)."""
    with open(path, newline="", encoding="utf-8") as f:
        for number, row in enumerate(csv.reader(f, delimiter=sep), start=1):
            if row and len(row) < raw.shape[1]:
                raise MdadError(f"{path}: line {number} has {len(row)} fields but the header row has {raw.shape[1]}.")
    frame = raw.iloc[1:].reset_index(drop=True)
    frame.columns = list(raw.iloc[0])
    return frame


def _looks_like_scores(names: list[str]) -> bool:
    values = pd.to_numeric(pd.Series(names, dtype=object), errors="coerce")
    return bool(len(names) and values.notna().all() and values.between(0, 1).all())


def is_long(frame: pd.DataFrame) -> bool:
    return set(LONG_COLUMNS) <= {str(c).strip().lower() for c in frame.columns}


def read_table(path: str | Path) -> ResponseMatrix:
    """A matrix from a long or a wide table (blank cells are missing results)."""
    path = Path(path)
    size = checked_file(path, "a results table").stat().st_size
    require_memory(TABLE_BYTES_PER_FILE_BYTE * size, f"Reading {path} ({human(size)})")
    frame = read_frame(path)
    notes = frame.attrs.get("notes", [])
    matrix = read_long(frame, str(path), lambda i: f"row {i + 2}") if is_long(frame) else _read_wide(frame, path)
    return dataclasses.replace(matrix, notes=(*notes, *matrix.notes)) if notes else matrix


def _blank(values: pd.Series) -> np.ndarray:
    """Cells that hold nothing: null, empty, or spelled as a missing value."""
    text = values.astype(str).str.strip().str.lower()
    return values.isna().to_numpy() | text.isin(BLANK).to_numpy()


def _numbers(values: pd.Series, where) -> np.ndarray:
    """Cells as floats; blank is NaN; anything else that is not a real number is an error naming the cell."""
    if values.dtype.kind in "biuf":
        return values.to_numpy(dtype=np.float64)
    if values.dtype.kind in "cmM":
        raise MdadError(f"{where(0)} is {values.iloc[0]!r}, not a score (the column holds {values.dtype} values).")
    text = values.astype(str).str.strip()
    blank = _blank(values)
    numbers = pd.to_numeric(text.where(~blank, "nan"), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(numbers) & ~blank
    if bad.any():
        position = int(np.argmax(bad))
        raise MdadError(f"{where(position)} is {text.iloc[position]!r}, not a score.")
    return numbers


def _names(values: pd.Series, what: str, where, notes: list[str]) -> pd.Series:
    """Names as text (a pandas string column: no Python object per row), stripped of surrounding spaces;
    a blank one is an error naming the row (a model may be called 'NA' or 'None'), and names that only
    their spaces told apart are merged with a note."""
    text = values.astype("string")
    stripped = text.str.strip()
    blank = (text.isna() | (stripped == "")).to_numpy(dtype=bool)
    if blank.any():
        raise MdadError(f"{where(int(np.argmax(blank)))} has no {what} name.")
    if (text != stripped).any():
        spellings = pd.DataFrame({"raw": text, "name": stripped}).drop_duplicates()
        counts = spellings.groupby("name", sort=False).size()
        merged = counts[counts > 1]
        if len(merged):
            name = str(merged.index[0])
            raws = spellings.loc[spellings["name"] == merged.index[0], "raw"].astype(str).tolist()
            more = f" ({len(merged) - 1} more such names)" if len(merged) > 1 else ""
            notes.append(
                f"The {what} names {' and '.join(map(repr, raws))} differ only in surrounding spaces and are read as one {what}, {name!r}{more}."
            )
    return stripped.reset_index(drop=True)


def read_long(frame: pd.DataFrame, source: str, row_label) -> ResponseMatrix:
    """A matrix from a long frame (model, item, score and optionally subtask); ``row_label(i)``
    names the i-th row in error messages (a file line, or a frame's index label).

    Vectorised: memory grows with the rows' values, not with per-row messages."""
    frame = frame.rename(columns={c: str(c).strip().lower() for c in frame.columns})
    at = lambda i: f"{source} {row_label(i)}"  # noqa: E731
    notes: list[str] = []
    models = _names(frame["model"], "model", at, notes)
    items = _names(frame["item"], "item", at, notes)
    subtasks = (
        _names(frame[SUBTASK], "subtask", at, notes) if SUBTASK in frame else pd.Series(DEFAULT_SUBTASK, index=range(len(frame)), dtype="string")
    )
    scores = _numbers(frame["score"], lambda i: f"{at(i)}, score of model {models[i]!r} on item {items[i]!r},")
    model_codes, model_names = pd.factorize(models, sort=False)
    subtask_codes, _ = pd.factorize(subtasks, sort=False)
    item_codes, _ = pd.factorize(items, sort=False)
    key_codes, _ = pd.factorize(subtask_codes.astype(np.int64) * (item_codes.max() + 1) + item_codes, sort=False)
    n_models, n_items = len(model_names), int(key_codes.max()) + 1
    cell = model_codes.astype(np.int64) * n_items + key_codes
    order = np.argsort(cell, kind="stable")
    same = cell[order][1:] == cell[order][:-1]
    a, b = order[:-1][same], order[1:][same]
    differ = ~((scores[a] == scores[b]) | (np.isnan(scores[a]) & np.isnan(scores[b])))
    if differ.any():
        j, k = int(a[differ][0]), int(b[differ][0])
        raise MdadError(
            f"Model {models[j]!r} has conflicting results for item {items[j]!r} of subtask "
            f"{subtasks[j]!r}: {scores[j]:g} ({at(j)}) and {scores[k]:g} ({at(k)})."
        )
    table = np.full((n_models, n_items), np.nan, dtype=np.float64)
    table[model_codes, key_codes] = scores
    first = np.full(n_items, len(cell), dtype=np.int64)
    np.minimum.at(first, key_codes, np.arange(len(cell)))
    try:
        check_name_lengths(model_names, "model")
        check_name_lengths(items.iloc[first].tolist(), "item")
        return ResponseMatrix(
            scores=table,
            models=np.asarray(model_names, dtype=str),
            items=unique_names(items.iloc[first].to_numpy(dtype=str)),
            subtasks=subtasks.iloc[first].to_numpy(dtype=str),
            source=source,
            notes=tuple(notes),
        )
    except MdadError as exc:
        raise MdadError(f"{source}: {exc}") from None


def _read_wide(frame: pd.DataFrame, path: Path) -> ResponseMatrix:
    first = frame.columns[0]
    header = [str(c).strip() for c in frame.columns[1:]]
    if _looks_like_scores(header) and any(float(name) not in (0.0, 1.0) for name in header):
        raise MdadError(
            f"{path}: the first row holds scores where the item names belong ({', '.join(header[:3])}...); "
            "add a header row: model, then one name per item."
        )
    notes: list[str] = []
    models = _names(frame[first], "model", lambda i: f"{path} row {i + 2}", notes)
    is_subtask_row = pd.Series(models).str.lower().to_numpy() == SUBTASK
    items = [str(c).strip() for c in frame.columns[1:]]
    if is_subtask_row.sum() > 1:
        raise MdadError(f"{path} has {int(is_subtask_row.sum())} rows named 'subtask'; give each item's subtask once.")
    if is_subtask_row.any():
        subtasks = frame.loc[is_subtask_row].iloc[0, 1:].astype(str).str.strip().to_numpy()
    else:
        subtasks = np.full(len(items), DEFAULT_SUBTASK)
    body = frame.loc[~is_subtask_row]
    names = models[~is_subtask_row]
    cells = pd.Series(body.iloc[:, 1:].to_numpy(dtype=object).ravel())
    width = len(items)
    scores = _numbers(cells, lambda k: f"{path}: the score of model {names[k // width]!r} on item {items[k % width]!r}").reshape(len(body), width)
    try:
        check_name_lengths(list(items), "item")
        check_name_lengths(names.tolist(), "model")
        return ResponseMatrix(
            scores=scores, models=names.astype(str), items=np.array(items, dtype=str), subtasks=subtasks, source=str(path), notes=tuple(notes)
        )
    except MdadError as exc:
        raise MdadError(f"{path}: {exc}") from None
