"""Time of `mdad estimate` on 3 new models, after imports: intervals and order probabilities against point estimates.

For a random, a stratified random and a calibrated method, a micro-benchmark is selected and
assessed on the simulated leaderboard and saved; then, in this process, the steps of
`mdad estimate micro.json three_models.npz` are timed (load the file, read the results,
estimates + intervals + neighbouring order probabilities), beside the baseline of the same
steps with point estimates only. Goal: under a second.

    python benchmarks/bench_estimate.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

import mdad
from mdad.data import load, write_npz
from mdad.micro import SelectedMicroBenchmark

METHODS = ("random", "random-stratified-proportional", "anchor-points")


def best_of(step, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    matrix = mdad.simulate(seed=0)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        write_npz(matrix.take(models=np.arange(3)), folder / "three.npz")
        for method in METHODS:
            micro = mdad.select(matrix, method, 100)
            micro.with_assessment(mdad.assess(matrix, method, 100, runs=20)).save(folder / "micro.json")

            def baseline():
                SelectedMicroBenchmark.load(folder / "micro.json").estimate(load(folder / "three.npz"))

            def full():
                chosen = SelectedMicroBenchmark.load(folder / "micro.json")
                new = load(folder / "three.npz")
                chosen.intervals(new, level=0.9)
                chosen.order_probabilities(new)

            base, with_trust = best_of(baseline), best_of(full)
            print(
                f"{method:32s} estimates only {1000 * base:6.1f} ms; with intervals and order probabilities "
                f"{1000 * with_trust:6.1f} ms ({with_trust / base:.1f}x)"
            )


if __name__ == "__main__":
    main()
