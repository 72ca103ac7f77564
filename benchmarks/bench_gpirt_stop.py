"""gp-IRT's estimation error with its held-out fit stopped once lambda's error has converged, against
the fixed 6 rounds, on real leaderboards (the paper's protocol: seen half, 300 sources, 50 targets).

    python benchmarks/bench_gpirt_stop.py [--runs 10] [--data ../shared/data]

Per dataset and size: the mean absolute error of the targets' estimates on the unseen items
(points) with the former fixed schedule and now, the largest change of a single estimate, and
the CPU time of the held-out fits' runs both ways (one process, one thread, alternating).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.data import read_npz
from mdad.experiment.grid import Task, task_outcomes
from mdad.experiment.splits import make_splits
from mdad.methods import tinybenchmarks

DATASETS = ("oll2-gpqa", "oll2-musr", "oll2-math-hard")
SIZES = (10, 25, 50, 100)
METHOD = "tinybenchmarks-gpirt"


def errors(matrix, splits, runs: int) -> tuple[dict[int, list[np.ndarray]], float]:
    """Per size, every run's estimate errors (unseen accuracy - estimate); and the CPU seconds."""
    unseen_truth = [matrix.scores[splits.targets[r]][:, splits.unseen[r]].astype(float).mean(axis=1) for r in range(runs)]
    found: dict[int, list[np.ndarray]] = {k: [] for k in SIZES}
    start = time.process_time()
    for run, outcomes in task_outcomes(matrix, splits, Task((METHOD,), 300, SIZES)):
        for cell, outcome in outcomes.items():
            found[cell.size].append(np.asarray(outcome.estimates) - unseen_truth[run])
    return found, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    args = parser.parse_args()
    threadpool_limits(1)
    print(f"{'dataset':16s} {'k':>4s} {'error, 6 rounds':>16s} {'error, stopped':>15s} {'largest change':>15s}")
    for name in DATASETS:
        path = args.data / name / "responses.npz"
        if not path.exists():
            print(f"{name}: not found at {path}, skipped")
            continue
        matrix = read_npz(path)
        splits = make_splits(matrix, args.runs, 50, seed=0)
        with mock.patch.object(tinybenchmarks, "BIAS_FIRST_CHECK", tinybenchmarks.VALIDATION_ROUNDS + 1):
            fixed, fixed_cpu = errors(matrix, splits, args.runs)
        stopped, stopped_cpu = errors(matrix, splits, args.runs)
        for k in SIZES:
            before, now = np.concatenate(fixed[k]), np.concatenate(stopped[k])
            print(
                f"{name:16s} {k:4d} {100 * np.mean(np.abs(before)):15.3f}  {100 * np.mean(np.abs(now)):14.3f}  "
                f"{100 * np.max(np.abs(now - before)):14.3f}"
            )
        print(f"{name:16s} CPU of {args.runs} runs (all sizes): {fixed_cpu:.1f} s with 6 rounds, {stopped_cpu:.1f} s stopped")


if __name__ == "__main__":
    main()
