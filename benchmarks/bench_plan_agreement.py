"""Does `mdad plan --method all --size K` agree with a full `mdad run` of the same methods at K?

    python benchmarks/bench_plan_agreement.py [--datasets gpqa,musr,math-hard] [--sizes 10,50,250]
                                               [--methods all] [--runs 20] [--run-runs 20] [--workers 2]

For each dataset and size: `mdad.plan(matrix, size=K, methods=...)` (exact MDAD for the random
designs, simulated on --runs held-out runs with its interval for the others, every non-target
model a source, the whole pool) and `mdad.Experiment` with the same methods at K (--run-runs
runs, the library's default targets and sources, the seen half as the pool: the paper's
protocol), whose seen-view MDAD, interval and robust MDAD are set beside the plan's. A size
larger than the seen half is replaced by the seen half's largest default size. "agree" means
the two intervals overlap (an exact answer's interval is its value); both "not reached" agree.
Prints a markdown table, then each dataset's and size's recommendation; the record keeps every cell.
``--smoke``: gpqa, 10 items, two methods, 2 runs.
"""

from __future__ import annotations

import math
import sys
import time

import suite

import mdad
from mdad.experiment.splits import n_seen_items


def interval(low: float, high: float) -> tuple[float, float]:
    return (low if not math.isnan(low) else math.inf, high if not math.isnan(high) else math.inf)


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def show(value: float) -> str:
    return "n.r." if math.isnan(value) else f"{value:g}"


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--datasets", default="gpqa,musr,math-hard")
    parser.add_argument("--sizes", default="10,50,250")
    parser.add_argument("--methods", default="all")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--run-runs", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.smoke:
        args.datasets, args.sizes, args.methods, args.runs, args.run_runs, args.workers = "gpqa", "10", "random,stratified-confidence", 2, 2, 1
    with suite.Session("bench_plan_agreement", args) as session:
        measure(args, session)


def measure(args, session: suite.Session) -> None:
    """Plan and run every dataset and size; print the table and record every cell."""
    agree = total = 0
    print(f"plan runs {args.runs}, mdad run runs {args.run_runs}\n", flush=True)
    print("| dataset | K | method | plan | plan MDAD [interval] | run MDAD, seen [interval] | run robust MDAD | agree |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    recommendations = []
    for name in args.datasets.split(","):
        rows = []
        matrix = mdad.load(name)
        seen = n_seen_items(matrix)
        sizes = sorted({k if k <= seen else max(s for s in (10, 25, 50, 100, 200) if s <= seen) for k in map(int, args.sizes.split(","))})
        start = time.perf_counter()
        plans = {k: mdad.plan(matrix, size=k, methods=args.methods, runs=args.runs, workers=args.workers, new_models="like-sources") for k in sizes}
        plan_time = time.perf_counter() - start
        methods = [row.method for row in plans[sizes[0]].rows]
        config = mdad.ExperimentConfig.for_matrix(matrix, methods=methods, sizes=sizes, runs=args.run_runs)
        start = time.perf_counter()
        summary = mdad.Experiment(matrix, config).run(workers=args.workers).summary()
        run_time = time.perf_counter() - start
        summary = summary[summary["view"] == "seen"].set_index(["method", "size"])
        for k in sizes:
            for row in plans[k].rows:
                cell = summary.loc[(row.method, k)]
                run_iv = interval(cell["mdad_low"], cell["mdad_high"]) if not math.isnan(cell["mdad"]) else (math.inf, math.inf)
                plan_iv = interval(row.low, row.high) if not math.isnan(row.value) else (math.inf, math.inf)
                ok = overlap(plan_iv, run_iv)
                session.add(
                    f"{name} {k} {row.method}",
                    exact=row.exact,
                    plan_mdad=row.value,
                    plan_low=row.low,
                    plan_high=row.high,
                    run_mdad=cell["mdad"],
                    run_low=cell["mdad_low"],
                    run_high=cell["mdad_high"],
                    agree=ok,
                )
                agree += ok
                total += 1
                how = "exact" if row.exact else "sim."
                plan_text = f"{show(row.value)} [{show(row.low)}, {show(row.high)}]"
                run_text = f"{show(cell['mdad'])} [{show(cell['mdad_low'])}, {show(cell['mdad_high'])}]"
                rows.append(
                    f"| {name} | {k} | {row.method} | {how} | {plan_text} | {run_text} | {show(cell['mdad_robust'])} | {'yes' if ok else 'no'} |"
                )
            recommendations.append(f"| {name} | {k} | {plans[k].recommended} | {plans[k].recommendation} |")
        where = f"{config.sources[0]} sources, {config.targets} targets"
        print("\n".join(rows), flush=True)
        session.add(f"{name}: time", plan_wall_s=plan_time, run_wall_s=run_time)
        print(f"{name}: plan {plan_time:.0f} s for sizes {sizes}; mdad run {run_time:.0f} s ({where})", file=sys.stderr, flush=True)
    print(f"\nintervals overlap in {agree} of {total} cells")
    print("\n| dataset | K | recommended | sentence |\n|---|---|---|---|")
    print("\n".join(recommendations))


if __name__ == "__main__":
    main()
