"""micro.json: the file ``mdad select`` writes and ``mdad estimate`` reads (format ``mdad-microbenchmark/1``).

Its ``results_version`` (mdad.results_version; absent in files written before versions) says which
code chose the items and fitted the estimator.

It works on the fields of a :class:`mdad.micro.selected.SelectedMicroBenchmark` as a mapping
(name -> value), so the file format and the micro-benchmark stay one module each: ``encode``
turns them into JSON values, ``read`` checks a file and gives them back, refusing a broken or
foreign file with one sentence naming it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from mdad.assessment import Assessment
from mdad.data.readers.files import checked_file
from mdad.errors import MdadError
from mdad.intervals.order import PairPrior
from mdad.intervals.posterior import AccuracyPrior
from mdad.methods.base import MicroBenchmark
from mdad.micro.audit import AuditItems
from mdad.micro.file_checks import check_fields, check_json
from mdad.outputs import write_text

FORMAT = "mdad-microbenchmark/1"
# 1 GiB: beyond any micro-benchmark file (the largest, an IRT method's over a 12,000-item pool, holds a
# few MB); a larger one is refused before it is read into memory.
MAX_FILE_BYTES = 2**30
REQUIRED = ("method", "items", "subtasks", "pool_positions", "estimator", "seed")


def encode(fields: dict[str, Any]) -> dict:
    """The JSON object of a micro-benchmark's ``fields``; optional parts only when present."""
    micro: MicroBenchmark = fields["micro"]
    optional = {
        "item_hashes": fields["item_hashes"],
        "pool_subtasks": fields["pool_subtasks"],
        "pair_prior": fields["pair_prior"],
        "accuracy_prior": fields["accuracy_prior"],
        "source_means": fields["source_means"],
        "assessment": fields["assessment"],
        "audit": fields["audit"],
    }
    return {
        "format": FORMAT,
        **({"results_version": fields["results_version"]} if fields["results_version"] is not None else {}),
        "method": fields["method"],
        "size": micro.size,
        "seed": fields["seed"],
        "data_source": fields["data_source"],
        "data_fingerprint": fields["data_fingerprint"],
        "pool_items": fields["n_pool"],
        "items": fields["item_ids"].tolist(),
        "subtasks": fields["subtasks"].tolist(),
        "pool_positions": micro.items.tolist(),
        "estimator": micro.estimator_params(),
        "tasks": fields["tasks"],
        **{name: _json_value(value) for name, value in optional.items() if value is not None},
    }


def _json_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value.to_json() if hasattr(value, "to_json") else value


def dumps(data: dict) -> str:
    """The text of micro.json for the JSON object ``data`` (from ``encode``)."""
    return json.dumps(data, indent=1)


def write(data: dict, path: str | Path) -> None:
    """Write the JSON object ``data`` (from ``encode``) to ``path``, whole or not at all."""
    write_text(path, dumps(data), "the micro-benchmark file")


def read(path: str | Path) -> dict[str, Any]:
    """The fields of the micro-benchmark saved at ``path``, checked: one clear error for anything unusable."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise MdadError(f"No such file: {path}.")
    if path.is_dir():
        raise MdadError(f"{path} is a folder, not a micro-benchmark file.")
    checked_file(path, "a micro-benchmark file", MAX_FILE_BYTES, "give the micro.json that 'mdad select' wrote")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MdadError(f"No such file: {path}.") from None
    except json.JSONDecodeError as exc:
        raise MdadError(f"{path} is not valid JSON (line {exc.lineno}).") from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise MdadError(f"{path} is not a readable micro-benchmark file: {str(exc).split(';')[0].rstrip('.')}.") from None
    except (UnicodeDecodeError, RecursionError):
        raise MdadError(f"{path} is not a readable JSON text file.") from None
    except IsADirectoryError:
        raise MdadError(f"{path} is a folder, not a micro-benchmark file.") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise MdadError(f"{path} is not an mdad micro-benchmark file (expected format {FORMAT!r}).")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise MdadError(f"{path} lacks the field {missing[0]!r} of a micro-benchmark file.")
    problem = check_json(data)
    if problem:
        raise MdadError(f"{path} is not a valid micro-benchmark file: {problem}.")
    try:
        fields = decode(data)
    except MdadError as exc:
        raise MdadError(f"{path}: {exc}") from None
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError, OverflowError) as exc:
        raise MdadError(f"{path} is not a valid micro-benchmark file ({type(exc).__name__}: {exc}).") from None
    try:
        problem = check_fields(fields, data.get("size"))
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError) as exc:  # a value of a type no check foresaw
        raise MdadError(f"{path} is not a valid micro-benchmark file ({type(exc).__name__}: {exc}).") from None
    if problem:
        raise MdadError(f"{path} is not a valid micro-benchmark file: {problem}.")
    return fields


def decode(data: dict) -> dict[str, Any]:
    """The fields of a micro-benchmark from its JSON object (older files lack the optional parts)."""
    if not isinstance(data["estimator"], dict):
        raise MdadError(f"the estimator must be an object of parameters, not {type(data['estimator']).__name__}")
    items = np.array(data["items"], dtype=str)
    positions = np.array(data["pool_positions"])
    if positions.ndim != 1 or (positions.size and positions.dtype.kind not in "iu"):
        raise MdadError("pool_positions must be a list of integers")
    return {
        "method": str(data["method"]),
        "item_ids": items,
        "subtasks": np.array(data["subtasks"], dtype=str),
        "micro": MicroBenchmark.from_params(data["estimator"], positions.astype(np.int64)),
        "seed": int(data["seed"]),
        "data_source": str(data.get("data_source", "")),
        "data_fingerprint": str(data.get("data_fingerprint", "")),
        "n_pool": int(data.get("pool_items", len(items))),
        "assessment": Assessment.from_json(data["assessment"]) if data.get("assessment") else None,
        "tasks": data.get("tasks") or {},
        "item_hashes": np.array(data["item_hashes"], dtype=str) if data.get("item_hashes") is not None else None,
        "pool_subtasks": _pool_subtasks(data.get("pool_subtasks")),
        "pair_prior": PairPrior.from_json(data["pair_prior"]) if data.get("pair_prior") else None,
        "accuracy_prior": AccuracyPrior.from_json(data["accuracy_prior"]) if data.get("accuracy_prior") else None,
        "source_means": _source_means(data.get("source_means")),
        "audit": AuditItems.from_json(data["audit"]) if data.get("audit") is not None else None,
        "results_version": data.get("results_version"),
    }


def _source_means(value) -> np.ndarray | None:
    """The source models' mean scores on the pool: a non-empty list of finite numbers, sorted as written."""
    if value is None:
        return None
    means = np.asarray(value) if isinstance(value, list) else np.empty(0)
    if not len(means) or means.ndim != 1 or means.dtype.kind not in "iuf" or not np.isfinite(means).all():
        raise MdadError("'source_means' must be a non-empty list of finite numbers, one per source model")
    if np.any(np.diff(means) < 0):
        raise MdadError("'source_means' must be sorted from the lowest score up")
    return means.astype(np.float64)


def _pool_subtasks(value) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(n, int) and n > 0 for n in value.values()):
        raise MdadError("'pool_subtasks' must map each subtask to its number of pool items")
    return {str(name): n for name, n in value.items()}
