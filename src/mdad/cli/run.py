"""`mdad run`, `mdad report` and `mdad methods`: the experiment and its report."""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Optional

import numpy as np
import typer
from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from mdad import methods as method_registry
from mdad.cli.common import (
    DATASET_HELP, DEFAULT_DATASET, FILTER_HELP, METRIC_HELP, RERUNS_HELP, app, check_workers, console, err_console,
    friendly_errors, load_matrix, parse_list, plural,
)
from mdad.data.builtin import builtin_dataset
from mdad.data.provenance import data_spec
from mdad.defaults import DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.experiment.evaluate import METRICS, VIEWS
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.splits import n_seen_items
from mdad.experiment.sizes import SizeRequest, parse_sizes, unique_counts
from mdad.methods.per_subtask import SUFFIX as PER_SUBTASK
from mdad.methods.per_subtask import is_per_subtask
from mdad.experiment.store import ResultStore
from mdad.report.tables import NOT_REACHED, wide_summary


@app.command()
@friendly_errors
def run(
    ctx: typer.Context,
    dataset: str = typer.Option(DEFAULT_DATASET, help=DATASET_HELP),
    data: Optional[Path] = typer.Option(None, help="Your own results, any format 'mdad info' reads: an .npz, lm-eval samples, lighteval details, inspect logs or a CSV/parquet table (file or folder)."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated selection methods (default: all but adaptive, adaptive-1d and aipw; see 'mdad methods')."),
    sizes: Optional[str] = typer.Option(None, help="Comma-separated numbers of items, or shares of the seen pool like 0.5%,1%,2% (max(2, floor(share x seen)) items); default: 10,25,50,100,250,500,1000 up to the seen pool; the paper's 10,25,50,100,200 on gpqa."),
    sources: Optional[str] = typer.Option(None, help="Comma-separated numbers of source models (default: 300, or all non-target models if fewer)."),
    runs: int = typer.Option(50, help="Random runs per cell."),
    targets: Optional[int] = typer.Option(None, help="Target models per run (default: 50, or half the models if fewer than 100)."),
    group: Optional[str] = typer.Option(None, help="Use this named model group (groups.json beside the data) as the targets in every run."),
    targets_from: str = typer.Option("random", help="Where targets come from: 'random' (a fresh draw per run) or 'top' (the strongest models by accuracy on all items are the targets of every run, the rest the sources)."),
    seed: int = typer.Option(0, help="The one seed behind every random draw."),
    threshold: float = typer.Option(DEFAULT_THRESHOLD, help="Agreement rate that defines MDAD."),
    per_subtask: bool = typer.Option(False, "--per-subtask", help="Also run every method per subtask (as METHOD@per-subtask), to compare with selection over the combined benchmark."),
    curve_sizes: Optional[str] = typer.Option(None, help="Sizes whose agreement curves the report shows (default: the smallest and the largest)."),
    figures: Optional[str] = typer.Option(None, help="Also write every figure to OUT/figures/ as svg, pdf or png."),
    missing: str = typer.Option("error", help="Cells not evaluated: error, drop-items or drop-models."),
    workers: int = typer.Option(0, help="Local worker processes (default 0: one per CPU core; 1: this process only)."),
    scheduler: Optional[str] = typer.Option(None, help="Dask scheduler address (e.g. tcp://host:8786) to run cells on a cluster."),
    metric: Optional[str] = typer.Option(None, help=METRIC_HELP),
    filter_name: Optional[str] = typer.Option(None, "--filter", help=FILTER_HELP),
    reruns: str = typer.Option("latest", help=RERUNS_HELP),
    out: Path = typer.Option(Path("mdad-out"), help="Output folder (a rerun with the same settings resumes)."),
) -> None:
    """Run the micro-benchmarking experiment and write results, tables and report.html."""
    check_threshold(threshold)
    check_figure_format(figures)
    check_workers(workers)
    matrix = load_matrix(dataset, data, seed, missing, metric, filter_name, reruns)
    method_names = parse_list(methods, "methods") or method_registry.defaults()
    if per_subtask:
        method_names += [f"{m}{PER_SUBTASK}" for m in method_names
                         if not is_per_subtask(m) and not method_registry.get(m).adaptive]
    method_names = list(dict.fromkeys(method_names))
    builtin = builtin_dataset(dataset) if data is None else None
    defaults = ExperimentConfig.for_matrix(matrix, methods=method_names, runs=runs, targets=targets, group=group,
                                           seed=seed, sources=parse_list(sources, "sources", int) or None,
                                           sizes=builtin.sizes if builtin is not None else None,
                                           targets_from=targets_from)
    n_seen = n_seen_items(matrix)
    requests = parse_sizes(sizes, n_seen) if sizes else [SizeRequest(str(k), k) for k in defaults.sizes]
    config = replace(defaults, sizes=unique_counts(requests))
    curve_list = list(unique_counts(parse_sizes(curve_sizes, n_seen))) if curve_sizes else None
    for k in curve_list or []:
        if k not in config.sizes:
            raise MdadError(f"--curve-sizes: size {k} is not among the sizes run ({', '.join(map(str, config.sizes))}).")
    size_list, source_list = config.sizes, config.sources
    store = ResultStore(out)
    experiment = Experiment(matrix, config, store=store)
    extra = {"command": command_line(ctx), "threshold": threshold, "curve_sizes": curve_list,
             "data": data_spec(dataset=dataset, path=data, metric=metric, filter_name=filter_name, missing=missing,
                               seed=seed, reruns=reruns),
             "size_requests": [{"requested": r.requested, "items": r.items} for r in requests]}
    experiment.open_store(extra)
    pending = sum(len(t.cells) for t in experiment.pending_tasks())
    total = len(method_names) * len(size_list) * len(source_list)
    kept_blocks = store.n_blocks()
    label = matrix.source if not matrix.simulated or "simulated" in matrix.source else f"{matrix.source} (simulated)"
    targets_text = (f"group {group} as targets" if group else
                    f"the {experiment.splits.targets.shape[1]} strongest models as targets" if targets_from == "top" else
                    f"{experiment.splits.targets.shape[1]} targets")
    console.print(f"{label}: {plural(matrix.n_models, 'model')} x {plural(matrix.n_items, 'item')} ({plural(len(matrix.subtask_names), 'subtask')}, "
                  f"{n_seen} seen per run); {plural(runs, 'run')} of {targets_text}; {plural(len(method_names), 'method')} x "
                  f"{plural(len(size_list), 'size')} x {plural(len(source_list), 'source count')} = {plural(total, 'cell')}.",
                  highlight=False)
    if builtin is not None:
        console.print(f"[dim]{builtin.name}: {builtin.benchmark}, {builtin.origin}.[/dim]", highlight=False)
    if pending < total or kept_blocks:
        blocks_note = f" (and {kept_blocks} finished blocks of runs of the others)" if kept_blocks else ""
        console.print(f"Resuming: {total - pending} of {total} cells are already in {out}{blocks_note}.")
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), console=console,
                  transient=False) as progress:
        bar = progress.add_task("cells", total=pending)
        try:
            experiment.run(workers=workers or os.cpu_count() or 1, on_cells=lambda n: progress.advance(bar, n),
                           extra_config=extra, scheduler=scheduler)
        except KeyboardInterrupt:
            err_console.print(f"Interrupted; finished cells and blocks of runs are kept in {out}. Run the same command "
                              "again to resume.")
            raise typer.Exit(130) from None
    from mdad.report.html import build_outputs  # matplotlib: imported when a report is drawn

    outputs = build_outputs(out, threshold, figure_format=figures)
    print_table(outputs.summary)
    console.print(f"Results, tables and report: {out}/ (report.html)")
    if outputs.figure_files:
        console.print(f"Figures: {out}/figures/ ({len(outputs.figure_files)} {figures} files)")


def check_figure_format(figures: str | None) -> None:
    from mdad.report.figures import FORMATS

    if figures is not None and figures not in FORMATS:
        raise MdadError(f"--figures must be one of {', '.join(FORMATS)}, got {figures!r}.")


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
    out: Path = typer.Argument(..., help="A folder written by 'mdad run'."),
    threshold: Optional[float] = typer.Option(None, help="Recompute MDAD at another agreement threshold."),
    curve_sizes: Optional[str] = typer.Option(None, help="Sizes whose agreement curves the report shows (default: as run)."),
    figures: Optional[str] = typer.Option(None, help="Also write every figure to OUT/figures/ as svg, pdf or png."),
) -> None:
    """Rebuild tables and report.html from stored results alone."""
    from mdad.report.html import build_outputs

    check_figure_format(figures)
    n_seen = ResultStore(out).read_config().get("n_seen") or 0
    curve_list = list(unique_counts(parse_sizes(curve_sizes, n_seen))) if curve_sizes else None
    outputs = build_outputs(out, threshold, curve_sizes=curve_list, figure_format=figures)
    print_table(outputs.summary)
    console.print(f"Report: {outputs.report}")
    if outputs.figure_files:
        console.print(f"Figures: {out}/figures/ ({len(outputs.figure_files)} {figures} files)")


def print_table(summary) -> None:
    """One compact table per method and number of source models: MDAD [95% CI] and every metric of
    ``METRICS``, seen and unseen."""
    frame = wide_summary(summary)
    if frame.empty:
        console.print("No finished cells.")
        return
    columns = [(f"MDAD {view}", f"MDAD {view} (pts)", None) for view in VIEWS]
    columns += [(f"{metric.label}\n{view}", metric.column(view), metric) for metric in METRICS for view in VIEWS]
    for (method, n_sources), rows in frame.groupby(["method", "sources"], sort=False):
        table = Table(title=f"{method} ({n_sources} source models)", title_justify="left", box=box.SIMPLE_HEAD,
                      pad_edge=False)
        table.add_column("size", justify="right", no_wrap=True)
        for header, _, _ in columns:
            table.add_column(header, justify="right", no_wrap=True)
        guarded = "flagged targets per run" in rows and (rows["flagged targets per run"] != "").any()
        if guarded:
            table.add_column("flagged\nper run", justify="right", no_wrap=True)
        for _, row in rows.iterrows():
            cells = [row[col] if metric is None else f"{row[col]:.{metric.digits}f}" for _, col, metric in columns]
            table.add_row(str(row["size"]), *cells, *([row["flagged targets per run"]] if guarded else []))
        console.print(table)
    if "flagged_per_run" in summary and summary["flagged_per_run"].notna().any():
        console.print("flagged per run: targets whose model-based estimate is an extrapolation (ability outside the "
                      "source models' range, or answers that fit the IRT model badly).")
    print_overview(summary)
    console.print("MDAD and error in accuracy points; MDAD [95% bootstrap interval].")


def print_overview(summary) -> None:
    """With several methods: MDAD on the seen items, method x size, the smallest of each size in bold."""
    seen = summary[summary["view"] == "seen"]
    if seen["method"].nunique() < 2:
        return
    for n_sources, part in seen.groupby("sources", sort=True):
        values = part.pivot_table(index="method", columns="size", values="mdad", aggfunc="first", dropna=False)
        best = values.min(axis=0)
        table = Table(title=f"MDAD on the seen items (points) by number of items ({n_sources} source models)",
                      title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        table.add_column("method", no_wrap=True)
        for size in values.columns:
            table.add_column(str(size), justify="right", no_wrap=True)
        for method, row in values.iterrows():
            cells = [NOT_REACHED if np.isnan(v) else f"[bold]{v:g}[/bold]" if v == best[size] else f"{v:g}"
                     for size, v in row.items()]
            table.add_row(str(method), *cells)
        console.print(table)


@app.command("methods")
def list_methods() -> None:
    """List the selection methods."""
    for name, cls in method_registry.REGISTRY.items():
        console.print(f"[bold]{name}[/bold]: {cls.description}")
    console.print(f"Every method but the adaptive ones also runs within each subtask as NAME{PER_SUBTASK} (or add "
                  "--per-subtask to 'mdad run').")

