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

Goal (issue 2): the whole default run under a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

import numpy as np

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


def timed(label: str, fn):
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    print(f"{label:52s} {seconds:7.1f} s", flush=True)
    return result, seconds


def startup() -> float:
    """Median wall seconds of fresh processes that start and end at once; returns `mdad run --help`'s."""
    mdad = str(Path(sys.executable).with_name("mdad")) if Path(sys.executable).with_name("mdad").exists() else shutil.which("mdad") or "mdad"
    commands = {
        "start-up: the interpreter alone": [sys.executable, "-c", "pass"],
        "start-up: mdad --help": [mdad, "--help"],
        "start-up: mdad methods": [mdad, "methods"],
        "start-up: mdad run --help": [mdad, "run", "--help"],
    }
    seconds = 0.0
    for label, command in commands.items():
        times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True)
            times.append(time.perf_counter() - start)
        seconds = statistics.median(times)
        print(f"{label:52s} {seconds:7.2f} s", flush=True)
    return seconds


def run_cells(matrix, config, out: Path, workers: int) -> None:
    Experiment(matrix, config, store=ResultStore(out)).run(workers=workers, extra_config={"threshold": 0.8})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--skip-baselines", action="store_true", help="time the default run only")
    parser.add_argument("--startup-only", action="store_true", help="time the start-up phase only")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, {args.workers} workers, load average {os.getloadavg()[0]:.2f}")
    t_start = startup()
    if args.startup_only:
        return
    matrix, t_sim = timed("load the built-in gpqa 420 x 448", GPQA.load)
    config = ExperimentConfig(methods=tuple(method_registry.available()), sizes=SIZES, sources=(300,), runs=args.runs, targets=50, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        _, t_cells = timed("cells (all methods)", lambda: run_cells(matrix, config, out, args.workers))
        _, t_report = timed(f"report (tables, MDAD, figures, HTML), {args.workers} workers", lambda: build_outputs(out, 0.8, workers=args.workers))
        print(f"{'total (start-up of mdad run, load, cells, report)':52s} {t_start + t_sim + t_cells + t_report:7.1f} s")
        if args.skip_baselines:
            return
        if args.workers > 1:
            _, t_report_base = timed("baseline: report in this process alone", lambda: build_outputs(out, 0.8))
            print(f"{'  ratio':52s} {t_report_base / t_report:7.1f}x")
        store = ResultStore(out)
        _, t_eval = timed("metrics of every cell (robust MDAD: converged Newton)", lambda: evaluate_store(store))
        with mock.patch.object(robust, "logistic_fit", fixed_steps_logistic_fit):
            _, t_eval_base = timed("baseline: robust MDAD with 50 Newton steps", lambda: evaluate_store(store))
        print(f"{'  ratio':52s} {t_eval_base / t_eval:7.1f}x")
        with mock.patch.object(executors, "threadpool_limits", lambda **_: nullcontext()):
            _, t_eval_threads = timed("baseline: metrics in this process, BLAS on every core", lambda: evaluate_store(store))
        print(f"{'  ratio':52s} {t_eval_threads / t_eval:7.1f}x")
        if args.workers > 1:
            with mock.patch.object(executors, "threadpool_limits", lambda limits: None), mock.patch.object(executors, "THREAD_VARIABLES", ()):
                _, t_base = timed(
                    "baseline: cells without the per-worker thread cap", lambda: run_cells(matrix, config, Path(tmp) / "uncapped", args.workers)
                )
            print(f"{'  ratio':52s} {t_base / t_cells:7.1f}x")


if __name__ == "__main__":
    main()
