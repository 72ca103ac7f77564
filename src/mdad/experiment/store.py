"""The results store: one parquet file per finished (method, size, sources) cell.

A cell file holds, for every run and target, the estimate and the target's true accuracy
on the seen, unseen and all items, so every metric can be recomputed without rerunning.
While a cell is unfinished, each finished block of its runs is kept as a partial file
(the estimates of those runs, a plain .npy array) beside it, so an interrupted run keeps
every finished block; the partial files are removed once the cell file is written.
Files are written to a temporary name and renamed, so a killed run never leaves a
half-written file; a rerun skips every cell whose file exists and every stored block.

Every file carries its identity: the settings its numbers depend on (``IDENTITY_KEYS``, the results
version of the code that computed them among them, and its method, size, sources and runs). A cell
file holds it in its own metadata; ``index.json`` records the experiment's identity and, for every
cell file and block of runs, a checksum of its bytes and of its identity. A store made by another
experiment or under another results version (mdad.results_version) is refused, from config.json
or, when that is gone, from index.json.

A stored file that cannot be read back as written (truncated, emptied, overwritten, other
columns, edited or copied over another cell so that its checksum or identity no longer matches)
is damaged: reading it is an error naming the file, and a resumed run moves it aside (to
``damaged/``) and computes the cell again. One run at a time writes into a store: a second one is
refused while the first holds the store's lock.
"""

from __future__ import annotations

import hashlib
import io
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
from mdad.outputs import write_text, writing
from mdad.results_version import RESULTS_VERSION, written_under
from mdad.wording import plural

CONFIG_FILE = "config.json"
INDEX_FILE = "index.json"
INDEX_FORMAT = "mdad-results-index/1"
IDENTITY_METADATA = b"mdad.identity"  # the key of a cell file's own identity in its parquet metadata
MAX_CONFIG_BYTES = 64 * 2**20  # 64 MiB: a run's settings are a few kB; a larger config.json is refused unread
CELLS_DIR = "cells"
PARTIAL_DIR = "partial"
DAMAGED_DIR = "damaged"
LOCK_FILE = ".lock"
CELL_COLUMNS = ("run", "model", "estimate", "seen", "unseen", "full")
CELL_NAME = re.compile(r"k(\d+)-s(\d+)\.parquet")
BLOCK_NAME = re.compile(r"k(\d+)-s(\d+)-r(\d+)-(\d+)\.npy")
# Settings that change every cell's numbers: a store made with other values cannot be resumed.
# The results version comes first: a store of other code is named as such, whatever else differs.
IDENTITY_KEYS = ("results_version", "data_fingerprint", "runs", "targets", "group", "seed", "targets_from")
# A block of runs holds, per run and target, the estimate, the extrapolation guard's flag
# (1 flagged, 0 not, NaN for methods without a guard) and the items the target answered
# (an adaptive test with a stopping rule; NaN: all of the cell's size).
BLOCK_DTYPE = np.dtype([("estimate", np.float64), ("flagged", np.float64), ("used", np.float64)])


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
    """A folder of cell files plus the config that produced them and the index that vouches for them."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self._lock_depth = 0
        self._experiment: dict | None = None  # the identity of the experiment writing (set by open_for)
        self._index: dict | None = None  # index.json as read (and kept up to date by this object's writes)

    def shape(self) -> tuple[int | None, int | None]:
        """The runs per cell and targets per run that config.json records (None: not recorded), which
        every stored cell and block of runs must match."""
        config = self._config_or_empty()
        runs, targets = config.get("runs"), config.get("targets")
        return (runs if isinstance(runs, int) else None, targets if isinstance(targets, int) else None)

    def _config_or_empty(self) -> dict:
        path = self.root / CONFIG_FILE
        try:
            config = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, OSError):
            config = {}
        return config if isinstance(config, dict) else {}

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

    def open_for(self, config: dict) -> list[str]:
        """Create the store, or check that an existing one was made by the same experiment under this
        results version (an error naming the first setting that differs, from config.json or, when that
        is gone, from index.json). Returns a sentence for an index that had to be set aside."""
        if self.root.exists() and not self.root.is_dir():
            raise MdadError(f"The output folder {self.root} is a file; give a folder name.")
        path = self.root / CONFIG_FILE
        experiment = {key: config.get(key) for key in IDENTITY_KEYS}
        with writing(self.root, "the results folder"):
            self.root.mkdir(parents=True, exist_ok=True)
            with self.locked():
                old = self.read_config() if path.is_file() else None
                if old is not None:
                    self._refuse_other({key: old.get(key) for key in IDENTITY_KEYS}, experiment, "")
                notes = self._open_index(experiment, old is None)
                self._merge_config(path, old, config)
                self._experiment = experiment
                return notes

    def _refuse_other(self, there: dict, now: dict, where: str) -> None:
        """An error naming the first setting of ``IDENTITY_KEYS`` on which the stored experiment differs."""
        for key in IDENTITY_KEYS:
            if there.get(key) != now.get(key):
                if key == "results_version":
                    raise MdadError(
                        f"{self.root} holds results of other code (written {written_under(there.get(key))}{where}; this mdad writes results version "
                        f"{now.get(key)}, whose chosen items or estimates differ, see the changelog); write into another output "
                        f"folder ('mdad report' still reads this one)."
                    )
                raise MdadError(
                    f"{self.root} holds results of a different experiment ({key}: {there.get(key)!r} there, {now.get(key)!r} now{where}); "
                    "use another output folder."
                )

    def _merge_config(self, path: Path, old: dict | None, config: dict) -> None:
        """Write config.json: the settings of this run over the old ones, the methods, sizes and source counts of
        both, and every command that wrote the folder (``commands``, in the order they first did)."""
        earlier = commands(old) if old is not None else []
        if old is not None:
            merged = {**old, **config}
            for key in ("methods", "sizes", "sources"):
                merged[key] = sorted(set(old.get(key, [])) | set(config.get(key, [])), key=str)
            config = merged
        if "command" in config:
            config = {**config, "commands": list(dict.fromkeys([*earlier, str(config["command"])]))}
        _atomic_write_text(path, json.dumps(config, indent=2))

    # ---- the index: what every file holds and was computed for ----------------------------
    def experiment(self) -> dict:
        """The identity of the experiment whose files the store holds (``IDENTITY_KEYS``): the one
        writing into it, else the one config.json records."""
        if self._experiment is None:
            config = self._config_or_empty()
            if not config:  # no settings yet: nothing to keep
                return dict.fromkeys(IDENTITY_KEYS)
            self._experiment = {key: config.get(key) for key in IDENTITY_KEYS}
        return self._experiment

    def version_note(self, reader: str = "the tables and the report show") -> str | None:
        """A sentence when the store was written under another results version than this code's (None: the same);
        ``reader`` says who shows the stored numbers as that code computed them."""
        there = self.experiment().get("results_version")
        if there == RESULTS_VERSION:
            return None
        return (
            f"{self.root} was written {written_under(there)}, and this mdad writes results version {RESULTS_VERSION}: {reader} "
            "the numbers as that code computed them, and 'mdad run' does not resume the folder."
        )

    def versioned(self) -> bool:
        """Whether the store records results versions (and so an index that vouches for every file)."""
        return self.experiment().get("results_version") is not None

    def identity(self, cell: Cell, first_run: int | None = None, stop_run: int | None = None) -> dict:
        """What the numbers of a cell (or of its block of runs first_run to stop_run - 1) depend on."""
        identity = {**self.experiment(), "method": cell.method, "size": cell.size, "sources": cell.sources}
        return identity if first_run is None else {**identity, "first_run": first_run, "stop_run": stop_run}

    def _open_index(self, experiment: dict, config_missing: bool) -> list[str]:
        """Check (refusing another experiment's) or create index.json; an unreadable one is set aside."""
        index, problem = _read_index(self.root / INDEX_FILE)
        notes = []
        if problem is not None:
            notes.append(self.set_aside(INDEX_FILE, problem, "every file it vouched for is computed again"))
        elif index is not None:
            self._refuse_other(index["experiment"], experiment, f"; by {INDEX_FILE}" + (f", as {CONFIG_FILE} is missing" if config_missing else ""))
        if index is None or problem is not None:
            index = {"format": INDEX_FORMAT, "experiment": experiment, "files": {}}
            _atomic_write_text(self.root / INDEX_FILE, json.dumps(index, indent=1))
        self._index = index
        return notes

    def _files(self) -> tuple[dict | None, str | None]:
        """The index's entries by relative path (None and why: no usable index)."""
        if self._index is None:
            index, problem = _read_index(self.root / INDEX_FILE)
            if index is None:
                return None, problem or f"the folder has no {INDEX_FILE} to vouch for it"
            self._index = index
        return self._index["files"], None

    def _vouched(self, relative: str, payload: bytes, identity: dict) -> str | None:
        """Why the index does not vouch for ``payload`` as the file ``relative`` of ``identity`` (None: it does,
        or the store predates results versions and has no index)."""
        if not self.versioned():
            return None
        files, problem = self._files()
        if files is None:
            return problem
        entry = files.get(relative)
        if entry is None:
            return f"{INDEX_FILE} records no checksum of it"
        if entry.get("sha256") != hashlib.sha256(payload).hexdigest():
            return f"it is not the file {INDEX_FILE} records a checksum of (edited, or copied from another file)"
        if entry.get("identity") != _digest(identity):
            return f"{INDEX_FILE} records it as computed for other settings"
        return None

    def _put(self, relative: str, payload: bytes, identity: dict, tmp_name: str) -> None:
        """Write a file (as ``tmp_name`` beside it, then renamed) and record its checksum and identity in the index
        first: a killed run leaves at most an entry without its file, never a file the index does not vouch for."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(tmp_name)
        with writing(path, "the results file"), uninterrupted():  # a full disk names the file
            tmp.write_bytes(payload)
            self._record({relative: {"sha256": hashlib.sha256(payload).hexdigest(), "identity": _digest(identity)}})
            os.replace(tmp, path)

    def _record(self, entries: dict[str, dict | None]) -> None:
        """Add (a dict) or drop (None) index entries and write the index."""
        if self._index is None:
            self._index = _read_index(self.root / INDEX_FILE)[0] or {"format": INDEX_FORMAT, "experiment": self.experiment(), "files": {}}
        files = self._index["files"]
        for relative, entry in entries.items():
            if entry is None:
                files.pop(relative, None)
            else:
                files[relative] = entry
        _atomic_write_text(self.root / INDEX_FILE, json.dumps(self._index, indent=1))

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
        """Store a finished cell, its identity in its own metadata and, with its checksum, in the index."""
        identity = self.identity(cell)
        table = pa.Table.from_pandas(frame, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), IDENTITY_METADATA: json.dumps(identity).encode()})
        sink = io.BytesIO()
        with writing(self.root / cell.relative_path, "the results file"):
            pq.write_table(table, sink)
        self._put(cell.relative_path, sink.getvalue(), identity, f"{Path(cell.relative_path).stem}.tmp-{os.getpid()}")

    def read(self, cell: Cell) -> pd.DataFrame:
        """The cell's frame; a damaged file is an error naming it and how to recover."""
        path = self.root / cell.relative_path
        frame, problem = self._read_cell(cell)
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
            return self._read_cell(cell)[1]
        return _not_a_file(path)

    def _read_cell(self, cell: Cell) -> tuple[pd.DataFrame | None, str | None]:
        """(frame, None) for a sound cell file, (None, what is wrong) for a damaged one: unreadable, not the
        runs x targets rows of accuracies an experiment writes, or not the file the index vouches for."""
        path = self.root / cell.relative_path
        try:
            payload = path.read_bytes()
        except OSError as exc:
            return None, f"not readable: {exc.strerror or exc}"
        frame, carried, problem = _read_cell(payload, *self.shape())
        if problem is not None:
            return None, problem
        expected = self.identity(cell)
        problem = self._vouched(cell.relative_path, payload, expected)
        if self.versioned() and carried != expected:  # say which cell it holds, when it says
            mismatch = _identity_problem(carried, expected)
            problem = mismatch if problem is None else f"{problem}: {mismatch}" if carried is not None else problem
        return (None, problem) if problem else (frame, None)

    def set_aside(self, relative: str, problem: str, then: str = "will be computed again") -> str:
        """Move a damaged file to damaged/ (keeping its path below), forget it in the index, and say so in a sentence."""
        source = self.root / relative
        target = self.root / DAMAGED_DIR / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        n = 1
        while target.exists():
            n += 1
            target = target.with_name(f"{Path(relative).name}.{n}")
        os.replace(source, target)
        if relative != INDEX_FILE and self.versioned():
            self._record({relative: None})
        return f"{source} was damaged ({problem}); it was moved to {target} and {then}."

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
                problem = self._block_problem(cell, int(match[3]), int(match[4]))
                if problem is not None:
                    notes.append(self.set_aside(str(path.relative_to(self.root)), problem))
        return notes

    # ---- blocks of runs of unfinished cells -----------------------------------------
    def has_block(self, cell: Cell, first_run: int, stop_run: int) -> bool:
        return (self.root / cell.block_path(first_run, stop_run)).is_file()

    def write_block(self, cell: Cell, first_run: int, stop_run: int, records: np.ndarray) -> None:
        """Keep the records (runs x targets of BLOCK_DTYPE) of runs first_run to stop_run - 1."""
        sink = io.BytesIO()
        np.save(sink, np.asarray(records, dtype=BLOCK_DTYPE), allow_pickle=False)
        path = Path(cell.block_path(first_run, stop_run))  # a killed write's temporary file goes with the cell's blocks
        self._put(str(path), sink.getvalue(), self.identity(cell, first_run, stop_run), f"{path.stem}.tmp-{os.getpid()}.npy")

    def read_block(self, cell: Cell, first_run: int, stop_run: int) -> np.ndarray:
        path = self.root / cell.block_path(first_run, stop_run)
        problem = self._block_problem(cell, first_run, stop_run)
        if problem is not None:
            raise MdadError(f"{path} is damaged ({problem}); delete it to recompute those runs.")
        return np.load(path, allow_pickle=False)

    def _block_problem(self, cell: Cell, first_run: int, stop_run: int) -> str | None:
        """What makes a stored block of runs unusable, or None."""
        relative = cell.block_path(first_run, stop_run)
        path = self.root / relative
        problem = _block_problem(path, stop_run - first_run, self.shape()[1])
        if problem is not None:
            return problem
        try:
            payload = path.read_bytes()
        except OSError as exc:
            return f"not readable: {exc.strerror or exc}"
        return self._vouched(relative, payload, self.identity(cell, first_run, stop_run))

    def n_blocks(self) -> int:
        """Stored blocks of runs of unfinished cells."""
        return sum(1 for _ in (self.root / CELLS_DIR).glob(f"*/{PARTIAL_DIR}/k*-s*-r*.npy"))

    def remove_blocks(self, cell: Cell) -> None:
        """Drop the partial files of a finished cell."""
        folder = self.root / CELLS_DIR / cell.method / PARTIAL_DIR
        gone: dict[str, dict | None] = {}
        for path in folder.glob(f"k{cell.size}-s{cell.sources}-r*.npy"):
            path.unlink(missing_ok=True)
            gone[str(path.relative_to(self.root))] = None
        if gone and self.versioned():
            self._record(gone)
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


def commands(config: dict) -> list[str]:
    """Every command that wrote a results folder, first to last, as its config.json records them."""
    listed = config.get("commands")
    if isinstance(listed, list):
        return [str(command) for command in listed]
    return [str(config["command"])] if config.get("command") else []


def _not_a_file(path: Path) -> str | None:
    """What a cell's path is when it is there but not a regular file (None: a regular file, or nothing)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "a link to nothing" if path.is_symlink() else None
    except OSError as exc:
        return f"not readable: {exc.strerror or exc}"
    return None if stat.S_ISREG(mode) else f"it is {KINDS.get(stat.S_IFMT(mode), 'not a regular file')}"


def _read_cell(payload: bytes, runs: int | None = None, targets: int | None = None) -> tuple[pd.DataFrame | None, dict | None, str | None]:
    """(frame, identity it carries, None) for a sound cell file's bytes, (None, identity, what is wrong) for a
    damaged one: unreadable, or not the ``runs`` x ``targets`` rows of accuracies an experiment writes (a run
    missing, a row twice, an accuracy outside [0, 1] or an estimate beyond what any estimator gives)."""
    try:
        table = pq.read_table(pa.BufferReader(payload))
        frame = table.to_pandas()
    except (pa.ArrowException, OSError, ValueError, UnicodeDecodeError) as exc:
        reason = re.sub(r"^Could not open Parquet input source '.*?': ", "", str(exc).strip().splitlines()[0]) if str(exc) else ""
        return None, None, f"not a readable parquet file: {reason or type(exc).__name__}"
    identity = _carried_identity(table.schema.metadata or {})
    missing = [c for c in CELL_COLUMNS if c not in frame.columns]
    if missing:
        return None, identity, f"the column {missing[0]!r} is missing"
    if frame.empty:
        return None, identity, "it holds no rows"
    for column in ("run", "estimate", "seen", "unseen", "full"):
        if not pd.api.types.is_numeric_dtype(frame[column]):
            return None, identity, f"the column {column!r} does not hold numbers"
    problem = _content_problem(frame, runs, targets)
    return (None if problem else frame), identity, problem


def _carried_identity(metadata: dict) -> dict | None:
    """The identity a cell file carries in its metadata (None: none, or not an object)."""
    try:
        identity = json.loads(metadata[IDENTITY_METADATA])
    except (KeyError, ValueError, RecursionError):
        return None
    return identity if isinstance(identity, dict) else None


def _identity_problem(carried: dict | None, expected: dict) -> str:
    """Why a cell file that carries ``carried`` is not the cell of ``expected``, in words."""
    if carried is None:
        return "it carries no identity of the cell it holds"
    if any(carried.get(key) != expected[key] for key in ("method", "size", "sources")):
        return f"it holds the cell of {carried.get('method')} at {carried.get('size')} items and {carried.get('sources')} sources"
    key = next(key for key in expected if carried.get(key) != expected[key])
    return f"it was computed with {key} {carried.get(key)!r}, not {expected[key]!r}"


def _digest(identity: dict) -> str:
    """The checksum of an identity: of its canonical JSON text."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def _read_index(path: Path) -> tuple[dict | None, str | None]:
    """(index, None) for a sound index.json, (None, None) when there is none, (None, what is wrong) otherwise."""
    if not path.exists() and not path.is_symlink():
        return None, None
    if (kind := _not_a_file(path)) is not None:
        return None, kind
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            return None, f"it is larger than {MAX_CONFIG_BYTES // 2**20} MiB"
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        return None, f"not readable as JSON: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    sound = (
        isinstance(index, dict)
        and index.get("format") == INDEX_FORMAT
        and isinstance(index.get("experiment"), dict)
        and isinstance(index.get("files"), dict)
        and all(isinstance(entry, dict) for entry in index["files"].values())
    )
    return (index, None) if sound else (None, f"not an index of format {INDEX_FORMAT!r}")


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
    if block.ndim != 2 or block.shape[0] != n_runs or block.dtype != BLOCK_DTYPE:
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
