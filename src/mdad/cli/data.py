"""`mdad info` and `mdad convert`: look at and convert harness results."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from mdad.cli.common import (
    FILTER_HELP, METRIC_HELP, RERUNS_HELP, app, console, friendly_errors, plural, print_notes, read_data,
)
from mdad.data import convert, describe, format_description
from mdad.data.readers import one_model_hint
from mdad.errors import MdadError


@app.command()
@friendly_errors
def info(
    source: Optional[Path] = typer.Argument(None, help="Results: npz, lm-eval samples folder, lighteval details, inspect logs, CSV/parquet table."),
    dataset: str = typer.Option("simulated", help="A named dataset instead of SOURCE."),
    data: Optional[Path] = typer.Option(None, help="The same as SOURCE, spelled as on 'mdad run'."),
    metric: Optional[str] = typer.Option(None, help=METRIC_HELP),
    filter_name: Optional[str] = typer.Option(None, "--filter", help=FILTER_HELP),
    reruns: str = typer.Option("latest", help=RERUNS_HELP),
) -> None:
    """Models, items, subtasks, missing cells and the accuracy range of a results source."""
    if source is not None and data is not None and source != data:
        raise MdadError(f"Give the results once: SOURCE ({source}) or --data ({data}).")
    source = source if source is not None else data
    matrix = read_data(dataset, source, metric=metric, filter_name=filter_name, reruns=reruns)
    for line in format_description(describe(matrix)):
        console.print(line, soft_wrap=True, highlight=False)
    hint = one_model_hint(source, matrix) if source is not None else None
    if hint:
        console.print(hint, soft_wrap=True, highlight=False, markup=False)


@app.command("convert")
@friendly_errors
def convert_command(
    source: Path = typer.Argument(..., help="Results in any supported format."),
    out: Path = typer.Option(..., help="The .npz file to write."),
    metric: Optional[str] = typer.Option(None, help=METRIC_HELP),
    filter_name: Optional[str] = typer.Option(None, "--filter", help=FILTER_HELP),
    reruns: str = typer.Option("latest", help=RERUNS_HELP),
) -> None:
    """Convert results to mdad's npz format (scores, names, subtasks, option probabilities)."""
    if not source.exists():
        raise MdadError(f"No such file or folder: {source}.")
    matrix = convert(source, out, metric=metric, filter_name=filter_name, reruns=reruns)
    print_notes(matrix)
    console.print(f"{plural(matrix.n_models, 'model')} x {plural(matrix.n_items, 'item')} written to {out}.")
