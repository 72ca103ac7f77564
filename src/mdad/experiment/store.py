"""The results store: one parquet file per finished (method, size, sources) cell.

A cell file holds, for every run and target, the estimate and the target's true accuracy
on the seen, unseen and all items, so every metric can be recomputed without rerunning.
While a cell is unfinished, each finished block of its runs is kept as a partial file
(the estimates of those runs, a plain .npy array) beside it, so an interrupted run keeps
every finished block; the partial files are removed once the cell file is written.
Files are written to a temporary name and renamed, so a killed run never leaves a
half-written file; a rerun skips every cell whose file exists and every stored block.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mdad.errors import MdadError

CONFIG_FILE = "config.json"
CELLS_DIR = "cells"
PARTIAL_DIR = "partial"
# Settings that change every cell's numbers: a store made with other values cannot be resumed.
IDENTITY_KEYS = ("data_fingerprint", "runs", "targets", "group", "seed", "targets_from")
IDENTITY_DEFAULTS = {"targets_from": "random"}  # what stores written before a key existed used
# A block of runs holds, per run and target, the estimate and the extrapolation guard's flag
# (1 flagged, 0 not, NaN for methods without a guard).
BLOCK_DTYPE = np.dtype([("estimate", np.float64), ("flagged", np.float64)])


@dataclass(frozen=True, order=True)
class Cell:
    """One point of the grid."""

    method: str
    size: int
    sources: int

    @property
    def relative_path(self) -> str:
        return f"{CELLS_DIR}/{self.method}/k{self.size}-s{self.sources}.parquet"

    def block_path(self, first_run: int, stop_run: int) -> str:
        """Where the estimates of runs first_run to stop_run - 1 wait until the cell is finished."""
        return f"{CELLS_DIR}/{self.method}/{PARTIAL_DIR}/k{self.size}-s{self.sources}-r{first_run}-{stop_run}.npy"


class ResultStore:
    """A folder of cell files plus the config that produced them."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    # ---- config -------------------------------------------------------------------
    def read_config(self) -> dict:
        path = self.root / CONFIG_FILE
        if not path.is_file():
            raise MdadError(f"{self.root} holds no mdad results (no {CONFIG_FILE}).")
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise MdadError(f"{path} is not valid JSON (line {exc.lineno}).") from None

    def open_for(self, config: dict) -> None:
        """Create the store, or check that an existing one was made by the same experiment."""
        if self.root.exists() and not self.root.is_dir():
            raise MdadError(f"The output folder {self.root} is a file; give a folder name.")
        path = self.root / CONFIG_FILE
        if path.is_file():
            old = self.read_config()
            for key in IDENTITY_KEYS:
                there, now = (old.get(key, IDENTITY_DEFAULTS.get(key)), config.get(key, IDENTITY_DEFAULTS.get(key)))
                if there != now:
                    raise MdadError(
                        f"{self.root} holds results of a different experiment ({key}: {there!r} there, "
                        f"{now!r} now); use another output folder."
                    )
            merged = {**old, **config}
            for key in ("methods", "sizes", "sources"):
                merged[key] = sorted(set(old.get(key, [])) | set(config.get(key, [])), key=str)
            config = merged
        self.root.mkdir(parents=True, exist_ok=True)
        _atomic_write_text(path, json.dumps(config, indent=2))

    # ---- cells --------------------------------------------------------------------
    def has(self, cell: Cell) -> bool:
        return (self.root / cell.relative_path).is_file()

    def write(self, cell: Cell, frame: pd.DataFrame) -> None:
        path = self.root / cell.relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp-{os.getpid()}")
        with uninterrupted():
            frame.to_parquet(tmp, index=False)
            os.replace(tmp, path)

    def read(self, cell: Cell) -> pd.DataFrame:
        return pd.read_parquet(self.root / cell.relative_path)

    # ---- blocks of runs of unfinished cells -----------------------------------------
    def has_block(self, cell: Cell, first_run: int, stop_run: int) -> bool:
        return (self.root / cell.block_path(first_run, stop_run)).is_file()

    def write_block(self, cell: Cell, first_run: int, stop_run: int, records: np.ndarray) -> None:
        """Keep the records (runs x targets of BLOCK_DTYPE) of runs first_run to stop_run - 1."""
        path = self.root / cell.block_path(first_run, stop_run)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.tmp-{os.getpid()}.npy")
        with uninterrupted():
            np.save(tmp, np.asarray(records, dtype=BLOCK_DTYPE), allow_pickle=False)
            os.replace(tmp, path)

    def read_block(self, cell: Cell, first_run: int, stop_run: int) -> np.ndarray:
        path = self.root / cell.block_path(first_run, stop_run)
        try:
            block = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise MdadError(f"{path} is not a readable block of results ({exc}); delete it to recompute.") from None
        if block.ndim != 2 or block.shape[0] != stop_run - first_run:
            raise MdadError(f"{path} holds {block.shape} estimates, not {stop_run - first_run} runs; delete it to recompute.")
        if block.dtype.names is None:  # a block of plain estimates, written before blocks held guard flags
            plain = block.astype(np.float64)
            block = np.empty(plain.shape, BLOCK_DTYPE)
            block["estimate"], block["flagged"] = plain, np.nan
        elif block.dtype != BLOCK_DTYPE:
            raise MdadError(f"{path} is not a block of mdad results; delete it to recompute.")
        return block

    def n_blocks(self) -> int:
        """Stored blocks of runs of unfinished cells."""
        return sum(1 for _ in (self.root / CELLS_DIR).glob(f"*/{PARTIAL_DIR}/k*-s*-r*.npy"))

    def remove_blocks(self, cell: Cell) -> None:
        """Drop the partial files of a finished cell."""
        folder = self.root / CELLS_DIR / cell.method / PARTIAL_DIR
        for path in folder.glob(f"k{cell.size}-s{cell.sources}-r*.npy"):
            path.unlink(missing_ok=True)
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()

    def cells(self) -> list[Cell]:
        """Every finished cell in the store."""
        found = []
        for path in sorted((self.root / CELLS_DIR).glob("*/k*-s*.parquet")):
            size, sources = path.stem[1:].split("-s")
            found.append(Cell(path.parent.name, int(size), int(sources)))
        return sorted(found)


@contextmanager
def uninterrupted():
    """Hold Ctrl-C while a file is written, so that it lands after the write instead of inside a
    library's write call (where it can surface as an unrelated error). Main thread only, where
    Python runs its signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received and callable(previous):
            previous(signal.SIGINT, None)  # Python's own handler raises KeyboardInterrupt
        elif received and previous == signal.SIG_DFL:
            raise KeyboardInterrupt


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_suffix(f".tmp-{os.getpid()}")
    with uninterrupted():
        tmp.write_text(text)
        os.replace(tmp, path)
