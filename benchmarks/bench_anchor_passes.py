"""anchor-points with FasterPAM's swap passes capped (SWAP_PASSES) against the former run to convergence.

    python benchmarks/bench_anchor_passes.py [--speed-runs 3] [--runs 20] [--starts 20] [--data DIR]
    python benchmarks/bench_anchor_passes.py --grid-runs 1      # the paper grid's anchor-points cells only
    python benchmarks/bench_anchor_passes.py --start-kinds 3    # FasterPAM's passes from other starts only

One process, one thread, the former way and now alternating (docs/deviations.md#anchor-points-swap-passes):

- speed: CPU seconds of one held-out run of `mdad select --size 100`'s assessment on bench_select.py's
  simulated 400 x 12,000 matrix (350 sources x 12,000 items), the former way and now, and their ratio;
- objective: the k-medoids objective (sum of distances to the nearest medoid) from the same random
  starts, capped against converged, on the simulated matrix and on real leaderboards (every model a
  source), as the mean relative difference with its standard error, beside the spread between starts;
- grid (``--grid-runs R``): CPU seconds of R runs of anchor-points' cells of the paper's grid on
  bench_paper_grid.py's simulated MMLU-Pro shape (400 x 12,032, seen half 6,016 items, sizes 10-1,000,
  7 source counts), the former way and now;
- starts (``--start-kinds R``): FasterPAM run to convergence at 350 x 12,000, k = 100, from a random
  start, a k-medoids++ start (each next medoid drawn with probability proportional to its distance to
  the nearest one drawn) and a LAB start (greedy BUILD on a random subsample of 10 + sqrt(n) items per
  medoid): passes, swaps, CPU seconds and objective, R seeds each;
- estimation error: the held-out runs of `mdad select`'s assessment (same splits both ways), the mean
  absolute error of the targets' accuracy estimates (points), paired by run: mean difference and its SE.
"""

from __future__ import annotations

import argparse
import os
import time
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.assessment import held_out_runs
from mdad.data import read_npz, simulate
from mdad.data.simulate import SimulationParams
from mdad.methods import anchor_points

DATASETS = ("oll2-gpqa", "oll2-musr", "oll2-math-hard")
SIZES = (10, 50, 100)
CONVERGED = 100  # kmedoids' default max_iter: the former call ran FasterPAM to convergence
METHOD = "anchor-points"
GRID_SIZES = (10, 25, 50, 100, 250, 500, 1000)  # bench_paper_grid.py's sizes and source counts
GRID_SOURCES = (10, 50, 100, 150, 200, 250, 300)


@contextmanager
def former():
    """anchor-points as it was: FasterPAM's passes until no swap improves the objective."""
    with mock.patch.object(anchor_points, "SWAP_PASSES", CONVERGED):
        yield


def simulated(n_items: int = 12_000):
    return simulate(seed=0, n_models=400, n_items=n_items, n_subtasks=14, params=SimulationParams(floors=(0.1,)))


def speed(runs: int) -> None:
    matrix = simulated()
    times: dict[str, list[float]] = {"former": [], "now": []}
    for seed in range(runs):
        for label in ("former", "now"):
            with former() if label == "former" else nullcontext():
                start = time.process_time()
                held_out_runs(matrix, METHOD, (100,), runs=1, seed=seed, workers=1)
                times[label].append(time.process_time() - start)
    before, now = np.mean(times["former"]), np.mean(times["now"])
    print(f"one held-out run, 350 x 12,000, k = 100: former {before:.2f} s CPU, now {now:.2f} s ({before / now:.2f}x)", flush=True)


def grid(runs: int) -> None:
    from mdad.experiment.grid import Experiment, ExperimentConfig

    matrix = simulate(seed=0, n_models=400, n_items=12_032, n_subtasks=14)  # bench_paper_grid.py's MMLU-Pro shape
    config = ExperimentConfig(methods=(METHOD,), sizes=GRID_SIZES, sources=GRID_SOURCES, runs=1, targets=50, seed=0)
    times: dict[str, float] = {"former": 0.0, "now": 0.0}
    for seed in range(runs):
        for label in ("former", "now"):
            with former() if label == "former" else nullcontext():
                start = time.process_time()
                Experiment(matrix, replace(config, seed=seed)).run(workers=1)
                times[label] += time.process_time() - start
            print(f"  grid run {seed} {label}: {times[label]:.1f} s CPU so far", flush=True)
    print(
        f"paper grid, anchor-points cells, MMLU-Pro shape: former {times['former'] / runs:.1f} s CPU per run, "
        f"now {times['now'] / runs:.1f} s ({times['former'] / times['now']:.2f}x)",
        flush=True,
    )


def kmedoids_plus_plus(distance: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    chosen = [int(rng.integers(distance.shape[0]))]
    nearest = distance[chosen[0]].astype(np.int64)
    for _ in range(k - 1):
        cumulative = np.cumsum(nearest)
        item = int(np.searchsorted(cumulative, rng.integers(cumulative[-1]), side="right"))
        chosen.append(item)
        nearest = np.minimum(nearest, distance[item])
    return np.unique(chosen)


def lab(distance: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    n = distance.shape[0]
    sample = 10 + int(np.ceil(np.sqrt(n)))
    chosen: list[int] = []
    for _ in range(k):
        subset = rng.choice(n, sample, replace=False)
        near = distance[np.ix_(chosen, subset)].min(axis=0).astype(np.int64) if chosen else np.full(sample, 2**62)
        cost = np.minimum(distance[np.ix_(subset, subset)].astype(np.int64), near[None, :]).sum(axis=1)
        chosen.append(int(subset[np.argmin(cost)]))
    return np.unique(chosen)


def start_kinds(seeds: int) -> None:
    import kmedoids

    gold = np.asarray(simulated().gold_prob(), dtype=np.float64)[:350]
    distance = anchor_points.item_distances(gold)
    n, k = distance.shape[0], 100
    kinds = {
        "random": lambda rng: np.sort(rng.choice(n, size=k, replace=False)),
        "k-medoids++": lambda rng: kmedoids_plus_plus(distance, k, rng),
        "LAB": lambda rng: lab(distance, k, rng),
    }
    for seed in range(seeds):
        for kind, draw in kinds.items():
            begin = time.process_time()
            start = draw(np.random.default_rng(seed))
            drawn = time.process_time() - begin
            begin = time.process_time()
            fit = kmedoids.fasterpam(distance, start, max_iter=CONVERGED, n_cpu=1)
            spent = time.process_time() - begin
            print(
                f"  seed {seed} {kind:12s} start {drawn:.2f} s, objective {distance[start].min(axis=0).astype(np.int64).sum() / 2**24:.1f}; "
                f"FasterPAM {spent:.2f} s, {fit.n_iter} passes, {fit.n_swap} swaps, objective {fit.loss / 2**24:.2f}",
                flush=True,
            )


def objective(name: str, gold: np.ndarray, starts: int, sizes: tuple[int, ...]) -> None:
    """Capped against converged FasterPAM from the same random starts."""
    import kmedoids

    distance = anchor_points.item_distances(gold)
    n = distance.shape[0]
    rng = np.random.default_rng(0)
    for k in sizes:
        capped, converged = [], []
        for _ in range(starts):
            start = np.sort(rng.choice(n, size=k, replace=False))
            converged.append(float(kmedoids.fasterpam(distance, start, max_iter=CONVERGED, n_cpu=1).loss))
            capped.append(float(kmedoids.fasterpam(distance, start, max_iter=anchor_points.SWAP_PASSES, n_cpu=1).loss))
        cap, conv = np.array(capped), np.array(converged)
        relative = 100 * (cap - conv) / conv
        spread = 100 * np.std(conv, ddof=1) / np.mean(conv)
        print(
            f"  {name:22s} k={k:4d} objective capped - converged: {relative.mean():+.4f}% (SE {relative.std(ddof=1) / np.sqrt(starts):.4f}%), "
            f"spread between starts (SD) {spread:.4f}%",
            flush=True,
        )


def estimation(name: str, matrix, runs: int, sizes: tuple[int, ...]) -> None:
    """Paired by held-out run: mean absolute error of the targets' estimates, capped minus converged."""
    with former():
        before = held_out_runs(matrix, METHOD, sizes, runs=runs, seed=0, workers=1)
    now = held_out_runs(matrix, METHOD, sizes, runs=runs, seed=0, workers=1)
    for k in sizes:
        error_before = 100 * np.abs(before.estimates[k] - before.truths).mean(axis=1)
        error_now = 100 * np.abs(now.estimates[k] - now.truths).mean(axis=1)
        diff = error_now - error_before
        print(
            f"  {name:22s} k={k:4d} error former {error_before.mean():.3f}, now {error_now.mean():.3f} points; "
            f"paired difference {diff.mean():+.3f} (SE {diff.std(ddof=1) / np.sqrt(runs):.3f})",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed-runs", type=int, default=3, help="held-out runs timed each way (0: skip)")
    parser.add_argument("--runs", type=int, default=20, help="held-out runs of the estimation error")
    parser.add_argument("--starts", type=int, default=20, help="random starts of the objective")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="sizes of the objective and the estimation error")
    parser.add_argument("--grid-runs", type=int, default=0, help="only: R runs of the paper grid's anchor-points cells each way")
    parser.add_argument("--start-kinds", type=int, default=0, help="only: FasterPAM from other starts, R seeds")
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("MDAD_DATA_DIR", "../shared/data")))
    args = parser.parse_args()
    threadpool_limits(1)
    print(f"load average {os.getloadavg()[0]:.1f}; SWAP_PASSES = {anchor_points.SWAP_PASSES}")
    if args.grid_runs:
        grid(args.grid_runs)
    if args.start_kinds:
        start_kinds(args.start_kinds)
    if args.grid_runs or args.start_kinds:
        return
    if args.speed_runs:
        speed(args.speed_runs)
    sizes = tuple(int(k) for k in args.sizes.split(","))
    matrices = {"simulated 400 x 3,000": simulated(3_000)}
    for name in DATASETS:
        path = args.data / name / "responses.npz"
        if path.is_file():
            matrices[name] = read_npz(path, source=name)
        else:
            print(f"  {name}: not found at {path}, skipped")
    print("k-medoids objective (every model a source):")
    for name, matrix in matrices.items():
        fits = tuple(k for k in sizes if k < matrix.n_items)
        objective(name, np.asarray(matrix.gold_prob(), dtype=np.float64), args.starts, fits)
    print(f"held-out estimation error ({args.runs} runs, same splits both ways):")
    for name, matrix in matrices.items():
        estimation(name, matrix, args.runs, tuple(k for k in sizes if k < matrix.n_items))


if __name__ == "__main__":
    main()
