"""Time the default `mdad run` (all methods, the built-in gpqa 420 x 448, sizes 10-200, 50 runs) by phase,
against baselines run in the same process:

- start-up: fresh processes, the median of three: the interpreter alone, `mdad --help`,
  `mdad methods` and `mdad run --help` (what a command pays before its work);

- cells in worker processes without the per-worker thread cap (every worker's k-means and BLAS
  start one thread per core, so on a machine the workers fill, threads fight);
- the robust-MDAD bootstrap with a fixed 50 Newton steps per resample instead of stopping each
  resample's fit once it has converged;
- the metrics of every cell in this process with BLAS on every core instead of one thread (their
  products are small: a second thread costs more than it gains);
- the report (summary of every cell, sections, figures) drawn in this process alone instead of
  in the run's worker processes.

    python benchmarks/bench_run.py [--workers N] [--runs 50] [--skip-baselines] [--startup-only]
    python benchmarks/bench_run.py --smoke

Every phase is recorded with its wall time and its CPU time (this process and the worker processes).

Goal (issue 2): the whole default run under a minute on 2 cores.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

import numpy as np
import suite

from mdad import methods as method_registry
from mdad.data import BUILTIN
from mdad.experiment import executors
from mdad.experiment.evaluate import evaluate_store
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.store import ResultStore
from mdad.metrics import robust
from mdad.report.html import build_outputs

GPQA = BUILTIN["gpqa"]
SIZES = GPQA.sizes  # the paper's GPQA sizes, as `mdad run` uses them


def fixed_steps_logistic_fit(x, agreed, pairs, at=None, iterations=50, tol=None):
    """Baseline: every resample's Newton fit runs all ``iterations`` steps."""
    agreed = np.atleast_2d(np.asarray(agreed, dtype=np.float64))
    n = np.asarray(pairs, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    scale = max(float(np.abs(x).max()), 1.0)
    u = x / scale
    ridge = robust._RIDGE * n.sum()
    beta = np.zeros((agreed.shape[0], 2))
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(beta[:, :1] + beta[:, 1:] * u[None, :])))
        resid = agreed - n * p
        w = n * p * (1.0 - p)
        g0 = resid.sum(axis=1) - ridge * beta[:, 0]
        g1 = (resid * u).sum(axis=1) - ridge * beta[:, 1]
        h00, h01, h11 = w.sum(axis=1) + ridge, (w * u).sum(axis=1), (w * u * u).sum(axis=1) + ridge
        det = h00 * h11 - h01**2
        beta[:, 0] += np.clip((h11 * g0 - h01 * g1) / det, -5, 5)
        beta[:, 1] += np.clip((h00 * g1 - h01 * g0) / det, -5, 5)
    v = (x if at is None else np.asarray(at, dtype=np.float64)) / scale
    return 1.0 / (1.0 + np.exp(-(beta[:, :1] + beta[:, 1:] * v[None, :])))


def timed(session: suite.Session, label: str, fn):
    """Call ``fn``, print and record its wall and CPU time (CPU includes the worker processes)."""
    result: list = []
    timing = suite.measure(lambda: result.append(fn()))
    session.add(label, wall_s=timing.wall, cpu_s=timing.cpu)
    print(f"{label:52s} {timing.wall:7.1f} s {timing.cpu:7.1f} s CPU", flush=True)
    return result[0], timing.wall


def ratio(session: suite.Session, baseline: float, now: float) -> None:
    """Record the default's wall time over the baseline's (below 1: the default is faster); print its inverse."""
    session.results[-1]["wall_ratio"] = now / baseline
    print(f"{'  baseline / default':52s} {baseline / now:7.1f}x")


def startup(session: suite.Session, repeats: int) -> float:
    """Median wall seconds of fresh processes that start and end at once; returns `mdad run --help`'s."""
    mdad = [sys.executable, "-m", "mdad.cli"]
    commands = {
        "start-up: the interpreter alone": [sys.executable, "-c", "pass"],
        "start-up: mdad --help": [*mdad, "--help"],
        "start-up: mdad methods": [*mdad, "methods"],
        "start-up: mdad run --help": [*mdad, "run", "--help"],
    }
    seconds = 0.0
    for label, command in commands.items():
        times = [suite.measure(lambda command=command: subprocess.run(command, capture_output=True, check=True)) for _ in range(repeats)]
        seconds, cpu = statistics.median(t.wall for t in times), statistics.median(t.cpu for t in times)
        session.add(label, wall_s=seconds, cpu_s=cpu)
        print(f"{label:52s} {seconds:7.2f} s {cpu:7.2f} s CPU", flush=True)
    return seconds


def run_cells(matrix, config, out: Path, workers: int) -> None:
    Experiment(matrix, config, store=ResultStore(out)).run(workers=workers, extra_config={"threshold": 0.8})


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--skip-baselines", action="store_true", help="time the default run only")
    parser.add_argument("--startup-only", action="store_true", help="time the start-up phase only")
    args = parser.parse_args()
    methods, sizes, repeats = tuple(method_registry.available()), SIZES, 3
    if args.smoke:
        methods, sizes, repeats, args.runs = ("random", "stratified-confidence"), (10,), 1, 2
    print(f"{os.cpu_count()} cores, {args.workers} workers, load average {os.getloadavg()[0]:.2f}")
    with suite.Session("bench_run", args) as session:
        t_start = startup(session, repeats)
        if args.startup_only:
            return
        matrix, t_sim = timed(session, "load the built-in gpqa 420 x 448", GPQA.load)
        config = ExperimentConfig(methods=methods, sizes=sizes, sources=(300,), runs=args.runs, targets=50, seed=0)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run"
            _, t_cells = timed(session, "cells (all methods)", lambda: run_cells(matrix, config, out, args.workers))
            _, t_report = timed(
                session, f"report (tables, MDAD, figures, HTML), {args.workers} workers", lambda: build_outputs(out, 0.8, workers=args.workers)
            )
            total = t_start + t_sim + t_cells + t_report
            session.add("total (start-up of mdad run, load, cells, report)", wall_s=total)
            print(f"{'total (start-up of mdad run, load, cells, report)':52s} {total:7.1f} s")
            if args.skip_baselines:
                return
            if args.workers > 1:
                _, t_report_base = timed(session, "baseline: report in this process alone", lambda: build_outputs(out, 0.8))
                ratio(session, t_report_base, t_report)
            store = ResultStore(out)
            _, t_eval = timed(session, "metrics of every cell (robust MDAD: converged Newton)", lambda: evaluate_store(store))
            with mock.patch.object(robust, "logistic_fit", fixed_steps_logistic_fit):
                _, t_eval_base = timed(session, "baseline: robust MDAD with 50 Newton steps", lambda: evaluate_store(store))
            ratio(session, t_eval_base, t_eval)
            with mock.patch.object(executors, "threadpool_limits", lambda **_: nullcontext()):
                _, t_eval_threads = timed(session, "baseline: metrics in this process, BLAS on every core", lambda: evaluate_store(store))
            ratio(session, t_eval_threads, t_eval)
            if args.workers > 1:
                with mock.patch.object(executors, "threadpool_limits", lambda limits: None), mock.patch.object(executors, "THREAD_VARIABLES", ()):
                    _, t_base = timed(
                        session,
                        "baseline: cells without the per-worker thread cap",
                        lambda: run_cells(matrix, config, Path(tmp) / "uncapped", args.workers),
                    )
                ratio(session, t_base, t_cells)


if __name__ == "__main__":
    main()
