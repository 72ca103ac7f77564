"""`mdad select` and `mdad estimate`: build a micro-benchmark once, then score new models with it."""

from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import pandas as pd
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
    progress_bar,
)
from mdad.cli.tables import table_width
from mdad.cli.text import literal
from mdad.data import load
from mdad.defaults import ASSESS_RUNS, DEFAULT_LEVEL, DEFAULT_TARGETS, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.micro import SelectedMicroBenchmark
from mdad.micro.comparison import Comparison
from mdad.micro.estimation import Column, all_pairs, estimate_report, parse_pair
from mdad.micro.notes import Note
from mdad.micro.selection import assessment_runs, build_selection, check_sample_lists
from mdad.outputs import check_output_file, check_outputs_apart, write_csv


@app.command("select")
@friendly_errors
def select_command(
    method: Annotated[str, typer.Option(help="Selection method (see 'mdad methods').")],
    out: Annotated[str, typer.Option(help="Where to write the micro-benchmark (JSON).")],
    size: Annotated[int | None, typer.Option(min=1, help="Number of items (with --suite: --budget).")] = None,
    dataset: DatasetOption = None,
    data: DataOption = None,
    seed: SeedOption = 0,
    missing: MissingOption = "error",
    metric: MetricOption = None,
    filter_name: FilterOption = None,
    reruns: RerunsOption = "latest",
    assess_runs: Annotated[int, typer.Option(min=0, help="Held-out runs that measure the micro-benchmark's error and MDAD (0: skip).")] = ASSESS_RUNS,
    targets: Annotated[
        int | None,
        typer.Option(
            help=f"Held-out target models per assessment run (default: {DEFAULT_TARGETS}, or half the models if fewer than {2 * DEFAULT_TARGETS})."
        ),
    ] = None,
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    workers: WorkersOption = 0,
    lm_eval_samples: Annotated[
        str | None,
        typer.Option(
            help=("Also write the items as lm-evaluation-harness --samples JSON (task -> document indices), to evaluate new models on them only.")
        ),
    ] = None,
    inspect: Annotated[
        bool, typer.Option("--inspect", help=("Also print the 'inspect eval --sample-id' commands that run new models on the items only."))
    ] = False,
    audit_items: Annotated[
        int,
        typer.Option(
            min=0,
            help="Also draw this many items at random from those not chosen (at least 2; 0: none): new models answer "
            "them too, and 'mdad estimate' corrects the estimate with them, with an interval that holds for models unlike the sources.",
        ),
    ] = 0,
    suite: Annotated[
        str | None,
        typer.Option(help="Several benchmarks, one leaderboard average: NAME or NAME=PATH separated by commas (docs/suites.md)."),
    ] = None,
    budget: Annotated[int | None, typer.Option(min=1, help="With --suite: items over all its benchmarks.")] = None,
    allocation: Annotated[str | None, typer.Option(help="With --suite: how the budget is split: equal, proportional or optimal (default).")] = None,
    weights: Annotated[
        str | None, typer.Option(help="With --suite: the benchmarks' weights in the average (1,1,2 or NAME=W,...; default equal).")
    ] = None,
    normalise: Annotated[
        str | None, typer.Option(help="With --suite: NAME=BASELINE,...: rescale a benchmark's score above its random-guess baseline.")
    ] = None,
) -> None:
    """Choose SIZE items with METHOD, using every model of the data as a source model, and measure
    how reliable the choice is on held-out models; with --suite, split a budget across several benchmarks."""
    suite_options = {"--budget": budget, "--allocation": allocation, "--weights": weights, "--normalise": normalise}
    if suite is not None:
        from mdad.cli.suite import Printers, refuse_with_suite, select_suite_command

        given = {"--size": size, "--dataset": dataset, "--data": data, "--targets": targets, "--lm-eval-samples": lm_eval_samples}
        refuse_with_suite({**given, "--inspect": inspect, "--audit-items": audit_items})
        return select_suite_command(
            suite=suite,
            method=method,
            out=out,
            budget=budget,
            allocation=allocation,
            weights=weights,
            normalise=normalise,
            seed=seed,
            missing=missing,
            reruns=reruns,
            metric=metric,
            filter_name=filter_name,
            assess_runs=assess_runs,
            threshold=threshold,
            workers=workers,
            printers=Printers(print_report, print_table),
        )
    for option, value in suite_options.items():
        if value is not None:
            raise MdadError(f"{option} applies to a suite; give the benchmarks with --suite, or leave {option} out.")
    if size is None:
        raise MdadError("Give the number of items with --size (or a suite with --suite and --budget).")
    out_path = output_path(out, "the micro-benchmark file")
    samples_path = None if lm_eval_samples is None else output_path(lm_eval_samples, "the lm-eval samples file")
    check_threshold(threshold)
    check_sample_lists(method, lm_eval_samples=samples_path is not None, inspect=inspect)  # before any work
    check_output_file(out_path, "the micro-benchmark file")
    if samples_path is not None:
        check_output_file(samples_path, "the lm-eval samples file")
    check_outputs_apart({"the data": data}, {"the micro-benchmark file": out_path, "the lm-eval samples file": samples_path})
    matrix = load_matrix(dataset, data, seed, missing, metric, filter_name, reruns)
    runs = assessment_runs(matrix.n_models, assess_runs, targets)
    progress = progress_bar()
    choosing = progress.add_task(f"Choosing {plural(size, 'item')} with {method}", total=1)
    held_out = progress.add_task("Held-out runs", total=runs, visible=False)

    def selected() -> None:
        progress.update(choosing, completed=1)
        progress.update(held_out, visible=True)

    with progress if runs else nullcontext():
        selection = build_selection(
            matrix,
            method,
            size,
            seed=seed,
            runs=assess_runs,
            targets=targets,
            threshold=threshold,
            workers=workers or os.cpu_count() or 1,
            lm_eval_samples=samples_path is not None,
            inspect=inspect,
            audit_items=audit_items,
            on_selected=selected,
            on_runs=lambda done: progress.advance(held_out, done),
        )
    selection.save(out_path, samples_path)
    print_report(selection.report(out_path, samples_path))


def print_report(notes: list[Note]) -> None:
    """Print a report's lines literally: warnings in yellow; commands, and lines with a word wider than the
    console, unbroken."""
    for note in notes:
        text = literal(note.text)
        unbroken = note.command or any(len(word) > console.width for word in note.text.split())  # never cut an id
        console.print(f"[yellow]{text}[/yellow]" if note.warning else text, highlight=False, soft_wrap=unbroken)


@app.command("estimate")
@friendly_errors
def estimate_command(
    micro: Annotated[Path, typer.Argument(help="A micro-benchmark written by 'mdad select'.")],
    results: Annotated[Path, typer.Argument(help="New models' results on (at least) the micro-benchmark's items.")],
    more_results: Annotated[
        list[str] | None, typer.Argument(help="For a suite micro-benchmark: NAME=PATH, one per benchmark (the first is RESULTS).")
    ] = None,
    csv: Annotated[
        str | None,
        typer.Option(
            help="Also write one row per model (model, estimate, low, high, level, p_best; with audit items also corrected, "
            "corrected_low, corrected_high) to this CSV file."
        ),
    ] = None,
    pairs_csv: Annotated[
        str | None, typer.Option(help="Also write one row per neighbouring pair (first, second, gap, probability) to this CSV file.")
    ] = None,
    compare: Annotated[
        list[str] | None,
        typer.Option(
            help="Compare two models, any two: A,B (repeatable). Prints both estimates, the gap, P(the full benchmark "
            "orders them the same way) and the exact mid-p McNemar test on the items only one of them got "
            "right."
        ),
    ] = None,
    pairs: Annotated[str | None, typer.Option(help="'all': compare every pair of models (as --compare).")] = None,
    compare_csv: Annotated[
        str | None,
        typer.Option(
            help="Also write one row per compared pair (--compare, --pairs), with its mark when the order probability may not hold, to this CSV file."
        ),
    ] = None,
    level: Annotated[float, typer.Option(help="Confidence level of the intervals (between 0 and 1).")] = DEFAULT_LEVEL,
    clopper_pearson: Annotated[
        bool,
        typer.Option(
            "--clopper-pearson",
            help="Random designs: the Clopper-Pearson interval, which covers the full-benchmark "
            "accuracy at least at the level for every accuracy (wider), instead of the default "
            "mid-p one, which covers it at the level on average over accuracies and less for "
            "some (docs/intervals.md: what each interval promises).",
        ),
    ] = False,
    population: Annotated[
        bool,
        typer.Option(
            "--population",
            help="Random designs: the interval calibrated on the source models' accuracies (narrower; "
            "right on average for models like them, too narrow for a model far better than all of "
            "them) instead of the exact mid-p one, which does not rest on the source models.",
        ),
    ] = False,
    metric: MetricOption = None,
    filter_name: FilterOption = None,
    reruns: RerunsOption = "latest",
) -> None:
    """Estimate full-benchmark accuracy of the models in RESULTS from their answers on the micro-benchmark,
    with an interval for each and the probability that each neighbouring order holds on the full benchmark."""
    if not 0 < level < 1:
        raise MdadError(f"--level must lie strictly between 0 and 1, got {level}.")
    from mdad.suite.file import is_suite_file

    if is_suite_file(micro):
        from mdad.cli.suite import Printers, estimate_suite_command, refuse_with_suite

        given = {"--compare": compare, "--pairs": pairs, "--compare-csv": compare_csv, "--metric": metric, "--filter": filter_name}
        refuse_with_suite({**given, "--clopper-pearson": clopper_pearson, "--population": population})
        everything = [str(results), *(more_results or [])]
        printers = Printers(print_report, print_table)
        return estimate_suite_command(micro=micro, results=everything, csv=csv, pairs_csv=pairs_csv, level=level, printers=printers)
    if more_results:
        raise MdadError(f"{micro} is a one-benchmark micro-benchmark: give one results path (several NAME=PATH are for a suite's).")
    if clopper_pearson and population:
        raise MdadError("--clopper-pearson and --population are two different intervals; choose one.")
    if pairs is not None and pairs != "all":
        raise MdadError(f"--pairs takes 'all' (every pair of models), got {pairs!r}; name pairs with --compare A,B.")
    asked = [parse_pair(text) for text in compare or []]
    outputs = {"the CSV file": csv, "the pairs CSV file": pairs_csv, "the comparisons CSV file": compare_csv}
    paths: dict[str, str | Path | None] = {what: None if text is None else output_path(text, what) for what, text in outputs.items()}
    for what, path in paths.items():
        if path is not None:
            check_output_file(path, what)
    check_outputs_apart({"the micro-benchmark file": micro, "the results": results}, paths)
    if paths["the comparisons CSV file"] is not None and not (asked or pairs):
        raise MdadError("--compare-csv writes the compared pairs; name them with --compare A,B or --pairs all.")
    chosen = SelectedMicroBenchmark.load(micro)
    if not results.exists():
        raise MdadError(f"No such file or folder: {results}.")
    matrix = load(results, metric=metric, filter_name=filter_name, reruns=reruns)
    print_notes(matrix)
    wanted = list(dict.fromkeys(asked + (all_pairs(matrix) if pairs == "all" else [])))
    report = estimate_report(
        chosen, matrix, level=level, population=population, mid_p=not clopper_pearson, pairs=wanted, results=results, near=[micro]
    )
    print_table(report.title, report.columns)
    print_report(report.notes)
    print_comparisons(report.comparisons)
    if paths["the CSV file"] is not None:
        write_csv(report.model_frame(), paths["the CSV file"])
    if paths["the pairs CSV file"] is not None:
        write_csv(report.orders.to_frame(), paths["the pairs CSV file"], what="the pairs CSV file")
    if paths["the comparisons CSV file"] is not None:
        write_csv(
            pd.concat([c.to_frame() for c in report.comparisons], ignore_index=True),
            paths["the comparisons CSV file"],
            what="the comparisons CSV file",
        )


def print_comparisons(comparisons: list[Comparison]) -> None:
    """One paragraph per compared pair, names and numbers never cut."""
    if comparisons:
        console.print(literal(f"Compared pairs ({comparisons[0].order_how}):"), highlight=False)
    for comparison in comparisons:
        console.print(literal(comparison.describe()), highlight=False, soft_wrap=True)


def print_table(title: str, columns: list[Column]) -> None:
    """The columns as a table that never cuts a number or an id. When the whole table is wider than the
    console, its text columns (model names, item ids) move below it, one numbered row per line, whole,
    and the number columns are split over as many tables as it takes, each with the row number."""
    if table_width(console, _table(title, columns)) <= console.width:
        console.print(_table(title, columns))
        return
    number = Column("#", [str(i + 1) for i in range(len(columns[0].cells))], numeric=True)
    parts: list[list[Column]] = [[number]]
    for column in (c for c in columns if not c.identifier):
        if len(parts[-1]) > 1 and table_width(console, _table(title, [*parts[-1], column])) > console.width:
            parts.append([number])
        parts[-1].append(column)
    for part in parts:
        console.print(_table(title, part))
        title = ""
    texts = [c for c in columns if c.identifier]
    for row in range(len(number.cells)):
        for i, column in enumerate(texts):  # the row's name, then each other text on its own line
            line = f"{row + 1:>3}  {column.cells[row]}" if i == 0 else f"     {column.name}: {column.cells[row]}"
            console.print(literal(line), highlight=False, soft_wrap=True)


def _table(title: str, columns: list[Column]) -> Table:
    """The columns as a rich table: every cell literal and unbroken, warnings in yellow."""
    table = Table(title=literal(title) if title else None)
    for column in columns:
        table.add_column(column.name, justify="right" if column.numeric else "left", no_wrap=True)
    for row in range(len(columns[0].cells)):
        cells = []
        for column in columns:
            text = literal(column.cells[row])
            cells.append(f"[yellow]{text}[/yellow]" if column.warned and column.warned[row] else text)
        table.add_row(*cells)
    return table
