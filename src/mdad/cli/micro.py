"""`mdad select` and `mdad estimate`: build a micro-benchmark once, then score new models with it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from mdad.cli.common import app, console, friendly_errors, load_matrix
from mdad.data import load
from mdad.errors import MdadError
from mdad.microbenchmark import SelectedMicroBenchmark, select


@app.command("select")
@friendly_errors
def select_command(
    method: str = typer.Option(..., help="Selection method (see 'mdad methods')."),
    size: int = typer.Option(..., help="Number of items."),
    out: Path = typer.Option(..., help="Where to write the micro-benchmark (JSON)."),
    dataset: str = typer.Option("simulated", help="Named dataset: 'simulated' or a folder name in $MDAD_DATA_DIR."),
    data: Optional[Path] = typer.Option(None, help="Your own results (file or folder)."),
    seed: int = typer.Option(0, help="Seed of the selection."),
    missing: str = typer.Option("error", help="Cells not evaluated: error, drop-items or drop-models."),
    metric: Optional[str] = typer.Option(None, help="Metric to read from harness results (e.g. acc_norm)."),
    filter_name: Optional[str] = typer.Option(None, "--filter", help="lm-eval filter to keep (default: the first)."),
) -> None:
    """Choose SIZE items with METHOD, using every model of the data as a source model."""
    matrix = load_matrix(dataset, data, seed, missing, metric, filter_name)
    chosen = select(matrix, method, size, seed)
    chosen.save(out)
    counts = {}
    for subtask in chosen.subtasks:
        counts[subtask] = counts.get(subtask, 0) + 1
    console.print(f"{method}: {size} of {matrix.n_items} items from {matrix.source} "
                  f"({len(counts)} subtasks) written to {out}.")


@app.command("estimate")
@friendly_errors
def estimate_command(
    micro: Path = typer.Argument(..., help="A micro-benchmark written by 'mdad select'."),
    results: Path = typer.Argument(..., help="New models' results on (at least) the micro-benchmark's items."),
    csv: Optional[Path] = typer.Option(None, help="Also write the estimates to this CSV file."),
    metric: Optional[str] = typer.Option(None, help="Metric to read from harness results (e.g. acc_norm)."),
    filter_name: Optional[str] = typer.Option(None, "--filter", help="lm-eval filter to keep (default: the first)."),
) -> None:
    """Estimate full-benchmark accuracy of the models in RESULTS from their answers on the micro-benchmark."""
    chosen = SelectedMicroBenchmark.load(micro)
    if not results.exists():
        raise MdadError(f"No such file or folder: {results}.")
    estimates = chosen.estimate(load(results, metric=metric, filter_name=filter_name))
    table = Table(title=f"{chosen.method}, {len(chosen.item_ids)} items (estimated full-benchmark accuracy)")
    table.add_column("model")
    table.add_column("estimate (%)", justify="right")
    for model, value in estimates.sort_values(ascending=False).items():
        table.add_row(str(model), f"{100 * value:.1f}")
    console.print(table)
    if csv is not None:
        estimates.to_csv(csv)
