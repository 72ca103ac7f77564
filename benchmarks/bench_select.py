"""Time `mdad select --size 100` with the default assessment (20 held-out runs) for every static method
on a simulated matrix of MMLU-Pro's shape (400 models x 12,000 items, 14 subtasks, 10 options).

    python benchmarks/bench_select.py [--methods random,tinybenchmarks-gpirt] [--items 12000] [--workers 2]
    python benchmarks/bench_select.py --per-run 2 [--methods ...]
    python benchmarks/bench_select.py --before-after 2

Default: each method runs as the command a user types, in its own process (CLI start-up,
loading, the selection, the assessment with its progress bar, writing the file). Printed per
method: wall time, the CPU time of the command and its worker processes, and the load average
before and after (other jobs on the machine inflate the wall time; the CPU time less so).

``--per-run R``: for a machine too busy for whole commands, in this process with one thread: the
CPU time of the selection and of R held-out runs, and what the command would take on two quiet
cores (selection, then the 20 runs shared by two workers; CPU times measured under load are
inflated, so this errs high).

``--before-after R``: tinybenchmarks-gpirt's held-out runs with the IRT fit as it was (every
point's likelihood computed again for a new round and for the covariance update; gp-IRT's
held-out fit always 6 rounds) against now, alternating in this process (R runs each, CPU time).

Goal (issue 28): every static method under 60 s on 2 quiet cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

from threadpoolctl import threadpool_limits

from mdad import methods as method_registry
from mdad.data import simulate, write_npz
from mdad.data.simulate import SimulationParams
from mdad.defaults import ASSESS_RUNS

MODELS, SUBTASKS, SIZE = 400, 14, 100
TEN_OPTIONS = SimulationParams(floors=(0.1,))  # MMLU-Pro: 10 options, a guessing floor of 1/10
MDAD = str(Path(sys.executable).with_name("mdad")) if Path(sys.executable).with_name("mdad").exists() else shutil.which("mdad") or "mdad"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_select(data: Path, method: str, out: Path, workers: int) -> tuple[float, float]:
    """Wall and CPU seconds of one `mdad select` command."""
    command = [MDAD, "select", "--data", str(data), "--method", method, "--size", str(SIZE), "--out", str(out)]
    if workers:
        command += ["--workers", str(workers)]
    cpu, wall = children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - wall, children_cpu() - cpu
    if done.returncode:
        raise SystemExit(f"{method} failed:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return wall, cpu


def per_run(matrix, method: str, runs: int) -> tuple[float, float]:
    """CPU seconds of the selection on every model, and per held-out run (one process, one thread)."""
    from mdad.assessment import assess
    from mdad.micro.selected import select

    start = time.process_time()
    select(matrix, method, SIZE, seed=0)
    chosen = time.process_time() - start
    start = time.process_time()
    assess(matrix, method, SIZE, runs=runs, workers=1)
    return chosen, (time.process_time() - start) / runs


def former_fit():
    """The IRT fit as it was before the likelihood was kept between rounds, and gp-IRT's held-out fit
    always 6 rounds: a context in which both hold."""
    from contextlib import ExitStack
    from unittest import mock

    from mdad.irt import model
    from mdad.methods import tinybenchmarks

    kept = model._Posterior.likelihood

    def recompute(self, x):
        self._last = None
        return kept(self, x)

    stack = ExitStack()
    stack.enter_context(mock.patch.object(model._Posterior, "likelihood", recompute))
    stack.enter_context(mock.patch.object(tinybenchmarks, "BIAS_FIRST_CHECK", tinybenchmarks.VALIDATION_ROUNDS + 1))
    return stack


def before_after(matrix, runs: int) -> None:
    from mdad.assessment import assess

    method = "tinybenchmarks-gpirt"
    times: dict[str, list[float]] = {"before": [], "now": []}
    for seed in range(runs):
        for label in ("before", "now"):
            with former_fit() if label == "before" else nullcontext():
                start = time.process_time()
                assess(matrix, method, SIZE, runs=1, seed=seed, workers=1)
                times[label].append(time.process_time() - start)
            print(f"  run {seed} {label:6s} {times[label][-1]:6.1f} s CPU", flush=True)
    before, now = sum(times["before"]), sum(times["now"])
    print(f"{method}: {before / runs:.1f} s CPU per held-out run before, {now / runs:.1f} s now ({before / now:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    static = [name for name in method_registry.available() if not method_registry.get(name).adaptive]
    parser.add_argument("--methods", default=",".join(static), help="comma-separated (default: every static method)")
    parser.add_argument("--items", type=int, default=12_000)
    parser.add_argument("--workers", type=int, default=0, help="worker processes (0: the command's default, one per core)")
    parser.add_argument("--per-run", type=int, default=0, metavar="R", help="in this process: the selection and R held-out runs")
    parser.add_argument("--before-after", type=int, default=0, metavar="R", help="tinybenchmarks-gpirt's runs, the former fit against now")
    args = parser.parse_args()
    matrix = simulate(seed=0, n_models=MODELS, n_items=args.items, n_subtasks=SUBTASKS, params=TEN_OPTIONS)
    print(f"load average {os.getloadavg()[0]:.1f}")
    if args.before_after or args.per_run:
        threadpool_limits(1)
    if args.before_after:
        before_after(matrix, args.before_after)
        return
    if args.per_run:
        print(f"{'method':32s} {'select':>8s} {'per run':>8s} {'2 quiet cores, 20 runs':>24s}")
        for method in args.methods.split(","):
            chosen, run = per_run(matrix, method, args.per_run)
            print(f"{method:32s} {chosen:7.1f}s {run:7.1f}s {chosen + ASSESS_RUNS * run / 2:23.0f}s", flush=True)
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "mmlu-pro-shape.npz"
        write_npz(matrix, data)
        print(f"{os.cpu_count()} cores; simulated {MODELS} x {args.items}, {SUBTASKS} subtasks, 10 options; select --size {SIZE}, 20 assessment runs")
        print(f"{'method':32s} {'wall':>8s} {'CPU':>8s}  load before/after")
        for method in args.methods.split(","):
            before = os.getloadavg()[0]
            wall, cpu = time_select(data, method, Path(tmp) / f"{method}.json", args.workers)
            print(f"{method:32s} {wall:7.1f}s {cpu:7.1f}s  {before:.1f}/{os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
