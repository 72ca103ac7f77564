"""Plain CSV/TSV/parquet score tables as a reader: a table file, or a folder holding exactly one.

Any parquet file that no harness reader claims is read as a table, so this reader is the
fallback of detection.
"""

from __future__ import annotations

from pathlib import Path

from mdad.data.matrix import ResponseMatrix
from mdad.data.readers import READERS
from mdad.data.readers.base import Reader, ReadOptions
from mdad.data.readers.files import checked_file
from mdad.data.readers.tables import TABLE_SUFFIXES, read_table


def tables_in(folder: Path) -> list[Path]:
    """The tables in ``folder``; a table's name on what is no regular file (a FIFO, a device link) is
    refused naming it, rather than skipped unsaid or waited on."""
    return [checked_file(p) for p in sorted(folder.iterdir()) if p.suffix.lower() in TABLE_SUFFIXES and not p.is_dir()]


def detect(path: Path) -> bool:
    return len(tables_in(path)) == 1 if path.is_dir() else path.suffix.lower() in TABLE_SUFFIXES


def read(path: Path, options: ReadOptions) -> ResponseMatrix:
    return read_table(tables_in(path)[0] if path.is_dir() else path)


READER = READERS.add(
    Reader(
        "table",
        detect,
        read,
        fallback=True,
        expects="a .csv/.tsv/.parquet table of model, item, score",
    ),
    order=90,
)
