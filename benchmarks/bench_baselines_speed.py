"""Speed of the regression baselines and metabench: the GPQA grid against tinybenchmarks-gpirt.

Each method alone on the built-in GPQA matrix (300 sources, 50 targets, sizes 10, 25, 50, 100,
200), CPU time in one process, tinybenchmarks-gpirt first as the yardstick (benchmarks/README.md).

    python benchmarks/bench_baselines_speed.py [--runs 50] [--methods random-regression,lasso,...]
"""

from __future__ import annotations

import argparse
import time

import mdad
from mdad.experiment.grid import Experiment, ExperimentConfig

SIZES = (10, 25, 50, 100, 200)
METHODS = ("tinybenchmarks-gpirt", "random-regression", "random-search-regression", "lasso", "metabench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--methods", default=",".join(METHODS))
    args = parser.parse_args()
    matrix = mdad.load("gpqa")
    print(f"| method | CPU, one process ({args.runs} runs) | vs tinybenchmarks-gpirt |")
    print("|---|---|---|")
    reference = None
    for name in args.methods.split(","):
        config = ExperimentConfig.for_matrix(matrix, methods=(name,), sizes=SIZES, runs=args.runs)
        start = time.process_time()
        Experiment(matrix, config).run()
        spent = time.process_time() - start
        reference = reference or spent
        print(f"| {name} | {spent:.1f} s | {spent / reference:.2f} |", flush=True)


if __name__ == "__main__":
    main()
