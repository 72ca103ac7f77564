"""Read JSON files and JSON-lines files, turning any malformed line into an error with file and line."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mdad.errors import MdadError


def read_json(path: Path) -> object:
    """One JSON document; a syntax error names the file and the line."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise MdadError(f"{path} line {exc.lineno} is not valid JSON ({exc.msg}); the file may be truncated.") from None
    except UnicodeDecodeError:
        raise MdadError(f"{path} is not a UTF-8 text file.") from None
    except RecursionError:
        raise MdadError(f"{path} nests JSON too deeply to be a results file.") from None


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line; anything but a JSON object is an error."""
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except RecursionError:
                    raise MdadError(f"{path} line {number} nests JSON too deeply to be a result.") from None
                except json.JSONDecodeError as exc:
                    raise MdadError(f"{path} line {number} is not valid JSON ({exc.msg}); the file may be truncated.") from None
                if not isinstance(row, dict):
                    raise MdadError(f"{path} line {number} is not a JSON object (found {type(row).__name__}).")
                yield number, row
    except UnicodeDecodeError:
        raise MdadError(f"{path} is not a UTF-8 text file.") from None


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while parsing many small JSON objects.

    Parsed JSON forms no reference cycles, yet each allocation burst would trigger full
    collections over every row kept so far; pausing them makes bulk reading several times faster.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
