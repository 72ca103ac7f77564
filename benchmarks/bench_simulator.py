"""Does the simulated leaderboard behave like real ones? MDAD of every method on the simulation and the built-in matrices.

For the default simulation (with its option probabilities, and as 0/1 answers only, like the
real matrices) and for gpqa, musr and math-hard: every method at 10, 25, 50 and 100 items, 300
source models (or all but the targets), 50 runs of 50 targets, seed 0; MDAD on the seen items.
Prints markdown tables: random's MDAD by size beside the range of the real
matrices, the methods' order by MDAD at 10 and 100 items, and at 10 items the share of the
method pairs that MuSR and MATH-hard order the same way (strictly) which the simulation also
orders that way.

    python benchmarks/bench_simulator.py [--runs 50] [--workers 2]
    python benchmarks/bench_simulator.py --smoke      # two methods, 2 runs
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd
import suite

from mdad.data import ResponseMatrix, load_dataset, simulate
from mdad.experiment.grid import Experiment, ExperimentConfig

SIZES = (10, 25, 50, 100)
REAL = ("gpqa", "musr", "math-hard")
ANCHORS = ("musr", "math-hard")  # the order the simulation should share at 10 items


def seen_mdad(matrix: ResponseMatrix, runs: int, workers: int, methods: list[str] | None) -> pd.DataFrame:
    """MDAD on the seen items, method x size."""
    config = ExperimentConfig.for_matrix(matrix, methods=methods, sizes=SIZES, runs=runs, seed=0)  # 50 targets, 300 sources
    summary = Experiment(matrix, config).run(workers=workers).summary()
    return summary[summary["view"] == "seen"].pivot_table(index="method", columns="size", values="mdad")


def order(values: pd.Series) -> str:
    """Methods by MDAD, smallest first; ties joined by '='."""
    groups = values.groupby(values).groups
    return " < ".join(" = ".join(sorted(groups[v])) + f" ({v:g})" for v in sorted(groups))


def shared_pairs_kept(sim: pd.Series, anchors: list[pd.Series]) -> tuple[int, int, list[str]]:
    """Of the method pairs every anchor orders strictly the same way, how many the simulation orders so too."""
    kept, total, broken = 0, 0, []
    for first, second in itertools.combinations(sim.index, 2):
        signs = {np.sign(a[first] - a[second]) for a in anchors}
        if len(signs) != 1 or 0 in signs:
            continue
        total += 1
        if np.sign(sim[first] - sim[second]) == signs.pop():
            kept += 1
        else:
            broken.append(f"{first} vs {second}")
    return kept, total, broken


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--methods", default=None, help="comma-separated (default: the library's, every registered method)")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.workers, args.methods = 2, 1, "random,stratified-confidence"
    with suite.Session("bench_simulator", args) as session:
        measure(args, session)


def measure(args, session: suite.Session) -> None:
    """MDAD by method and size on every matrix: printed, and random's in the record."""
    methods = args.methods.split(",") if args.methods else None
    simulated = simulate(seed=0)
    matrices = {
        "simulated": simulated,
        "simulated, 0/1 only": ResponseMatrix(
            scores=simulated.scores,
            models=simulated.models,
            items=simulated.items,
            subtasks=simulated.subtasks,
            source="simulated 0/1",
            simulated=True,
        ),
        **{name: load_dataset(name) for name in REAL},
    }
    results = {}
    for name, matrix in matrices.items():
        start = time.perf_counter()
        results[name] = seen_mdad(matrix, args.runs, args.workers, methods)
        session.add(name, random_mdad={str(k): results[name].loc["random", k] for k in SIZES}, seconds=time.perf_counter() - start)
        print(f"# {name}: {matrix.n_models} x {matrix.n_items}, {time.perf_counter() - start:.0f} s", flush=True)

    print("\nRandom's MDAD (points, seen items) by number of items:\n")
    print("| data | " + " | ".join(str(k) for k in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for name, table in results.items():
        print(f"| {name} | " + " | ".join(f"{table.loc['random', k]:g}" for k in SIZES) + " |")
    low = [min(results[n].loc["random", k] for n in REAL) for k in SIZES]
    high = [max(results[n].loc["random", k] for n in REAL) for k in SIZES]
    print("| range of the real ones | " + " | ".join(f"{lo:g}-{hi:g}" for lo, hi in zip(low, high, strict=True)) + " |")
    for name in ("simulated", "simulated, 0/1 only"):
        inside = [lo <= results[name].loc["random", k] <= hi for k, lo, hi in zip(SIZES, low, high, strict=True)]
        session.results.append({"name": f"{name}: random within the real range", "sizes_inside": sum(inside), "sizes": len(SIZES)})
        print(f"\n{name}: random within the real range at {sum(inside)} of {len(SIZES)} sizes")

    for k in (10, 100):
        print(f"\nOrder by MDAD at {k} items:\n")
        for name, table in results.items():
            print(f"- {name}: {order(table[k])}")
    anchors = [results[n][10] for n in ANCHORS]
    for name in ("simulated", "simulated, 0/1 only", "gpqa"):
        kept, total, broken = shared_pairs_kept(results[name][10], anchors)
        print(
            f"\n{name}: at 10 items, {kept} of the {total} method pairs that MuSR and MATH-hard order alike are ordered "
            f"so too" + (f"; not: {', '.join(broken)}" if broken else "")
        )


if __name__ == "__main__":
    main()
