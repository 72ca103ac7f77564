"""Shared pieces of the command line: the app, consoles, error handling, argument parsing."""

from __future__ import annotations

from functools import wraps
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from mdad.data import DEFAULT_DATASET, ResponseMatrix, load, load_dataset
from mdad.errors import MdadError

MISSING_POLICIES = ("error", "drop-items", "drop-models")
DATASET_HELP = ("Named dataset: built in (gpqa, the paper's GPQA matrix; musr; math-hard), 'simulated' (a simulated "
                "leaderboard with option probabilities) or a folder of $MDAD_DATA_DIR; 'mdad datasets' lists them.")
METRIC_HELP = ("Metric to read from harness results: one name for every task that has it (e.g. acc_norm; "
               "the others keep their main metric), or TASK=METRIC,...; default: each task's main metric.")
FILTER_HELP = "lm-eval filter to keep, for every task that has it, or TASK=FILTER,... (default: 'none' or the first)."
RERUNS_HELP = ("A model run twice on one task (same model arguments and folder): 'latest' keeps the latest run "
               "and says so, 'error' refuses.")

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


def plural(n: int, word: str) -> str:
    """'1 subtask', '3 subtasks'."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def check_output_file(path: Path, what: str) -> None:
    """An error sentence, before any work, when ``path`` cannot be written as a file."""
    if path.is_dir():
        raise MdadError(f"{what} {path} is a folder; give a file name.")
    if not path.parent.is_dir():
        raise MdadError(f"The folder of {what[0].lower()}{what[1:]} {path} does not exist.")


def check_missing_policy(missing: str) -> None:
    if missing not in MISSING_POLICIES:
        raise MdadError(f"--missing must be one of {', '.join(MISSING_POLICIES)}, got {missing!r}.")


def check_workers(workers: int) -> None:
    if workers < 0:
        raise MdadError(f"--workers must be 0 (one per CPU core) or more, got {workers}.")


def parse_list(text: str | None, what: str, convert=str) -> list:
    if text is None:
        return []
    values = [v.strip() for v in text.split(",") if v.strip()]
    try:
        return [convert(v) for v in values]
    except ValueError:
        raise MdadError(f"--{what} must be a comma-separated list of {convert.__name__}s, got {text!r}.") from None


def print_notes(matrix: ResponseMatrix) -> None:
    """What the reader dropped, merged or chose on the user's behalf, one dimmed line each."""
    for note in matrix.notes:
        err_console.print(f"note: {note}", style="dim", soft_wrap=True, highlight=False, markup=False)


def read_data(dataset: str, data: Optional[Path], seed: int = 0, metric: str | None = None,
              filter_name: str | None = None, reruns: str = "latest") -> ResponseMatrix:
    """The response matrix the user named: ``--data`` (any supported source) or ``--dataset``;
    its notes are printed."""
    if data is not None:
        if not data.exists():
            raise MdadError(f"No such file or folder: {data}.")
        matrix = load(data, metric=metric, filter_name=filter_name, reruns=reruns)
    else:
        matrix = load_dataset(dataset, seed=seed)
    print_notes(matrix)
    return matrix


def load_matrix(dataset: str, data: Optional[Path], seed: int, missing: str, metric: str | None = None,
                filter_name: str | None = None, reruns: str = "latest") -> ResponseMatrix:
    """The response matrix the user named, with missing cells handled as asked."""
    check_missing_policy(missing)
    return read_data(dataset, data, seed, metric, filter_name, reruns).require_complete(missing)


