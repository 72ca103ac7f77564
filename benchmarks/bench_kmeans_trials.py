"""Cheaper k-means variants (fewer k-means++ trials, a looser Lloyd tolerance): tinyBenchmarks' quality and cost, paired, in one process.

    python benchmarks/bench_kmeans_trials.py --inertia [--seeds 5]
    python benchmarks/bench_kmeans_trials.py --errors --real DATA_DIR [--runs 20] [--simulated]
    python benchmarks/bench_kmeans_trials.py --speed [--seeds 3]
    python benchmarks/bench_kmeans_trials.py --select 2 --variants trials=3+tol=0.01

Variants (``--variants``), each against a baseline (``--baseline``; by default ``greedy``: 2 + ln k local
trials per step, Lloyd's tolerance 1e-4, the best of 5 starts: scikit-learn's defaults with the paper's 5
starts, mdad's before the fifth round): ``trials=T`` (T local trials; 1 is plain k-means++), ``tol=X``
(Lloyd's tolerance X), ``starts=S`` (the best of S starts instead of 5), ``reseed`` (the baseline from
other generator seeds: the yardstick of noise, what any change of the clusters does by chance); joined
with ``+``, several at once (``trials=3+tol=0.01`` was mdad's k-means from the fifth round on, with 5
starts). A variant changes only the settings it names: the others are the baseline's.

    python benchmarks/bench_kmeans_trials.py --errors --real DATA --simulated --baseline trials=3+tol=0.01 --variants starts=1,starts=2,reseed

--inertia: the k-means inertia of each variant relative to the baseline's, on the IRT embeddings (10-D
2PL fit on every model) of the real datasets and of two runs of the simulated MMLU-Pro shape (50
and 300 sources x 6,016 items), the same generator seeds for every variant.

--errors: the paired held-out estimation error of tinybenchmarks, -pirt and -gpirt: the same splits
and targets and the same IRT fits for every variant (the fit is computed once per run and reused, the
generator restored to its state after the fit), so only the k-means differs. Mean absolute error of
the targets' pool accuracy (points) and the difference variant - baseline with its standard error over
the runs. ``--simulated`` adds the simulated 400 x 12,032 MMLU-Pro shape at k up to 1,000.

--speed: one-thread CPU seconds of the seven sizes' k-means on the simulated runs' embeddings.

--select R: one-thread CPU seconds of ``mdad select --size 100`` for tinybenchmarks at 400 x 12,000:
the selection on every model and a held-out run (mean of R), each variant in turn.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import mdad.methods.tinybenchmarks as tiny
from mdad.data import simulate
from mdad.data.npz import read_npz
from mdad.experiment.grid import ExperimentConfig, default_targets, plan_tasks, run_task
from mdad.experiment.splits import make_splits
from mdad.irt import fit_irt
from mdad.methods.kmeans import KMeansResult, kmeans

REAL = ("oll2-gpqa", "oll2-musr", "oll2-math-hard")
METHODS = ("tinybenchmarks", "tinybenchmarks-pirt", "tinybenchmarks-gpirt")
REAL_SIZES = (10, 50, 100)
SIM_SIZES = (10, 25, 50, 100, 250, 500, 1000)
POOL = 6016  # the grid's pool on the MMLU-Pro shape: half of 12,032 items


def mmlu_pro() -> np.ndarray:
    return np.asarray(simulate(seed=0, n_models=400, n_items=12032, n_subtasks=14).scores)


def embeddings(real: Path | None) -> dict[str, tuple[np.ndarray, tuple[int, ...]]]:
    out = {}
    scores, rng = mmlu_pro(), np.random.default_rng(0)
    for sources in (50, 300):
        rows, cols = rng.permutation(len(scores))[:sources], rng.permutation(scores.shape[1])[:POOL]
        fit = fit_irt(scores[np.ix_(rows, cols)], dims=tiny.DIMS, rng=np.random.default_rng(1))
        out[f"MMLU-Pro shape, {sources} sources"] = (fit.embedding, SIM_SIZES)
    for name in REAL if real else ():
        path = real / name / "responses.npz"
        if path.is_file():
            fit = fit_irt(np.asarray(read_npz(path).scores), dims=tiny.DIMS, rng=np.random.default_rng(1))
            out[name] = (fit.embedding, REAL_SIZES)
    return out


def inertia(real: Path | None, seeds: int, trials: list[str | None]) -> None:
    print(f"{'embedding':28s} {'k':>5s} " + " ".join(f"{label(t):>22s}" for t in trials[1:]))
    print(f"(inertia / {label(trials[0])}'s: mean [min, max] over seeds)")
    for name, (points, sizes) in embeddings(real).items():
        for k in sizes:
            found = {t: np.array([variant(t)(points, k, np.random.default_rng([s, k]), n_init=5).inertia for s in range(seeds)]) for t in trials}
            ratios = [found[t] / found[trials[0]] for t in trials[1:]]
            print(f"{name:28s} {k:5d} " + " ".join(f"{r.mean():.4f} [{r.min():.3f}, {r.max():.3f}]" for r in ratios), flush=True)


def speed(seeds: int, trials: list[str | None]) -> None:
    print(f"{'embedding':28s} " + " ".join(f"{label(t):>10s}" for t in trials) + "   (CPU s, the seven sizes, 5 starts unless the variant says)")
    for name, (points, sizes) in embeddings(None).items():
        cpu = dict.fromkeys(trials, 0.0)
        for s in range(seeds):
            for t in trials[s % len(trials) :] + trials[: s % len(trials)]:  # rotate which goes first
                start = time.process_time()
                for k in sizes:
                    variant(t)(points, k, np.random.default_rng([s, k]), n_init=5)
                cpu[t] += time.process_time() - start
        print(f"{name:28s} " + " ".join(f"{cpu[t] / seeds:10.3f}" for t in trials), flush=True)


def memoized_fits() -> None:
    """Each distinct IRT fit once: later calls with the same answers, arguments and generator state
    get the same fit and leave the generator in the state the fit left it."""
    cache: dict[tuple, tuple] = {}
    original = tiny.fit_irt

    def fit(scores, *args, rng, **kwargs):
        key = (scores.shape, hash(np.ascontiguousarray(scores).tobytes()), args, tuple(sorted(kwargs.items(), key=str)), str(rng.bit_generator.state))
        if key not in cache:
            cache[key] = (original(scores, *args, rng=rng, **kwargs), rng.bit_generator.state)
        result, state = cache[key]
        rng.bit_generator.state = state
        return result

    tiny.fit_irt = fit


def errors_of(matrix, sizes: tuple[int, ...], runs: int, trials: str | None) -> dict[tuple[str, int], np.ndarray]:
    """Per method and size, the runs' mean absolute error (points), the k-means with ``trials``."""
    n_targets = default_targets(matrix.n_models)
    halves = make_splits(matrix, runs, n_targets, 0)
    from dataclasses import replace

    splits = replace(halves, seen=np.tile(np.arange(matrix.n_items), (runs, 1)), unseen=np.empty((runs, 0), dtype=np.int64))
    config = ExperimentConfig(methods=METHODS, sizes=sizes, sources=(splits.source_pool.shape[1],), runs=runs, targets=n_targets, seed=0)
    truths = matrix.scores[splits.targets].astype(np.float64).mean(axis=2)
    tiny.kmeans = variant(trials)
    try:
        out = {}
        for task in plan_tasks(config):
            for cell, records in run_task(matrix, splits, task).items():
                out[(cell.method, cell.size)] = 100 * np.abs(records["estimate"] - truths).mean(axis=1)
    finally:
        tiny.kmeans = kmeans
    return out


def errors(real: Path, runs: int, simulated: bool, trials: list[str | None]) -> None:
    memoized_fits()
    matrices = [(name, read_npz(real / name / "responses.npz"), REAL_SIZES) for name in REAL if (real / name / "responses.npz").is_file()]
    if simulated:
        matrices.append(("MMLU-Pro shape", simulate(seed=0, n_models=400, n_items=12032, n_subtasks=14), SIM_SIZES))
    print(f"{'matrix':16s} {'method':22s} {'k':>5s} {label(trials[0])[:7]:>7s} " + " ".join(f"{label(t) + ' (diff +- SE)':>30s}" for t in trials[1:]))
    for name, matrix, sizes in matrices:
        found = {t: errors_of(matrix, sizes, runs, t) for t in trials}
        for method in METHODS:
            for k in sizes:
                base = found[trials[0]][(method, k)]
                cells = []
                for t in trials[1:]:
                    mine = found[t][(method, k)]
                    diff = mine - base
                    cells.append(f"{mine.mean():7.3f} {diff.mean():+7.3f} +- {diff.std(ddof=1) / np.sqrt(len(diff)):.3f}")
                print(f"{name:16s} {method:22s} {k:5d} {base.mean():7.3f} " + " ".join(f"{c:>30s}" for c in cells), flush=True)


def greedy(points: np.ndarray, k: int, rng: np.random.Generator, **settings) -> KMeansResult:
    """mdad's k-means before this round (scikit-learn's defaults): 2 + ln k trials, tolerance 1e-4;
    ``settings`` override them."""
    return kmeans(points, k, rng, **{"trials": 2 + int(math.log(k)), "tol": 1e-4, **settings})


BASELINE: str | None = None  # --baseline: what ``reseed`` draws from other seeds


def variant(name: str | None):
    """The k-means of a variant (module docstring): kmeans's signature; ``starts`` overrides the
    caller's ``n_init``."""
    if name is None:
        return greedy
    if name == "reseed":
        base = variant(BASELINE)
        return lambda points, k, rng, **kw: base(points, k, np.random.default_rng([int(rng.integers(2**63)), 1]), **kw)
    settings = {**parse(BASELINE), **parse(name)}  # a variant changes the baseline's settings
    starts = settings.pop("starts", None)
    fixed = {key: int(value) if key == "trials" else float(value) for key, value in settings.items()}

    def run(points: np.ndarray, k: int, rng: np.random.Generator, **kw) -> KMeansResult:
        if starts is not None:
            kw["n_init"] = int(starts)
        return greedy(points, k, rng, **{**kw, **fixed})

    return run


def parse(name: str | None) -> dict[str, str]:
    """A variant's settings: ``trials=3+tol=0.01`` -> {"trials": "3", "tol": "0.01"}."""
    return dict(part.split("=") for part in name.split("+")) if name and name != "reseed" else {}


def select_costs(runs: int, trials: list[str | None]) -> None:
    """CPU of ``mdad select --size 100`` at 400 x 12,000 (bench_select.py's matrix): the selection on
    every model and one held-out run (mean of ``runs``), each variant in turn, one thread."""
    from bench_select import MODELS, SIZE, SUBTASKS, TEN_OPTIONS

    from mdad.assessment import assess
    from mdad.micro.selected import select

    matrix = simulate(seed=0, n_models=MODELS, n_items=12_000, n_subtasks=SUBTASKS, params=TEN_OPTIONS)
    cpu = {t: [0.0, 0.0] for t in trials}
    for seed in range(-1, runs):  # -1: the selection on every model
        for t in trials:
            tiny.kmeans = variant(t)
            try:
                start = time.process_time()
                if seed < 0:
                    select(matrix, "tinybenchmarks", SIZE, seed=0)
                else:
                    assess(matrix, "tinybenchmarks", SIZE, runs=1, seed=seed, workers=1)
                cpu[t][seed >= 0] += (time.process_time() - start) / (1 if seed < 0 else runs)
            finally:
                tiny.kmeans = kmeans
    for t in trials:
        print(f"select --size {SIZE} tinybenchmarks, {label(t):18s} selection {cpu[t][0]:6.2f} s, per held-out run {cpu[t][1]:6.2f} s", flush=True)


def label(name: str | None) -> str:
    return "greedy" if name is None else name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inertia", action="store_true")
    parser.add_argument("--errors", action="store_true")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--select", type=int, metavar="R", help="the CPU of select --size 100 at 400 x 12,000, R held-out runs")
    parser.add_argument("--real", type=Path, help="folder of the real datasets (oll2-gpqa, ...)")
    parser.add_argument("--simulated", action="store_true", help="--errors also on the simulated MMLU-Pro shape")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--variants", default="trials=1,trials=2,tol=0.001,reseed", help="compared with the baseline (module docstring)")
    parser.add_argument("--baseline", help="the variant the others are compared with (default greedy)")
    args = parser.parse_args()
    global BASELINE
    BASELINE = args.baseline
    trials: list[str | None] = [args.baseline, *args.variants.split(",")]
    with threadpool_limits(1):
        if args.inertia:
            inertia(args.real, args.seeds, trials)
        if args.speed:
            speed(args.seeds, trials)
        if args.select:
            select_costs(args.select, trials)
        if args.errors:
            if args.real is None:
                sys.exit("--errors needs --real DATA_DIR")
            errors(args.real, args.runs, args.simulated, trials)


if __name__ == "__main__":
    main()
