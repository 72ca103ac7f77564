"""The suite average of the three bundled Open LLM Leaderboard v2 benchmarks (gpqa, musr, math-hard; 404 shared
models) from one budget: equal and proportional splits against the optimal allocation, on held-out models, and the speed
of `select --suite`.

The protocol is `mdad run --suite`'s (mdad.suite.experiment.run_suite): per repetition 50 of the 404 models in
every benchmark are held out as targets; the allocation is computed from the other models (the sources), the
items drawn uniformly at random (method random), and the targets estimated with `SuiteMicroBenchmark.estimate`.
Reported per allocation, pooled over repetitions: the average's mean absolute error and RMSE (points), Kendall
tau, its MDAD from the targets' pairs with its 95% bootstrap interval (runs resampled), and the coverage of the
average's 90% intervals, overall and for the targets in the top fifth of the suite scores. Then the same for the
best learned method (``--learned``, lasso by default: the strongest static method on GPQA and MuSR at every size in
benchmarks/results/baselines.md, within noise of the best on MATH-hard at 100 items, where the adaptive test that
wins there is not a static micro-benchmark a suite takes), equal split against its optimal allocation measured on
``--assess-runs`` held-out runs of each repetition's sources per benchmark (which calibrate its intervals too) (``--learned-reps`` repetitions: a
learned method chooses and measures far more slowly than random draws). Then the wall time of
`select_suite(..., allocation="optimal")` with its default assessment (20 held-out runs per benchmark, 2 workers).

    python benchmarks/bench_suite.py                  # 100 repetitions, 600 items; lasso: 10 repetitions, 5 runs
    python benchmarks/bench_suite.py --reps 20 --budget 300 --learned-reps 4
    python benchmarks/bench_suite.py --smoke
"""

from __future__ import annotations

import time

import suite

from mdad.defaults import ASSESS_RUNS
from mdad.suite import Suite, select_suite
from mdad.suite.experiment import run_suite

SEED = 20261206


def record(session: suite.Session, full: Suite, result, method: str, budget: int, reps: int, **extra) -> None:
    for row in result.summary.to_dict("records"):
        items = {name: row[f"items_{name}"] for name in full.names}
        fields = {k: v for k, v in row.items() if k != "allocation" and not k.startswith("items_")}
        session.add(f"{method}, {row['allocation']} allocation", budget=budget, reps=reps, items_median=items, **extra, **fields)
        print(
            f"{method:>8} {row['allocation']:>12}: {items}  error {row['error']:.2f}  RMSE {row['rmse']:.2f}  tau {row['kendall_tau']:.3f}  "
            f"MDAD {row['mdad']:g} [{row['mdad_low']:g}, {row['mdad_high']:g}]  coverage {100 * row['coverage']:.1f}% "
            f"(top fifth {100 * row['coverage_top_fifth']:.1f}%, {row['top_fifth_targets']} targets)"
        )


def measure(args, session: suite.Session) -> None:
    full = Suite.load("gpqa,musr,math-hard")
    if args.reps:
        record(session, full, run_suite(full, args.budget, runs=args.reps, targets=args.targets, seed=SEED), "random", args.budget, args.reps)
    if args.learned_reps:
        cpu, wall = suite.cpu_seconds(), time.perf_counter()
        learned = run_suite(
            full,
            args.budget,
            method=args.learned,
            runs=args.learned_reps,
            targets=args.targets,
            seed=SEED,
            allocations=("equal", "optimal"),
            assess_runs=args.assess_runs,
        )
        extra = {"assess_runs": args.assess_runs, "wall_s": time.perf_counter() - wall, "cpu_s": suite.cpu_seconds() - cpu}
        record(session, full, learned, args.learned, args.budget, args.learned_reps, **extra)
    runs = 2 if args.smoke else ASSESS_RUNS
    timing = suite.measure(lambda: select_suite(full, args.budget, allocation="optimal", runs=runs, workers=2))
    session.add("select --suite gpqa,musr,math-hard, optimal", budget=args.budget, assess_runs=runs, wall_s=timing.wall, cpu_s=timing.cpu)
    print(f"select_suite, optimal, {args.budget} items, {runs} held-out runs per benchmark: {timing.wall:.1f} s wall")


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--budget", type=int, default=600)
    parser.add_argument("--targets", type=int, default=50)
    parser.add_argument("--learned", default="lasso", help="the learned method compared (default lasso)")
    parser.add_argument("--learned-reps", type=int, default=10)
    parser.add_argument("--assess-runs", type=int, default=5, help="held-out runs per benchmark: its optimal allocation, its intervals")
    args = parser.parse_args()
    if args.smoke:
        args.reps, args.budget, args.learned_reps, args.assess_runs = 2, 60, 1, 2
    with suite.Session("bench_suite", args) as session:
        measure(args, session)


if __name__ == "__main__":
    main()
