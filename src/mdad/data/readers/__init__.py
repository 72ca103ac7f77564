"""Read the results users already have into a ResponseMatrix, whatever harness wrote them.

``read_source`` detects the format of a file or folder: an npz response file (or a folder
holding responses.npz), lm-evaluation-harness samples, lighteval details parquet, inspect
evaluation logs, or a plain long/wide CSV or parquet table.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mdad.data.matrix import ResponseMatrix
from mdad.data.npz import read_npz
from mdad.data.readers.inspect_logs import find_logs, is_eval_log, read_inspect
from mdad.data.readers.jsonlines import read_json
from mdad.data.readers.lighteval import find_details_files, is_details_table, read_lighteval
from mdad.data.readers.lm_eval import find_samples_files, read_lm_eval
from mdad.data.readers.tables import TABLE_SUFFIXES, read_table
from mdad.errors import MdadError

FORMATS = ("npz", "lm-eval", "lighteval", "inspect", "table")
EXPECTED = (
    "an .npz file or a folder with responses.npz, lm-evaluation-harness samples_<task>_<date>.jsonl files, "
    "lighteval details_<task>_<date>.parquet files, inspect logs (.eval or .json), "
    "or a .csv/.tsv/.parquet table of model, item, score"
)

__all__ = ["FORMATS", "detect_format", "read_source"]


def detect_format(path: str | Path) -> str:
    """Which of FORMATS ``path`` holds; one clear error when it is none of them (or several)."""
    path = Path(path)
    if not path.exists():
        raise MdadError(f"No such file or folder: {path}.")
    if not path.is_file() and not path.is_dir():
        raise MdadError(f"{path} is neither a file nor a folder (a pipe or a device?); give a results file or folder.")
    return _file_format(path) if path.is_file() else _folder_format(path)


def read_source(path: str | Path, metric: str | None = None, filter_name: str | None = None) -> ResponseMatrix:
    """The response matrix in ``path`` (a file or folder, format detected).

    ``metric`` chooses the per-item metric of harness outputs (lm-eval: acc, acc_norm,
    exact_match...; lighteval: a metric column key; inspect: a scorer), ``filter_name`` the
    lm-eval filter (default "none" or the task's first).
    """
    path = Path(path)
    kind = detect_format(path)
    if metric is not None and kind in ("npz", "table"):
        raise MdadError(f"{path} is a plain score table ({kind}); it has no metrics to choose from, so drop --metric.")
    if filter_name is not None and kind != "lm-eval":
        raise MdadError(f"Filters belong to lm-evaluation-harness samples; {path} holds {kind} results, so drop --filter.")
    if kind == "npz":
        npz = path / "responses.npz" if path.is_dir() else path
        return read_npz(npz, source=str(path))
    if kind == "lm-eval":
        target = path.parent if path.suffix == ".json" else path
        return read_lm_eval(target, metric=metric, filter_name=filter_name)
    if kind == "lighteval":
        return read_lighteval(path, metric=metric)
    if kind == "inspect":
        return read_inspect(path, metric=metric)
    return read_table(_tables_in(path)[0] if path.is_dir() else path)


def _tables_in(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.iterdir()) if p.is_file() and p.suffix.lower() in TABLE_SUFFIXES]


def _file_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".npz":
        return "npz"
    if suffix == ".jsonl":
        return "lm-eval"
    if suffix == ".eval":
        return "inspect"
    if suffix == ".json":
        data = read_json(path)
        if is_eval_log(data):
            return "inspect"
        if isinstance(data, dict) and "results" in data and ("configs" in data or "versions" in data):
            if find_samples_files(path.parent):
                return "lm-eval"
            raise MdadError(f"{path} is an lm-eval results summary without per-document samples; rerun with --log_samples.")
    if suffix == ".parquet":
        try:
            columns = set(pq.read_schema(path).names)
        except (pa.ArrowInvalid, OSError) as exc:
            raise MdadError(f"{path} is not a readable parquet file ({exc}).") from None
        return "lighteval" if is_details_table(columns) else "table"
    if suffix in TABLE_SUFFIXES:
        return "table"
    raise MdadError(f"{path} is not a response file mdad can read (expected {EXPECTED}).")


def _folder_format(path: Path) -> str:
    if (path / "responses.npz").is_file():
        return "npz"
    found = [
        kind for kind, present in (
            ("lm-eval", lambda: bool(find_samples_files(path))),
            ("lighteval", lambda: bool(find_details_files(path))),
            ("inspect", lambda: bool(find_logs(path))),
        ) if present()
    ]
    if len(found) > 1:
        raise MdadError(f"{path} holds results in several formats ({', '.join(found)}); point at one of them.")
    if found:
        return found[0]
    if len(_tables_in(path)) == 1:
        return "table"
    raise MdadError(f"{path} holds nothing mdad can read (expected {EXPECTED}).")
