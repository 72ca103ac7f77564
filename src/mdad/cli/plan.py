"""`mdad plan` and `mdad compare`: how many items, and which comparisons a micro-benchmark can be trusted with.

The answers come from mdad.planning (mdad.plan, mdad.compare): exact for the random designs,
a quick simulation on held-out runs for other methods, or the simulated curves of a finished
`mdad run` (--results). This module parses the options and prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
import typer
from rich import box
from rich.progress import Progress, TaskID
from rich.table import Table

from mdad.cli.common import (
    DataOption,
    DatasetOption,
    ThresholdOption,
    app,
    checked_seed,
    console,
    err_console,
    friendly_errors,
    plural,
    progress_bar,
    read_data,
)
from mdad.cli.tables import TableColumn, print_fitted
from mdad.cli.text import literal
from mdad.data import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, BIN_TEXT, DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD, PLAN_NOISE_SE, percent
from mdad.errors import MdadError
from mdad.metrics import analytic
from mdad.metrics.pairwise import count_pairs
from mdad.outputs import atomic_file, check_output_file, check_outputs_apart, locked_outputs, writing
from mdad.planning import ExactMdadAtSize, ExactSmallestSize, Plan, SimulatedMdadAtSize, SimulatedPlan, SourcesCurve, StoredAnswer, plans_from_results
from mdad.planning import plan as plan_answer
from mdad.planning.bins import bin_label, bin_lower
from mdad.planning.pairs import compare_streamed
from mdad.planning.result import POPULATION_TEXT, items_text
from mdad.planning.simulated import MAX_RUNS_TO_SETTLE
from mdad.wording import with_article

MISSING_HELP = "Cells not evaluated: pairwise (default: each pair is judged on the items both models answered), error, drop-items or drop-models."
PairwiseOrPolicy = Literal["pairwise", "error", "drop-items", "drop-models"]  # "pairwise" or a MissingPolicy
NewModels = Literal["like-sources", "stronger", "both"]  # mdad.planning.choose.NEW_MODELS
MissingPairwiseOption = Annotated[PairwiseOrPolicy, typer.Option(help=MISSING_HELP)]
SeedPlanOption = Annotated[
    int, typer.Option(help="Seed of the simulated dataset and of the proportional design's allocation draws.", callback=checked_seed)
]
PAIRS_MEANING = (
    "'Pairs that far apart' are the pairs of models in the data whose full-benchmark accuracy difference "
    f"falls in the same {BIN_TEXT} bin as --detect (e.g. 2.0 to 2.5 points); the answer is the smallest size "
    "at which their probability of being ordered correctly, averaged over those pairs, reaches --threshold."
)


def load_for_analysis(dataset: str | None, data: Path | None, seed: int, missing: PairwiseOrPolicy) -> ResponseMatrix:
    """The matrix the user named; missing cells kept for pairwise use or handled by the policy."""
    matrix = read_data(dataset, data, seed)
    if missing == "pairwise":
        return matrix
    return matrix.require_complete(missing)


@app.command(
    help="How many items a micro-benchmark needs to order models --detect points apart (or, with --size, "
    "the MDAD of a given size). Exact for the random designs; for other methods a quick simulation on "
    "held-out runs (or the curves of a finished run, --results). " + PAIRS_MEANING
)
@friendly_errors
def plan(
    dataset: DatasetOption = None,
    data: DataOption = None,
    detect: Annotated[
        float | None, typer.Option(help=f"Accuracy difference to detect, in points from 0 to 100 (its {BIN_TEXT} bin is used).")
    ] = None,
    size: Annotated[int | None, typer.Option(min=1, help="Instead of --detect: report the MDAD of a micro-benchmark of this many items.")] = None,
    threshold: Annotated[float, typer.Option(help="Probability of the correct order that counts as detected.")] = DEFAULT_THRESHOLD,
    method: Annotated[
        str,
        typer.Option(
            help=(
                f"{', '.join(analytic.DESIGNS)} (exact), or any other method (simulated); 'all' (every registered method the "
                "data can serve), 'paper' (the paper's set, what 'mdad run' runs by default) or a comma list answers for each "
                "and recommends one."
            )
        ),
    ] = "random",
    budget: Annotated[
        int | None, typer.Option(min=1, help="With --detect: per method, the probability that this many items order pairs --detect points apart.")
    ] = None,
    sources_curve: Annotated[
        bool,
        typer.Option(
            "--sources-curve",
            help="For methods that learn from source models: the answer with 5, 10, 20, 50, ... source models (held-out targets "
            "never among them) and the number beyond which more stop helping.",
        ),
    ] = False,
    results: Annotated[Path | None, typer.Option(help="Folder of a finished 'mdad run': answer from its simulated curves.")] = None,
    missing: MissingPairwiseOption = "pairwise",
    seed: SeedPlanOption = 0,
    runs: Annotated[
        int, typer.Option(min=1, help="Held-out runs of the quick simulation that answers for methods without an exact answer.")
    ] = ASSESS_RUNS,
    suite: Annotated[
        str | None, typer.Option(help="Several benchmarks (NAME or NAME=PATH, commas): the budget their average needs, for each allocation.")
    ] = None,
    weights: Annotated[str | None, typer.Option(help="With --suite: the benchmarks' weights in the average (default equal).")] = None,
    normalise: Annotated[str | None, typer.Option(help="With --suite: NAME=BASELINE,...: rescale above random guessing.")] = None,
    new_models: Annotated[
        NewModels | None,
        typer.Option(
            help="Whom the answer is for: like-sources (new models like the sources: random held-out models), stronger (than every "
            "source model: the strongest held out, as 'run --targets-from top'), or both (the default with several methods)."
        ),
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="Dask scheduler address (e.g. tcp://host:8786) that runs the simulations' held-out runs, as 'mdad run' can.")
    ] = None,
) -> None:
    if suite is not None or weights is not None or normalise is not None:
        from mdad.cli.suite import plan_suite_command, refuse_with_suite

        refuse_with_suite(
            {
                "--dataset": dataset,
                "--data": data,
                "--results": results,
                "--sources-curve": sources_curve,
                "--new-models": new_models,
                "--scheduler": scheduler,
            }
        )
        return plan_suite_command(
            suite=suite, weights=weights, normalise=normalise, detect=detect, size=size, budget=budget, threshold=threshold, method=method
        )
    named = results is None or dataset is not None or data is not None  # with --results, data is refused
    matrix = load_for_analysis(dataset, data, seed, missing) if named else None
    several = method in ("all", "paper") or "," in method or new_models is not None
    if results is not None and new_models is not None:
        raise MdadError("--new-models simulates held-out runs on the data; a finished run's curves cannot answer it: drop --results.")
    if results is not None and scheduler:
        raise MdadError("--results reads a finished run's curves and simulates nothing; drop --scheduler.")
    if results is not None and several and budget is None and not sources_curve:
        if matrix is not None:
            raise MdadError("--results answers from a finished run's own data; drop --data and --dataset.")
        answers = plans_from_results(results, method, detect=detect, size=size, threshold=threshold)
        for found in answers:
            print_stored(found, with_note=False)
        print_version_note(answers[0])
        return
    if several or budget is not None or sources_curve:
        choice = plan_with_progress(matrix, detect, size, budget, method, threshold, results, runs, seed, sources_curve, new_models, scheduler)
        print_plan(choice)
        for curve in choice.sources_curves:
            print_sources_curve(curve, choice.runs)
        return
    simulated = matrix is not None and not analytic.has_exact_answer(method)
    progress, advance = runs_progress(runs)
    with progress if simulated else nullcontext():
        answer = plan_answer(
            matrix,
            detect=detect,
            size=size,
            method=method,
            threshold=threshold,
            results=results,
            runs=runs,
            seed=seed,
            workers=os.cpu_count() or 1,
            on_runs=advance if simulated else None,
            scheduler=scheduler,
        )
    PRINTERS[type(answer)](answer)


def runs_progress(runs: int) -> tuple[Progress, Callable[[str, float], None]]:
    """A progress display and the callback that adds a bar per simulation (method, runs finished)."""
    progress = progress_bar(time_left=False, transient=True)
    bars: dict[str, TaskID] = {}

    def advance(name: str, done: float) -> None:
        if name not in bars:
            bars[name] = progress.add_task(f"Simulating {literal(name)} on held-out runs", total=runs)
        progress.update(bars[name], completed=done)

    return progress, advance


def plan_with_progress(
    matrix: ResponseMatrix | None,
    detect: float | None,
    size: int | None,
    budget: int | None,
    methods: str,
    threshold: float,
    results: Path | None,
    runs: int,
    seed: int,
    sources_curve: bool,
    new_models: str | None,
    scheduler: str | None,
) -> Plan:
    """Every method's answer, with a bar per simulated method."""
    progress, advance = runs_progress(runs)
    with progress:
        return plan_answer(
            matrix,
            detect=detect,
            size=size,
            budget=budget,
            methods=methods,
            threshold=threshold,
            results=results,
            runs=runs,
            seed=seed,
            workers=os.cpu_count() or 1,
            on_runs=advance,
            sources_curve=sources_curve,
            new_models=new_models,
            scheduler=scheduler,
        )


def print_plan(choice: Plan) -> None:
    """One table per population of new models (one row per method), the recommendation and its rule."""
    for population in choice.populations or (choice,):
        print_rows(population, named=bool(choice.populations) or choice.new_models != "like-sources", own=bool(choice.populations))
    reasons: dict[str, list[str]] = {}
    for name, why in choice.not_answered:
        reasons.setdefault(why, []).append(name)
    for why, left_out in reasons.items():
        console.print(f"Not answered: {literal(', '.join(left_out))} ({'each ' if len(left_out) > 1 else ''}{literal(why)}).", highlight=False)
    console.print(f"[bold]Recommendation:[/bold] {literal(choice.recommendation)}", highlight=False)
    console.print(f"Rule: {literal(choice.rule)}.", highlight=False)


def print_rows(choice: Plan, *, named: bool, own: bool) -> None:
    """One row per method for the population of ``choice`` (``named``: saying which); ``own``: its recommendation under the table."""
    label = bin_label(bin_lower(choice.detect)) if choice.detect is not None else ""
    questions = {
        "detect": f"fewest items that order pairs {label} points apart correctly with probability {choice.threshold:g}",
        "size": f"MDAD (points) of {choice.size} items, threshold {choice.threshold:g}",
        "budget": f"probability that {choice.size} items order pairs {label} points apart correctly",
    }
    whom = f" for {POPULATION_TEXT[choice.new_models]}" if named else ""
    console.print(f"{literal(choice.source)}: {questions[choice.question]}, per method{whom}.", highlight=False)
    headers = {
        "detect": ("answer", "items", "P(correct\norder)", "random at\nsame size", "sizes tried"),
        "size": ("answer", "MDAD", "interval", "random's\nMDAD", "error\n(points)"),
        "budget": ("answer", "items", "P(correct\norder)", "random at\nsame size"),
    }[choice.question]
    names: list[str] = []
    rows: list[list[str]] = []
    for row in choice.rows:
        how = "exact" if row.exact else f"simulated, {choice.runs} runs"
        names.append(f"[bold]{literal(row.method)}[/bold]" if row.method == choice.recommended else literal(row.method))
        if choice.question == "size":
            interval = "exact" if row.exact else f"{row.low:g} to {'not reached' if np.isnan(row.high) else f'{row.high:g}'}"
            rows.append([how, _points(row.value), interval, _points(row.random_value), "-" if np.isnan(row.error) else f"{row.error:.2f}"])
            continue
        value = f"{row.value:.3f}" if row.exact else f"{row.value:.3f} ± {row.stderr:.3f}"
        short = "not reached" if row.exact or not row.ladder else f"> {row.ladder[-1]}"  # a simulated row: not by its largest size
        items = short if row.items is None else items_text(row).replace(" items", "")
        cells = [how, items, value, f"{row.random_value:.3f}"]
        if choice.question == "detect":
            cells.append(",".join(map(str, row.ladder)) or "bisection")
        rows.append(cells)
    columns = [TableColumn(header, [cells[i] for cells in rows], right=i > 0) for i, header in enumerate(headers)]
    print_fitted(console, "", [TableColumn("method", names, right=False)], [[column] for column in columns])
    if choice.question == "detect" and any(not r.exact for r in choice.rows):
        console.print(
            "Simulated rows answer at the sizes tried (the smallest that reaches the threshold): the rungs listed, up to uniform "
            "random's exact answer (a method that needs more items cannot be recommended; > N: not reached by N), then sizes "
            "about 10% apart between the two rungs around the answer, on the same runs, for the methods that could need fewer items "
            "than uniform random; (a-b): the answer lies between a and b. "
            "± is the Monte Carlo standard error between runs. Exact rows are the smallest size by bisection over every size.",
            highlight=False,
        )
    if own:
        console.print(f"For {POPULATION_TEXT[choice.new_models]}: {literal(choice.recommendation)}", highlight=False)


def print_sources_curve(curve: SourcesCurve, runs: int) -> None:
    """The answer per number of source models and where more stop helping."""
    what = "MDAD (points)" if curve.question == "size" else f"items needed (ladder), share at {curve.at_items} items"
    console.print(f"\n{literal(curve.method)}: {what} by number of source models ({runs} held-out runs each).", highlight=False)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header in ("sources", *(("MDAD", "interval") if curve.question == "size" else ("items needed", "share"))):
        table.add_column(header, justify="right")
    for i, count in enumerate(curve.counts):
        if curve.question == "size":
            high = "not reached" if np.isnan(curve.high[i]) else f"{curve.high[i]:g}"
            table.add_row(str(count), _points(curve.values[i]), f"{curve.low[i]:g} to {high}")
        else:
            items = "not reached" if np.isnan(curve.values[i]) else f"{curve.values[i]:g}"
            mark = "*" if count in curve.undecided else ""
            table.add_row(str(count), items + mark, f"{curve.share[i]:.3f} ± {curve.stderr[i]:.3f}")
    console.print(table)
    if curve.undecided:
        console.print(f"* {noise_sentence(curve.undecided, runs, curve.runs_to_settle)}", highlight=False)
    if curve.enough is None:
        console.print(
            f"With every source model {literal(curve.method)} reaches no answer: more source models cannot be judged here.", highlight=False
        )
    elif curve.enough == curve.counts[-1]:
        console.print(
            f"More source models still help up to all {curve.enough} this data has: more sources may help further (rule: {curve.rule}).",
            highlight=False,
        )
    else:
        console.print(f"Beyond [bold]{curve.enough} source models[/bold] more stop helping (rule: {curve.rule}).", highlight=False)


def noise_sentence(counts: tuple[int, ...], runs: int, settle: int | None) -> str:
    """Which answers of a sources curve Monte Carlo noise can flip, and how many runs would settle them."""
    which = f"with {', '.join(map(str, counts))} source models" if counts else "here"
    how = (
        f"about {settle:,} runs (--runs {settle}) would settle {'them' if len(counts) > 1 else 'it'}"
        if settle is not None and settle < MAX_RUNS_TO_SETTLE
        else f"a share lies so near the threshold that even {MAX_RUNS_TO_SETTLE:,} runs would not settle it"
    )
    return (
        f"Monte Carlo noise can flip the answer {which}: a share that decides it lies within {PLAN_NOISE_SE:g} standard errors "
        f"of the threshold after {plural(runs, 'run')}; {how}."
    )


def _points(value: float) -> str:
    return "not reached" if np.isnan(value) else f"{value:g}"


def print_exact_smallest(found: ExactSmallestSize) -> None:
    head = f"{found.method} on {literal(found.source)}: pairs of models {found.label} points apart ({found.pairs:,} pairs in the data)"
    if found.smallest is None:
        console.print(
            f"{head} are never ordered correctly with probability {found.threshold:g}, not even with every "
            f"item ({found.at_smallest:.3f} with all {found.pool} items; true ties count as errors)."
        )
        return
    k = found.smallest
    console.print(
        f"{head}: [bold]{k} items[/bold] order them correctly with probability {found.at_smallest:.3f} on "
        f"average (>= {found.threshold:g}); {k - 1} items give {found.below:.3f}. Exact (no simulation), full "
        "benchmark as the truth."
    )
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("items", justify="right")
    table.add_column(f"P(correct order), pairs {found.label} pts apart", justify="right")
    for s, value in zip(found.sizes, found.agreement, strict=True):
        table.add_row(f"[bold]{s}[/bold]" if s == k else str(s), f"{value:.3f}")
    console.print(table)


def print_exact_mdad(found: ExactMdadAtSize) -> None:
    """MDAD at one size, with the bins around it."""
    head = f"{found.method} with {found.size} items on {literal(found.source)}"
    where = f"first {BIN_TEXT} bin of full-benchmark difference whose mean probability of the correct order reaches {found.threshold:g}"
    if not found.reached:
        console.print(
            f"{head}: MDAD [bold]not reached[/bold] (no bin of the {found.pairs:,} model pairs reaches {found.threshold:g}). Exact, no simulation."
        )
    else:
        console.print(f"{head}: MDAD = [bold]{found.mdad:g} points[/bold] ({where}; {found.pairs:,} model pairs). Exact, no simulation.")
    curve = found.curve
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header in ("difference (pts)", "pairs", "P(correct order)"):
        table.add_column(header, justify="right")
    centre = int(np.searchsorted(curve.lower, found.mdad)) if found.reached else len(curve.lower) - 1
    for i in range(max(0, centre - 4), min(len(curve.lower), centre + 4)):
        table.add_row(bin_label(curve.lower[i]), f"{curve.pairs[i]:,}", f"{curve.rate[i]:.3f}")
    console.print(table)


def print_simulated_mdad(found: SimulatedMdadAtSize) -> None:
    a = found.assessment
    first, robust = a.first_crossing, a.robust  # with the pairs behind it and the robust MDAD (docs/protocol.md#mdad-trust)
    head = f"{literal(found.method)} with {found.size} items on {literal(found.source)}"
    simulated = f"simulated on {found.runs} held-out runs of {a.targets} target models, {a.sources} source models"
    if not first.estimable:
        console.print(f"{head}: MDAD and Kendall tau {literal(first.note)} ({simulated}).", highlight=False)
        return
    warning = first.warning(robust)
    mark = "*" if warning else ""
    value = f"{a.mdad:g}{mark} point{'' if a.mdad == 1 else 's'}" if a.mdad_reached else "not reached"
    high = "not reached" if np.isnan(a.mdad_high) else f"{a.mdad_high:g}"
    pairs = f"; {count_pairs(a.mdad_pairs)} in its bin" if a.mdad_reached and a.mdad_pairs is not None else ""
    console.print(
        f"{head}: MDAD = [bold]{value}[/bold] ({simulated}; {percent(DEFAULT_CONFIDENCE)} interval {a.mdad_low:g} to {high}"
        f"{pairs}; robust MDAD {robust}). Not exact: a simulation, its Monte Carlo error is the interval.",
        highlight=False,
    )
    if warning:
        console.print(literal(f"* {warning}"), highlight=False)


def print_simulated_plan(found: SimulatedPlan) -> None:
    k = found.smallest
    head = (
        f"{literal(found.method)} on {literal(found.source)}: pairs of held-out models {found.label} points apart "
        f"({found.pairs:,} pairs over {found.runs} runs)"
    )
    if k is None:
        console.print(f"{head} are not ordered correctly with probability {found.threshold:g} at any size tried (up to {found.sizes[-1]} items).")
    else:
        i = int(np.searchsorted(found.sizes, k))
        console.print(
            f"{head}: [bold]{k} items[/bold] order them correctly {found.agreement[i]:.3f} of the time "
            f"(>= {found.threshold:g})" + (f"; {found.sizes[i - 1]} items: {found.agreement[i - 1]:.3f}" if i else "") + "."
        )
    console.print(
        f"Simulated, not exact: a quick assessment on {found.runs} held-out runs ({literal(found.method)} chose "
        "the items from the other models each time); each share has a Monte Carlo standard error (±, between "
        "runs). More --runs make it smaller.",
        highlight=False,
    )
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("items", justify="right")
    table.add_column(f"share ordered correctly, pairs {found.label} pts apart", justify="right")
    for s_, rate, se in zip(found.sizes, found.agreement, found.stderr, strict=True):
        table.add_row(f"[bold]{s_}[/bold]" if s_ == k else str(s_), f"{rate:.3f} ± {se:.3f}")
    console.print(table)
    if len(found.undecided()):
        console.print(noise_sentence((), found.runs, found.runs_to_settle()), highlight=False)


def print_version_note(found: StoredAnswer) -> None:
    """The sentence saying that the run was written under another results version, if it was."""
    if found.note:
        err_console.print(f"[yellow]{literal(found.note)}[/yellow]", highlight=False)


def print_stored(found: StoredAnswer, with_note: bool = True) -> None:
    """The answer read from a finished run's simulated curves (``with_note``: and the results-version note, if any)."""
    if with_note:
        print_version_note(found)
    note = literal(f"from the simulated curves of {found.runs} runs in {found.results} (seen items, {found.sources} source models), not exact")
    method = found.method
    if found.size is not None and not found.estimable:
        console.print(literal(f"{method} with {found.size} items: {found.warning}"), highlight=False)
    elif found.size is not None:
        high = "not reached" if np.isnan(found.mdad_high) else f"{found.mdad_high:g}"
        mark = "*" if found.warning else ""
        value = f"{found.mdad:g}{mark} points [{found.mdad_low:g}, {high}]" if found.reached else "not reached"
        console.print(
            f"{method} with {found.size} items: MDAD = [bold]{value}[/bold] ({found.pairs} pairs in its bin; "
            f"robust MDAD {found.robust}; threshold {found.threshold:g}), {note}.",
            highlight=False,
        )
        if found.warning:
            console.print(literal(f"* {found.warning}"), highlight=False)
    elif not found.reached:
        console.print(
            f"{method}: no stored size orders pairs {found.label} points apart correctly with "
            f"probability {found.threshold:g} (largest stored size: {found.largest}), {note}."
        )
    else:
        console.print(
            f"{method}: [bold]{found.smallest} items[/bold] is the smallest stored size at which pairs "
            f"{found.label} points apart are ordered correctly with probability {found.agreement:.3f} "
            f"(>= {found.threshold:g}), {note}."
        )


PRINTERS: dict[type, Callable[[Any], None]] = {
    ExactSmallestSize: print_exact_smallest,
    ExactMdadAtSize: print_exact_mdad,
    SimulatedMdadAtSize: print_simulated_mdad,
    SimulatedPlan: print_simulated_plan,
    StoredAnswer: print_stored,
}


@app.command(
    help="For each pair of models: the full-benchmark accuracy difference and the probability that a random "
    "--size-item micro-benchmark orders the pair correctly (exact). For a group: the share of its pairs "
    "whose difference is below the MDAD at that size (MDAD from all model pairs of the data), i.e. "
    "comparisons unlikely to be preserved."
)
@friendly_errors
def compare(
    size: Annotated[int, typer.Option(min=1, help="Number of items in the micro-benchmark.")],
    dataset: DatasetOption = None,
    data: DataOption = None,
    group: Annotated[str | None, typer.Option(help="A named model group (groups.json beside the data).")] = None,
    models: Annotated[list[str] | None, typer.Option(help="Models to compare (repeat the option or separate names by commas).")] = None,
    # the choices are the registered random designs, known at import; typer reads them from the Literal at run time
    method: Annotated[
        Literal[analytic.DESIGNS],  # type: ignore[valid-type]
        typer.Option(help=f"{', '.join(analytic.DESIGNS[:-1])} or {analytic.DESIGNS[-1]}."),
    ] = "random",
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    missing: MissingPairwiseOption = "pairwise",
    csv: Annotated[str | None, typer.Option(help="Also write every pair to this CSV file.")] = None,
    top: Annotated[int, typer.Option(help="Rows to print (closest pairs first); 0 prints all.")] = 30,
    seed: SeedPlanOption = 0,
) -> None:
    if csv is not None:
        check_output_file(csv, "the CSV file")
        check_outputs_apart({"the data": data}, {"the CSV file": csv})
    matrix = load_for_analysis(dataset, data, seed, missing)
    names = [n.strip() for value in models for n in value.split(",") if n.strip()] if models else None
    with locked_outputs({"the CSV file": csv}), pair_csv(csv) as on_block:
        found = compare_streamed(
            matrix, size=size, method=method, threshold=threshold, group=group, models=names, seed=seed, top=top, on_block=on_block
        )
    print_pairs(found.closest, found.n_pairs, size, method)
    mdad_text = "not reached" if np.isnan(found.mdad) else f"{found.mdad:g} points"
    console.print(
        f"MDAD of {with_article(size, 'item')} {method} micro-benchmark on {literal(found.source)}: [bold]{mdad_text}[/bold] "
        f"(exact; all {found.all_pairs:,} model pairs, threshold {threshold:g}).",
        highlight=False,
    )
    below = found.below_mdad
    reason = "MDAD is not reached at this size" if np.isnan(found.mdad) else "they differ by less than the MDAD"
    console.print(
        f"{literal(found.label)}: {found.n_pairs:,} pairs; [bold]{below:,} ({below / found.n_pairs:.0%})[/bold] are "
        f"unlikely to keep their order ({reason}); mean probability of the correct order "
        f"{found.mean_probability:.3f}, {found.share_below_threshold:.0%} of pairs below {threshold:g}."
    )
    if csv is not None:
        console.print(f"Every pair (in the order of the models, not sorted): {literal(csv)}", highlight=False)


@contextmanager
def pair_csv(path: str | None) -> Iterator[Callable[[pd.DataFrame], None] | None]:
    """A writer that appends each block of pairs to the CSV file (header once), or None without a file."""
    if path is None:
        yield None
        return
    with atomic_file(path, "the CSV file") as temp, writing(path, "the CSV file"), open(temp, "w", newline="", encoding="utf-8") as handle:
        header = [True]

        def write(frame: pd.DataFrame) -> None:
            frame.to_csv(handle, header=header[0], index=False)
            header[0] = False

        yield write


def print_pairs(shown: pd.DataFrame, n_pairs: int, size: int, method: str) -> None:
    """The closest pairs kept, and how many more there are; names and numbers are never cut (the table
    is split, or printed one pair per line, when it is wider than the console)."""
    title = f"{size}-item {method} micro-benchmark: probability of ordering each pair as the full benchmark does"
    differences = shown["difference_points"].to_numpy(float)
    probabilities = shown["p_correct_order"].to_numpy(float)
    keys = [
        TableColumn("higher model", [literal(name) for name in shown["model_a"]], right=False),
        TableColumn("lower model", [literal(name) for name in shown["model_b"]], right=False),
    ]
    values = [
        TableColumn("diff (pts)", [f"{d:.2f}" for d in differences]),
        TableColumn("P(same order)", ["tie" if d == 0 else f"{p:.3f}" for d, p in zip(differences, probabilities, strict=True)]),
        TableColumn("< MDAD", ["yes" if below else "no" for below in shown["below_mdad"]]),
    ]
    print_fitted(console, title, keys, [values])  # one group: a pair too wide for a table is one whole line
    if (shown["difference_points"] == 0).any():
        console.print("tie: the two models have the same full-benchmark accuracy, so no order can be kept (counted as probability 0, as in MDAD).")
    if len(shown) < n_pairs:
        console.print(f"... {n_pairs - len(shown):,} more pairs (use --top 0 or --csv).")
