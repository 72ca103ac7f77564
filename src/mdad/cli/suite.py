"""``mdad select --suite`` and ``mdad estimate SUITE.json NAME=PATH ...``: thin over mdad.suite.

The select and estimate commands (mdad.cli.micro) hand over to these when they are given a suite, with their
printers (``Printers``: the report's lines and the estimate table), so that the two commands print alike.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np
from rich.table import Table

from mdad import methods as method_registry
from mdad.cli.common import console, err_console, output_path, progress_bar
from mdad.cli.text import literal
from mdad.defaults import ASSESS_RUNS, DEFAULT_LEVEL, DEFAULT_TARGETS, DEFAULT_THRESHOLD
from mdad.errors import MdadError
from mdad.micro.comparison import format_probability
from mdad.micro.estimation import Column
from mdad.micro.notes import Note
from mdad.outputs import check_output_file, check_output_folder, check_outputs_apart, write_csv
from mdad.report.suite import summary_table, write_suite_report
from mdad.suite import Suite, SuiteMicroBenchmark, select_suite
from mdad.suite.allocation import check_allocation
from mdad.suite.experiment import assessed, run_suite
from mdad.suite.planning import plan_suite
from mdad.suite.suite import one_source, parse_assignments


class Printers(NamedTuple):
    """How the commands print: report lines (mdad.cli.micro.print_report) and a table (mdad.cli.micro.print_table)."""

    report: Callable[[list[Note]], None]
    table: Callable[[str, list[Column]], None]


def refuse_with_suite(given: Mapping[str, object]) -> None:
    """One sentence for an option that has no meaning with --suite (each benchmark is named in it)."""
    for option, value in given.items():
        if value:
            raise MdadError(f"{option} does not apply to a suite (docs/suites.md lists the options that do).")


def select_suite_command(
    *,
    suite: str,
    method: str,
    budget: int | None,
    allocation: str | None,
    weights: str | None,
    normalise: str | None,
    out: str,
    seed: int,
    missing: str,
    reruns: str,
    metric: str | None,
    filter_name: str | None,
    assess_runs: int,
    threshold: float,
    workers: int,
    printers: Printers,
) -> None:
    """Split --budget across the benchmarks of --suite and choose each one's items (mdad.suite.select_suite)."""
    if budget is None:
        raise MdadError("--suite needs --budget: the items every new model answers, over all the benchmarks.")
    out_path = output_path(out, "the suite micro-benchmark file")
    check_output_file(out_path, "the suite micro-benchmark file")
    reads: dict[str, str | Path | None] = {f"the data {text}": text.partition("=")[2] or one_source(text) for text in suite.split(",")}
    check_outputs_apart(reads, {"the suite micro-benchmark file": out_path})
    loaded = Suite.load(
        suite,
        weights=parse_assignments(weights, "--weights"),
        normalise=_baselines(normalise),
        metric=metric,
        filter_name=filter_name,
        missing=missing,
        reruns=reruns,
    )
    check_allocation(loaded, budget, allocation or "optimal", method=method, runs=assess_runs)  # its refusals before the progress bar
    progress = progress_bar()
    task = progress.add_task(f"Choosing {budget} items with {method}", total=len(loaded.names))
    with progress:
        selection = select_suite(
            loaded,
            budget,
            method=method,
            allocation=allocation or "optimal",
            seed=seed,
            runs=assess_runs,
            threshold=threshold,
            workers=workers or os.cpu_count() or 1,
            on_benchmark=lambda name: progress.update(task, description=f"{name}: choosing and assessing", advance=1),
        )
    selection.chosen.save(out_path)
    printers.report(selection.report(out_path))


def _baselines(text: str | None) -> dict[str, float] | None:
    parsed = parse_assignments(text, "--normalise")
    if isinstance(parsed, list):
        raise MdadError(f"--normalise takes NAME=BASELINE pairs (gpqa=0.25,musr=0.33), got {text!r}.")
    return parsed


def estimate_suite_command(*, micro: Path, results: list[str], csv: str | None, pairs_csv: str | None, level: float, printers: Printers) -> None:
    """Estimate the models of each benchmark's results with a suite micro-benchmark, and the suite average."""
    outputs = {"the CSV file": csv, "the pairs CSV file": pairs_csv}
    paths: dict[str, str | Path | None] = {what: None if text is None else output_path(text, what) for what, text in outputs.items()}
    for what, path in paths.items():
        if path is not None:
            check_output_file(path, what)
    given: dict[str, str] = {}
    chosen = SuiteMicroBenchmark.load(micro)
    if len(results) == 1 and "=" not in results[0]:  # one source holding every benchmark's tasks (a folder of logs)
        given = dict.fromkeys(chosen.names, results[0])
        results = []
    for text in results:
        name, sep, source = (part.strip() for part in text.partition("="))
        if not sep or not name or not source:
            raise MdadError(f"A suite's results are given as NAME=PATH, one per benchmark, or as one path holding them all; got {text!r}.")
        if name in given:
            raise MdadError(f"The results of {name!r} are given twice; give each benchmark once.")
        given[name] = source
    reads: dict[str, str | Path | None] = {"the suite micro-benchmark file": micro, **{f"the results of {n}": p for n, p in given.items()}}
    check_outputs_apart(reads, paths)
    report = chosen.estimate(given, level=level)
    for note in report.notes:
        err_console.print(f"note: {note}", style="dim", soft_wrap=True, highlight=False, markup=False)
    printers.table(f"{chosen.method}, {chosen.size} items: estimated scores (%) and the suite average", _columns(report, chosen.names, level))
    best = report.best
    if best.available:
        text = f"P({best.model}, the estimated best, has the best suite average of the models) = {format_probability(best.probability)}"
        console.print(f"{text} ({best.calibration}).", soft_wrap=True, highlight=False, markup=False)
    unreliable = int(np.sum(report.orders.probability < DEFAULT_THRESHOLD))
    text = f"{unreliable} of {len(report.orders.gap)} neighbouring orders of the averages hold with probability below {DEFAULT_THRESHOLD:g}."
    printers.report([Note(text, warning=unreliable > 0)])
    if paths["the CSV file"] is not None:
        write_csv(report.to_frame(), paths["the CSV file"])
    if paths["the pairs CSV file"] is not None:
        write_csv(report.orders.to_frame(), paths["the pairs CSV file"], what="the pairs CSV file")


def _columns(report, names: list[str], level: float) -> list[Column]:
    """The table: model, each benchmark, the average with its interval, gap and P(order holds); best average first."""
    suite = report.suite
    ranked = [int(i) for i in np.argsort(-np.nan_to_num(suite.estimate, nan=-np.inf), kind="stable")]
    n_pairs = len(report.orders.gap)

    def cell(value: float) -> str:
        return "" if np.isnan(value) else f"{100 * value:.1f}"

    columns = [Column("model", [str(suite.models[i]) for i in ranked], identifier=True)]
    columns += [Column(name, [cell(report.benchmarks[name].iloc[i]) for i in ranked], numeric=True) for name in names]
    columns.append(Column("suite", [cell(suite.estimate[i]) for i in ranked], numeric=True))
    interval = ["" if np.isnan(suite.low[i]) else f"{cell(suite.low[i])} - {cell(suite.high[i])}" for i in ranked]
    columns.append(Column(f"{100 * level:g}% interval", interval, numeric=True))
    columns.append(Column("gap", [f"{report.orders.gap[p]:.1f}" if p < n_pairs else "" for p in range(len(ranked))], numeric=True))
    probability = [report.orders.probability[p] if p < n_pairs else np.nan for p in range(len(ranked))]
    warned = [bool(p < DEFAULT_THRESHOLD) for p in probability]
    columns.append(Column("P(order holds)", [format_probability(p) for p in probability], warned=warned, numeric=True))
    return columns


def plan_suite_command(
    *,
    suite: str | None,
    weights: str | None,
    normalise: str | None,
    detect: float | None,
    size: int | None,
    budget: int | None,
    threshold: float,
    method: str,
) -> None:
    """The budget a suite average needs, for each allocation (mdad.suite.planning.plan_suite), as a table."""
    if suite is None:
        raise MdadError("--weights and --normalise apply to a suite; give its benchmarks with --suite.")
    if method not in method_registry.METHODS or method_registry.get(method).exact_design() != "uniform":
        raise MdadError(f"A suite is planned for uniform random items (--method random), not {method}.")
    if detect is None and size is None and budget is None:
        raise MdadError("Give --detect D (the budget the average needs), --budget K (the average's MDAD at K items), or both.")
    if size is not None and budget is not None:
        raise MdadError("For a suite --size and --budget are the same question (items over all its benchmarks); give one.")
    loaded = Suite.load(suite, weights=parse_assignments(weights, "--weights"), normalise=_baselines(normalise))
    for note in loaded.notes:
        err_console.print(f"note: {note}", style="dim", soft_wrap=True, highlight=False, markup=False)
    answer = plan_suite(loaded, detect=detect, budget=budget if budget is not None else size, threshold=threshold)
    asked = f"to order models {answer.bin} points apart with probability {threshold:g}" if answer.detect is not None else ""
    title = f"Suite average of {', '.join(answer.names)}, uniform random items {asked}".rstrip()
    table = Table(title=literal(title))
    for name in ("allocation", "budget", "items per benchmark", "MDAD", "mean error"):
        table.add_column(name, justify="left" if name == "allocation" else "right", no_wrap=True)
    if answer.detect is not None:
        table.add_column(f"P(order), {answer.bin}", justify="right", no_wrap=True)
    for row in answer.rows:
        cells = [
            row.allocation,
            "beyond every item" if row.budget is None else str(row.budget),
            "" if row.counts is None else ", ".join(map(str, row.counts)),
            "" if row.budget is None else ("not reached" if np.isnan(row.mdad) else f"{row.mdad:g}"),
            "" if row.budget is None else f"{row.error:.2f}",
        ]
        if answer.detect is not None:
            cells.append(f"{row.agreement:.3f}")
        table.add_row(*cells)
    console.print(table)
    console.print(
        f"Exact variances with the normal approximation, over the {answer.pairs:,} pairs of models in every benchmark"
        + (" in that bin" if answer.detect is not None else "")
        + "; MDAD and error in points.",
        highlight=False,
        soft_wrap=True,
    )


def run_suite_command(
    *,
    suite: str | None,
    budget: int | None,
    weights: str | None,
    normalise: str | None,
    methods: str | None,
    runs: int,
    targets: int | None,
    seed: int,
    threshold: float,
    missing: str,
    reruns: str,
    out: str,
    assess_runs: int | None = None,
) -> None:
    """The protocol on a suite average (mdad.suite.experiment.run_suite): a table, and suite-summary.csv and
    suite-runs.csv in the output folder."""
    if suite is None or budget is None:
        raise MdadError("A suite run needs both --suite (its benchmarks) and --budget (items over all of them).")
    method = methods or "random"
    if "," in method:
        raise MdadError(f"A suite run takes one method (--methods {method.split(',')[0]}), got {method!r}.")
    if assess_runs is not None and not assessed(method):
        raise MdadError(
            f"--assess-runs does not apply to {method}: its intervals and optimal allocation are exact, with no held-out runs; leave it out."
        )
    check_output_folder(out, "the output folder")
    reads: dict[str, str | Path | None] = {f"the data {text}": text.partition("=")[2] or None for text in suite.split(",")}
    check_outputs_apart(reads, {"the output folder": out})
    loaded = Suite.load(suite, weights=parse_assignments(weights, "--weights"), normalise=_baselines(normalise), missing=missing, reruns=reruns)
    progress = progress_bar()
    task = progress.add_task(f"Suite runs ({method}, {budget} items)", total=runs)
    with progress:
        result = run_suite(
            loaded,
            budget,
            method=method,
            runs=runs,
            targets=targets if targets is not None else DEFAULT_TARGETS,
            seed=seed,
            threshold=threshold,
            assess_runs=ASSESS_RUNS if assess_runs is None else assess_runs,
            on_run=lambda done: progress.update(task, completed=done),
        )
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in (("suite-summary.csv", result.summary), ("suite-runs.csv", result.runs), ("suite-benchmarks.csv", result.benchmarks)):
        _write_atomically(frame, folder / name)
    table = Table(title=literal(f"Suite average of {', '.join(loaded.names)}: {method}, {budget} items, {runs} runs (points)"))
    shown = summary_table(result, loaded.names)
    for column in shown.columns:
        table.add_column(column, justify="left" if column == "allocation" else "right", no_wrap=True)
    for row in shown.itertuples(index=False):
        table.add_row(*map(str, row))
    console.print(table)
    n_targets = targets if targets is not None else DEFAULT_TARGETS
    command = f"mdad run --suite {suite} --budget {budget} --methods {method} --runs {runs} --targets {n_targets} --seed {seed}"
    given = (("weights", weights), ("normalise", normalise), ("assess-runs", assess_runs))
    command += "".join(f" --{flag} {value}" for flag, value in given if value is not None)
    report = write_suite_report(
        result, loaded, folder / "report.html", method=method, budget=budget, runs=runs, targets=n_targets, seed=seed,
        threshold=threshold, level=DEFAULT_LEVEL, command=command,
    )  # fmt: skip
    written = ", ".join(str(folder / name) for name in ("suite-summary.csv", "suite-runs.csv", "suite-benchmarks.csv"))
    console.print(literal(f"Written: {written}; the report: {report}."), highlight=False, soft_wrap=True)


def _write_atomically(frame, path: Path) -> None:
    """Write ``frame`` as CSV to a temporary file beside ``path``, then rename it over ``path``."""
    temporary = path.with_name(f".{path.name}.tmp")
    write_csv(frame, temporary)
    os.replace(temporary, path)
