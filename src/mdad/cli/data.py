"""`mdad datasets`, `mdad info` and `mdad convert`: the named datasets; look at and convert harness results."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich import box
from rich.measure import Measurement
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
from mdad.cli.tables import TableColumn, print_fitted
from mdad.cli.text import literal
from mdad.data import ResponseMatrix, convert, dataset_catalogue, describe, format_description
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
    models: Annotated[bool, typer.Option("--models", help="List every model with its accuracy, best first (else the first few).")] = False,
) -> None:
    """Models, items, subtasks, missing cells and the accuracy range of a results source."""
    if source is not None and data is not None and source != data:
        raise MdadError(f"Give the results once: SOURCE ({source}) or --data ({data}).")
    source = source if source is not None else data
    matrix = read_data(dataset, source, metric=metric, filter_name=filter_name, reruns=reruns, history=True)
    for line in format_description(describe(matrix)):
        console.print(literal(line), soft_wrap=True, highlight=False)
    for line in model_lines(matrix, every=models):
        console.print(literal(line), soft_wrap=True, highlight=False)
    hint = one_model_hint(source, matrix) if source is not None else None
    if hint:
        console.print(literal(hint), soft_wrap=True, highlight=False)


MODELS_SHOWN = 5  # models 'mdad info' names without --models


def model_lines(matrix: ResponseMatrix, *, every: bool) -> list[str]:
    """The models, best first: each on its own line with its accuracy over the items it answered
    (``every``), else the first few names on one line."""
    with warnings.catch_warnings():  # a model with no evaluated item: NaN, listed last
        warnings.simplefilter("ignore", RuntimeWarning)
        accuracy = matrix.accuracy()  # in float64, as the summary's range (float32 means round 0.1625 to 0.162 there)
    order = sorted(range(matrix.n_models), key=lambda i: (-np.nan_to_num(accuracy[i], nan=-1.0), str(matrix.models[i])))
    if not every:
        shown = ", ".join(str(matrix.models[i]) for i in order[:MODELS_SHOWN])
        more = f" (best {MODELS_SHOWN} of {matrix.n_models}; --models lists every one)" if matrix.n_models > MODELS_SHOWN else ""
        return [f"models{more}: {shown}"]
    return ["models, best first (accuracy, name):", *(f"  {accuracy[i]:.3f}  {matrix.models[i]}" for i in order)]


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
    entries = dataset_catalogue()

    def table_of(headers: tuple[str, ...]) -> Table:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for header in headers:
            table.add_column(header, justify="right" if header in ("models x items", "subtasks") else "left", no_wrap=header != "source")
        for entry in entries:
            cells = [
                f"[bold]{literal(entry.name)}[/bold]",
                literal(entry.kind),
                f"{entry.models} x {entry.items}",
                str(entry.subtasks),
                literal(entry.source),
            ]
            table.add_row(*cells[: len(headers)])
        return table

    # a source wraps only between words; when one of its words (a path) would not fit, sources go below
    headers = ("name", "kind", "models x items", "subtasks", "source")
    table = table_of(headers)
    widest = max((len(word) for entry in entries for word in entry.source.split()), default=0)
    without = Measurement.get(console, console.options.update_width(1_000_000), table_of(headers[:-1])).maximum
    if without + 3 + widest <= console.width:
        console.print(table)
    else:  # the other columns as a table, or one dataset per line when a name is too wide (never cut)
        print_fitted(
            console,
            "",
            [TableColumn("name", [f"[bold]{literal(entry.name)}[/bold]" for entry in entries], right=False)],
            [
                [
                    TableColumn("kind", [literal(entry.kind) for entry in entries], right=False),
                    TableColumn("models x items", [f"{entry.models} x {entry.items}" for entry in entries]),
                    TableColumn("subtasks", [str(entry.subtasks) for entry in entries]),
                ]
            ],
        )
        for entry in entries:
            line = f"{entry.name}: {entry.source}"
            console.print(literal(line), highlight=False, soft_wrap=any(len(word) > console.width for word in line.split()))
    console.print(
        "Built-in datasets hold 0/1 correctness only; 'simulated' also has option probabilities. "
        "Add folders holding responses.npz to the folder named by $MDAD_DATA_DIR.",
        highlight=False,
    )
