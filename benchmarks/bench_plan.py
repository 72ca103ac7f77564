"""Time `mdad plan` and `mdad compare` (exact, in process) and compare them with the Monte Carlo way of
answering the same questions (simulated random micro-benchmarks) run in the same process.

    python benchmarks/bench_plan.py [--data-dir ../shared/data] [--runs 2000] [--threads 1]

Prints the time of each command (goal: under a second on oll2-gpqa and mmlu-pro-tiger), the time
of the simulation baseline, their ratio, and the largest gap between the exact probabilities and
the simulated frequencies (Monte Carlo error of the baseline).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits
from typer.testing import CliRunner

from mdad.cli import app
from mdad.data import load_dataset
from mdad.metrics import analytic

ROOT = Path(__file__).resolve().parents[1]


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def simulated_probabilities(matrix, stats, k: int, runs: int, seed: int = 0) -> np.ndarray:
    """Share of ``runs`` uniform k-item draws (from the items both models answered) ordering each pair correctly."""
    rng = np.random.default_rng(seed)
    scores = np.nan_to_num(matrix.scores.astype(np.float64))
    valid = ~np.isnan(matrix.scores)
    agree = np.zeros(stats.n_pairs)
    truth = np.sign(stats.diff_points)
    for _ in range(runs):
        keys = rng.random(matrix.n_items)
        # k random items among those both models answered: the k smallest keys of the common items
        common = valid[stats.first] & valid[stats.second]
        masked = np.where(common, keys[None, :], np.inf)
        chosen = np.argpartition(masked, k - 1, axis=1)[:, :k]
        de = scores[stats.first[:, None], chosen].sum(axis=1) - scores[stats.second[:, None], chosen].sum(axis=1)
        agree += (np.sign(de) == truth) & (de != 0)
    return agree / runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    os.environ["MDAD_DATA_DIR"] = args.data_dir
    runner = CliRunner()
    commands = {
        "oll2-gpqa": [
            ["plan", "--dataset", "oll2-gpqa", "--detect", "2.0"],
            ["plan", "--dataset", "oll2-gpqa", "--size", "100"],
            ["compare", "--dataset", "oll2-gpqa", "--size", "25", "--group", "7b_instruct"],
        ],
        "mmlu-pro-tiger": [
            ["plan", "--dataset", "mmlu-pro-tiger", "--detect", "2.0"],
            ["plan", "--dataset", "mmlu-pro-tiger", "--size", "100"],
            ["compare", "--dataset", "mmlu-pro-tiger", "--size", "25"],
        ],
    }
    with threadpool_limits(args.threads):
        for name, cmds in commands.items():
            for cmd in cmds:
                result = runner.invoke(app, cmd)
                assert result.exit_code == 0, result.output
                seconds = best_of(3, lambda cmd=cmd: runner.invoke(app, cmd))
                print(f"{' '.join(cmd):70s} {seconds:6.3f} s")
            matrix = load_dataset(name)
            chosen = matrix.group_index("7b_instruct") if "7b_instruct" in matrix.groups else None
            stats = analytic.pair_stats(matrix, models=chosen)
            exact_s = best_of(3, lambda stats=stats: analytic.agreement_probabilities(stats, 25))
            start = time.perf_counter()
            simulated = simulated_probabilities(matrix, stats, 25, args.runs)
            sim_s = time.perf_counter() - start
            gap = np.abs(simulated - analytic.agreement_probabilities(stats, 25)).max()
            print(
                f"{name}: pair probabilities at 25 items for {stats.n_pairs:,} pairs: exact {exact_s:.4f} s, "
                f"{args.runs}-run simulation {sim_s:.2f} s, ratio {sim_s / exact_s:,.0f}x; "
                f"largest |exact - simulated| {gap:.3f} (Monte Carlo error of the simulation)"
            )


if __name__ == "__main__":
    main()
