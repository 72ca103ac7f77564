"""Read and write the npz response format (no pickles, ever)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from mdad.data.matrix import MAX_NAME_LENGTH, ResponseMatrix
from mdad.data.readers.files import checked_file
from mdad.errors import MdadError
from mdad.memory import human, require_memory
from mdad.outputs import atomic_file, writing

MAX_GROUPS_BYTES = 64 * 2**20  # 64 MiB: a groups.json names groups of models, far below this


def read_npz(path: str | Path, source: str | None = None) -> ResponseMatrix:
    """Load ``scores``, ``models``, ``items`` and optional ``subtasks``, ``option_probs``, ``gold``,
    ``notes``, ``tasks`` (JSON text) and ``item_hashes``.

    A ``groups.json`` beside the file names fixed model groups. A model listed several times
    with identical answers is kept once, with a note; with different answers it is an error.
    """
    path = Path(path)
    if path.is_file() and not zipfile.is_zipfile(path):
        raise MdadError(f"{path} is not an npz file (a numpy .npz file is a zip archive of arrays).")
    if path.is_file():
        _check_declared_sizes(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: _read_only(z[k]) for k in z.files}
    except FileNotFoundError:
        raise MdadError(f"No such file: {path}.") from None
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise MdadError(f"{path} is not a readable npz file without pickled objects ({exc}).") from None
    missing = [k for k in ("scores", "models", "items") if k not in arrays]
    if missing:
        raise MdadError(f"{path} lacks the array {missing[0]!r} (expected scores, models, items[, subtasks]).")
    n_items = arrays["scores"].shape[-1] if arrays["scores"].ndim else 0
    subtasks = arrays.get("subtasks", np.full(n_items, "all"))
    groups = {}
    groups_file = path.parent / "groups.json"
    if groups_file.exists() or groups_file.is_symlink():
        checked_file(groups_file, "a groups file", MAX_GROUPS_BYTES, "give a JSON file of model groups or remove it")
        try:
            groups = json.loads(groups_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise MdadError(f"{groups_file} is not valid JSON (line {exc.lineno}).") from None
        except (UnicodeDecodeError, RecursionError, ValueError):
            raise MdadError(f"{groups_file} is not a readable JSON text file of model groups.") from None
        if not isinstance(groups, dict) or not all(isinstance(v, list) for v in groups.values()):
            raise MdadError(f"{groups_file} must map each group name to a list of model names.")
    arrays, merged = _merge_repeated_models(arrays, path)
    stored = [str(n) for n in np.atleast_1d(arrays.get("notes", np.array([], dtype=str))).tolist()]
    notes = [n if n.startswith(CONVERTED) else CONVERTED + n for n in stored] + merged
    try:
        tasks = json.loads(str(arrays["tasks"])) if "tasks" in arrays else {}
    except json.JSONDecodeError:
        raise MdadError(f"{path}: the array 'tasks' is not JSON text.") from None
    try:
        return ResponseMatrix(
            scores=arrays["scores"],
            models=arrays["models"],
            items=arrays["items"],
            subtasks=subtasks,
            option_probs=arrays.get("option_probs"),
            gold=arrays.get("gold"),
            source=source or str(path),
            groups=groups,
            notes=tuple(notes),
            tasks=tasks if isinstance(tasks, dict) else {},
            item_hashes=arrays.get("item_hashes"),
        )
    except MdadError as exc:
        raise MdadError(f"{path}: {exc}") from None


def _check_declared_sizes(path: Path) -> None:
    """Arrays whose header declares more data than the archive holds are damaged; arrays that would not
    fit in memory are refused before they are allocated."""
    total = 0
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                with archive.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    shape, _, dtype = np.lib.format.read_array_header_1_0(f) if version == (1, 0) else np.lib.format.read_array_header_2_0(f)
                if dtype.hasobject:
                    raise MdadError(
                        f"{path}: the array {info.filename[:-4]!r} holds Python objects; mdad reads npz files without pickled objects only."
                    )
                if dtype.kind == "U" and dtype.itemsize // 4 > MAX_NAME_LENGTH:
                    raise MdadError(
                        f"{path}: the array {info.filename[:-4]!r} holds names of up to "
                        f"{dtype.itemsize // 4:,} characters; names may hold at most "
                        f"{MAX_NAME_LENGTH:,} characters."
                    )
                nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
                if nbytes > info.file_size:
                    raise MdadError(
                        f"{path}: the array {info.filename[:-4]!r} declares shape {tuple(shape)} "
                        f"({human(nbytes)}) but holds {human(info.file_size)}; the file is damaged."
                    )
                total += nbytes
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise MdadError(f"{path} is not a readable npz file ({exc}).") from None
    require_memory(3 * total, f"Reading {path}")  # the arrays, and the matrix's own float32 copies


def _read_only(array: np.ndarray) -> np.ndarray:
    """A freshly read array, made read-only: ResponseMatrix then keeps it instead of copying it
    (reading 193 MB of option probabilities peaks at 1.3 times their size, not 3.3 times;
    docs/benchmarks.md#earlier-measurements)."""
    view: object = array
    while isinstance(view, np.ndarray):  # numpy reads into a flat array and returns it reshaped
        view.setflags(write=False)
        view = view.base
    return array


CONVERTED = "When converted: "  # begins a note the npz carries from the reading it was converted from
MERGES_NAMED = 3  # more merged models than this are summarised in one note


def _merge_repeated_models(arrays: dict, path: Path) -> tuple[dict, list[str]]:
    """Keep one row of a model listed several times with identical answers (repeated
    submissions), with a note per model (one note for more than ``MERGES_NAMED``); repeats whose answers differ are a conflict the user
    must resolve: an error names the model."""
    models = np.asarray(arrays["models"]).astype(str)
    names, first, counts = np.unique(models, return_index=True, return_counts=True)
    if (counts == 1).all():
        return arrays, []
    scores = np.asarray(arrays["scores"])
    probs = arrays.get("option_probs")
    for name, row in zip(names[counts > 1], first[counts > 1], strict=True):
        rows = np.flatnonzero(models == name)
        same = np.array_equal(scores[rows], np.broadcast_to(scores[row], (len(rows), *scores.shape[1:])), equal_nan=True)
        if probs is not None:
            same &= bool(np.allclose(probs[rows], probs[row], equal_nan=True))
        if not same:
            raise MdadError(f"{path}: model {str(name)!r} appears {len(rows)} times with different answers; rename or drop the repeats.")
    keep = np.sort(first)
    merged = dict(arrays, models=models[keep], scores=scores[keep])
    if probs is not None:
        merged["option_probs"] = np.asarray(probs)[keep]
    repeated = [(str(name), int(n)) for name, n in zip(names[counts > 1], counts[counts > 1], strict=True)]
    if len(repeated) > MERGES_NAMED:  # one line for many: the names are in the data
        shown = ", ".join(repr(name) for name, _ in repeated[:MERGES_NAMED])
        return merged, [
            f"{len(repeated)} models appear more than once in {path.name} with identical answers (repeated submissions, "
            f"e.g. {shown}); one row of each is kept."
        ]
    return merged, [f"Model {name!r} appears {n} times in {path.name} with identical answers; one row is kept." for name, n in repeated]


def write_npz(matrix: ResponseMatrix, path: str | Path, what: str = "the npz file") -> None:
    """Save a matrix in the npz format that ``read_npz`` reads, whole or not at all (``what``: the file, in an error)."""
    arrays: dict[str, np.ndarray] = dict(scores=matrix.scores, models=matrix.models, items=matrix.items, subtasks=matrix.subtasks)
    if matrix.option_probs is not None and matrix.gold is not None:  # both present or both absent
        arrays.update(option_probs=matrix.option_probs, gold=matrix.gold)
    if matrix.notes:
        arrays["notes"] = np.array(matrix.notes, dtype=str)
    if matrix.tasks:
        arrays["tasks"] = np.array(json.dumps(matrix.tasks, sort_keys=True))
    if matrix.item_hashes is not None:
        arrays["item_hashes"] = matrix.item_hashes
    with atomic_file(path, what) as temp, writing(path, what), open(temp, "wb") as handle:  # a handle: numpy adds no suffix
        np.savez_compressed(handle, allow_pickle=False, **arrays)
