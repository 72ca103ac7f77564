"""`mdad plan` and `mdad compare`: how many items, and which comparisons a micro-benchmark can be trusted with.

Random designs are answered exactly from the data alone (mdad.metrics.analytic): every pair
of models, k items drawn by the design from the items both models answered, compared with
their accuracy on all those items. Other methods are answered by a quick simulation on
held-out runs at increasing sizes (mdad.planning), or from the simulated curves of a finished
`mdad run` (--results).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, List, Literal, Optional

import numpy as np
import pandas as pd
import typer
from rich import box
from rich.table import Table

from mdad import methods as method_registry
from mdad.assessment import assess
from mdad.cli.common import (
    DataOption, DatasetOption, ThresholdOption, app, console, friendly_errors, output_path, read_data,
)
from mdad.cli.text import literal
from mdad.data import ResponseMatrix
from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.memory import require_memory
from mdad.metrics import analytic
from mdad.outputs import check_output_file, write_csv
from mdad.metrics.pairwise import bin_of
from mdad.planning import simulated_plan

BIN = DEFAULT_BIN_WIDTH
MISSING_POLICIES = ("pairwise", "error", "drop-items", "drop-models")
MISSING_HELP = ("Cells not evaluated: pairwise (default: each pair is judged on the items both models answered), "
                "error, drop-items or drop-models.")
PAIR_ROW_BYTES = 400  # one row of compare's pair table: numbers, names, sorting and the printed copy
MissingPairwiseOption = Annotated[Literal[MISSING_POLICIES], typer.Option(help=MISSING_HELP)]
SeedPlanOption = Annotated[int, typer.Option(
    help="Seed of the simulated dataset and of the proportional design's allocation draws.")]
PAIRS_MEANING = ("'Pairs that far apart' are the pairs of models in the data whose full-benchmark accuracy difference "
                 "falls in the same 0.5-point bin as --detect (e.g. 2.0 to 2.5 points); the answer is the smallest size "
                 "at which their probability of being ordered correctly, averaged over those pairs, reaches --threshold.")


def load_for_analysis(dataset: str | None, data: Optional[Path], seed: int, missing: str) -> ResponseMatrix:
    """The matrix the user named; missing cells kept for pairwise use or handled by the policy."""
    matrix = read_data(dataset, data, seed)
    if missing == "pairwise":
        return matrix
    return matrix.require_complete(missing)


def bin_label(lower: float) -> str:
    return f"{lower:g} to {lower + BIN:g}"


def bin_agreement(stats: analytic.PairStats, k: int, design: str, seed: int) -> float:
    return float(analytic.agreement_probabilities(stats, k, design, seed=seed).mean())


def smallest_size(stats: analytic.PairStats, design: str, threshold: float, seed: int) -> tuple[int | None, float, float]:
    """The smallest k whose mean agreement over ``stats`` reaches the threshold.

    Agreement does not always rise with k (ties count as errors: with N = 20, n+ = 10, n- = 8 it
    is 0.717, 0.700, 0.816, 0.763, 1.0 at k = 15..19), so no bisection: k doubles until it reaches
    the threshold (the whole pool is evaluated only when needed), then every size up to that one is
    evaluated and the first that reaches it is the answer.

    Returns (k or None when even the whole pool does not, agreement at k, agreement at k - 1).
    """
    pool = int(stats.pool.min())
    hi = 1
    while (at_hi := bin_agreement(stats, hi, design, seed)) < threshold:
        if hi == pool:
            return None, at_hi, at_hi
        hi = min(2 * hi, pool)
    values = analytic.mean_agreement_by_size(stats, np.arange(1, hi + 1), design, seed)
    first = int(np.flatnonzero(values >= threshold)[0])
    return first + 1, float(values[first]), float(values[first - 1]) if first else 0.0


@app.command(help="How many items a micro-benchmark needs to order models --detect points apart (or, with --size, "
                  "the MDAD of a given size). Exact for the random designs; for other methods a quick simulation on "
                  "held-out runs (or the curves of a finished run, --results). " + PAIRS_MEANING)
@friendly_errors
def plan(
    dataset: DatasetOption = None,
    data: DataOption = None,
    detect: Annotated[Optional[float], typer.Option(
        min=0, help="Accuracy difference to detect, in points (its 0.5-point bin is used).")] = None,
    size: Annotated[Optional[int], typer.Option(
        min=1, help="Instead of --detect: report the MDAD of a micro-benchmark of this many items.")] = None,
    threshold: Annotated[float, typer.Option(help="Probability of the correct order that counts as detected.")] = DEFAULT_THRESHOLD,
    method: Annotated[str, typer.Option(help=(
        f"{', '.join(analytic.DESIGNS)} (exact), or any other method (simulated)."))
    ] = "random",
    results: Annotated[Optional[Path], typer.Option(
        help="Folder of a finished 'mdad run': answer from its simulated curves.")] = None,
    missing: MissingPairwiseOption = "pairwise",
    seed: SeedPlanOption = 0,
    runs: Annotated[int, typer.Option(
        min=1, help="Held-out runs of the quick simulation that answers for methods without an exact answer.")] = 20,
) -> None:
    check_threshold(threshold)
    if (detect is None) == (size is None):
        raise MdadError("Give either --detect (points to tell apart) or --size (number of items), not both or neither.")
    method_registry.get(method)  # the registry is open to new methods: an unknown name is one clear error
    if results is not None:
        if dataset is not None or data is not None:
            raise MdadError("--results answers from a finished run's own data; drop --data and --dataset.")
        plan_from_results(results, method, detect, size, threshold)
        return
    matrix = load_for_analysis(dataset, data, seed, missing)
    if method not in analytic.DESIGNS:
        plan_by_simulation(matrix, method, detect, size, threshold, runs, seed)
        return
    check_pairs(matrix)
    name = literal(matrix.source)
    if size is not None:
        plan_size(matrix, size, method, threshold, seed, name)
        return
    lower = float(bin_of(np.array([detect]), BIN)[0]) * BIN
    part = analytic.pairs_within(matrix, lambda stats: bin_of(stats.diff_points, BIN) == round(lower / BIN))
    if not part.n_pairs:
        raise MdadError(f"No pair of models in {matrix.source} differs by {bin_label(lower)} points; choose another --detect.")
    k, at_k, below = smallest_size(part, method, threshold, seed)
    head = f"{method} on {name}: pairs of models {bin_label(lower)} points apart ({len(part.first):,} pairs in the data)"
    if k is None:
        console.print(f"{head} are never ordered correctly with probability {threshold:g}, not even with every item "
                      f"({at_k:.3f} with all {int(part.pool.min())} items; true ties count as errors).")
        return
    console.print(f"{head}: [bold]{k} items[/bold] order them correctly with probability {at_k:.3f} on average "
                  f"(>= {threshold:g}); {k - 1} items give {below:.3f}. Exact (no simulation), full benchmark as the truth.")
    sizes = sorted({s for s in (10, 25, 50, 100, 250, 500, 1000, 2500, 5000) if s <= min(part.pool.min(), 2 * k)} | {k})
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("items", justify="right")
    table.add_column(f"P(correct order), pairs {bin_label(lower)} pts apart", justify="right")
    for s in sizes:
        table.add_row(f"[bold]{s}[/bold]" if s == k else str(s), f"{bin_agreement(part, s, method, seed):.3f}")
    console.print(table)


def check_pairs(matrix: ResponseMatrix) -> None:
    if matrix.n_models < 2:
        raise MdadError(f"{matrix.source} holds a single model; comparing needs at least two.")


def plan_size(matrix: ResponseMatrix, size: int, method: str, threshold: float, seed: int, name: str) -> None:
    """MDAD at one size from the analytic curve over all pairs, with the bins around it."""
    curve = analytic.streamed_curve(matrix, size, method, seed=seed)
    n_pairs = int(curve.pairs.sum())
    mdad = curve.crossing(threshold)
    where = f"first 0.5-point bin of full-benchmark difference whose mean probability of the correct order reaches {threshold:g}"
    if np.isnan(mdad):
        console.print(f"{method} with {size} items on {name}: MDAD [bold]not reached[/bold] (no bin of the "
                      f"{n_pairs:,} model pairs reaches {threshold:g}). Exact, no simulation.")
    else:
        console.print(f"{method} with {size} items on {name}: MDAD = [bold]{mdad:g} points[/bold] ({where}; "
                      f"{n_pairs:,} model pairs). Exact, no simulation.")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header in ("difference (pts)", "pairs", "P(correct order)"):
        table.add_column(header, justify="right")
    centre = int(np.searchsorted(curve.lower, mdad)) if not np.isnan(mdad) else len(curve.lower) - 1
    for i in range(max(0, centre - 4), min(len(curve.lower), centre + 4)):
        table.add_row(bin_label(curve.lower[i]), f"{curve.pairs[i]:,}", f"{curve.rate[i]:.3f}")
    console.print(table)


def plan_by_simulation(matrix: ResponseMatrix, method: str, detect: float | None, size: int | None, threshold: float,
                       runs: int, seed: int) -> None:
    """Methods without an exact answer: a quick assessment on held-out runs at increasing sizes (mdad.planning)."""
    workers = os.cpu_count() or 1
    if size is not None:
        with console.status(f"Simulating {method} with {size} items on {runs} held-out runs..."):
            a = assess(matrix, method, size, runs=runs, seed=seed, workers=workers, threshold=threshold)
        value = f"{a.mdad:g} points" if a.mdad_reached else "not reached"
        console.print(f"{literal(method)} with {size} items on {literal(matrix.source)}: MDAD = [bold]{value}[/bold] (simulated on {runs} "
                      f"held-out runs of {a.targets} target models, {a.sources} source models; 95% interval "
                      f"{a.mdad_low:g} to {'not reached' if np.isnan(a.mdad_high) else f'{a.mdad_high:g}'}). Not exact: "
                      "a simulation, its Monte Carlo error is the interval.")
        return
    with console.status(f"Simulating {method} at increasing sizes on {runs} held-out runs..."):
        found = simulated_plan(matrix, method, detect=detect, threshold=threshold, runs=runs, seed=seed, workers=workers)
    k = found.smallest
    head = (f"{literal(method)} on {literal(matrix.source)}: pairs of held-out models {bin_label(found.lower)} points apart "
            f"({found.pairs:,} pairs over {runs} runs)")
    if k is None:
        console.print(f"{head} are not ordered correctly with probability {threshold:g} at any size tried "
                      f"(up to {found.sizes[-1]} items).")
    else:
        i = int(np.searchsorted(found.sizes, k))
        console.print(f"{head}: [bold]{k} items[/bold] order them correctly {found.agreement[i]:.3f} of the time "
                      f"(>= {threshold:g})" + (f"; {found.sizes[i - 1]} items: {found.agreement[i - 1]:.3f}" if i else "")
                      + ".")
    console.print(f"Simulated, not exact: a quick assessment on {runs} held-out runs ({method} chose the items from the "
                  "other models each time); each share has a Monte Carlo standard error (±, between runs). More --runs "
                  "make it smaller.", highlight=False)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("items", justify="right")
    table.add_column(f"share ordered correctly, pairs {bin_label(found.lower)} pts apart", justify="right")
    for s_, rate, se in zip(found.sizes, found.agreement, found.stderr):
        table.add_row(f"[bold]{s_}[/bold]" if s_ == k else str(s_), f"{rate:.3f} ± {se:.3f}")
    console.print(table)


def plan_from_results(results: Path, method: str, detect: float | None, size: int | None, threshold: float) -> None:
    """The answer from the simulated agreement curves of a finished run (seen items, most source models)."""
    from mdad.experiment.evaluate import evaluate_store
    from mdad.experiment.store import ResultStore

    store = ResultStore(results)
    config = store.read_config()
    summary, curves = evaluate_store(store, threshold=threshold, seed=config.get("seed", 0))
    if summary.empty or method not in set(summary["method"]):
        stored = ", ".join(sorted(set(summary["method"]))) if not summary.empty else "none"
        raise MdadError(f"{results} holds no results for method {method!r} (stored: {stored}).")
    rows = summary[(summary["method"] == method) & (summary["view"] == "seen")]
    sources = int(rows["sources"].max())
    rows = rows[rows["sources"] == sources].sort_values("size")
    note = literal(f"from the simulated curves of {config.get('runs')} runs in {results} (seen items, {sources} source "
                   "models), not exact")
    if size is not None:
        row = rows[rows["size"] == size]
        if row.empty:
            raise MdadError(f"{results} has no {method} results at size {size} (stored sizes: "
                            f"{', '.join(str(s) for s in rows['size'])}).")
        r = row.iloc[0]
        value = f"{r['mdad']:g} points [{r['mdad_low']:g}, {r['mdad_high']:g}]" if r["mdad_reached"] else "not reached"
        console.print(f"{method} with {size} items: MDAD = [bold]{value}[/bold], {note}.")
        return
    lower = float(bin_of(np.array([detect]), BIN)[0]) * BIN
    seen = curves[(curves["method"] == method) & (curves["view"] == "seen") & (curves["sources"] == sources)]
    at = seen[np.isclose(seen["diff_low"], lower)].set_index("size")["agreement"]
    reached = [int(s) for s in rows["size"] if s in at.index and at[s] >= threshold]
    if not reached:
        console.print(f"{method}: no stored size orders pairs {bin_label(lower)} points apart correctly with "
                      f"probability {threshold:g} (largest stored size: {int(rows['size'].max())}), {note}.")
        return
    k = min(reached)
    console.print(f"{method}: [bold]{k} items[/bold] is the smallest stored size at which pairs {bin_label(lower)} points "
                  f"apart are ordered correctly with probability {at[k]:.3f} (>= {threshold:g}), {note}.")


@app.command(help="For each pair of models: the full-benchmark accuracy difference and the probability that a random "
                  "--size-item micro-benchmark orders the pair correctly (exact). For a group: the share of its pairs "
                  "whose difference is below the MDAD at that size (MDAD from all model pairs of the data), i.e. "
                  "comparisons unlikely to be preserved.")
@friendly_errors
def compare(
    size: Annotated[int, typer.Option(min=1, help="Number of items in the micro-benchmark.")],
    dataset: DatasetOption = None,
    data: DataOption = None,
    group: Annotated[Optional[str], typer.Option(help="A named model group (groups.json beside the data).")] = None,
    models: Annotated[Optional[List[str]], typer.Option(
        help="Models to compare (repeat the option or separate names by commas).")] = None,
    method: Annotated[Literal[analytic.DESIGNS], typer.Option(help=(
        f"{', '.join(analytic.DESIGNS[:-1])} or {analytic.DESIGNS[-1]}."))] = "random",
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    missing: MissingPairwiseOption = "pairwise",
    csv: Annotated[Optional[str], typer.Option(help="Also write every pair to this CSV file.")] = None,
    top: Annotated[int, typer.Option(help="Rows to print (closest pairs first); 0 prints all.")] = 30,
    seed: SeedPlanOption = 0,
) -> None:
    check_threshold(threshold)
    if csv is not None:
        csv = output_path(csv, "the CSV file")
        check_output_file(csv, "the CSV file")
    if group is not None and models:
        raise MdadError("Give --group or --models, not both.")
    matrix = load_for_analysis(dataset, data, seed, missing)
    check_pairs(matrix)
    if group is not None:
        chosen = matrix.group_index(group)
        label = f"group {literal(group)}"
    elif models:
        names = [n.strip() for value in models for n in value.split(",") if n.strip()]
        chosen = matrix.model_index(names)
        if len(np.unique(chosen)) < 2:
            raise MdadError("--models must name at least two different models.")
        chosen = np.unique(chosen)
        label = f"{len(chosen)} chosen models"
    else:
        chosen = np.arange(matrix.n_models)
        label = f"all {matrix.n_models} models"
    n_chosen = len(chosen) * (len(chosen) - 1) // 2
    require_memory(n_chosen * PAIR_ROW_BYTES, f"A table of {n_chosen:,} pairs of models")
    curve = analytic.streamed_curve(matrix, size, method, seed=seed)
    n_everyone = int(curve.pairs.sum())
    mdad = curve.crossing(threshold)
    stats = analytic.pair_stats(matrix, models=chosen)
    probs = analytic.agreement_probabilities(stats, size, method, seed=seed)
    frame = pair_frame(matrix, stats, probs, mdad)
    if csv is not None:
        write_csv(frame, csv)
    print_pairs(frame, top, size, method)
    mdad_text = "not reached" if np.isnan(mdad) else f"{mdad:g} points"
    console.print(f"MDAD of a {size}-item {method} micro-benchmark on {literal(matrix.source)}: [bold]{mdad_text}[/bold] "
                  f"(exact; all {n_everyone:,} model pairs, threshold {threshold:g}).", highlight=False)
    below = int(frame["below_mdad"].sum())
    reason = "MDAD is not reached at this size" if np.isnan(mdad) else "they differ by less than the MDAD"
    console.print(f"{label}: {len(frame):,} pairs; [bold]{below:,} ({below / len(frame):.0%})[/bold] are unlikely to keep "
                  f"their order ({reason}); mean probability of the correct order "
                  f"{frame['p_correct_order'].mean():.3f}, {(frame['p_correct_order'] < threshold).mean():.0%} of pairs "
                  f"below {threshold:g}.")
    if csv is not None:
        console.print(f"Every pair: {literal(csv)}", highlight=False)


def pair_frame(matrix: ResponseMatrix, stats: analytic.PairStats, probs: np.ndarray, mdad: float) -> pd.DataFrame:
    """One row per pair, the better model first, closest pairs first."""
    diff = stats.diff_points
    flip = diff < 0
    a = np.where(flip, stats.second, stats.first)
    b = np.where(flip, stats.first, stats.second)
    acc = matrix.accuracy() * 100.0
    frame = pd.DataFrame({
        "model_a": matrix.models[a], "model_b": matrix.models[b],
        "accuracy_a": acc[a], "accuracy_b": acc[b],
        "difference_points": np.abs(diff), "p_correct_order": probs, "pool_items": stats.pool,
        "below_mdad": np.abs(diff) < mdad if not np.isnan(mdad) else np.ones(len(diff), bool),
    })
    return frame.sort_values(["difference_points", "model_a", "model_b"], kind="stable", ignore_index=True)


def print_pairs(frame: pd.DataFrame, top: int, size: int, method: str) -> None:
    shown = frame if top <= 0 else frame.head(top)
    title = f"{size}-item {method} micro-benchmark: probability of ordering each pair as the full benchmark does"
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("higher model", overflow="fold", ratio=1)
    table.add_column("lower model", overflow="fold", ratio=1)
    for header in ("diff (pts)", "P(same order)", "< MDAD"):
        table.add_column(header, justify="right", no_wrap=True)
    for row in shown.itertuples(index=False):
        tie = row.difference_points == 0
        table.add_row(literal(row.model_a), literal(row.model_b), f"{row.difference_points:.2f}",
                      "tie" if tie else f"{row.p_correct_order:.3f}", "yes" if row.below_mdad else "no")
    console.print(table)
    if (shown["difference_points"] == 0).any():
        console.print("tie: the two models have the same full-benchmark accuracy, so no order can be kept "
                      "(counted as probability 0, as in MDAD).")
    if len(shown) < len(frame):
        console.print(f"... {len(frame) - len(shown):,} more pairs (use --top 0 or --csv).")
