"""`mdad select` and `mdad estimate`: build a micro-benchmark once, then score new models with it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer
from rich.table import Table

from mdad import methods as method_registry
from mdad.assessment import Assessment, assess
from mdad.metrics.base import METRICS
from mdad.cli.common import (
    DataOption, DatasetOption, FilterOption, MetricOption, MissingOption, RerunsOption, SeedOption, ThresholdOption,
    WorkersOption, app, console, friendly_errors, load_matrix, output_path, plural, print_notes,
)
from mdad.cli.text import literal
from mdad.outputs import check_output_file, write_csv, writing
from mdad.data import load
from mdad.defaults import ASSESS_RUNS, DEFAULT_LEVEL, DEFAULT_TARGETS, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.experiment.splits import MIN_MODELS
from mdad.metrics.pairwise import estimability_note
from mdad.microbenchmark import SelectedMicroBenchmark, select


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
    targets: Annotated[Optional[int], typer.Option(
        help=f"Held-out target models per assessment run (default: {DEFAULT_TARGETS}, or half the models if fewer than {2 * DEFAULT_TARGETS}).")] = None,
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    workers: WorkersOption = 0,
    lm_eval_samples: Annotated[Optional[str], typer.Option(help=(
        "Also write the items as lm-evaluation-harness --samples JSON (task -> document indices), to evaluate new "
        "models on them only."))] = None,
    inspect: Annotated[bool, typer.Option("--inspect", help=(
        "Also print the 'inspect eval --sample-id' commands that run new models on the items only."))] = False,
) -> None:
    """Choose SIZE items with METHOD, using every model of the data as a source model, and measure
    how reliable the choice is on held-out models."""
    out = output_path(out, "the micro-benchmark file")
    lm_eval_samples = None if lm_eval_samples is None else output_path(lm_eval_samples, "the lm-eval samples file")
    check_threshold(threshold)
    method_registry.get(method)  # an unknown name is one clear error, before any work
    if method_registry.get(method).adaptive and (lm_eval_samples is not None or inspect):
        raise MdadError(f"{method} asks each new model its own items one at a time, so there is no fixed sample list: "
                        "ask the first item it names, then 'mdad estimate' names the next after each answer.")
    check_output_file(out, "the micro-benchmark file")
    if lm_eval_samples is not None:
        check_output_file(lm_eval_samples, "the lm-eval samples file")
    matrix = load_matrix(dataset, data, seed, missing, metric, filter_name, reruns)
    chosen = select(matrix, method, size, seed=seed)
    samples = chosen.lm_eval_samples() if lm_eval_samples is not None else None
    inspect_commands = chosen.inspect_commands() if inspect else []
    too_few = assess_runs and targets is None and matrix.n_models < MIN_MODELS
    if too_few:
        assess_runs = 0
    if assess_runs:
        with console.status(f"Assessing {method} with {size} items on {plural(assess_runs, 'held-out split')}..."):
            chosen = chosen.with_assessment(assess(matrix, method, size, runs=assess_runs, targets=targets, seed=seed,
                                                   workers=workers or os.cpu_count() or 1, threshold=threshold))
    chosen.save(out)
    n_subtasks = len(set(chosen.subtasks.tolist()))
    if chosen.adaptive:
        first = chosen.first_item()
        console.print(literal(f"{method}: an adaptive test of {size} items from the pool of {matrix.n_items} items of "
                              f"{matrix.source} ({plural(n_subtasks, 'subtask')}) written to {out}. Every new model "
                              f"starts with item {first}; after each answer 'mdad estimate {out} RESULTS' names its next "
                              "item."), highlight=False)
    else:
        console.print(literal(f"{method}: {size} of {matrix.n_items} items from {matrix.source} "
                              f"({plural(n_subtasks, 'subtask')}) written to {out}."), highlight=False)
    if chosen.assessment is not None:
        console.print(literal(describe_assessment(chosen.assessment)), highlight=False)
    if samples is not None:
        with writing(lm_eval_samples, "the lm-eval samples file"):
            lm_eval_samples.write_text(json.dumps(samples) + "\n")
        console.print(literal(f"lm-eval samples ({', '.join(samples)}) written to {lm_eval_samples}. Evaluate a new model on "
                      f"these items only with: lm-eval run --model ... --tasks {','.join(samples)} --samples "
                      f"{lm_eval_samples} --log_samples --output_path NEW; then: mdad estimate {out} NEW"), highlight=False)
    if inspect_commands:
        console.print(literal(f"Evaluate a new model on these samples only with inspect, then: mdad estimate {out} NEW"),
                      highlight=False)
        for command in inspect_commands:
            console.print(f"  {literal(command)}", highlight=False, soft_wrap=True)
    if too_few:
        console.print(f"Not assessed: with {plural(matrix.n_models, 'model')} there are too few to hold out 2 targets and keep "
                      f"2 source models (at least {MIN_MODELS} are needed).")


def describe_assessment(a: Assessment) -> str:
    """How far estimates are off, and which differences the micro-benchmark orders reliably."""
    note = estimability_note(a.targets, a.runs)
    head = (f"On {a.runs} held-out splits ({a.targets} target models, {a.sources} source models, same method and "
            f"size): estimates are off by {100 * a.error:.1f} points on average"
            + ("" if note else f", Kendall tau {a.kendall_tau:.2f}"))
    head += "".join(f", {metric.label} {metric.shown(a.metrics[metric.key]):g}{f' {metric.unit}' if metric.unit else ''}"
                    for metric in METRICS if metric.key in a.metrics and metric.key not in ("error", "kendall_tau"))
    share = f"{100 * a.threshold:.0f}%"
    if note:
        return f"{head}; MDAD and Kendall tau {note}."
    robust = "not reached" if a.mdad_robust != a.mdad_robust else f"{a.mdad_robust:g}"
    if not a.mdad_reached:
        return (f"{head}; MDAD not reached (logistic fit: {robust}): no bin of differences is ordered correctly "
                f"{share} of the time.")
    high = "not reached" if a.mdad_high != a.mdad_high else f"{a.mdad_high:g}"
    return (f"{head}; MDAD {a.mdad:g} points [95% interval {a.mdad_low:g}, {high}] (logistic fit: {robust}): "
            f"models closer than that are ordered correctly less than {share} of the time.")


BEYOND_SOURCES = {
    "exact": ("The exact intervals hold for them too; the order probabilities rest on the source models' pairs and "
              "were overconfident for models better than all of them (benchmarks/README.md)."),
    "population": ("The --population intervals covered such models less often than their level and the order "
                   "probabilities, resting on the source models' pairs, were overconfident for them "
                   "(benchmarks/README.md); without --population the intervals hold for any model."),
    "calibrated": ("Intervals and order probabilities were calibrated on models like the sources; for models better "
                   "than all of them they are not measured and may be too confident."),
    "none": "Estimates of models better than every source are extrapolations of what the sources showed.",
}


def beyond_sources_note(chosen: SelectedMicroBenchmark, estimates: np.ndarray, kind: str) -> str | None:
    """A sentence when some models are estimated above every model the micro-benchmark was chosen from.

    What the intervals and order probabilities promise was measured on models like the sources;
    ``kind``: :attr:`EstimateIntervals.kind`, which answer was printed."""
    best = chosen.best_source_accuracy
    above = int(np.sum(estimates > best)) if best is not None else 0
    if not above:
        return None
    return (f"{above} of the {len(estimates)} models are estimated above every model the micro-benchmark was chosen "
            f"from (the best scored {100 * best:.1f}%). {BEYOND_SOURCES[kind]}")


@app.command("estimate")
@friendly_errors
def estimate_command(
    micro: Annotated[Path, typer.Argument(help="A micro-benchmark written by 'mdad select'.")],
    results: Annotated[Path, typer.Argument(help="New models' results on (at least) the micro-benchmark's items.")],
    csv: Annotated[Optional[str], typer.Option(
        help="Also write one row per model (model, estimate, low, high, level) to this CSV file.")] = None,
    pairs_csv: Annotated[Optional[str], typer.Option(
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
    if csv is not None:
        csv = output_path(csv, "the CSV file")
        check_output_file(csv, "the CSV file")
    if pairs_csv is not None:
        pairs_csv = output_path(pairs_csv, "the pairs CSV file")
        check_output_file(pairs_csv, "the pairs CSV file")
    chosen = SelectedMicroBenchmark.load(micro)
    if not results.exists():
        raise MdadError(f"No such file or folder: {results}.")
    matrix = load(results, metric=metric, filter_name=filter_name, reruns=reruns)
    print_notes(matrix)
    details = chosen.details(matrix)
    intervals = chosen.intervals(matrix, level=level, population=population)
    orders = chosen.order_probabilities(matrix)
    assessment = chosen.assessment
    threshold = assessment.threshold if assessment is not None else DEFAULT_THRESHOLD
    share = f"{100 * level:g}%"
    size_text = f"adaptive test of {chosen.size} items" if chosen.adaptive else f"{chosen.size} items"
    table = Table(title=f"{literal(chosen.method)}, {size_text}: estimated full-benchmark accuracy (%), "
                        "gap to the next model (points)")
    table.add_column("model", overflow="fold")
    show_interval, show_p = bool(np.isfinite(intervals.low).any()), bool(np.isfinite(orders.probability).any())
    for name, shown in (("estimate", True), (f"{share} interval", show_interval), ("gap", True),
                        ("P(order holds)", show_p)):
        if shown:
            table.add_column(name, justify="right", no_wrap=True)
    has_aipw = "low" in details
    if has_aipw:
        table.add_column("AIPW 95% interval", justify="right")
    if chosen.adaptive:
        table.add_column("answered", justify="right")
        table.add_column("next item", overflow="fold")
    if "flagged" in details:
        table.add_column("guard")
    ranked = np.argsort(-intervals.estimate, kind="stable")
    unsure = 0
    for position, i in enumerate(ranked):
        row = [literal(intervals.models[i]), f"{100 * intervals.estimate[i]:.1f}"]
        if show_interval:
            row.append("" if np.isnan(intervals.low[i]) else f"{100 * intervals.low[i]:.1f} - {100 * intervals.high[i]:.1f}")
        if position < len(orders.gap):
            p = orders.probability[position]
            below = bool(p < threshold)
            unsure += below
            text = "" if np.isnan(p) else f"{p:.2f}"
            row.append(f"{orders.gap[position]:.1f}")
            if show_p:
                row.append(f"[yellow]{text}[/yellow]" if below else text)
        else:
            row += ["", ""] if show_p else [""]
        extra = details.iloc[i]
        if has_aipw:
            row.append(f"{100 * extra['low']:.1f} - {100 * extra['high']:.1f}")
        if chosen.adaptive:
            row += [str(extra["answered"]), literal(extra["next_item"]) if extra["next_item"] else "(done)"]
        if "flagged" in details:
            row.append("[yellow]extrapolation[/yellow]" if extra["flagged"] else "")
        table.add_row(*row)
    console.print(table)
    console.print(f"Intervals: {intervals.calibration}. Order probabilities: {orders.calibration}.", highlight=False)
    if len(orders.gap) and np.isfinite(orders.probability).all():
        console.print(f"{unsure} of the {len(orders.gap)} neighbouring pairs keep their order on the full benchmark "
                      f"with probability below {100 * threshold:g}%: those orders are not reliable.", highlight=False)
    note = beyond_sources_note(chosen, intervals.estimate, intervals.kind)
    if note:
        console.print(f"[yellow]{note}[/yellow]", highlight=False)
    if assessment is None:
        console.print("This micro-benchmark carries no assessment (select with --assess-runs > 0 to measure its MDAD).")
    else:
        console.print(literal(describe_assessment(assessment)), highlight=False)
    if "flagged" in details and details["flagged"].any():
        flagged = details[details["flagged"]]
        console.print(f"{plural(len(flagged), 'estimate')} of {len(details)} flagged as extrapolations, unreliable "
                      "because the source models do not cover them:", highlight=False)
        for model, row in flagged.iterrows():
            console.print(f"  {literal(model)}: {literal(row['reason'])}.", highlight=False)
    if chosen.adaptive and (details["next_item"] != "").any():
        console.print("Ask each model its next item, then run this command again with the new results.")
    if csv is not None:
        write_csv(intervals.to_frame(), csv)
    if pairs_csv is not None:
        write_csv(orders.to_frame(), pairs_csv, what="the pairs CSV file")
