"""The adaptive tests' stopping rule and exposure control on real data (docs/protocol.md, benchmarks/README.md).

For each dataset: ``adaptive-1d@stop-se=S`` with a budget of BUDGET items for several S reports
the mean and spread (sd over runs x targets) of the items each target answered, and its MDAD on
the seen items is set against the fixed-length ``adaptive-1d`` at the matched mean budget (the
mean items used, rounded) on the same splits. ``adaptive-1d@randomesque=R`` against
``adaptive-1d`` at the same sizes: MDAD, the largest share of targets shown one item (exposure)
and the share of the pool shown to anyone, averaged over runs.

    python benchmarks/bench_stopping.py [--data ../shared/data] [--runs 10] [--datasets oll2-gpqa,oll2-musr]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from mdad.data import read_npz
from mdad.experiment.grid import Experiment, ExperimentConfig, Task, task_outcomes

BUDGET = 100
THRESHOLDS = (0.15, 0.2, 0.25, 0.3)
RANDOMESQUE = 5
SIZES = (10, 25, 50, 100)


def used_items(matrix, experiment: Experiment, names: tuple[str, ...], sizes: tuple[int, ...]) -> dict:
    """Per (method, size): the items answered by each target of each run (runs x targets), and the items shown."""
    out: dict = {}
    sources = experiment.config.sources[0]
    for _, outcomes in task_outcomes(matrix, experiment.splits, Task(names, sources, sizes)):
        for cell, outcome in outcomes.items():
            items = np.asarray(outcome.items)
            out.setdefault((cell.method, cell.size), []).append(items)
    return out


def exposure(items: list[np.ndarray], pool: int) -> tuple[float, float]:
    """Mean over runs of the largest share of targets shown one item, and of the share of the pool shown to anyone."""
    top, shown = [], []
    for run in items:
        counts = np.bincount(run[run >= 0].ravel(), minlength=pool)
        top.append(counts.max() / len(run))
        shown.append((counts > 0).mean())
    return float(np.mean(top)), float(np.mean(shown))


def mdad_seen(summary, method: str, size: int) -> float:
    row = summary[(summary.method == method) & (summary["size"] == size) & (summary.view == "seen")]
    return float(row.mdad.iloc[0])


def report(name: str, matrix, runs: int) -> None:
    stops = tuple(f"adaptive-1d@stop-se={s:g}" for s in THRESHOLDS)
    probe = Experiment(matrix, ExperimentConfig.for_matrix(matrix, methods=stops, sizes=(BUDGET,), runs=runs))
    used = used_items(matrix, probe, stops, (BUDGET,))
    means = {s: float(np.mean([(r >= 0).sum(axis=1) for r in used[(s, BUDGET)]])) for s in stops}
    spreads = {s: float(np.std(np.concatenate([(r >= 0).sum(axis=1) for r in used[(s, BUDGET)]]))) for s in stops}
    matched = sorted({max(1, round(m)) for m in means.values()} | set(SIZES))
    randomesque = f"adaptive-1d@randomesque={RANDOMESQUE}"
    config = ExperimentConfig.for_matrix(matrix, methods=("adaptive-1d", randomesque, *stops), sizes=tuple(matched), runs=runs)
    experiment = Experiment(matrix, config)
    summary = experiment.run().summary()
    print(f"\n#### {name}: stopping rule (budget {BUDGET} items, {runs} runs, {experiment.splits.targets.shape[1]} random targets)\n")
    print("| S | items used, mean | items used, sd | MDAD seen, stopping | MDAD seen, fixed length at the mean |")
    print("|---|---|---|---|---|")
    for s, method in zip(THRESHOLDS, stops, strict=True):
        k = max(1, round(means[method]))
        print(
            f"| {s:g} | {means[method]:.1f} | {spreads[method]:.1f} | {mdad_seen(summary, method, BUDGET):g} | "
            f"{mdad_seen(summary, 'adaptive-1d', k):g} ({k} items) |"
        )
    shown = used_items(matrix, experiment, ("adaptive-1d", randomesque), SIZES)
    pool = experiment.splits.n_seen
    print(f"\n#### {name}: exposure control (randomesque, r = {RANDOMESQUE})\n")
    print(
        "| items | MDAD seen, plain | MDAD seen, randomesque | top exposure, plain | top exposure, randomesque "
        "| pool shown, plain | pool shown, randomesque |"
    )
    print("|---|---|---|---|---|---|---|")
    for k in SIZES:
        plain, spread = exposure(shown[("adaptive-1d", k)], pool), exposure(shown[(randomesque, k)], pool)
        print(
            f"| {k} | {mdad_seen(summary, 'adaptive-1d', k):g} | {mdad_seen(summary, randomesque, k):g} | "
            f"{plain[0]:.2f} | {spread[0]:.2f} | {plain[1]:.2f} | {spread[1]:.2f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--datasets", default="oll2-gpqa,oll2-musr")
    args = parser.parse_args()
    for name in args.datasets.split(","):
        report(name, read_npz(args.data / name / "responses.npz"), args.runs)


if __name__ == "__main__":
    main()
