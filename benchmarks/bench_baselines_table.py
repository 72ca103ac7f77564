"""Every method side by side on every real matrix: MDAD, error, Kendall tau and interval coverage by size.

Every registered method (a plug-in's too) and the best-known selection paired with kernel ridge regression
(``anchor-points@estimator=krr``). For each dataset of the shared data folder and each way of choosing targets (50 random models
per run, or the 50 strongest as the targets of every run; half the models when there are fewer
than 100), the experiment of `mdad run` with the methods below at 10, 25, 50, 100 and 250 items
(those below the seen pool), on the seen items. Missing cells drop their items. A method that
refuses the data (0/1 methods on continuous scores) is listed as refused. Prints one markdown
table per dataset and targets, then each method's mean rank by MDAD (1 = smallest; ties share
the mean rank) over every dataset, targets and size it ran, and the verdict: per size and
targets, on how many leaderboards uniform random is within noise of the best method (its MDAD
interval reaches the best method's: the 95% bootstrap intervals of the two overlap).

    python benchmarks/bench_baselines_table.py [--data ../shared/data] [--runs 50] [--datasets ...] [--cells DIR]
    python benchmarks/bench_baselines_table.py --smoke      # oll2-gpqa, random and lasso, 2 runs

With ``--cells`` each experiment keeps its cells in DIR/<dataset>-<targets>/, so an interrupted
measurement resumes where it stopped. ``--coverage A.json B.json ...`` joins the interval columns that
``bench_intervals.py --columns`` recorded (90% coverage overall and for the top fifth, and the share covered or
marked), printed as a second table per dataset and targets.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import suite

from mdad import methods as method_registry
from mdad.data import read_npz
from mdad.errors import MdadError
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.store import ResultStore

# Every registered method (a plug-in's too), and the best-known selection paired with kernel ridge regression.
PAIRED = ("anchor-points@estimator=krr",)
METHODS = (*method_registry.available(), *PAIRED)
SIZES = (10, 25, 50, 100, 250)
DATASETS = ("oll2-gpqa", "oll2-musr", "oll2-math-hard", "mmlu-pro-tiger", "gsm8k-zeroeval", "alpacaeval2")


def accepted(matrix, methods: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The methods that take this data, and those that need 0/1 scores it does not have."""
    values = matrix.scores[~np.isnan(matrix.scores)]
    binary = bool(np.isin(values, (0.0, 1.0)).all())
    refused = [] if binary else [m for m in methods if method_registry.get(m).scores == "binary"]
    return [m for m in methods if m not in refused], refused


def table(
    name: str,
    matrix,
    targets_from: str,
    runs: int,
    rows: list,
    out: Path | None = None,
    methods: tuple[str, ...] = METHODS,
    workers: int = 2,
    coverage: pd.DataFrame | None = None,
) -> None:
    names, refused = accepted(matrix, methods)
    config = ExperimentConfig.for_matrix(matrix, methods=tuple(names), runs=runs, targets_from=targets_from)
    sizes = tuple(k for k in SIZES if k < config.sizes[-1] or k in config.sizes) or config.sizes
    config = ExperimentConfig.for_matrix(
        matrix, methods=tuple(names), runs=runs, targets_from=targets_from, sizes=tuple(k for k in sizes if k <= max(config.sizes))
    )
    store = None if out is None else ResultStore(out / f"{name}-{targets_from}")
    summary = Experiment(matrix, config, store=store).run(workers=workers).summary()
    seen = summary[summary.view == "seen"]
    print(f"\n##### {name}, {targets_from} targets ({runs} runs, {config.targets} targets, {config.sources[0]} sources)\n")
    if refused:
        print(f"Refused (0/1 scores only): {', '.join(refused)}.\n")
    print("| method | " + " | ".join(f"{k}: MDAD (robust) / error / tau" for k in config.sizes) + " |")
    print("|---|" + "---|" * len(config.sizes))
    for method in names:
        cells = []
        for k in config.sizes:
            row = seen[(seen.method == method) & (seen["size"] == k)].iloc[0]
            cells.append(f"{row.mdad:g} ({row.mdad_robust:g}) / {100 * row.error:.1f} / {row.kendall_tau:.2f}")
            rows.append(
                {
                    "dataset": name,
                    "targets": targets_from,
                    "size": k,
                    "method": method,
                    "mdad": row.mdad,
                    "low": row.mdad_low,
                    "high": row.mdad_high,
                    "mdad_robust": row.mdad_robust,
                    "error": row.error,
                    "kendall_tau": row.kendall_tau,
                }
            )
        print(f"| {method} | " + " | ".join(cells) + " |")
    if coverage is not None:
        print_coverage(coverage, name, targets_from, names, config.sizes)


def read_coverage(paths: list[Path]) -> pd.DataFrame:
    """The interval columns (bench_intervals.py --columns) of every record of the files, one row per cell: where
    several records hold a cell, the later one (in the order of the files, then of their records)."""
    rows = [r for path in paths for record in json.loads(path.read_text()) for r in record["results"] if "cover90" in r]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.drop_duplicates(["dataset", "targets", "method", "size"], keep="last").reset_index(drop=True)


def print_coverage(coverage: pd.DataFrame, name: str, targets_from: str, methods: list[str], sizes: tuple[int, ...]) -> None:
    """90% interval coverage of the targets, overall / top fifth, and the share covered or marked (bench_intervals.py)."""
    cells = coverage[(coverage.dataset == name) & (coverage.targets == targets_from)]
    if cells.empty:
        return
    reps = int(cells.reps.max())
    print(f"\n90% intervals ({reps} repetitions of bench_intervals.py --columns): coverage % overall / top fifth (± SE); [covered or marked %]\n")
    print("| method | " + " | ".join(str(k) for k in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for method in methods:
        out = []
        for k in sizes:
            cell = cells[(cells.method == method) & (cells["size"] == k)]
            if cell.empty:
                out.append("-")
                continue
            r = cell.iloc[0]
            top = "-" if np.isnan(r.cover90_top) else f"{100 * r.cover90_top:.0f}±{100 * r.cover90_top_se:.0f}"
            out.append(f"{100 * r.cover90:.0f}±{100 * r.cover90_se:.0f} / {top} [{100 * r.covered_or_marked:.0f}]")
        print(f"| {method} | " + " | ".join(out) + " |")


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--data", type=Path, default=suite.DATA_DIR)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--cells", type=Path, default=None, help="keep each experiment's cells here (resumable)")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--coverage", type=Path, nargs="*", default=None, help="bench_intervals.py --columns records to join")
    args = parser.parse_args()
    methods, targets = METHODS, ("random", "top")
    if args.smoke:
        methods, targets, args.datasets, args.runs, args.workers = ("random", "lasso"), ("random",), "oll2-gpqa", 2, 1
    with suite.Session("bench_baselines_table", args) as session:
        measure(args, session, methods, targets)


def measure(args, session: suite.Session, methods: tuple[str, ...], targets: tuple[str, ...]) -> None:
    """Every table, the mean ranks and the verdict; the record keeps every cell's MDAD."""
    rows: list = []
    coverage = read_coverage(args.coverage) if args.coverage else None
    for name in args.datasets.split(","):
        matrix = read_npz(args.data / name / "responses.npz").require_complete("drop-items")
        for targets_from in targets:
            try:
                table(name, matrix, targets_from, args.runs, rows, args.cells, methods, args.workers, coverage)
            except MdadError as exc:
                print(f"\n{name}, {targets_from} targets: {exc}")
    frame = pd.DataFrame(rows)
    for row in rows:
        session.add(f"{row['dataset']} {row['targets']} {row['size']} {row['method']}", **row)
    if frame.empty:
        return
    frame["rank"] = frame.groupby(["dataset", "targets", "size"]).mdad.rank(method="average")
    ranks = frame.groupby("method")["rank"].agg(["mean", "count"]).sort_values("mean")
    print("\n##### Mean rank by MDAD (1 = smallest) over every dataset, targets and size\n")
    print("| method | mean rank | cells |")
    print("|---|---|---|")
    for method, row in ranks.iterrows():
        print(f"| {method} | {row['mean']:.2f} | {int(row['count'])} |")
    verdict(frame)


def verdict(frame: pd.DataFrame) -> None:
    """Per targets and size: on how many leaderboards random's MDAD interval reaches the best method's."""
    print("\n##### Is random within noise of the best method? (95% MDAD intervals overlap)\n")
    print("| targets | size | leaderboards where random is within noise of the best | best method elsewhere |")
    print("|---|---|---|---|")
    for (targets, size), part in frame.groupby(["targets", "size"]):
        within, others = [], []
        for dataset, cell in part.groupby("dataset"):
            reached = cell[cell.mdad.notna()]
            rand = cell[cell.method == "random"]
            if reached.empty or rand.empty:
                continue
            best = reached.loc[reached.mdad.idxmin()]
            random_low = rand.low.iloc[0]
            best_high = best.high if np.isfinite(best.high) else np.inf
            if np.isnan(random_low) or random_low > best_high:
                others.append(f"{dataset}: {best.method}")
            else:
                within.append(dataset)
        print(f"| {targets} | {size} | {len(within)} of {len(within) + len(others)} | {'; '.join(others) or '-'} |")


if __name__ == "__main__":
    main()
