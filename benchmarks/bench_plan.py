"""Time `mdad plan` and `mdad compare` (exact, in process) and compare them with the Monte Carlo way of
answering the same questions (simulated random micro-benchmarks) run in the same process.

    python benchmarks/bench_plan.py [--data-dir ../shared/data] [--runs 2000] [--threads 1] [--choose-only] [--choose-datasets ...]
    python benchmarks/bench_plan.py --smoke

Prints the time of each command (goal: under a second on oll2-gpqa and mmlu-pro-tiger), the time
of the simulation baseline, their paired ratio (alternating in this process), and the largest gap between the exact probabilities and
the simulated frequencies (Monte Carlo error of the baseline).

Then "choose for me": `plan --method all --detect 2.0` on oll2-gpqa (``--choose-datasets``: on each of these),
every registered method, both populations of new models (goal on gpqa: under 2 minutes on 2 cores), timed once
with the CPU of the whole process tree (this process and the worker processes it waited for). ``--smoke``: two
methods, 2 runs. ``--choose-only`` times only this command.
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

import numpy as np
import suite
from typer.testing import CliRunner

from mdad.cli import app
from mdad.data import load_dataset
from mdad.metrics import analytic

COMMANDS = {
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
    parser = suite.parser(__doc__)
    parser.add_argument("--data-dir", type=Path, default=suite.DATA_DIR)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--choose-only", action="store_true", help="Time only `plan --method all --detect 2.0`.")
    parser.add_argument("--choose-datasets", default="oll2-gpqa", help="The leaderboards `plan --method all --detect 2.0` is timed on.")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.repeats = 20, 1
    os.environ["MDAD_DATA_DIR"] = str(args.data_dir)
    runner = CliRunner()
    datasets = ["oll2-gpqa"] if args.smoke else list(COMMANDS)
    with suite.Session("bench_plan", args) as session:
        for name in args.choose_datasets.split(","):
            choose_for_me(session, runner, args.smoke, name)
        for name in [] if args.choose_only else datasets:
            for cmd in COMMANDS[name]:
                result = runner.invoke(app, cmd)
                if result.exit_code:
                    raise SystemExit(f"{' '.join(cmd)} failed:\n{result.output}")
                timings = [suite.measure(lambda cmd=cmd: runner.invoke(app, cmd)) for _ in range(args.repeats)]
                wall, cpu = statistics.median(t.wall for t in timings), statistics.median(t.cpu for t in timings)
                session.add(" ".join(cmd), wall_s=wall, cpu_s=cpu)
                print(f"{' '.join(cmd):70s} {wall:6.3f} s ({cpu:.3f} s CPU)")
            matrix = load_dataset(name)
            chosen = matrix.group_index("7b_instruct") if "7b_instruct" in matrix.groups else None
            stats = analytic.pair_stats(matrix, models=chosen)
            timing = suite.paired(
                lambda stats=stats, matrix=matrix: simulated_probabilities(matrix, stats, 25, args.runs),
                lambda stats=stats: analytic.agreement_probabilities(stats, 25),
                args.repeats,
            )
            gap = float(np.abs(simulated_probabilities(matrix, stats, 25, args.runs) - analytic.agreement_probabilities(stats, 25)).max())
            label = f"{name}: exact pair probabilities at 25 items against a {args.runs}-run simulation"
            session.add(label, pairs=stats.n_pairs, max_gap=gap, **timing.fields())
            print(
                f"{name}: pair probabilities at 25 items for {stats.n_pairs:,} pairs: exact {timing.candidate.cpu:.4f} s CPU, "
                f"{args.runs}-run simulation {timing.baseline.cpu:.2f} s, ratio {1 / max(timing.cpu_ratio, 1e-9):,.0f}x; "
                f"largest |exact - simulated| {gap:.3f} (Monte Carlo error of the simulation)"
            )


CHOOSE_GOAL_S = 120.0  # `plan --method all --detect 2.0` on gpqa, both populations, on 2 cores


def choose_for_me(session: suite.Session, runner: CliRunner, smoke: bool, dataset: str) -> None:
    """Time `plan --method all --detect 2.0` on ``dataset`` (both populations, every method) once: minutes, so not
    repeated. The goal is set for gpqa; the others are timed beside it."""
    cmd = ["plan", "--dataset", dataset, "--detect", "2.0", "--method", "random,stratified-confidence" if smoke else "all"]
    cmd += ["--runs", "2"] if smoke else []
    results = []
    timing = suite.measure(lambda: results.append(runner.invoke(app, cmd)))
    if results[0].exit_code:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{results[0].output}")
    session.add(" ".join(cmd), wall_s=timing.wall, cpu_s=timing.cpu, goal_wall_s=CHOOSE_GOAL_S, within_goal=timing.wall < CHOOSE_GOAL_S)
    print(f"{' '.join(cmd):70s} {timing.wall:6.1f} s ({timing.cpu:.1f} s CPU of the process tree; goal {CHOOSE_GOAL_S:g} s on 2 cores)")
    output = results[0].output
    print(output[output.index("Recommendation:") :].split("\nRule:")[0])  # the recommendation, whole


if __name__ == "__main__":
    main()
