"""Shared pieces of the command line: the app, consoles, error handling, argument parsing."""

from __future__ import annotations

from functools import wraps
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from mdad.data import ResponseMatrix, load, load_dataset
from mdad.errors import MdadError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Build micro-benchmarks and measure how reliably they rank models.")
console = Console()
err_console = Console(stderr=True)


def friendly_errors(func):
    """Turn MdadError into one red sentence on stderr and exit code 2."""

    @wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except MdadError as exc:
            err_console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def parse_list(text: str | None, what: str, convert=str) -> list:
    if text is None:
        return []
    values = [v.strip() for v in text.split(",") if v.strip()]
    try:
        return [convert(v) for v in values]
    except ValueError:
        raise MdadError(f"--{what} must be a comma-separated list of {convert.__name__}s, got {text!r}.") from None


def read_data(dataset: str, data: Optional[Path], seed: int = 0, metric: str | None = None,
              filter_name: str | None = None) -> ResponseMatrix:
    """The response matrix the user named: ``--data`` (any supported source) or ``--dataset``."""
    if data is not None:
        if not data.exists():
            raise MdadError(f"No such file or folder: {data}.")
        return load(data, metric=metric, filter_name=filter_name)
    return load_dataset(dataset, seed=seed)


def load_matrix(dataset: str, data: Optional[Path], seed: int, missing: str, metric: str | None = None,
                filter_name: str | None = None) -> ResponseMatrix:
    """The response matrix the user named, with missing cells handled as asked."""
    return read_data(dataset, data, seed, metric, filter_name).require_complete(missing)


