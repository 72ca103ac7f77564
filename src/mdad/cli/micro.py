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
from mdad.cli.common import (
    DataOption, DatasetOption, FilterOption, MetricOption, MissingOption, RerunsOption, SeedOption, ThresholdOption,
    WorkersOption, app, console, friendly_errors, load_matrix, output_path, plural, print_notes,
)
from mdad.cli.text import literal
from mdad.outputs import check_output_file, write_csv, writing
from mdad.data import load
from mdad.defaults import DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.experiment.splits import MIN_MODELS
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
        min=0, help="Held-out runs that measure the micro-benchmark's error and MDAD (0: skip).")] = 20,
    targets: Annotated[Optional[int], typer.Option(
        help="Held-out target models per assessment run (default: 50, or half the models if fewer than 100).")] = None,
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
    head = (f"On {a.runs} held-out splits ({a.targets} target models, {a.sources} source models, same method and "
            f"size): estimates are off by {100 * a.error:.1f} points on average, Kendall tau {a.kendall_tau:.2f}")
    share = f"{100 * a.threshold:.0f}%"
    robust = "not reached" if a.mdad_robust != a.mdad_robust else f"{a.mdad_robust:g}"
    if not a.mdad_reached:
        return (f"{head}; MDAD not reached (logistic fit: {robust}): no bin of differences is ordered correctly "
                f"{share} of the time.")
    high = "not reached" if a.mdad_high != a.mdad_high else f"{a.mdad_high:g}"
    return (f"{head}; MDAD {a.mdad:g} points [95% interval {a.mdad_low:g}, {high}] (logistic fit: {robust}): "
            f"models closer than that are ordered correctly less than {share} of the time.")


@app.command("estimate")
@friendly_errors
def estimate_command(
    micro: Annotated[Path, typer.Argument(help="A micro-benchmark written by 'mdad select'.")],
    results: Annotated[Path, typer.Argument(help="New models' results on (at least) the micro-benchmark's items.")],
    csv: Annotated[Optional[str], typer.Option(help="Also write the estimates to this CSV file.")] = None,
    metric: MetricOption = None,
    filter_name: FilterOption = None,
    reruns: RerunsOption = "latest",
) -> None:
    """Estimate full-benchmark accuracy of the models in RESULTS from their answers on the micro-benchmark."""
    if csv is not None:
        csv = output_path(csv, "the CSV file")
        check_output_file(csv, "the CSV file")
    chosen = SelectedMicroBenchmark.load(micro)
    if not results.exists():
        raise MdadError(f"No such file or folder: {results}.")
    matrix = load(results, metric=metric, filter_name=filter_name, reruns=reruns)
    print_notes(matrix)
    details = chosen.details(matrix)
    size_text = f"adaptive test of {chosen.size} items" if chosen.adaptive else f"{chosen.size} items"
    table = Table(title=f"{literal(chosen.method)}, {size_text} (estimated full-benchmark accuracy)")
    table.add_column("model")
    table.add_column("estimate (%)", justify="right")
    has_interval = "low" in details
    if has_interval:
        table.add_column("95% interval (%)", justify="right")
    if chosen.adaptive:
        table.add_column("answered", justify="right")
        table.add_column("next item")
    assessment = chosen.assessment
    if assessment is not None:
        table.add_column("gap to next (pts)", justify="right")
    if "flagged" in details:
        table.add_column("guard")
    ranked = details.sort_values("estimate", ascending=False)
    values = ranked["estimate"].to_numpy()
    gaps = 100 * (values - np.r_[values[1:], np.nan])
    unreliable = 0
    for (model, row), gap in zip(ranked.iterrows(), gaps):
        cells = [literal(model), f"{100 * row['estimate']:.1f}"]
        if has_interval:
            cells.append(f"{100 * row['low']:.1f} to {100 * row['high']:.1f}")
        if chosen.adaptive:
            cells += [str(row["answered"]), literal(row["next_item"]) if row["next_item"] else "(done)"]
        if assessment is not None:
            below = bool(gap < assessment.cautious_mdad)
            unreliable += below
            cells.append("" if np.isnan(gap) else f"[yellow]{gap:.1f} < MDAD[/yellow]" if below else f"{gap:.1f}")
        if "flagged" in details:
            cells.append("[yellow]extrapolation[/yellow]" if row["flagged"] else "")
        table.add_row(*cells)
    console.print(table)
    if assessment is None:
        console.print("This micro-benchmark carries no assessment (select with --assess-runs > 0 to measure its MDAD).")
    else:
        console.print(literal(describe_assessment(assessment)), highlight=False)
        if len(ranked) > 1:
            console.print(f"{unreliable} of the {len(ranked) - 1} neighbouring pairs are closer than the MDAD "
                          "(the larger of the two above): their order is not reliable.")
    if "flagged" in details and details["flagged"].any():
        flagged = details[details["flagged"]]
        console.print(f"{plural(len(flagged), 'estimate')} of {len(details)} flagged as extrapolations, unreliable "
                      "because the source models do not cover them:", highlight=False)
        for model, row in flagged.iterrows():
            console.print(f"  {literal(model)}: {literal(row['reason'])}.", highlight=False)
    if chosen.adaptive and (details["next_item"] != "").any():
        console.print("Ask each model its next item, then run this command again with the new results.")
    estimates = details["estimate"]
    if csv is not None:
        write_csv(estimates.to_frame(), csv, index=True)
