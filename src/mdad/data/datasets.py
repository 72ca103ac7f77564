"""Resolve what the user names (``simulated``, a dataset name, a file or folder) to a ResponseMatrix."""

from __future__ import annotations

import os
from pathlib import Path

from mdad.data.matrix import ResponseMatrix
from mdad.data.npz import read_npz
from mdad.data.simulate import simulate
from mdad.errors import MdadError

DATA_DIR_VARIABLE = "MDAD_DATA_DIR"
SIMULATED = "simulated"


def data_dir() -> Path | None:
    """The folder of named datasets, from the MDAD_DATA_DIR environment variable."""
    value = os.environ.get(DATA_DIR_VARIABLE)
    return Path(value) if value else None


def available_datasets() -> list[str]:
    """Names of the datasets in MDAD_DATA_DIR (folders holding responses.npz), plus 'simulated'."""
    names = [SIMULATED]
    root = data_dir()
    if root and root.is_dir():
        names += sorted(p.name for p in root.iterdir() if (p / "responses.npz").is_file())
    return names


def load_dataset(name: str = SIMULATED, seed: int = 0) -> ResponseMatrix:
    """A named dataset: 'simulated' (built in, from ``seed``) or a folder of MDAD_DATA_DIR."""
    if name == SIMULATED:
        return simulate(seed=seed)
    root = data_dir()
    if root is None:
        raise MdadError(
            f"Dataset {name!r} is looked up in the folder named by {DATA_DIR_VARIABLE}, which is not set; "
            f"set it (e.g. {DATA_DIR_VARIABLE}=path/to/data) or pass --data with a file."
        )
    path = root / name / "responses.npz"
    if not path.is_file():
        known = ", ".join(available_datasets())
        raise MdadError(f"No dataset {name!r} in {root} (known: {known}).")
    return read_npz(path, source=name)


def load(source: str | Path) -> ResponseMatrix:
    """Load a response matrix from a dataset name, an npz file or a folder holding responses.npz."""
    path = Path(source)
    if path.is_file():
        return read_npz(path)
    if path.is_dir() and (path / "responses.npz").is_file():
        return read_npz(path / "responses.npz", source=str(path))
    if path.exists():
        raise MdadError(f"{path} is not a response file this version can read (expected an .npz file or a folder with responses.npz).")
    return load_dataset(str(source))
