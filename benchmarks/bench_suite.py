"""The suite average of the three bundled Open LLM Leaderboard v2 benchmarks (gpqa, musr, math-hard; 404 shared
models) from one budget: equal split against the optimal allocation, on held-out models, and the speed of
`select --suite`.

Per repetition: 50 of the 404 models in every benchmark are held out as targets; the allocation is computed from
the other models (the sources), the items drawn uniformly at random (method random) with the repetition's seed,
and the targets estimated with `SuiteMicroBenchmark.estimate`. Reported per allocation, pooled over repetitions:
the average's mean absolute error and RMSE (points), its MDAD from the targets' pairs with its 95% bootstrap
interval (runs resampled), and the coverage of the average's 90% intervals, overall and for the targets in the
top fifth of the suite scores. Then the wall and CPU time of `select_suite(..., allocation="optimal")` with its
default assessment (20 held-out runs per benchmark, 2 workers).

    python benchmarks/bench_suite.py                  # 100 repetitions, 600 items
    python benchmarks/bench_suite.py --reps 20 --budget 300
    python benchmarks/bench_suite.py --smoke
"""

from __future__ import annotations

import numpy as np
import suite

import mdad
from mdad.defaults import ASSESS_RUNS
from mdad.metrics.pairwise import agreement_curve, mdad_from_curve, pair_differences
from mdad.seeding import rng_for
from mdad.suite import Suite, select_suite

TARGETS = 50
SEED = 20261206


def held_out(full: Suite, targets: np.ndarray) -> tuple[Suite, dict[str, mdad.ResponseMatrix]]:
    """The suite of every model but ``targets`` (indices of ``full.models``), and the targets' results per benchmark."""
    sources, results = {}, {}
    for b, (name, matrix) in enumerate(full.benchmarks.items()):
        rows = full.rows[targets, b]
        keep = np.ones(matrix.n_models, dtype=bool)
        keep[rows] = False
        sources[name] = matrix.take(models=keep)
        results[name] = matrix.take(models=rows)
    return Suite.of(sources, weights=full.weights, baselines=full.baselines), results


def measure(args, session: suite.Session) -> None:
    full = Suite.load("gpqa,musr,math-hard")
    truth = full.scores()["suite"]
    complete = np.flatnonzero(full.complete)
    top_fifth = float(np.quantile(truth.dropna(), 0.8))
    found: dict[str, dict[str, list]] = {a: {"est": [], "true": [], "low": [], "high": []} for a in ("equal", "optimal")}
    counts: dict[str, list[tuple[int, ...]]] = {"equal": [], "optimal": []}
    for rep in range(args.reps):
        targets = np.sort(rng_for(SEED, "targets", rep).choice(complete, TARGETS, replace=False))
        sources, results = held_out(full, targets)
        for allocation in found:
            chosen = select_suite(sources, args.budget, allocation=allocation, runs=0, seed=rep).chosen
            frame = chosen.estimate(results).to_frame().set_index("model").loc[full.models[targets]]
            found[allocation]["est"].append(frame["suite"].to_numpy())
            found[allocation]["low"].append(frame["suite_low"].to_numpy())
            found[allocation]["high"].append(frame["suite_high"].to_numpy())
            found[allocation]["true"].append(truth.loc[full.models[targets]].to_numpy())
            counts[allocation].append(tuple(part.size for part in chosen.parts.values()))
    for allocation, arrays in found.items():
        est, true, low, high = (np.array(arrays[k]) for k in ("est", "true", "low", "high"))
        error = 100 * np.abs(est - true)
        de, dt = pair_differences(est), pair_differences(true)
        agree = (np.sign(de) == np.sign(dt)) & (dt != 0)
        curve = agreement_curve(agree, 100 * np.abs(dt))
        mdad = mdad_from_curve(curve, rng=rng_for(SEED, "boot", allocation), targets=TARGETS)
        inside = (low <= true) & (true <= high)
        top = true >= top_fifth
        split = {name: int(np.median([c[b] for c in counts[allocation]])) for b, name in enumerate(full.names)}
        fields = {
            "budget": args.budget,
            "reps": args.reps,
            "items_median": split,
            "error_points": float(error.mean()),
            "rmse_points": float(np.sqrt((error**2).mean())),
            "mdad_points": mdad.value,
            "mdad_low": mdad.low,
            "mdad_high": mdad.high,
            "coverage_90": float(inside.mean()),
            "coverage_90_top_fifth": float(inside[top].mean()) if top.any() else float("nan"),
            "top_fifth_models": int(top.sum()),
        }
        session.add(f"random, {allocation} allocation", **fields)
        print(
            f"{allocation:>8}: {split}  error {fields['error_points']:.2f}  RMSE {fields['rmse_points']:.2f}  "
            f"MDAD {mdad.value:g} [{mdad.low:g}, {mdad.high:g}]  coverage {100 * fields['coverage_90']:.1f}% "
            f"(top fifth {100 * fields['coverage_90_top_fifth']:.1f}%, {fields['top_fifth_models']} models)"
        )
    runs = 2 if args.smoke else ASSESS_RUNS
    timing = suite.measure(lambda: select_suite(full, args.budget, allocation="optimal", runs=runs, workers=2))
    session.add("select --suite gpqa,musr,math-hard, optimal", budget=args.budget, assess_runs=runs, wall_s=timing.wall, cpu_s=timing.cpu)
    print(f"select_suite, optimal, {args.budget} items, {runs} held-out runs per benchmark: {timing.wall:.1f} s wall, {timing.cpu:.1f} s CPU")


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--budget", type=int, default=600)
    args = parser.parse_args()
    if args.smoke:
        args.reps, args.budget = 3, 60
    with suite.Session("bench_suite", args) as session:
        measure(args, session)


if __name__ == "__main__":
    main()
