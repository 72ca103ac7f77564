"""Time `mdad select` for every registered static method against tinybenchmarks-gpirt, paired, in one process.

    python benchmarks/bench_select.py [--methods random,lasso] [--items 12000] [--runs 2] [--threads 1]
    python benchmarks/bench_select.py --commands [--workers 2]
    python benchmarks/bench_select.py --grid --methods mrmr-krr,disco [--grid-runs 5]
    python benchmarks/bench_select.py --smoke

The matrix is simulated with MMLU-Pro's shape (400 models x 12,000 items, 14 subtasks, 10 options). What
`mdad select --size 100` does is a selection on every model and the assessment's held-out runs (20 by
default); here each method's selection and ``--runs`` held-out runs are timed against tinybenchmarks-gpirt's,
alternating in this process (``suite.paired``): the ratio is CPU time against gp-IRT's, which a busy machine
inflates on both sides alike. ``estimated_command_s`` is what the whole command would take on two quiet
cores: the selection, then the 20 runs shared by two workers. Every method the registry lists as static is
timed, so a new method is covered without editing this script.

``--commands`` times the command a user types instead (its own process: start-up, loading, selection, the
20 assessment runs, the file), paired with gp-IRT's command; CPU counts the command's worker processes.
Goal (issue 28): every static method under 60 s on 2 quiet cores; a selection (``--runs 0``) no slower
than gp-IRT's (issue 46).

``--grid`` times each method's cells of the GPQA grid instead (the built-in gpqa, 420 x 448, the sizes
`mdad run` uses, ``--grid-runs`` runs, in this process), paired with gp-IRT's cells of the same grid.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import suite

from mdad import methods as method_registry
from mdad.assessment import assess
from mdad.data import BUILTIN, ResponseMatrix, simulate, write_npz
from mdad.data.simulate import SimulationParams
from mdad.defaults import ASSESS_RUNS
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.micro.selected import select

BASELINE = "tinybenchmarks-gpirt"
TEN_OPTIONS = SimulationParams(floors=(0.1,))  # MMLU-Pro: 10 options, a guessing floor of 1/10


def static_methods() -> list[str]:
    """Every registered method that chooses its items before any answer is seen."""
    return [name for name in method_registry.available() if not method_registry.get(name).adaptive]


def in_process(matrix: ResponseMatrix, method: str, size: int, runs: int):
    """The selection on every model and ``runs`` held-out runs, as one call."""

    def call() -> None:
        select(matrix, method, size, seed=0)
        if runs:
            assess(matrix, method, size, runs=runs, workers=1)

    return call


def grid_cells(matrix: ResponseMatrix, method: str, runs: int):
    """The method's cells of the grid `mdad run` computes on ``matrix`` (its default sizes), ``runs`` runs, as one call."""
    config = ExperimentConfig.for_matrix(matrix, methods=method, runs=runs, seed=0)

    def call() -> None:
        Experiment(matrix, config).run(workers=1)

    return call


def command(data: Path, method: str, size: int, out: Path, workers: int):
    """The `mdad select` command a user types, as one call."""
    argv = [sys.executable, "-m", "mdad.cli", "select", "--data", str(data), "--method", method, "--size", str(size), "--out", str(out)]
    if workers:
        argv += ["--workers", str(workers)]

    def call() -> None:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{method} failed:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")

    return call


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--methods", default=None, help="comma-separated (default: every registered static method)")
    parser.add_argument("--items", type=int, default=12_000)
    parser.add_argument("--models", type=int, default=400)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--runs", type=int, default=2, help="held-out runs timed per method in this process (0: the selection alone)")
    parser.add_argument("--repeats", type=int, default=1, help="paired repeats per method")
    parser.add_argument("--commands", action="store_true", help="time whole `mdad select` commands instead")
    parser.add_argument("--workers", type=int, default=0, help="with --commands: worker processes (0: the command's default)")
    parser.add_argument("--grid", action="store_true", help="time each method's cells of the GPQA grid against gp-IRT's instead")
    parser.add_argument("--grid-runs", type=int, default=5, help="with --grid: runs per cell")
    args = parser.parse_args()
    names = ("commands", "workers", "runs", "size", "items", "models")
    ignored = [f"--{name}" for name in names if getattr(args, name) != parser.get_default(name)]
    if args.grid and ignored:
        parser.error(f"--grid times the GPQA grid's own sizes and runs in this process: {', '.join(ignored)} cannot go with it")
    if not args.grid and args.grid_runs != parser.get_default("grid_runs"):
        parser.error("--grid-runs is the number of runs of --grid, which was not asked for")
    if args.smoke:
        args.models, args.items, args.size, args.runs, args.grid_runs = 30, 80, 10, 0, 1
    methods = args.methods.split(",") if args.methods else static_methods()
    if args.grid:
        grid(args, methods)
        return
    matrix = simulate(seed=0, n_models=args.models, n_items=args.items, n_subtasks=14, params=TEN_OPTIONS)
    print(f"simulated {args.models} x {args.items}, 14 subtasks, 10 options; select --size {args.size}; baseline {BASELINE}")
    print(f"{'method':32s} {'CPU s':>8s} {'wall s':>8s} {'CPU / gp-IRT':>13s} {'command est. s':>15s}")
    with suite.Session("bench_select", args) as session, tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "matrix.npz"
        if args.commands:
            write_npz(matrix, data)
        for method in methods:
            if args.commands:
                base = command(data, BASELINE, args.size, Path(tmp) / "base.json", args.workers)
                call = command(data, method, args.size, Path(tmp) / "method.json", args.workers)
            else:
                base, call = in_process(matrix, BASELINE, args.size, args.runs), in_process(matrix, method, args.size, args.runs)
            timing = suite.paired(base, call, args.repeats)
            fields = timing.fields()
            if not args.commands and args.runs:
                chosen = suite.measure(lambda method=method: select(matrix, method, args.size, seed=0)).cpu
                per_run = max(timing.candidate.cpu - chosen, 0.0) / args.runs
                fields |= {"select_cpu_s": chosen, "per_run_cpu_s": per_run, "estimated_command_s": chosen + ASSESS_RUNS * per_run / 2}
            session.add(method, **fields)
            estimate = f"{fields['estimated_command_s']:15.0f}" if "estimated_command_s" in fields else f"{'':15s}"
            print(f"{method:32s} {timing.candidate.cpu:8.1f} {timing.candidate.wall:8.1f} {timing.cpu_ratio:12.2f}x {estimate}", flush=True)


def grid(args, methods: list[str]) -> None:
    """Each method's cells of the GPQA grid, paired with gp-IRT's (``--smoke``: a 30 x 80 simulated matrix)."""
    matrix = simulate(seed=0, n_models=30, n_items=80) if args.smoke else BUILTIN["gpqa"].load()
    print(f"{matrix.n_models} x {matrix.n_items}; the grid's cells of each method, {args.grid_runs} runs; baseline {BASELINE}")
    print(f"{'method':32s} {'CPU s':>8s} {'wall s':>8s} {'CPU / gp-IRT':>13s}")
    with suite.Session("bench_select", args) as session:
        for method in methods:
            timing = suite.paired(grid_cells(matrix, BASELINE, args.grid_runs), grid_cells(matrix, method, args.grid_runs), args.repeats)
            session.add(f"grid {method}", **timing.fields())
            print(f"{method:32s} {timing.candidate.cpu:8.1f} {timing.candidate.wall:8.1f} {timing.cpu_ratio:12.2f}x", flush=True)


if __name__ == "__main__":
    main()
