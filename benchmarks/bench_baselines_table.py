"""Every method side by side on every real matrix: MDAD, error and Kendall tau by size (benchmarks/README.md).

For each dataset of the shared data folder and each way of choosing targets (50 random models
per run, or the 50 strongest as the targets of every run; half the models when there are fewer
than 100), the experiment of `mdad run` with the methods below at 10, 25, 50, 100 and 250 items
(those below the seen pool), on the seen items. Missing cells drop their items. A method that
refuses the data (0/1 methods on continuous scores) is listed as refused. Prints one markdown
table per dataset and targets, then each method's mean rank by MDAD (1 = smallest; ties share
the mean rank) over every dataset, targets and size it ran.

    python benchmarks/bench_baselines_table.py [--data ../shared/data] [--runs 5] [--datasets ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from mdad import methods as method_registry
from mdad.data import read_npz
from mdad.errors import MdadError
from mdad.experiment.grid import Experiment, ExperimentConfig

METHODS = ("random", "random-regression", "random-search-regression", "lasso", "metabench", "tinybenchmarks-gpirt", "adaptive-1d", "aipw")
SIZES = (10, 25, 50, 100, 250)
DATASETS = ("oll2-gpqa", "oll2-musr", "oll2-math-hard", "mmlu-pro-tiger", "gsm8k-zeroeval", "alpacaeval2")


def accepted(matrix) -> tuple[list[str], list[str]]:
    """The methods that take this data, and those that need 0/1 scores it does not have."""
    values = matrix.scores[~np.isnan(matrix.scores)]
    binary = bool(np.isin(values, (0.0, 1.0)).all())
    refused = [] if binary else [m for m in METHODS if method_registry.get(m).scores == "binary"]
    return [m for m in METHODS if m not in refused], refused


def table(name: str, matrix, targets_from: str, runs: int, rows: list) -> None:
    names, refused = accepted(matrix)
    config = ExperimentConfig.for_matrix(matrix, methods=tuple(names), runs=runs, targets_from=targets_from)
    sizes = tuple(k for k in SIZES if k < config.sizes[-1] or k in config.sizes) or config.sizes
    config = ExperimentConfig.for_matrix(
        matrix, methods=tuple(names), runs=runs, targets_from=targets_from, sizes=tuple(k for k in sizes if k <= max(config.sizes))
    )
    summary = Experiment(matrix, config).run().summary()
    seen = summary[summary.view == "seen"]
    print(f"\n##### {name}, {targets_from} targets ({runs} runs, {config.targets} targets, {config.sources[0]} sources)\n")
    if refused:
        print(f"Refused (0/1 scores only): {', '.join(refused)}.\n")
    print("| method | " + " | ".join(f"{k}: MDAD / error / tau" for k in config.sizes) + " |")
    print("|---|" + "---|" * len(config.sizes))
    for method in names:
        cells = []
        for k in config.sizes:
            row = seen[(seen.method == method) & (seen["size"] == k)].iloc[0]
            cells.append(f"{row.mdad:g} / {100 * row.error:.1f} / {row.kendall_tau:.2f}")
            rows.append({"dataset": name, "targets": targets_from, "size": k, "method": method, "mdad": row.mdad})
        print(f"| {method} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    args = parser.parse_args()
    rows: list = []
    for name in args.datasets.split(","):
        matrix = read_npz(args.data / name / "responses.npz").require_complete("drop-items")
        for targets_from in ("random", "top"):
            try:
                table(name, matrix, targets_from, args.runs, rows)
            except MdadError as exc:
                print(f"\n{name}, {targets_from} targets: {exc}")
    frame = pd.DataFrame(rows)
    if frame.empty:
        return
    frame["rank"] = frame.groupby(["dataset", "targets", "size"]).mdad.rank(method="average")
    ranks = frame.groupby("method")["rank"].agg(["mean", "count"]).sort_values("mean")
    print("\n##### Mean rank by MDAD (1 = smallest) over every dataset, targets and size\n")
    print("| method | mean rank | cells |")
    print("|---|---|---|")
    for method, row in ranks.iterrows():
        print(f"| {method} | {row['mean']:.2f} | {int(row['count'])} |")


if __name__ == "__main__":
    main()
