"""How the uniform weight of the random designs' accuracy prior trades coverage of models like the sources
against coverage of models better than all of them.

For each weight, bench_intervals.py's repetitions (random and random-stratified-proportional,
10 repetitions, the same splits and micro-benchmarks for every weight) with (a) a random 30% of
the models as the new ones and (b) the best 10% by full-benchmark accuracy as the new ones, the
prior then coming from the other 90%. Prints per weight and case the coverage of the nominal
90% / 95% intervals per dataset and the mean 90% width at 10 and 100 items.

    python benchmarks/bench_prior_weight.py
    python benchmarks/bench_prior_weight.py --weights 0,0.2 --datasets oll2-gpqa --reps 3
"""

from __future__ import annotations

import argparse

import pandas as pd
from bench_intervals import load, markdown, one_repetition

DATASETS = ("oll2-gpqa", "oll2-musr", "oll2-math-hard", "simulated")
METHODS = ["random", "random-stratified-proportional"]
SIZES = [10, 25, 50, 100]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default="0,0.1,0.2,0.5")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    datasets = args.datasets.split(",")
    rows = []
    for name in datasets:
        matrix = load(name)
        for weight in (float(w) for w in args.weights.split(",")):
            for case, top in (("random 30%", 0.0), ("best 10%", 0.1)):
                for rep in range(args.reps):
                    found, _, _ = one_repetition(matrix, name, rep, METHODS, SIZES, 1, top, weight)
                    rows += [{**r, "weight": weight, "new models": case} for r in found]
            print(f"{name} done", flush=True)
    frame = pd.DataFrame(rows)
    cover = frame.groupby(["weight", "new models", "dataset"])[["cover90", "cover95"]].mean().mul(100)
    cells = cover.apply(lambda r: f"{r.cover90:.1f} / {r.cover95:.1f}", axis=1).unstack("dataset")[datasets]
    width = frame.groupby(["weight", "new models", "size"])["width90"].mean().mul(100).unstack("size")[[10, 100]]
    table = cells.join(width.round(1).rename(columns={10: "width at 10 items", 100: "at 100"}))
    print(
        "\nCoverage of nominal 90% / 95% intervals (%, mean over the two methods, four sizes and "
        f"{args.reps} repetitions) and mean 90% width (points)\n"
    )
    print(markdown(table.sort_index(level=["new models", "weight"], ascending=[False, True])))


if __name__ == "__main__":
    main()
