"""Adaptive testing and AIPW against static methods on the paper's protocol (docs/adaptive.md).

Runs random, tinybenchmarks-gpirt, adaptive, adaptive-1d and aipw at 10, 25, 50 and 100 items,
50 runs, on oll2-gpqa, oll2-musr, oll2-math-hard (from the shared data folder) and the
simulated default, twice: with 50 random targets per run, and with the 50 strongest models
as the targets of every run (`--targets-from top`). Prints one markdown table per setting:
MDAD, error and Kendall tau on the seen and unseen items, and the extrapolation guard's
flagged targets per run.

Also measures, on the same splits, the coverage of aipw's 95% intervals of the targets' seen
accuracy (nothing is calibrated: the targets are held out), and times the GPQA grid
(50 runs x 10, 25, 50, 100, 200 items) of adaptive, adaptive-1d and aipw, each alone, against
tinybenchmarks-gpirt run in the same process (wall time with 2 workers, CPU time in one process).

    python benchmarks/bench_adaptive.py [--data ../shared/data] [--runs 50] [--workers 2] [--parts timing,coverage,grid]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from mdad.data import read_npz, simulate
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.methods import SourceView
from mdad.methods.aipw import AIPW
from mdad.methods.tinybenchmarks import TinyPreparation
from mdad.seeding import rng_for

METHODS = ("random", "tinybenchmarks-gpirt", "adaptive", "adaptive-1d", "aipw")
SIZES = (10, 25, 50, 100)
DATASETS = ("oll2-gpqa", "oll2-musr", "oll2-math-hard")


def matrices(data: Path):
    for name in DATASETS:
        path = data / name / "responses.npz"
        if path.is_file():
            yield name, read_npz(path, source=name)
        else:
            print(f"(skipped {name}: {path} not found)")
    yield "simulated", simulate(seed=0)


def fmt(value: float) -> str:
    return "n.r." if value != value else f"{value:g}"


def grid_table(name, matrix, targets_from, runs, workers) -> None:
    config = ExperimentConfig.for_matrix(matrix, methods=METHODS, sizes=SIZES, runs=runs, targets_from=targets_from)
    start = time.perf_counter()
    result = Experiment(matrix, config).run(workers=workers)
    seconds = time.perf_counter() - start
    summary = result.summary()
    print(
        f"\n### {name}, {'the 50 strongest models' if targets_from == 'top' else '50 random models'} as targets "
        f"({config.sources[0]} sources, {runs} runs; {seconds:.0f} s with {workers} workers)\n"
    )
    print("| method | k | MDAD seen | MDAD unseen | error seen | error unseen | tau seen | tau unseen | flagged/run |")
    print("|---|---|---|---|---|---|---|---|---|")
    for method in METHODS:
        for k in SIZES:
            rows = summary[(summary["method"] == method) & (summary["size"] == k)].set_index("view")
            seen, unseen = rows.loc["seen"], rows.loc["unseen"]
            flagged = seen.get("flagged_per_run", float("nan"))
            print(
                f"| {method} | {k} | {fmt(seen['mdad'])} | {fmt(unseen['mdad'])} | {100 * seen['error']:.2f} | "
                f"{100 * unseen['error']:.2f} | {seen['kendall_tau']:.3f} | {unseen['kendall_tau']:.3f} | "
                f"{'' if flagged != flagged else f'{flagged:.1f}'} |"
            )


def aipw_coverage(name, matrix, targets_from, runs) -> None:
    """Share of targets whose seen accuracy lies inside aipw's 95% interval, per size."""
    config = ExperimentConfig.for_matrix(matrix, methods="aipw", sizes=SIZES, runs=runs, targets_from=targets_from)
    splits = Experiment(matrix, config).splits
    scores = matrix.scores.astype(np.float64)
    inside = {k: [] for k in SIZES}
    width = {k: [] for k in SIZES}
    for run in range(runs):
        pool, src, tgt = splits.seen[run], splits.sources(config.sources[0])[run], splits.targets[run]
        view = SourceView.from_arrays(scores[np.ix_(src, pool)])
        prepared = TinyPreparation(view, rng_for(config.seed, "prepare", "tinybenchmarks-irt", config.sources[0], run))
        truth = scores[np.ix_(tgt, pool)].mean(axis=1)
        for k in SIZES:
            micro = AIPW().select(view, k, rng_for(config.seed, "select", "aipw", k, run), prepared)
            result = micro.interval(scores[np.ix_(tgt, pool[micro.items])])
            inside[k].append((result.low <= truth) & (truth <= result.high))
            width[k].append(result.high - result.low)
    cells = " | ".join(f"{100 * np.mean(inside[k]):.1f}% ({100 * np.mean(width[k]):.1f})" for k in SIZES)
    print(f"| {name} | {targets_from} | {cells} |")


def timing(matrix, workers) -> None:
    """Wall time with ``workers`` processes, and CPU time in this process alone (workers=1): on a
    shared machine the CPU time is the fair measure; on 2 idle cores the wall time is about half of it."""
    sizes = (10, 25, 50, 100, 200)
    print(f"\nGPQA grid, 50 runs x {len(sizes)} sizes ({', '.join(map(str, sizes))}), IRT fits included (machine shared with other jobs):")
    base = None
    for method in ("tinybenchmarks-gpirt", "adaptive", "adaptive-1d", "aipw"):
        config = ExperimentConfig.for_matrix(matrix, methods=method, sizes=sizes, runs=50)
        start = time.perf_counter()
        Experiment(matrix, config).run(workers=workers)
        wall = time.perf_counter() - start
        start = time.process_time()
        Experiment(matrix, config).run(workers=1)
        cpu = time.process_time() - start
        base = base or cpu
        print(f"  {method}: {wall:.1f} s wall with {workers} workers; {cpu:.1f} s CPU in one process ({cpu / base:.2f} x tinybenchmarks-gpirt)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--parts", default="timing,coverage,grid", help="Comma-separated parts to run.")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    loaded = list(matrices(args.data))
    if "coverage" in parts:
        print("\naipw: share of targets whose seen accuracy lies inside the 95% interval (mean width, points)\n")
        print("| data | targets | " + " | ".join(f"k={k}" for k in SIZES) + " |")
        print("|---|---|" + "---|" * len(SIZES))
        for name, matrix in loaded:
            for targets_from in ("random", "top"):
                aipw_coverage(name, matrix, targets_from, args.runs)
    if "grid" in parts:
        for name, matrix in loaded:
            for targets_from in ("random", "top"):
                grid_table(name, matrix, targets_from, args.runs, args.workers)
    if "timing" in parts and loaded[0][0] == "oll2-gpqa":
        timing(loaded[0][1], args.workers)


if __name__ == "__main__":
    main()
