"""`mdad select` and `mdad estimate`: build a micro-benchmark once, then score new models with it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
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
from mdad.memory import human
from mdad.micro import SelectedMicroBenchmark
from mdad.micro.asked_pairs import check_values, resolve
from mdad.micro.comparison import Comparison, comparisons_frame
from mdad.micro.estimation import Column, check_interval_options, compare_every_pair, compared_rows, estimate_report
from mdad.micro.notes import Note
from mdad.micro.selection import Selection, assessment_runs, build_selection, check_sample_lists, harness_plan
from mdad.outputs import atomic_file, check_output_file, check_outputs_apart, is_stream, locked_outputs, neutralise_formulas, write_csv, writing


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
            help=(
                "Where to write the items as lm-evaluation-harness --samples JSON (task -> document indices) for the printed "
                "command (default, for lm-eval logs: beside --out, OUT.samples.json); refused for other data."
            )
        ),
    ] = None,
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
    scheduler: Annotated[
        str | None, typer.Option(help="Dask scheduler address (e.g. tcp://host:8786) that runs the assessment's held-out runs, as 'mdad run' can.")
    ] = None,
) -> None:
    """Choose SIZE items with METHOD, using every model of the data as a source model, and measure
    how reliable the choice is on held-out models. With harness logs, also print the command that
    runs a new model on the items only (and write the samples file it reads beside OUT). With --suite, split a budget
    across several benchmarks (docs/suites.md)."""
    suite_options = {"--budget": budget, "--allocation": allocation, "--weights": weights, "--normalise": normalise}
    if suite is not None:
        from mdad.cli.suite import Printers, refuse_with_suite, select_suite_command

        given = {"--size": size, "--dataset": dataset, "--data": data, "--targets": targets, "--lm-eval-samples": lm_eval_samples}
        refuse_with_suite({**given, "--audit-items": audit_items, "--scheduler": scheduler})
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
    if scheduler is not None and workers:
        raise MdadError("--workers counts local processes and --scheduler sends the held-out runs to a cluster; give one of them.")
    out_path = output_path(out, "the micro-benchmark file")
    samples_path = None if lm_eval_samples is None else output_path(lm_eval_samples, "the lm-eval samples file")
    check_threshold(threshold)
    check_sample_lists(method, samples_file=samples_path is not None)  # before any work
    outputs: dict[str, str | Path | None] = {"the micro-benchmark file": out_path, "the lm-eval samples file": samples_path}
    for what, path in outputs.items():
        if path is not None:
            check_output_file(path, what)
    check_outputs_apart({"the data": data}, outputs)
    with locked_outputs(outputs):
        matrix = load_matrix(dataset, data, seed, missing, metric, filter_name, reruns)
        asked = True if samples_path is not None else (False if is_stream(out_path) else None)
        plan = harness_plan(matrix, method, samples_file=asked)  # before any work, as every option check
        beside: dict[str, str | Path | None] = {}
        if plan.samples_file and plan.writer is not None and samples_path is None:  # beside --out, checked and locked as it is
            samples_path = default_samples_path(out_path)
            beside[str(plan.writer.samples_file)] = samples_path
            check_output_file(samples_path, str(plan.writer.samples_file))
            check_outputs_apart({"the data": data}, {**outputs, **beside})
        with locked_outputs(beside):
            selection = _select(matrix, method, size, seed, assess_runs, targets, threshold, workers, asked, audit_items, scheduler)
            selection.save(out_path, samples_path)
    print_report(selection.report(out_path, samples_path))


def default_samples_path(out: Path) -> Path:
    """Where the harness's samples file goes when not named: beside the micro-benchmark, OUT.samples.json."""
    return out.with_name(f"{out.stem if out.suffix == '.json' else out.name}.samples.json")


def _select(
    matrix,
    method: str,
    size: int,
    seed: int,
    assess_runs: int,
    targets: int | None,
    threshold: float,
    workers: int,
    samples_file,
    audit_items: int,
    scheduler: str | None,
) -> Selection:
    """``build_selection`` with a progress bar while held-out runs are made."""
    runs = assessment_runs(matrix.n_models, assess_runs, targets)
    progress = progress_bar()
    choosing = progress.add_task(f"Choosing {plural(size, 'item')} with {method}", total=1)
    held_out = progress.add_task("Held-out runs", total=runs, visible=False)

    def selected() -> None:
        progress.update(choosing, completed=1)
        progress.update(held_out, visible=True)

    with progress if runs else nullcontext():
        return build_selection(
            matrix,
            method,
            size,
            seed=seed,
            runs=assess_runs,
            targets=targets,
            threshold=threshold,
            workers=workers or os.cpu_count() or 1,
            samples_file=samples_file,
            audit_items=audit_items,
            on_selected=selected,
            on_runs=lambda done: progress.advance(held_out, done),
            scheduler=scheduler,
        )


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
            help="Also write one row per model (model, estimate, low, high, level, mark: what the table's '!' says, empty "
            "where nothing is known against the interval; p_best; with audit items also corrected, corrected_low, corrected_high) "
            "to this CSV file."
        ),
    ] = None,
    pairs_csv: Annotated[
        str | None,
        typer.Option(help="Also write one row per neighbouring pair (first, second, gap, probability, mark: what the '!' says) to this CSV file."),
    ] = None,
    compare: Annotated[
        list[str] | None,
        typer.Option(
            help="Compare two models, any two: A,B, or one name per option (--compare A --compare B, for a name "
            "holding a comma); repeatable. Prints the two models' rows, the gap, P(the full benchmark "
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
    check_values(compare or [])
    outputs = {"the CSV file": csv, "the pairs CSV file": pairs_csv, "the comparisons CSV file": compare_csv}
    paths: dict[str, str | Path | None] = {what: None if text is None else output_path(text, what) for what, text in outputs.items()}
    for what, path in paths.items():
        if path is not None:
            check_output_file(path, what)
    check_outputs_apart({"the micro-benchmark file": micro, "the results": results}, paths)
    if paths["the comparisons CSV file"] is not None and not (compare or pairs):
        raise MdadError("--compare-csv writes the compared pairs; name them with --compare A,B or --pairs all.")
    with locked_outputs(paths):  # from here to the last write: a second command writing one of them is refused
        chosen = SelectedMicroBenchmark.load(micro)
        check_interval_options(chosen, clopper_pearson=clopper_pearson, population=population)
        if not results.exists():
            raise MdadError(f"No such file or folder: {results}.")
        matrix = load(results, metric=metric, filter_name=filter_name, reruns=reruns)
        asked, alike = resolve(compare or [], matrix.models.tolist(), matrix.source)
        every = pairs == "all"
        if every:
            check_every_pair(matrix.n_models, paths["the comparisons CSV file"])
        print_notes(matrix)
        report = estimate_report(
            chosen, matrix, level=level, population=population, mid_p=not clopper_pearson, pairs=asked, results=results, near=[micro]
        )
        if asked and not every:  # the comparison asked for, with the two models' rows, not the whole ranking
            print_table(*compared_rows(report.title, report.columns, [name for pair in asked for name in pair]))
        else:
            print_table(report.title, report.columns)
            print_report(report.notes)
        print_report([Note(text, warning=True) for text in alike])
        print_comparisons(report.comparisons)
        if paths["the CSV file"] is not None:
            write_csv(report.model_frame(), paths["the CSV file"])
        if paths["the pairs CSV file"] is not None:
            write_csv(report.orders.to_frame(), paths["the pairs CSV file"], what="the pairs CSV file")
        with streamed_csv(paths["the comparisons CSV file"], "the comparisons CSV file") as write:
            if write is not None and not every:  # with --pairs all the pairs asked for are among every pair
                write(comparisons_frame(report.comparisons))
            if every:
                found = compare_every_pair(chosen, matrix, None if write is None else lambda block: write(comparisons_frame(block)))
                print_comparisons(found.closest, heading=f"Every pair ({found.pairs:,}), the {len(found.closest)} closest by estimate")
                if found.pairs > len(found.closest):
                    rest = f"{found.pairs - len(found.closest):,} more pairs"
                    where = f"in {paths['the comparisons CSV file']}" if write is not None else "(write every pair with --compare-csv)"
                    console.print(literal(f"... {rest} {where}."), highlight=False)


PAIR_CSV_ROW_BYTES = 160  # a row of the comparisons CSV besides the two names, measured 120-150 bytes


def check_every_pair(n_models: int, csv: str | Path | None) -> None:
    """'--pairs all' up front, as 'mdad compare' is: the number of pairs, and with --compare-csv the disk space their
    rows need (refused when the folder lacks it); memory stays bounded (pairs in blocks, only the closest printed)."""
    n_pairs = n_models * (n_models - 1) // 2
    if csv is None or is_stream(csv):
        return
    need = n_pairs * PAIR_CSV_ROW_BYTES
    free = shutil.disk_usage(Path(csv).resolve().parent).free
    if need > free:
        raise MdadError(
            f"--pairs all on {n_models:,} models compares {n_pairs:,} pairs; their comparisons CSV would need about {human(need)} "
            f"of disk space, but only {human(free)} is free there."
        )


@contextmanager
def streamed_csv(path: str | Path | None, what: str) -> Iterator[Callable[[pd.DataFrame], None] | None]:
    """A writer that appends frames to the CSV file at ``path`` (header once, formulas neutralised), written to a
    temporary file beside it and renamed when complete (outputs.atomic_file), so that an error leaves no partial file; None without a path."""
    if path is None:
        yield None
        return
    if is_stream(path):
        with writing(path, what), open(path, "w", newline="", encoding="utf-8") as handle:
            yield _appender(handle)
        return
    with atomic_file(path, what) as temp, writing(path, what), open(temp, "w", newline="", encoding="utf-8") as part:
        yield _appender(part)


def _appender(handle) -> Callable[[pd.DataFrame], None]:
    header = [True]

    def write(frame: pd.DataFrame) -> None:
        neutralise_formulas(frame).to_csv(handle, header=header[0], index=False)
        header[0] = False

    return write


def print_comparisons(comparisons: list[Comparison], heading: str = "Compared pairs") -> None:
    """One paragraph per compared pair, names and numbers never cut."""
    if comparisons:
        console.print(literal(f"{heading} ({comparisons[0].order_how}):"), highlight=False)
    for comparison in comparisons:
        console.print(literal(comparison.describe()), highlight=False, soft_wrap=True)


NAME_WIDTH = 16  # the narrowest a column of names gets in a narrow console: longer names wrap within their row


def print_table(title: str, columns: list[Column]) -> None:
    """The columns as a table that never cuts a number or an id. When the whole table is wider than the console (80
    columns, or a pipe), names and item ids wrap within their rows, and the number columns are split over as many
    tables as it takes, each beginning with the model's name."""
    if table_width(console, _table(title, columns)) <= console.width:
        console.print(_table(title, columns))
        return
    names = [c for c in columns if c.identifier]
    narrow = [replace(c, cells=[cell[:NAME_WIDTH] for cell in c.cells]) for c in names[:1]]  # for measuring only
    parts: list[list[Column]] = [[]]
    for column in (c for c in columns if not c.identifier):
        if parts[-1] and table_width(console, _table(title, [*narrow, *parts[-1], column])) > console.width:
            parts.append([])
        parts[-1].append(column)
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        console.print(_table(title if i == 0 else "", [*names[:1], *part, *(names[1:] if last else [])], fold=True))


def _table(title: str, columns: list[Column], *, fold: bool = False) -> Table:
    """The columns as a rich table: every cell literal, numbers unbroken, warnings in yellow; with ``fold``, names and
    item ids wrap within their rows (never cut)."""
    table = Table(title=literal(title) if title else None)
    for column in columns:
        wraps = fold and column.identifier
        table.add_column(
            column.name,
            justify="right" if column.numeric else "left",
            no_wrap=not wraps,
            overflow="fold" if wraps else "ellipsis",
            min_width=min(NAME_WIDTH, max((len(cell) for cell in column.cells), default=0)) if wraps else None,
        )
    for row in range(len(columns[0].cells)):
        cells = []
        for column in columns:
            text = literal(column.cells[row])
            cells.append(f"[yellow]{text}[/yellow]" if column.warned and column.warned[row] else text)
        table.add_row(*cells)
    return table
