"""The results store: one parquet file per finished (method, size, sources) cell.

A cell file holds, for every run and target, the estimate and the target's true accuracy
on the seen, unseen and all items, so every metric can be recomputed without rerunning.
While a cell is unfinished, each finished block of its runs is kept as a partial file
(the estimates of those runs, a plain .npy array) beside it, so an interrupted run keeps
every finished block; the partial files are removed once the cell file is written.
Files are written to a temporary name and renamed, so a killed run never leaves a
half-written file; a rerun skips every cell whose file exists and every stored block.

A stored file that cannot be read back as written (truncated, emptied, overwritten, other
columns) is damaged: reading it is an error naming the file, and a resumed run moves it aside
(to ``damaged/``) and computes the cell again. One run at a time writes into a store: a second
one is refused while the first holds the store's lock.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

if sys.platform == "win32":  # no advisory locks: runs are not guarded against each other
    fcntl = None
else:
    import fcntl

from mdad.data.readers.files import KINDS, checked_file
from mdad.errors import MdadError
from mdad.outputs import atomic_file, write_text, writing
from mdad.wording import plural

CONFIG_FILE = "config.json"
MAX_CONFIG_BYTES = 64 * 2**20  # 64 MiB: a run's settings are a few kB; a larger config.json is refused unread
CELLS_DIR = "cells"
PARTIAL_DIR = "partial"
DAMAGED_DIR = "damaged"
LOCK_FILE = ".lock"
CELL_COLUMNS = ("run", "model", "estimate", "seen", "unseen", "full")
CELL_NAME = re.compile(r"k(\d+)-s(\d+)\.parquet")
BLOCK_NAME = re.compile(r"k(\d+)-s(\d+)-r(\d+)-(\d+)\.npy")
# Settings that change every cell's numbers: a store made with other values cannot be resumed.
IDENTITY_KEYS = ("data_fingerprint", "runs", "targets", "group", "seed", "targets_from")
IDENTITY_DEFAULTS = {"targets_from": "random"}  # what stores written before a key existed used
# A block of runs holds, per run and target, the estimate, the extrapolation guard's flag
# (1 flagged, 0 not, NaN for methods without a guard) and the items the target answered
# (an adaptive test with a stopping rule; NaN: all of the cell's size).
BLOCK_DTYPE = np.dtype([("estimate", np.float64), ("flagged", np.float64), ("used", np.float64)])
FLAGGED_BLOCK_DTYPE = np.dtype([("estimate", np.float64), ("flagged", np.float64)])  # blocks written before "used"


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
        self._lock_depth = 0

    def shape(self) -> tuple[int | None, int | None]:
        """The runs per cell and targets per run that config.json records (None: not recorded), which
        every stored cell and block of runs must match."""
        path = self.root / CONFIG_FILE
        try:
            config = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, OSError):
            config = {}
        config = config if isinstance(config, dict) else {}
        runs, targets = config.get("runs"), config.get("targets")
        return (runs if isinstance(runs, int) else None, targets if isinstance(targets, int) else None)

    # ---- config -------------------------------------------------------------------
    def read_config(self) -> dict:
        path = self.root / CONFIG_FILE
        if not path.exists() and not path.is_symlink():
            raise MdadError(f"{self.root} holds no mdad results (no {CONFIG_FILE}).")
        checked_file(path, "the settings of an mdad run", MAX_CONFIG_BYTES, f"move it out of {self.root}")
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            where = f" (line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
            raise MdadError(f"{path} is not valid JSON{where}; it is not an mdad results folder's config.") from None
        if not isinstance(config, dict):
            raise MdadError(f"{path} holds a JSON {type(config).__name__}, not the settings of an mdad run.")
        return config

    def open_for(self, config: dict) -> None:
        """Create the store, or check that an existing one was made by the same experiment."""
        if self.root.exists() and not self.root.is_dir():
            raise MdadError(f"The output folder {self.root} is a file; give a folder name.")
        path = self.root / CONFIG_FILE
        with writing(self.root, "the results folder"):
            self.root.mkdir(parents=True, exist_ok=True)
            with self.locked():
                self._merge_config(path, config)

    def _merge_config(self, path: Path, config: dict) -> None:
        if path.is_file():
            old = self.read_config()
            for key in IDENTITY_KEYS:
                there, now = (old.get(key, IDENTITY_DEFAULTS.get(key)), config.get(key, IDENTITY_DEFAULTS.get(key)))
                if there != now:
                    raise MdadError(
                        f"{self.root} holds results of a different experiment ({key}: {there!r} there, {now!r} now); use another output folder."
                    )
            merged = {**old, **config}
            for key in ("methods", "sizes", "sources"):
                merged[key] = sorted(set(old.get(key, [])) | set(config.get(key, [])), key=str)
            config = merged
        _atomic_write_text(path, json.dumps(config, indent=2))

    # ---- one writer at a time ------------------------------------------------------
    @contextmanager
    def locked(self):
        """Hold the store's lock (re-entrant within this object); another holder is an error.

        The lock is an advisory lock on a file, so the system releases it when its process ends,
        however it ends: a killed run never leaves a stale lock.
        """
        if fcntl is None or self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        with writing(self.root, "the results folder"):
            self.root.mkdir(parents=True, exist_ok=True)
            handle = open(self.root / LOCK_FILE, "a+")  # noqa: SIM115  (held open across the yield: closing releases the lock)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip()
            handle.close()
            raise MdadError(
                f"Another mdad run (process {holder or 'unknown'}) is writing into {self.root}; wait for it to finish or write into another folder."
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock_depth = 1
        try:
            yield
        finally:
            self._lock_depth = 0
            handle.close()  # closing releases the lock

    # ---- cells --------------------------------------------------------------------
    def has(self, cell: Cell) -> bool:
        return (self.root / cell.relative_path).is_file()

    def write(self, cell: Cell, frame: pd.DataFrame) -> None:
        path = self.root / cell.relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        with uninterrupted(), atomic_file(path, "the results file") as tmp, writing(path, "the results file"):  # a full disk names the file
            frame.to_parquet(tmp, index=False)

    def read(self, cell: Cell) -> pd.DataFrame:
        """The cell's frame; a damaged file is an error naming it and how to recover."""
        path = self.root / cell.relative_path
        frame, problem = _read_cell(path, *self.shape())
        if frame is None:
            raise MdadError(
                f"{path} is damaged ({problem}); run the same 'mdad run' command again to recompute that "
                "cell (the file is moved aside), or delete it."
            )
        return frame

    def damage(self, cell: Cell) -> str | None:
        """Why the stored file of ``cell`` cannot be used (None: it is sound or absent)."""
        path = self.root / cell.relative_path
        if path.is_file():
            return _read_cell(path, *self.shape())[1]
        return _not_a_file(path)

    def set_aside(self, relative: str, problem: str) -> str:
        """Move a damaged file to damaged/ (keeping its path below) and say so in a sentence."""
        source = self.root / relative
        target = self.root / DAMAGED_DIR / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        n = 1
        while target.exists():
            n += 1
            target = target.with_name(f"{Path(relative).name}.{n}")
        os.replace(source, target)
        return f"{source} was damaged ({problem}); it was moved to {target} and will be computed again."

    def set_aside_damaged(self, cells) -> list[str]:
        """Move aside every damaged cell file of the store and block of runs of ``cells``; one sentence per file."""
        notes = []
        for cell in sorted(set(cells) | set(self.cells(strict=False))):
            problem = self.damage(cell)
            if problem is not None:
                notes.append(self.set_aside(cell.relative_path, problem))
            folder = self.root / CELLS_DIR / cell.method / PARTIAL_DIR
            for path in sorted(folder.glob(f"k{cell.size}-s{cell.sources}-r*.npy")):
                match = BLOCK_NAME.fullmatch(path.name)
                if match is None:
                    continue
                problem = _block_problem(path, int(match[4]) - int(match[3]), self.shape()[1])
                if problem is not None:
                    notes.append(self.set_aside(str(path.relative_to(self.root)), problem))
        return notes

    # ---- blocks of runs of unfinished cells -----------------------------------------
    def has_block(self, cell: Cell, first_run: int, stop_run: int) -> bool:
        return (self.root / cell.block_path(first_run, stop_run)).is_file()

    def write_block(self, cell: Cell, first_run: int, stop_run: int, records: np.ndarray) -> None:
        """Keep the records (runs x targets of BLOCK_DTYPE) of runs first_run to stop_run - 1."""
        path = self.root / cell.block_path(first_run, stop_run)
        path.parent.mkdir(parents=True, exist_ok=True)
        with uninterrupted(), atomic_file(path, "the results file") as tmp, writing(path, "the results file"), open(tmp, "wb") as handle:
            np.save(handle, np.asarray(records, dtype=BLOCK_DTYPE), allow_pickle=False)

    def read_block(self, cell: Cell, first_run: int, stop_run: int) -> np.ndarray:
        path = self.root / cell.block_path(first_run, stop_run)
        problem = _block_problem(path, stop_run - first_run, self.shape()[1])
        if problem is not None:
            raise MdadError(f"{path} is damaged ({problem}); delete it to recompute those runs.")
        stored = np.load(path, allow_pickle=False)
        if stored.dtype == BLOCK_DTYPE:
            return stored
        block = np.full(stored.shape, np.nan, BLOCK_DTYPE)  # an older block: what it lacks is NaN
        if stored.dtype.names is None:  # plain estimates, written before blocks held guard flags
            block["estimate"] = stored.astype(np.float64)
        else:
            block["estimate"], block["flagged"] = stored["estimate"], stored["flagged"]
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

    def cells(self, *, strict: bool = True) -> list[Cell]:
        """Every finished cell in the store; a cell file of a method, size or source count that config.json
        does not list (a stray copy) is an error naming it, and so (``strict``) is a cell's name on what is not
        a regular file (a FIFO, a link to a device or to nothing), which would otherwise be left out of the
        report unsaid; not ``strict``, it is listed, for :meth:`damage` to name and a resume to set aside."""
        found = []
        listed = self._listed()
        for path in sorted((self.root / CELLS_DIR).glob("*/k*-s*.parquet")):
            match = CELL_NAME.fullmatch(path.name)
            if match is not None and strict and not path.is_file():
                checked_file(path, "a cell file of results", advice="run the same 'mdad run' command again to recompute that cell, or delete it")
            if match is not None and (path.is_file() or not strict):  # other names (an editor's backup) are no cells
                cell = Cell(path.parent.name, int(match[1]), int(match[2]))
                for what, value, allowed in zip(("method", "size", "source count"), (cell.method, cell.size, cell.sources), listed, strict=True):
                    if allowed is not None and value not in allowed:
                        raise MdadError(
                            f"{path} is no cell of this run: its {what} {value} is not among those of "
                            f"{self.root / CONFIG_FILE} ({', '.join(map(str, allowed))}); move it out of "
                            f"{self.root}."
                        )
                found.append(cell)
        return sorted(found)

    def _listed(self) -> tuple[list | None, list | None, list | None]:
        """The methods, sizes and source counts config.json lists (None: not recorded)."""
        try:
            config = self.read_config()
        except MdadError:
            return None, None, None
        return tuple(
            value if isinstance(value := config.get(key), list) else None  # type: ignore[return-value]
            for key in ("methods", "sizes", "sources")
        )


def _not_a_file(path: Path) -> str | None:
    """What a cell's path is when it is there but not a regular file (None: a regular file, or nothing)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "a link to nothing" if path.is_symlink() else None
    except OSError as exc:
        return f"not readable: {exc.strerror or exc}"
    return None if stat.S_ISREG(mode) else f"it is {KINDS.get(stat.S_IFMT(mode), 'not a regular file')}"


def _read_cell(path: Path, runs: int | None = None, targets: int | None = None) -> tuple[pd.DataFrame | None, str | None]:
    """(frame, None) for a sound cell file, (None, what is wrong) for a damaged one: unreadable, or not
    the ``runs`` x ``targets`` rows of accuracies an experiment writes (a run missing, a row twice,
    an accuracy outside [0, 1] or an estimate beyond what any estimator gives)."""
    try:
        frame = pq.read_table(path).to_pandas()
    except (pa.ArrowException, OSError, ValueError, UnicodeDecodeError) as exc:
        reason = re.sub(r"^Could not open Parquet input source '.*?': ", "", str(exc).strip().splitlines()[0]) if str(exc) else ""
        return None, f"not a readable parquet file: {reason or type(exc).__name__}"
    missing = [c for c in CELL_COLUMNS if c not in frame.columns]
    if missing:
        return None, f"the column {missing[0]!r} is missing"
    if frame.empty:
        return None, "it holds no rows"
    for column in ("run", "estimate", "seen", "unseen", "full"):
        if not pd.api.types.is_numeric_dtype(frame[column]):
            return None, f"the column {column!r} does not hold numbers"
    return (None, problem) if (problem := _content_problem(frame, runs, targets)) else (frame, None)


ESTIMATE_RANGE = (-1.0, 2.0)  # accuracy estimates beyond these (-100%, 200%) come from no estimator: a damaged file


def _content_problem(frame: pd.DataFrame, runs: int | None, targets: int | None) -> str | None:
    """What makes a readable cell frame unusable, or None."""
    per_run = frame.groupby("run", sort=True).size()
    if runs is not None and (len(per_run) != runs or not per_run.index.isin(range(runs)).all()):
        return f"it holds {plural(len(per_run), 'run')} of the {runs} of each cell"
    twice = frame.duplicated(["run", "model"])
    if twice.any():
        row = frame[twice].iloc[0]
        return f"the row of run {row['run']} and model {str(row['model'])!r} appears more than once"
    if targets is not None and (per_run != targets).any():
        return f"a run holds {int(per_run[per_run != targets].iloc[0])} rows, not one for each of its {targets} targets"
    for column in ("seen", "unseen", "full"):
        values = frame[column].to_numpy(dtype=np.float64)
        if ((values < 0) | (values > 1)).any():
            return f"the column {column!r} holds accuracies outside 0 to 1 (e.g. {values[(values < 0) | (values > 1)][0]:g})"
    estimates = frame["estimate"].to_numpy(dtype=np.float64)
    wild = (estimates < ESTIMATE_RANGE[0]) | (estimates > ESTIMATE_RANGE[1])
    if wild.any():
        return f"it holds an estimate of {100 * estimates[wild][0]:g}%, which no estimator gives"
    return None


def _block_problem(path: Path, n_runs: int, targets: int | None = None) -> str | None:
    """What makes a stored block of runs unusable, or None; only its header is read (a FIFO is not
    opened, and a header declaring a huge shape allocates nothing)."""
    if (kind := _not_a_file(path)) is not None:
        return kind
    try:
        block = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        return f"not a readable numpy file: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    if block.ndim != 2 or block.shape[0] != n_runs or not (block.dtype.kind == "f" or block.dtype in (BLOCK_DTYPE, FLAGGED_BLOCK_DTYPE)):
        return f"it holds an array of shape {block.shape} ({block.dtype}), not estimates of {n_runs} runs"
    if targets is not None and block.shape[1] != targets:
        return f"it holds estimates of {block.shape[1]} targets per run, not {targets}"
    return None


@contextmanager
def uninterrupted():
    """Hold Ctrl-C and SIGTERM while a file is written, so that they land after the write instead of
    inside a library's write call (where they can surface as an unrelated error). Main thread only,
    where Python runs its signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous: dict[int, Any] = {signum: signal.signal(signum, lambda signum, frame: received.append(signum)) for signum in held}
    try:
        yield
    finally:
        for signum in held:
            signal.signal(signum, previous[signum])
        if received:
            first = received[0]
            handler = previous[first]
            if callable(handler):
                handler(first, None)  # Python's own SIGINT handler, or the command line's, raises KeyboardInterrupt
            elif handler == signal.SIG_DFL:
                if first == signal.SIGINT:
                    raise KeyboardInterrupt
                signal.raise_signal(first)  # SIGTERM's default: end the process, as it would have


def _atomic_write_text(path: Path, text: str) -> None:
    with uninterrupted():
        write_text(path, text)
