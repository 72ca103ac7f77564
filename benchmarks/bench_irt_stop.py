"""The IRT fit that stops once converged against the fixed 12-round schedule, in one process.

    python benchmarks/bench_irt_stop.py [--real DATA_DIR] [--runs 20] [--fits-only | --estimates-only]

The former schedule is the same code with the stopping rule off (``stop_tol=0``), so the two are
compared in one one-thread process, alternating (process CPU time; the machine may be shared).

Fits: each matrix with 10% of its cells held out (``bench_irt_speed.py``'s matrices: simulated
300 x 6,000, seeds 0-2, simulated 350 x 12,000 of MMLU-Pro's shape and, with ``--real``, GPQA, MuSR
and MATH-hard): CPU seconds of the fit, rounds, and the log-likelihood per cell of the training and
held-out cells (higher is better).

Estimates (``--real``): tinybenchmarks, -pirt, -gpirt and aipw at k = 10, 50 and 100 on ``--runs``
held-out runs of each real matrix (``mdad.assessment.held_out_runs``: the same splits and targets
for both): mean absolute error of the targets' estimates (points), and the difference stopped -
fixed paired over the runs with its standard error.

``--select R``: what ``mdad select --size 100`` does at leaderboard scale (``bench_select.py``'s
simulated 400 x 12,000 of MMLU-Pro's shape), per IRT method: CPU seconds of the selection on
every model and of R held-out runs (seeds 0..R-1, one run each), fixed and stopped alternating, and
what the command would take on two cores (the selection, then 20 runs shared by two workers).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import mdad.irt.model as model
from mdad.irt import fit_irt

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_irt_speed import REAL, load, loglik, matrices  # noqa: E402

METHODS = ("tinybenchmarks", "tinybenchmarks-pirt", "tinybenchmarks-gpirt", "aipw")
SIZES = (10, 50, 100)


def fits(seeds: int, real: Path | None) -> None:
    print(f"{'matrix':44s} {'CPU fixed':>9s} {'stopped':>8s} {'rounds':>6s} {'train ll fixed / stopped':>25s} {'held-out ll fixed / stopped':>28s}")
    for label, spec in matrices(seeds, real):
        train, scores, held = load(spec)
        out = {}
        for name, tol in (("fixed", 0.0), ("stopped", None)):
            start = time.process_time()
            fit = fit_irt(train, dims=10, rng=np.random.default_rng(0), stop_tol=tol)
            cpu = time.process_time() - start
            logits = fit.logits()
            out[name] = (
                cpu,
                fit.iterations // 3,
                loglik(logits, scores, ~held & ~np.isnan(scores)),
                loglik(logits, scores, held & ~np.isnan(scores)),
            )
        f, s = out["fixed"], out["stopped"]
        print(f"{label:44s} {f[0]:8.2f}s {s[0]:7.2f}s {s[1]:6d} {f[2]:12.5f} / {s[2]:9.5f} {f[3]:15.5f} / {s[3]:9.5f}", flush=True)


def estimates(real: Path, runs: int) -> None:
    from mdad.assessment import held_out_runs
    from mdad.data.npz import read_npz

    print(
        f"\n{'matrix':16s} {'method':22s} {'k':>4s} {'error fixed':>11s} {'stopped':>8s} {'stopped - fixed (paired)':>25s} {'CPU fixed/stopped':>18s}"
    )
    for name in REAL:
        path = real / name / "responses.npz"
        if not path.is_file():
            continue
        matrix = read_npz(path)
        for method in METHODS:
            errors, cpu = {}, {}
            for label, tol in (("fixed", 0.0), ("stopped", model.STOP_TOLERANCE)):
                saved, model.STOP_TOLERANCE = model.STOP_TOLERANCE, tol
                try:
                    start = time.process_time()
                    found = held_out_runs(matrix, method, SIZES, runs=runs)
                    cpu[label] = time.process_time() - start
                finally:
                    model.STOP_TOLERANCE = saved
                errors[label] = {k: 100 * np.abs(found.estimates[k] - found.truths).mean(axis=1) for k in SIZES}
            for k in SIZES:
                before, after = errors["fixed"][k], errors["stopped"][k]
                diff = after - before
                se = diff.std(ddof=1) / np.sqrt(len(diff))
                print(
                    f"{name:16s} {method:22s} {k:4d} {before.mean():11.3f} {after.mean():8.3f} {diff.mean():+16.3f} +- {se:.3f} "
                    f"{cpu['fixed']:9.1f} / {cpu['stopped']:.1f}s",
                    flush=True,
                )


def select_costs(runs: int, methods: list[str]) -> None:
    from bench_select import MODELS, SIZE, SUBTASKS, TEN_OPTIONS

    from mdad.assessment import assess
    from mdad.data import simulate
    from mdad.defaults import ASSESS_RUNS
    from mdad.micro.selected import select

    matrix = simulate(seed=0, n_models=MODELS, n_items=12_000, n_subtasks=SUBTASKS, params=TEN_OPTIONS)
    print(f"\n{'method':22s} {'selection fixed / stopped':>26s} {'per run fixed / stopped':>24s} {'2 cores fixed / stopped':>24s} {'ratio':>6s}")
    for method in methods:
        cpu: dict[str, list[float]] = {"fixed": [0.0, 0.0], "stopped": [0.0, 0.0]}
        for label, tol in (("fixed", 0.0), ("stopped", model.STOP_TOLERANCE)):
            saved, model.STOP_TOLERANCE = model.STOP_TOLERANCE, tol
            try:
                start = time.process_time()
                select(matrix, method, SIZE, seed=0)
                cpu[label][0] = time.process_time() - start
            finally:
                model.STOP_TOLERANCE = saved
        for seed in range(runs):
            for label, tol in (("fixed", 0.0), ("stopped", model.STOP_TOLERANCE)):
                saved, model.STOP_TOLERANCE = model.STOP_TOLERANCE, tol
                try:
                    start = time.process_time()
                    assess(matrix, method, SIZE, runs=1, seed=seed, workers=1)
                    cpu[label][1] += (time.process_time() - start) / runs
                finally:
                    model.STOP_TOLERANCE = saved
        total = {label: chosen + ASSESS_RUNS * run / 2 for label, (chosen, run) in cpu.items()}
        (fs, fr), (ss, sr) = cpu["fixed"], cpu["stopped"]
        print(
            f"{method:22s} {fs:12.1f} / {ss:5.1f} s {fr:13.1f} / {sr:5.1f} s {total['fixed']:14.0f} / {total['stopped']:4.0f} s "
            f"{total['fixed'] / total['stopped']:5.2f}x",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", type=Path, default=None, help="folder of the real datasets (oll2-gpqa, ...)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--fits-only", action="store_true")
    parser.add_argument("--estimates-only", action="store_true")
    parser.add_argument("--select", type=int, default=0, metavar="R", help="only the cost of mdad select at 400 x 12,000, R held-out runs")
    parser.add_argument("--methods", default=",".join((*METHODS, "metabench")), help="methods of --select")
    args = parser.parse_args()
    with threadpool_limits(1):
        if args.select:
            select_costs(args.select, args.methods.split(","))
            return
        if not args.estimates_only:
            fits(args.seeds, args.real)
        if args.real is not None and not args.fits_only:
            estimates(args.real, args.runs)


if __name__ == "__main__":
    main()
