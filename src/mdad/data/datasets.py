"""Resolve what the user names (a built-in dataset, ``simulated``, a folder of MDAD_DATA_DIR, a file) to a ResponseMatrix."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mdad.data.builtin import BUILTIN, builtin_dataset
from mdad.data.matrix import ResponseMatrix
from mdad.data.npz import read_npz, write_npz
from mdad.data.readers import read_source
from mdad.data.readers.base import Reruns
from mdad.data.simulate import simulate
from mdad.errors import MdadError
from mdad.outputs import check_output_file, locked_outputs

DATA_DIR_VARIABLE = "MDAD_DATA_DIR"
SIMULATED = "simulated"
DEFAULT_DATASET = "gpqa"  # the paper's own GPQA matrix, bundled


def data_dir() -> Path | None:
    """The folder of named datasets, from the MDAD_DATA_DIR environment variable."""
    value = os.environ.get(DATA_DIR_VARIABLE)
    return Path(value) if value else None


def data_dir_datasets() -> list[str]:
    """Names of the folders of MDAD_DATA_DIR that hold a responses.npz."""
    root = data_dir()
    if root is None or not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "responses.npz").is_file())


def available_datasets() -> list[str]:
    """Every name ``load_dataset`` accepts: the built-in datasets, 'simulated', then MDAD_DATA_DIR's folders."""
    names = [*BUILTIN, SIMULATED]
    return names + [n for n in data_dir_datasets() if n not in names]


@dataclass(frozen=True)
class DatasetEntry:
    """One line of the dataset list: name, where it lives, its shape and where it comes from."""

    name: str
    kind: str  # "built-in", "simulated" or "MDAD_DATA_DIR"
    models: int
    items: int
    subtasks: int
    source: str


def dataset_catalogue() -> list[DatasetEntry]:
    """The built-in datasets, the simulated one and MDAD_DATA_DIR's folders, with their shapes.

    A folder of MDAD_DATA_DIR named like a built-in dataset is listed with a note that the
    name loads the built-in one (its file is reachable as a path)."""
    entries = []
    for entry in BUILTIN.values():
        m = entry.load()
        entries.append(DatasetEntry(entry.name, "built-in", m.n_models, m.n_items, len(m.subtask_names), f"{entry.benchmark}, {entry.origin}"))
    sim = simulate(seed=0)
    entries.append(
        DatasetEntry(
            SIMULATED,
            "simulated",
            sim.n_models,
            sim.n_items,
            len(sim.subtask_names),
            "IRT leaderboard with option probabilities, calibrated to the built-in ones",
        )
    )
    root = data_dir()
    if root is None:
        return entries
    for name in data_dir_datasets():
        m = read_npz(root / name / "responses.npz", source=name)
        shadowed = name in BUILTIN or name == SIMULATED
        entries.append(
            DatasetEntry(
                name,
                "MDAD_DATA_DIR",
                m.n_models,
                m.n_items,
                len(m.subtask_names),
                str(root / name)
                + (
                    f" (hidden by the {'built-in' if name in BUILTIN else 'simulated'} dataset of that name; give its path instead)"
                    if shadowed
                    else ""
                ),
            )
        )
    return entries


def load_dataset(name: str = DEFAULT_DATASET, seed: int = 0) -> ResponseMatrix:
    """A named dataset: built in (gpqa, musr, math-hard), 'simulated' (from ``seed``) or a folder of MDAD_DATA_DIR."""
    builtin = builtin_dataset(name)
    if builtin is not None:
        return builtin.load()
    if name == SIMULATED:
        return simulate(seed=seed)
    root = data_dir()
    if root is None:
        raise MdadError(
            f"No built-in dataset {name!r} (built in: {', '.join([*BUILTIN, SIMULATED])}); other names are looked up "
            f"in the folder named by {DATA_DIR_VARIABLE}, which is not set; set it (e.g. {DATA_DIR_VARIABLE}=path/to/data) "
            "or give the results file or folder itself."
        )
    path = root / name / "responses.npz"
    if not path.is_file():
        known = ", ".join(available_datasets())
        raise MdadError(f"No dataset {name!r} built in or in {root} (known: {known}).")
    return read_npz(path, source=name)


def load(source: str | Path, *, metric: str | None = None, filter_name: str | None = None, reruns: Reruns = "latest") -> ResponseMatrix:
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
        An item a model answered again (its runs of one task add up item by item): keep the
        latest answer (with a note) or refuse.

    Returns
    -------
    ResponseMatrix
        With ``notes`` saying what the reader dropped, merged or chose.

    Examples
    --------
    >>> import mdad
    >>> mdad.load("gpqa")
    ResponseMatrix(420 models x 448 items, 1 subtask, gpqa (the GPQA matrix of the paper, Open LLM Leaderboard v2))
    >>> mdad.load("simulated")
    ResponseMatrix(400 models x 1000 items, 9 subtasks, simulated)
    """
    path = Path(source)
    if path.exists():
        return read_source(path, metric=metric, filter_name=filter_name, reruns=reruns)
    if metric is not None or filter_name is not None:
        raise MdadError(f"No such file or folder: {source} (a metric and a filter apply to result files).")
    return load_dataset(str(source))


def convert(
    source: str | Path, out: str | Path, *, metric: str | None = None, filter_name: str | None = None, reruns: Reruns = "latest"
) -> ResponseMatrix:
    """Read ``source`` (any readable format) and save it as the npz that ``read_npz`` loads."""
    out = Path(out)
    if out.suffix != ".npz":
        raise MdadError(f"The output file {out} must end in .npz.")
    check_output_file(out, "the output file")
    with locked_outputs({"the output file": out}):
        matrix = load(source, metric=metric, filter_name=filter_name, reruns=reruns)
        write_npz(matrix, out, "the output file")
    return matrix
