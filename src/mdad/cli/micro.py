"""`mdad select` and `mdad estimate`: build a micro-benchmark once, then score new models with it."""

from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from mdad.cli.common import (
    DataOption,
    DatasetOption,
    FilterOption,
    MetricOption,
    MissingOption,
    RerunsOption,
    SeedOption,
    ThresholdOption,
    WorkersOption,
    app,
    console,
    friendly_errors,
    load_matrix,
    output_path,
    plural,
    print_notes,
)
from mdad.cli.text import literal
from mdad.data import load
from mdad.defaults import ASSESS_RUNS, DEFAULT_LEVEL, DEFAULT_TARGETS, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.micro import SelectedMicroBenchmark
from mdad.micro.estimation import EstimateReport, estimate_report
from mdad.micro.notes import Note
from mdad.micro.selection import assessment_runs, build_selection, check_sample_lists
from mdad.outputs import check_output_file, write_csv


@app.command("select")
@friendly_errors
def select_command(
    method: Annotated[str, typer.Option(help="Selection method (see 'mdad methods').")],
    size: Annotated[int, typer.Option(min=1, help="Number of items.")],
    out: Annotated[str, typer.Option(help="Where to write the micro-benchmark (JSON).")],
    dataset: DatasetOption = None,
    data: DataOption = None,
    seed: SeedOption = 0,
    missing: MissingOption = "error",
    metric: MetricOption = None,
    filter_name: FilterOption = None,
    reruns: RerunsOption = "latest",
    assess_runs: Annotated[int, typer.Option(
        min=0, help="Held-out runs that measure the micro-benchmark's error and MDAD (0: skip).")] = ASSESS_RUNS,
    targets: Annotated[int | None, typer.Option(
        help=f"Held-out target models per assessment run (default: {DEFAULT_TARGETS}, or half the models if fewer than "
             f"{2 * DEFAULT_TARGETS}).")] = None,
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    workers: WorkersOption = 0,
    lm_eval_samples: Annotated[str | None, typer.Option(help=(
        "Also write the items as lm-evaluation-harness --samples JSON (task -> document indices), to evaluate new "
        "models on them only."))] = None,
    inspect: Annotated[bool, typer.Option("--inspect", help=(
        "Also print the 'inspect eval --sample-id' commands that run new models on the items only."))] = False,
) -> None:
    """Choose SIZE items with METHOD, using every model of the data as a source model, and measure
    how reliable the choice is on held-out models."""
    out_path = output_path(out, "the micro-benchmark file")
    samples_path = None if lm_eval_samples is None else output_path(lm_eval_samples, "the lm-eval samples file")
    check_threshold(threshold)
    check_sample_lists(method, lm_eval_samples=samples_path is not None, inspect=inspect)  # before any work
    check_output_file(out_path, "the micro-benchmark file")
    if samples_path is not None:
        check_output_file(samples_path, "the lm-eval samples file")
    matrix = load_matrix(dataset, data, seed, missing, metric, filter_name, reruns)
    runs = assessment_runs(matrix.n_models, assess_runs, targets)
    status = f"Assessing {method} with {size} items on {plural(runs, 'held-out split')}..."
    with console.status(status) if runs else nullcontext():
        selection = build_selection(matrix, method, size, seed=seed, runs=assess_runs, targets=targets,
                                    threshold=threshold, workers=workers or os.cpu_count() or 1,
                                    lm_eval_samples=samples_path is not None, inspect=inspect)
    selection.save(out_path, samples_path)
    print_report(selection.report(out_path, samples_path))


def print_report(notes: list[Note]) -> None:
    """Print a report's lines literally: warnings in yellow, commands unbroken."""
    for note in notes:
        text = literal(note.text)
        console.print(f"[yellow]{text}[/yellow]" if note.warning else text, highlight=False, soft_wrap=note.command)


@app.command("estimate")
@friendly_errors
def estimate_command(
    micro: Annotated[Path, typer.Argument(help="A micro-benchmark written by 'mdad select'.")],
    results: Annotated[Path, typer.Argument(help="New models' results on (at least) the micro-benchmark's items.")],
    csv: Annotated[str | None, typer.Option(
        help="Also write one row per model (model, estimate, low, high, level) to this CSV file.")] = None,
    pairs_csv: Annotated[str | None, typer.Option(
        help="Also write one row per neighbouring pair (first, second, gap, probability) to this CSV file.")] = None,
    level: Annotated[float, typer.Option(help="Confidence level of the intervals (between 0 and 1).")] = DEFAULT_LEVEL,
    population: Annotated[bool, typer.Option(
        "--population", help="Random designs: the interval calibrated on the source models' accuracies (narrower; "
                             "right on average for models like them, too narrow for a model far better than all of "
                             "them) instead of the exact one, valid for every model.")] = False,
    metric: MetricOption = None,
    filter_name: FilterOption = None,
    reruns: RerunsOption = "latest",
) -> None:
    """Estimate full-benchmark accuracy of the models in RESULTS from their answers on the micro-benchmark,
    with an interval for each and the probability that each neighbouring order holds on the full benchmark."""
    if not 0 < level < 1:
        raise MdadError(f"--level must lie strictly between 0 and 1, got {level}.")
    csv_path = None if csv is None else output_path(csv, "the CSV file")
    pairs_path = None if pairs_csv is None else output_path(pairs_csv, "the pairs CSV file")
    for path, what in ((csv_path, "the CSV file"), (pairs_path, "the pairs CSV file")):
        if path is not None:
            check_output_file(path, what)
    chosen = SelectedMicroBenchmark.load(micro)
    if not results.exists():
        raise MdadError(f"No such file or folder: {results}.")
    matrix = load(results, metric=metric, filter_name=filter_name, reruns=reruns)
    print_notes(matrix)
    report = estimate_report(chosen, matrix, level=level, population=population)
    console.print(_table(report))
    print_report(report.notes)
    if csv_path is not None:
        write_csv(report.intervals.to_frame(), csv_path)
    if pairs_path is not None:
        write_csv(report.orders.to_frame(), pairs_path, what="the pairs CSV file")


def _table(report: EstimateReport) -> Table:
    """The report's columns as a rich table: every cell literal, warnings in yellow."""
    table = Table(title=literal(report.title))
    for column in report.columns:
        table.add_column(column.name, justify="right" if column.numeric else "left", no_wrap=column.no_wrap,
                         overflow="fold" if column.fold else "ellipsis")
    for row in range(len(report.columns[0].cells)):
        cells = []
        for column in report.columns:
            text = literal(column.cells[row])
            cells.append(f"[yellow]{text}[/yellow]" if column.warned and column.warned[row] else text)
        table.add_row(*cells)
    return table
