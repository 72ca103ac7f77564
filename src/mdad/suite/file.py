"""suite.json: a suite micro-benchmark (format ``mdad-suite/1``), written atomically and read back checked.

Per benchmark it holds what a one-benchmark micro.json holds (mdad.micro.file_format, checked the same
way), plus the suite's weights, normalisation baselines and allocation.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from mdad.data.readers.files import checked_file
from mdad.errors import MdadError
from mdad.micro import file_format
from mdad.micro.file_checks import check_fields, check_json
from mdad.outputs import writing

FORMAT = "mdad-suite/1"


def write(data: dict, path: str | Path) -> None:
    """Write ``data`` as JSON to ``path`` atomically: a temporary file beside it, then renamed over it."""
    path = Path(path)
    with writing(path, "the suite micro-benchmark file"):
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(data, indent=1))
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def is_suite_file(path: str | Path) -> bool:
    """Whether ``path`` is a file that names the suite format near its start (read no further than that)."""
    path = Path(path)
    if not path.is_file():
        return False
    with open(path, "rb") as handle:
        start = handle.read(400)
    return b'"' + FORMAT.encode() + b'"' in start


def read(path: str | Path) -> dict[str, Any]:
    """The JSON object of the suite micro-benchmark at ``path``, with each benchmark's part decoded to the fields of a
    SelectedMicroBenchmark (``parts``); one sentence for anything unusable."""
    path = Path(path)
    if not path.is_file():
        raise MdadError(f"No such file: {path}.")
    checked_file(path, "a suite micro-benchmark file", file_format.MAX_FILE_BYTES, "give the suite.json that 'mdad select --suite' wrote")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError, RecursionError):
        raise MdadError(f"{path} is not a readable JSON file.") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise MdadError(f"{path} is not an mdad suite micro-benchmark file (expected format {FORMAT!r}).")
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, dict) or len(benchmarks) < 2:
        raise MdadError(f"{path} is not a valid suite micro-benchmark file: 'benchmarks' must map at least two names to micro-benchmarks.")
    names = list(benchmarks)
    for field in ("weights", "allocation"):
        if not isinstance(data.get(field), dict) or sorted(data[field]) != sorted(names):
            raise MdadError(f"{path} is not a valid suite micro-benchmark file: {field!r} must give one value per benchmark.")
    normalisation = data.get("normalisation") or {}
    if not isinstance(normalisation, dict) or any(n not in names for n in normalisation):
        raise MdadError(f"{path} is not a valid suite micro-benchmark file: 'normalisation' names an unknown benchmark.")
    numbers = [*data["weights"].values(), *normalisation.values()]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers):
        raise MdadError(f"{path} is not a valid suite micro-benchmark file: the weights and baselines must be finite numbers.")
    parts = {}
    for name, part in benchmarks.items():
        parts[name] = _part(part, f"{path} (benchmark {name})")
        if parts[name]["micro"].size != data["allocation"][name]:
            stated = data["allocation"][name]
            raise MdadError(
                f"{path} is not a valid suite micro-benchmark file: {name} has {parts[name]['micro'].size} items, its allocation {stated!r}."
            )
    return {**data, "parts": parts}


def _part(data: Any, where: str) -> dict[str, Any]:
    """One benchmark's micro-benchmark fields, checked as mdad.micro.file_format.read checks a micro.json."""
    if not isinstance(data, dict) or data.get("format") != file_format.FORMAT:
        raise MdadError(f"{where} is not a micro-benchmark (expected format {file_format.FORMAT!r}).")
    missing = [k for k in file_format.REQUIRED if k not in data]
    if missing:
        raise MdadError(f"{where} lacks the field {missing[0]!r} of a micro-benchmark.")
    try:
        problem = check_json(data)
        fields = None if problem else file_format.decode(data)
        if fields is not None:
            problem = check_fields(fields, data.get("size"))
    except MdadError as exc:
        raise MdadError(f"{where}: {exc}") from None
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError, OverflowError) as exc:
        raise MdadError(f"{where} is not a valid micro-benchmark ({type(exc).__name__}: {exc}).") from None
    if problem:
        raise MdadError(f"{where} is not a valid micro-benchmark: {problem}.")
    assert fields is not None
    return fields
