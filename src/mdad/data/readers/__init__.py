"""Read the results users already have into a ResponseMatrix, whatever harness wrote them.

``read_source`` detects the format of a file or folder with the readers of ``READERS``, in
order: mdad's npz, lm-evaluation-harness samples, lighteval details parquet, inspect
evaluation logs, and (when none of these claims the path) a plain long/wide CSV or parquet
table. A format is one module of this package registering ``READERS.add(Reader(name, detect,
read))``; installed packages add theirs through the ``mdad.readers`` entry points
(docs/extending.md#a-reader).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mdad.data.matrix import ResponseMatrix
from mdad.data.readers.base import RERUN_POLICIES, Reader, ReadOptions, Reruns
from mdad.errors import MdadError
from mdad.registry import LOG, Registry, capital, foreign_failure


def _not_a_reader(obj: object) -> str | None:
    """What keeps ``obj`` from being a reader (None: nothing), for a plug-in's entry point."""
    return None if isinstance(obj, Reader) else f"it names {type(obj).__name__} {obj!r}, not a mdad.data.readers.base.Reader"


READERS: Registry[Reader] = Registry("reader", package="mdad.data.readers", group="mdad.readers", problem=_not_a_reader)

__all__ = [
    "READERS",
    "RERUN_POLICIES",
    "Reader",
    "ReadOptions",
    "detect_format",
    "formats",
    "one_model_hint",
    "read_source",
]


def readers() -> list[Reader]:
    """Every reader in the order they are asked: registration order, the fallback ones last."""
    return sorted(READERS, key=lambda reader: reader.fallback)


def formats() -> tuple[str, ...]:
    """The names of the formats mdad reads, in the order they are asked."""
    return tuple(reader.name for reader in readers())


def expected() -> str:
    known = readers()
    return ", ".join(reader.expects for reader in known[:-1]) + f", or {known[-1].expects}"


def detect_format(path: str | Path) -> str:
    """Which of ``formats()`` ``path`` holds; one clear error when it is none of them (or several)."""
    return _reader_for(Path(path)).name


def read_source(
    path: str | Path,
    *,
    metric: str | Mapping[str, str] | None = None,
    filter_name: str | Mapping[str, str] | None = None,
    reruns: Reruns = "latest",
) -> ResponseMatrix:
    """The response matrix in ``path`` (a file or folder, format detected).

    Parameters
    ----------
    path : str or Path
        Results in any format of ``READERS``.
    metric : str or mapping, optional
        The per-item metric of harness outputs (lm-eval: acc, acc_norm, exact_match...;
        lighteval: a metric key; inspect: a scorer). One name applies to every task that has it
        (the others keep their main metric, with a note); ``"TASK=METRIC,..."`` (or a mapping)
        chooses per task. A name no task has is an error listing every task's metrics.
    filter_name : str or mapping, optional
        The lm-eval filter, in the same forms (default "none", else the task's first).
    reruns : {"latest", "error"}
        A model run again on a task (same model arguments and folder): keep the latest run,
        with a note, or refuse.

    Returns
    -------
    ResponseMatrix
        Its ``notes`` say what was dropped, merged or chosen; ``tasks`` and ``item_hashes``
        what identifies each task and item (see docs/readers.md).
    """
    path = Path(path)
    reader = _reader_for(path)
    options = ReadOptions(metric=metric, filter_name=filter_name, reruns=reruns)
    unknown = [name for name in options.given() if name not in reader.options]
    if unknown:
        what = "a plain score table" if not reader.options else f"{reader.name} results"
        raise MdadError(f"{path} holds {what}, with no {unknown[0]}s to choose from.")
    try:
        matrix = reader.read(path, options)
    except (MdadError, OSError, MemoryError, RecursionError):
        raise
    except Exception as exc:  # an extension's code: one sentence naming it
        raise foreign_failure(exc, READERS.describe(reader, reader.name), f"to read {path}") from None
    if not isinstance(matrix, ResponseMatrix):
        raise MdadError(f"{capital(READERS.describe(reader, reader.name))} read {path} into {type(matrix).__name__}, not a ResponseMatrix.")
    return matrix


def _detects(reader: Reader, path: Path) -> bool:
    """Whether ``reader`` claims ``path``; a reader whose ``detect`` fails (other than with an MdadError, its one
    sentence) is reported in one sentence naming it and left out, so that it does not stop the other formats."""
    try:
        return bool(reader.detect(path))
    except (MdadError, MemoryError):
        raise
    except Exception as exc:  # an extension's code
        LOG.warning(f"{foreign_failure(exc, READERS.describe(reader, reader.name), f'to detect whether it reads {path}')} It is left out.")
        return False


def _reader_for(path: Path) -> Reader:
    if not path.exists():
        raise MdadError(f"No such file or folder: {path}.")
    if not path.is_file() and not path.is_dir():
        raise MdadError(f"{path} is neither a file nor a folder (a pipe or a device?); give a results file or folder.")
    claimed = [reader for reader in readers() if _detects(reader, path)]
    specific = [reader for reader in claimed if not reader.fallback]
    if len(specific) > 1:
        raise MdadError(f"{path} holds results in several formats ({', '.join(r.name for r in specific)}); point at one of them.")
    if specific or claimed:
        return (specific or claimed)[0]
    if path.is_dir():
        raise MdadError(f"{path} holds nothing mdad can read (expected {expected()}).")
    raise MdadError(f"{path} is not a response file mdad can read (expected {expected()}).")


def one_model_hint(path: str | Path, matrix: ResponseMatrix) -> str | None:
    """When ``path`` holds a single model: a sentence saying so, naming the folder above when it
    holds more results of the same format (None otherwise)."""
    if matrix.n_models != 1:
        return None
    path = Path(path)
    reader = _reader_for(path)
    text = f"{path} holds one model ({str(matrix.models[0])!r}); comparing models needs the folder that holds all of them"
    parent = path.parent
    siblings = [p for p in sorted(parent.iterdir())[:50] if p != path and not p.name.startswith(".")]
    if any(_claims(reader, p) for p in siblings):
        return f"{text}: {parent} holds more {reader.name} results."
    return f"{text}."


def _claims(reader: Reader, path: Path) -> bool:
    try:
        return _detects(reader, path)
    except MdadError:
        return False
