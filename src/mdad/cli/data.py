"""`mdad datasets`, `mdad info` and `mdad convert`: the named datasets; look at and convert harness results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from mdad.cli.common import (
    DatasetOption,
    FilterOption,
    MetricOption,
    RerunsOption,
    app,
    console,
    friendly_errors,
    output_path,
    plural,
    print_notes,
    read_data,
)
from mdad.cli.text import literal
from mdad.data import convert, dataset_catalogue, describe, format_description
from mdad.data.readers import one_model_hint
from mdad.errors import MdadError
from mdad.outputs import check_outputs_apart


@app.command()
@friendly_errors
def info(
    source: Annotated[
        Path | None, typer.Argument(help="Results: npz, lm-eval samples folder, lighteval details, inspect logs, CSV/parquet table.")
    ] = None,
    dataset: DatasetOption = None,
    data: Annotated[Path | None, typer.Option(help="The same as SOURCE, spelled as on 'mdad run'.")] = None,
    metric: MetricOption = None,
    filter_name: FilterOption = None,
    reruns: RerunsOption = "latest",
) -> None:
    """Models, items, subtasks, missing cells and the accuracy range of a results source."""
    if source is not None and data is not None and source != data:
        raise MdadError(f"Give the results once: SOURCE ({source}) or --data ({data}).")
    source = source if source is not None else data
    matrix = read_data(dataset, source, metric=metric, filter_name=filter_name, reruns=reruns)
    for line in format_description(describe(matrix)):
        console.print(literal(line), soft_wrap=True, highlight=False)
    hint = one_model_hint(source, matrix) if source is not None else None
    if hint:
        console.print(literal(hint), soft_wrap=True, highlight=False)


@app.command("convert")
@friendly_errors
def convert_command(
    source: Annotated[Path, typer.Argument(help="Results in any supported format.")],
    out: Annotated[str, typer.Option(help="The .npz file to write.")],
    metric: MetricOption = None,
    filter_name: FilterOption = None,
    reruns: RerunsOption = "latest",
) -> None:
    """Convert results to mdad's npz format (scores, names, subtasks, option probabilities)."""
    path = output_path(out, "the output file")
    if not source.exists():
        raise MdadError(f"No such file or folder: {source}.")
    check_outputs_apart({"the results": source}, {"the output file": path})
    matrix = convert(source, path, metric=metric, filter_name=filter_name, reruns=reruns)
    print_notes(matrix)
    console.print(f"{plural(matrix.n_models, 'model')} x {plural(matrix.n_items, 'item')} written to {literal(path)}.", highlight=False)


@app.command("datasets")
@friendly_errors
def list_datasets() -> None:
    """The named datasets (for --dataset): built in, simulated and the folders of $MDAD_DATA_DIR, with shapes and sources."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header in ("name", "kind", "models x items", "subtasks", "source"):
        table.add_column(header, justify="right" if header in ("models x items", "subtasks") else "left", overflow="fold")
    for entry in dataset_catalogue():
        table.add_row(
            f"[bold]{literal(entry.name)}[/bold]", literal(entry.kind), f"{entry.models} x {entry.items}", str(entry.subtasks), literal(entry.source)
        )
    console.print(table)
    console.print(
        "Built-in datasets hold 0/1 correctness only; 'simulated' also has option probabilities. "
        "Add folders holding responses.npz to the folder named by $MDAD_DATA_DIR.",
        soft_wrap=True,
    )
