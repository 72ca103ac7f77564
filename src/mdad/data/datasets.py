"""Resolve what the user names (``simulated``, a dataset name, a file or folder) to a ResponseMatrix."""

from __future__ import annotations

import os
from pathlib import Path

from mdad.data.matrix import ResponseMatrix
from mdad.data.npz import read_npz, write_npz
from mdad.data.readers import read_source
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
            f"set it (e.g. {DATA_DIR_VARIABLE}=path/to/data) or give the results file or folder itself."
        )
    path = root / name / "responses.npz"
    if not path.is_file():
        known = ", ".join(available_datasets())
        raise MdadError(f"No dataset {name!r} in {root} (known: {known}).")
    return read_npz(path, source=name)


def load(source: str | Path, *, metric: str | None = None, filter_name: str | None = None,
         reruns: str = "latest") -> ResponseMatrix:
    """Load a response matrix from a dataset name or a file/folder in any readable format.

    Parameters
    ----------
    source : str or Path
        An existing file or folder (npz, lm-eval samples, lighteval details, inspect logs, CSV/parquet
        tables; the format is detected), else the name of a dataset.
    metric : str, optional
        The per-item metric of harness results: one name for every task that has it (the others
        keep their main one), or ``"TASK=METRIC,..."``; default each task's main one.
    filter_name : str, optional
        The lm-evaluation-harness filter to keep, in the same forms.
    reruns : {"latest", "error"}
        A model run again on a task: keep the latest run (with a note) or refuse.

    Returns
    -------
    ResponseMatrix
        With ``notes`` saying what the reader dropped, merged or chose.

    Examples
    --------
    >>> import mdad
    >>> mdad.load("simulated")
    ResponseMatrix(400 models x 1000 items, 6 subtasks, simulated)
    """
    path = Path(source)
    if path.exists():
        return read_source(path, metric=metric, filter_name=filter_name, reruns=reruns)
    if metric is not None or filter_name is not None:
        raise MdadError(f"No such file or folder: {source} (a metric and a filter apply to result files).")
    return load_dataset(str(source))


def convert(source: str | Path, out: str | Path, *, metric: str | None = None, filter_name: str | None = None,
            reruns: str = "latest") -> ResponseMatrix:
    """Read ``source`` (any readable format) and save it as the npz that ``read_npz`` loads."""
    out = Path(out)
    if out.suffix != ".npz":
        raise MdadError(f"The output file {out} must end in .npz.")
    if out.parent and not out.parent.is_dir():
        raise MdadError(f"The folder of the output file {out} does not exist.")
    matrix = load(source, metric=metric, filter_name=filter_name, reruns=reruns)
    write_npz(matrix, out)
    return matrix
