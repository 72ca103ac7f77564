"""`mdad datasets`, `mdad info` and `mdad convert`: the named datasets; look at and convert harness results."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich import box
from rich.table import Table

from mdad.cli.common import (
    DEFAULT_DATASET, FILTER_HELP, METRIC_HELP, RERUNS_HELP, app, console, friendly_errors, plural, print_notes, read_data,
)
from mdad.data import convert, dataset_catalogue, describe, format_description
from mdad.data.readers import one_model_hint
from mdad.errors import MdadError


@app.command()
@friendly_errors
def info(
    source: Optional[Path] = typer.Argument(None, help="Results: npz, lm-eval samples folder, lighteval details, inspect logs, CSV/parquet table."),
    dataset: str = typer.Option(DEFAULT_DATASET, help="A named dataset instead of SOURCE ('mdad datasets' lists them)."),
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


@app.command("datasets")
@friendly_errors
def list_datasets() -> None:
    """The named datasets (for --dataset): built in, simulated and the folders of $MDAD_DATA_DIR, with shapes and sources."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header, justify in (("name", "left"), ("kind", "left"), ("models x items", "right"), ("subtasks", "right"),
                            ("source", "left")):
        table.add_column(header, justify=justify, overflow="fold")
    for entry in dataset_catalogue():
        table.add_row(f"[bold]{entry.name}[/bold]", entry.kind, f"{entry.models} x {entry.items}", str(entry.subtasks),
                      entry.source)
    console.print(table)
    console.print("Built-in datasets hold 0/1 correctness only; 'simulated' also has option probabilities. "
                  "Add folders holding responses.npz to the folder named by $MDAD_DATA_DIR.", soft_wrap=True)
