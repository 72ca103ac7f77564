"""`mdad run`, `mdad report` and `mdad methods`: the experiment and its report."""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Literal

import typer

from mdad import methods as method_registry
from mdad.cli.common import (
    DatasetOption,
    FiguresOption,
    FilterOption,
    MetricOption,
    MissingOption,
    RerunsOption,
    SeedOption,
    ThresholdOption,
    WorkersOption,
    app,
    console,
    err_console,
    friendly_errors,
    load_matrix,
    parse_list,
    plural,
    progress_bar,
)
from mdad.cli.tables import TableColumn, print_fitted
from mdad.cli.text import literal
from mdad.data import DEFAULT_DATASET, ResponseMatrix
from mdad.data.builtin import BuiltinDataset, builtin_dataset
from mdad.data.provenance import data_spec
from mdad.defaults import ASSESS_RUNS, DEFAULT_SOURCES, DEFAULT_TARGETS, DEFAULT_THRESHOLD, EXPERIMENT_RUNS, EXPERIMENT_SIZES, percent
from mdad.errors import MdadError
from mdad.experiment.evaluate import METRICS, VIEWS, Metric
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.sizes import SizeRequest, parse_sizes, size_requests_note, unique_counts
from mdad.experiment.splits import n_seen_items
from mdad.experiment.store import ResultStore
from mdad.methods.names import STOP_SE
from mdad.methods.names import parse as parse_method
from mdad.metrics.pairwise import count_pairs
from mdad.outputs import check_output_folder, check_outputs_apart
from mdad.report.tables import MARK, NOT_ESTIMABLE, NOT_REACHED, format_exact, format_mdad, warnings, wide_summary
from mdad.workflow import RunOptions, earlier_cells_note, run_into_folder


def with_stop_rules(method_names: list[str], thresholds: list[str]) -> list[str]:
    """Each adaptive method named that has no stopping rule of its own, once per threshold of --stop-se (as
    METHOD@stop-se=S, read by mdad.methods.names); --stop-se without such a method is refused, not ignored."""
    adaptive = [m for m in method_names if method_registry.get(m).adaptive and not parse_method(m).stop_se]
    if thresholds and not adaptive:
        raise MdadError(
            "--stop-se applies to adaptive tests only (adaptive, adaptive-1d; docs/adaptive.md), and no adaptive test without a stopping "
            "rule of its own is among the methods: name one with --methods, or drop --stop-se."
        )
    return [str(parse_method(f"{m}{STOP_SE}{s}")) for s in thresholds for m in adaptive]


@app.command()
@friendly_errors
def run(
    ctx: typer.Context,
    dataset: DatasetOption = None,
    data: Annotated[
        Path | None,
        typer.Option(
            help=(
                "Your own results, any format 'mdad info' reads: an .npz, lm-eval samples, lighteval details, inspect logs or a "
                "CSV/parquet table (file or folder)."
            )
        ),
    ] = None,
    methods: Annotated[
        str | None,
        typer.Option(help=f"Comma-separated selection methods (default: all but {', '.join(method_registry.on_request())}; see 'mdad methods')."),
    ] = None,
    sizes: Annotated[
        str | None,
        typer.Option(
            help=(
                "Comma-separated numbers of items, or shares of the seen pool like 0.5%,1%,2% (max(2, floor(share x seen)) "
                f"items); default: {','.join(map(str, EXPERIMENT_SIZES))} up to the seen pool; the paper's "
                f"{','.join(map(str, builtin_dataset(DEFAULT_DATASET).sizes))} on {DEFAULT_DATASET}."
            )
        ),
    ] = None,
    sources: Annotated[
        str | None, typer.Option(help=f"Comma-separated numbers of source models (default: {DEFAULT_SOURCES}, or all non-target models if fewer).")
    ] = None,
    runs: Annotated[int, typer.Option(min=1, help="Random runs per cell.")] = EXPERIMENT_RUNS,
    targets: Annotated[
        int | None, typer.Option(help=f"Target models per run (default: {DEFAULT_TARGETS}, or half the models if fewer than {2 * DEFAULT_TARGETS}).")
    ] = None,
    group: Annotated[str | None, typer.Option(help="Use this named model group (groups.json beside the data) as the targets in every run.")] = None,
    targets_from: Annotated[
        Literal["random", "top"],
        typer.Option(
            help=(
                "Where targets come from: 'random' (a fresh draw per run) or 'top' (the strongest models by accuracy on all "
                "items are the targets of every run, the rest the sources)."
            )
        ),
    ] = "random",
    seed: SeedOption = 0,
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    per_subtask: Annotated[
        bool,
        typer.Option(
            "--per-subtask",
            help=("Also run every method per subtask (as METHOD@per-subtask), to compare with selection over the combined benchmark."),
        ),
    ] = False,
    stop_se: Annotated[
        str | None,
        typer.Option(
            help=(
                "Comma-separated thresholds S: every adaptive method named also runs with a stopping rule, as "
                "METHOD@stop-se=S (a model's test ends once its ability's posterior sd is below S, or at the size)."
            )
        ),
    ] = None,
    curve_sizes: Annotated[
        str | None, typer.Option(help="Sizes whose agreement curves the report shows (default: the smallest and the largest).")
    ] = None,
    figures: FiguresOption = None,
    missing: MissingOption = "error",
    workers: WorkersOption = 0,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler address (e.g. tcp://host:8786) to run cells on a cluster.")] = None,
    metric: MetricOption = None,
    filter_name: FilterOption = None,
    reruns: RerunsOption = "latest",
    out: Annotated[str, typer.Option(help="Output folder (a rerun with the same settings resumes).")] = "mdad-out",
    verbose: VerboseOption = False,
    suite: Annotated[
        str | None, typer.Option(help="Several benchmarks (NAME or NAME=PATH, commas): the protocol on their average, for each allocation.")
    ] = None,
    budget: Annotated[int | None, typer.Option(min=1, help="With --suite: items over all its benchmarks.")] = None,
    weights: Annotated[str | None, typer.Option(help="With --suite: the benchmarks' weights in the average (default equal).")] = None,
    normalise: Annotated[str | None, typer.Option(help="With --suite: NAME=BASELINE,...: rescale above random guessing.")] = None,
    assess_runs: Annotated[
        int | None,
        typer.Option(min=0, help=f"With --suite: held-out runs per benchmark that assess a learned method in each run (default {ASSESS_RUNS})."),
    ] = None,
) -> None:
    """Run the micro-benchmarking experiment and write results, tables and report.html."""
    if suite is not None or budget is not None or weights is not None or normalise is not None or assess_runs is not None:
        from mdad.cli.suite import refuse_with_suite, run_suite_command

        refuse_with_suite(
            {"--dataset": dataset, "--data": data, "--sizes": sizes, "--sources": sources, "--group": group, "--per-subtask": per_subtask}
            | {"--stop-se": stop_se, "--curve-sizes": curve_sizes, "--figures": figures, "--scheduler": scheduler, "--workers": workers}
            | {"--metric": metric, "--filter": filter_name, "--targets-from top": targets_from == "top"}
        )
        return run_suite_command(
            suite=suite, budget=budget, weights=weights, normalise=normalise, methods=methods, runs=runs, targets=targets, seed=seed,
            threshold=threshold, missing=missing, reruns=reruns, out=out, assess_runs=assess_runs,
        )  # fmt: skip
    if group is not None and targets is not None:
        raise MdadError("Give --group (a fixed set of targets) or --targets (a number drawn per run), not both.")
    check_outputs_apart({"the data": data}, {"the output folder": out})
    options = RunOptions(out=out, workers=workers, scheduler=scheduler, threshold=threshold, figures=figures)
    method_names = parse_list(methods, "methods") or method_registry.defaults()
    if per_subtask:
        method_names += [
            str(parse_method(m).variant()) for m in method_names if not parse_method(m).per_subtask and not method_registry.get(m).adaptive
        ]
    method_names += with_stop_rules(method_names, parse_list(stop_se, "stop-se"))
    matrix = load_matrix(dataset, data, seed, missing, metric, filter_name, reruns)
    builtin = builtin_dataset(dataset or DEFAULT_DATASET) if data is None else None
    n_seen = n_seen_items(matrix)
    requests = parse_sizes(sizes, n_seen) if sizes is not None else None
    config = ExperimentConfig.for_matrix(
        matrix,
        methods=list(dict.fromkeys(method_names)),
        runs=runs,
        targets=targets,
        group=group,
        seed=seed,
        sources=parse_list(sources, "sources", int) or None,
        targets_from=targets_from,
        sizes=unique_counts(requests) if requests is not None else builtin.sizes if builtin is not None else None,
    )
    if requests is None:
        requests = [SizeRequest(str(k), k) for k in config.sizes]
    elif note := size_requests_note(requests):
        console.print(literal(note), highlight=False)
    record = {
        "command": command_line(ctx),
        "data": data_spec(
            dataset=dataset or DEFAULT_DATASET, path=data, metric=metric, filter_name=filter_name, missing=missing, seed=seed, reruns=reruns
        ),
        "size_requests": [{"requested": r.requested, "items": r.items} for r in requests],
    }
    curve_list = unique_counts(parse_sizes(curve_sizes, n_seen)) if curve_sizes is not None else None
    run_locked(matrix, config, replace(options, curve_sizes=curve_list, record=record), builtin, verbose)


def run_locked(matrix: ResponseMatrix, config: ExperimentConfig, options: RunOptions, builtin: BuiltinDataset | None, verbose: bool = False) -> None:
    """Run into the output folder, under its lock: what will run, a progress bar, then the tables."""
    progress = progress_bar()
    bar = progress.add_task("cells", total=None)

    def start(experiment: Experiment) -> None:
        pending = print_start(experiment, builtin)
        progress.update(bar, total=pending)
        if pending:  # a fully resumed run has no cells to show
            progress.start()

    def stop() -> None:
        if progress.live.is_started:  # stopping twice would print an empty line
            progress.stop()

    def phase(text: str) -> None:
        stop()
        console.print(literal(text), highlight=False)

    def tables(summary, exact: dict[tuple[str, int], float]) -> None:  # while the report's figures are drawn
        print_results(summary, exact, options.threshold, verbose)

    try:
        outputs = run_into_folder(
            matrix, config, options, on_start=start, on_cells=lambda n: progress.advance(bar, n), on_phase=phase, on_summary=tables
        )
    except KeyboardInterrupt:
        stop()
        err_console.print(
            literal(f"Interrupted; finished cells and blocks of runs are kept in {options.out}. Run the same command again to resume."),
            highlight=False,
        )
        raise typer.Exit(130) from None
    finally:
        stop()
    out = literal(options.out)
    console.print(f"Results, tables and report: {out}/ (report.html)", highlight=False)
    if outputs.figure_files:
        console.print(f"Figures: {out}/figures/ ({len(outputs.figure_files)} {options.figures} files)", highlight=False)


def print_start(experiment: Experiment, builtin: BuiltinDataset | None) -> int:
    """What will run, what a rerun keeps and what was set aside; returns the cells still to compute."""
    matrix, config, store = experiment.matrix, experiment.config, experiment.store
    assert store is not None  # an experiment run into a folder
    pending = sum(len(t.cells) for t in experiment.pending_tasks())
    total = len(config.methods) * len(config.sizes) * len(config.sources)
    kept_blocks = store.n_blocks()
    label = matrix.source if not matrix.simulated or "simulated" in matrix.source else f"{matrix.source} (simulated)"
    n_targets = experiment.splits.targets.shape[1]
    targets_text = (
        f"group {config.group} as targets"
        if config.group
        else f"the {n_targets} strongest models as targets"
        if config.targets_from == "top"
        else f"{n_targets} targets"
    )
    console.print(
        literal(
            f"{label}: {plural(matrix.n_models, 'model')} x {plural(matrix.n_items, 'item')} ({plural(len(matrix.subtask_names), 'subtask')}, "
            f"{experiment.splits.n_seen} seen per run); {plural(config.runs, 'run')} of {targets_text}; "
            f"{plural(len(config.methods), 'method')} x {plural(len(config.sizes), 'size')} x "
            f"{plural(len(config.sources), 'source count')} = {plural(total, 'cell')}."
        ),
        highlight=False,
    )
    if builtin is not None:
        console.print(f"[dim]{literal(f'{builtin.name}: {builtin.benchmark}, {builtin.origin}.')}[/dim]", highlight=False)
    for sentence in experiment.recovered:
        err_console.print(f"[yellow]{literal(sentence)}[/yellow]", soft_wrap=True, highlight=False)
    if pending < total or kept_blocks:
        blocks_note = f" (and {plural(kept_blocks, 'finished block')} of runs of the others)" if kept_blocks else ""
        console.print(literal(f"Resuming: {total - pending} of {total} cells are already in {store.root}{blocks_note}."), highlight=False)
    if note := earlier_cells_note(experiment):
        err_console.print(f"[yellow]{literal(note)}[/yellow]", highlight=False)
    return pending


def command_line(ctx: typer.Context) -> str:
    """The command as typed: every option the user set on the command line (or by environment), in order."""
    parts = ["mdad", ctx.info_name or "run"]
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name)
        if source is None or source.name not in ("COMMANDLINE", "ENVIRONMENT"):
            continue
        value, flag = ctx.params[param.name], param.opts[0]
        if getattr(param, "is_flag", False):
            parts.append(flag if value else (param.secondary_opts or [flag])[0])
        elif param.param_type_name == "argument":
            parts.append(shlex.quote(str(value)))
        else:
            parts += [flag, shlex.quote(str(value))]
    return " ".join(parts)


@app.command()
@friendly_errors
def report(
    out: Annotated[Path, typer.Argument(help="A folder written by 'mdad run'.")],
    threshold: Annotated[float | None, typer.Option(help="Recompute MDAD at another agreement threshold.")] = None,
    curve_sizes: Annotated[str | None, typer.Option(help="Sizes whose agreement curves the report shows (default: as run).")] = None,
    figures: FiguresOption = None,
    workers: WorkersOption = 0,
    verbose: VerboseOption = False,
) -> None:
    """Rebuild tables and report.html from stored results alone."""
    from mdad.report.html import build_outputs

    store = ResultStore(out)
    stored = store.read_config()
    n_seen = stored.get("n_seen") or 0
    check_outputs_apart({"the data of the run": (stored.get("data") or {}).get("path")}, {"the results folder": out})
    check_output_folder(out, "the results folder")
    curve_list = list(unique_counts(parse_sizes(curve_sizes, n_seen))) if curve_sizes is not None else None
    with store.locked():
        outputs = build_outputs(
            out,
            threshold,
            curve_sizes=curve_list,
            figure_format=figures,
            workers=workers or os.cpu_count() or 1,
            on_phase=lambda text: console.print(literal(text), highlight=False),
        )
    print_results(outputs.summary, outputs.exact, threshold if threshold is not None else stored.get("threshold", DEFAULT_THRESHOLD), verbose)
    if note := store.version_note():
        err_console.print(f"[yellow]{literal(note)}[/yellow]", highlight=False)
    console.print(f"Report: {literal(outputs.report)}", highlight=False)
    if outputs.figure_files:
        console.print(f"Figures: {literal(out)}/figures/ ({len(outputs.figure_files)} {figures} files)", highlight=False)


VerboseOption = Annotated[
    bool, typer.Option("--verbose", help="Also print one table per method, the robust MDAD beside each MDAD and every note on a marked number.")
]


def print_results(summary, exact: dict[tuple[str, int], float], threshold: float = DEFAULT_THRESHOLD, verbose: bool = False) -> None:
    """What a run found, short: the overview of every method's MDAD by size, the same plain-words
    sentences as report.html's, the main caveats and what MDAD means. ``verbose`` first prints one
    table per method and every note on a marked or missing number (the rest is in report.html)."""
    if summary.empty:
        console.print("No finished cells.")
        return
    if verbose:
        print_table(summary)
        for line in warnings(summary, robust=False):  # the robust MDAD is in the lines under each table
            console.print(literal(line), highlight=False)
    print_overview(summary)
    print_headline(summary, exact, threshold)
    print_caveats(summary, verbose)
    behind = ""
    if "target_pairs" in summary:
        low, high = int(summary["target_pairs"].min()), int(summary["target_pairs"].max())
        behind = f"; each MDAD rests on {low:,}{f' to {high:,}' if high != low else ''} target pairs (all runs)"
    console.print(
        f"MDAD: the smallest accuracy difference ordered correctly {percent(threshold)} of the time "
        f"(--threshold {threshold:g}), in accuracy points{behind}.",
        highlight=False,
    )


def print_headline(summary, exact: dict[tuple[str, int], float], threshold: float) -> None:
    """The sentences report.html opens with (the same words and numbers): one per size comparing the
    methods, or one per method when there is one."""
    from mdad.report.html import comparison_sentences, summary_sentences  # with matplotlib: imported by the report, not at start-up

    sentences = comparison_sentences(summary, exact=exact) or summary_sentences(summary, threshold, None, exact)
    seen = summary[summary["view"] == "seen"]
    console.print(f"In plain words (seen items, {int(seen['sources'].max())} source models):", highlight=False)
    for sentence in sentences:
        console.print(literal(f"- {sentence}"), highlight=False)


def print_caveats(summary, verbose: bool) -> None:
    """The main caveats in a line or two each: how many numbers are marked (*) or missing, and the
    targets whose model-based estimates extrapolate; where to read each of them."""
    where = "listed above" if verbose else "each listed by --verbose and in report.html"
    rows = summary[summary["mdad_warning"].fillna("") != ""] if "mdad_warning" in summary else summary.iloc[:0]
    missing = int((~rows["mdad_estimable"].astype(bool)).sum()) if "mdad_estimable" in rows else 0
    marked = len(rows) - missing
    if marked:
        console.print(
            f"{MARK} marks {plural(marked, 'MDAD')} (seen and unseen items) whose first crossing is noise: too few pairs in "
            f"its bin, or the robust MDAD disagrees beyond both intervals; the sentences above read the robust MDAD there "
            f"({where}).",
            highlight=False,
        )
    if missing:
        console.print(f"{plural(missing, 'MDAD')} cannot be estimated from so few target pairs ({where}).", highlight=False)
    if "flagged_per_run" in summary and summary["flagged_per_run"].notna().any():
        flagged = summary[summary["view"] == "seen"].groupby("method", sort=True)["flagged_per_run"].max().dropna()
        console.print(
            literal(
                "Model-based estimates extrapolate for some targets (their ability lies outside the source models' range, or "
                f"their answers fit the IRT model badly), at most per run: {', '.join(f'{m} {v:.1f}' for m, v in flagged.items())}."
            ),
            highlight=False,
        )


def print_table(summary) -> None:
    """One compact table per method and number of source models: MDAD [95% CI] (beside it, for uniform
    random, the exact MDAD) and every metric of ``METRICS``, seen and unseen; under it the robust MDAD."""
    frame = wide_summary(summary)
    columns: list[tuple[str, str, Metric | None]] = [(f"MDAD {view}", f"MDAD {view} (pts)", None) for view in VIEWS]
    columns += [(f"exact MDAD\n{view}", f"exact MDAD {view} (pts)", None) for view in VIEWS]
    columns += [(f"{metric.label}\n{view}", metric.column(view), metric) for metric in METRICS for view in VIEWS]
    for (method, n_sources), rows in frame.groupby(["method", "sources"], sort=False):
        values = [
            TableColumn(header, [str(v) if metric is None or isinstance(v, str) else f"{v:.{metric.digits}f}" for v in rows[col]])
            for header, col, metric in columns
            if col in rows and (rows[col] != "").any()  # the exact MDAD: uniform random only
        ]
        groups = [values[i : i + len(VIEWS)] for i in range(0, len(values), len(VIEWS))]  # a quantity's views side by side
        print_fitted(console, f"{literal(method)} ({n_sources} source models)", [TableColumn("size", [str(v) for v in rows["size"]])], groups)
        print_beside(rows)
        if "flagged targets per run" in rows and (rows["flagged targets per run"] != "").any():
            counts = ", ".join(
                f"{size} items {flagged}" for size, flagged in zip(rows["size"], rows["flagged targets per run"], strict=True) if flagged != ""
            )
            console.print(f"Flagged targets per run (model-based estimates that extrapolate): {counts}.", highlight=False)
        if "items used" in rows and (rows["items used"] != "").any():
            used = ", ".join(f"{size} items {text}" for size, text in zip(rows["size"], rows["items used"], strict=True) if text != "")
            console.print(f"Items each target answered before the stopping rule ended its test, mean (sd) at each budget: {used}.", highlight=False)


def print_beside(rows) -> None:
    """Under a method's table (a line, not columns: the table stays within 80 columns): the robust MDAD and
    the pairs in the first crossing's bin beside each MDAD of the table."""
    for view in VIEWS:
        robust, pairs = f"robust MDAD {view} (pts)", f"pairs at MDAD {view}"
        if robust not in rows or pairs not in rows:
            continue
        beside = "; ".join(
            f"{size} items {text} ({count_pairs(int(n))})"
            for size, text, n in zip(rows["size"], rows[robust], rows[pairs], strict=True)
            if text != NOT_ESTIMABLE
        )
        if beside:
            console.print(literal(f"Robust MDAD {view} [interval] (pairs in the first crossing's bin): {beside}."), highlight=False)


def print_overview(summary) -> None:
    """MDAD on the seen items, method x size, the smallest of each size in bold; under each uniform random
    method, its exact MDAD (the same runs, no simulation)."""
    seen = summary[summary["view"] == "seen"]
    for n_sources, part in seen.groupby("sources", sort=True):
        estimable = part["mdad_estimable"].astype(bool) if "mdad_estimable" in part else True
        part = part.assign(shown=part["mdad"].where(estimable))
        values = part.pivot_table(index="method", columns="size", values="shown", aggfunc="first", dropna=False)
        text = {(r["method"], r["size"]): format_mdad(r).split(" [")[0] for _, r in part.iterrows()}
        exact = {(r["method"], r["size"]): format_exact(r) for _, r in part.iterrows()} if "mdad_exact_reached" in part else {}
        best = values.min(axis=0)
        names: list[str] = []
        cells: dict[int, list[str]] = {size: [] for size in values.columns}
        for method in values.index:
            names.append(literal(method))
            for size in values.columns:
                shown = text.get((method, size), NOT_REACHED)
                cells[size].append(f"[bold]{shown}[/bold]" if values.loc[method, size] == best[size] else shown)
            if any(exact.get((method, size)) for size in values.columns):
                names.append(literal(f"{method}, exact"))
                for size in values.columns:
                    cells[size].append(exact.get((method, size)) or "")
        print_fitted(
            console,
            f"MDAD on the seen items (points) by number of items ({n_sources} source models)",
            [TableColumn("method", names, right=False)],
            [[TableColumn(str(size), column)] for size, column in cells.items()],
        )
