"""The paper's whole experimental grid on simulated matrices of its four benchmarks' shapes.

    python benchmarks/bench_paper_grid.py                 # the full grid: 50 runs (hours of CPU)
    python benchmarks/bench_paper_grid.py --runs 3        # cells run with 1 and with 3 runs, extrapolated to 50
    python benchmarks/bench_paper_grid.py --benchmarks mmlu-pro --methods anchor-points,diversity
    python benchmarks/bench_paper_grid.py --gpqa ../shared/data/oll2-gpqa/responses.npz --benchmarks gpqa

The matrices are SIMULATED (``mdad.simulate``, seed 0, 400 models) with the shapes of the
paper's Open LLM Leaderboard benchmarks: GPQA 448 items (1 subtask), BBH 5,761 (27),
MMLU-Pro 12,032 (14), MMLU 10,612 (57; the paper's seen half is 5,306 items). The grid is the
paper's: seven methods, sizes 10-1,000 (GPQA 10-200), seven source-model counts 10-300,
50 targets, 50 runs. Every phase runs in a fresh one-thread process (BLAS and OpenMP capped
at 1 thread, the C allocator set as `mdad run` sets it: mdad.cli.allocator), which reports its
process CPU time, wall time and peak memory (max RSS):

- data: read the matrix from .npz (what a run does; simulating and saving it is not timed);
- cells, per method: select and estimate every cell of the method, one process;
- with `--tree`: the memory of the process tree of a two-worker run of the heavy methods;
- summary: every metric of every cell (error, Kendall tau, agreement curves, MDAD, bootstrap),
  measured on 50 runs' worth of estimates (the runs done repeated up to 50).

CPU time is the fair measure on a shared machine; the two-worker time is the CPU time of the
cells and of the summary split over two worker processes (the grid's tasks are independent, and
`mdad run` evaluates its cells in its workers too), plus reading the data.

With ``--runs R`` below 50 each method's cells are run twice, in fresh processes: with 1 run and
with R runs. A process's cells cost a fixed part (imports, each task's preparation of the
matrix) plus a part per run; the per-run part is the difference of the two over R - 1 runs, and
the cells' time at 50 runs is the 1-run process's time plus 49 times that part. (Multiplying R
runs' time by 50 / R, as earlier rounds did, counts the fixed part 50 / R times: on GPQA that
more than doubles the total.)

``--smoke`` runs the GPQA shape's cells of the random method with 2 runs. The record holds each
benchmark's CPU time, its time with two workers and the process tree's peak memory.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import suite

BENCHMARKS = {  # name: (items, subtasks, sizes)
    "gpqa": (448, 1, (10, 25, 50, 100, 200)),
    "bbh": (5761, 27, (10, 25, 50, 100, 250, 500, 1000)),
    "mmlu-pro": (12032, 14, (10, 25, 50, 100, 250, 500, 1000)),
    "mmlu": (10612, 57, (10, 25, 50, 100, 250, 500, 1000)),
}
METHODS = (
    "random",
    "random-stratified-equal",
    "random-stratified-proportional",
    "stratified-confidence",
    "anchor-points",
    "diversity",
    "tinybenchmarks",
)
SOURCES = (10, 50, 100, 150, 200, 250, 300)
MODELS, TARGETS, PAPER_RUNS = 400, 50, 50
ONE_THREAD = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")}


def usage() -> dict:
    """This process's CPU time (s), wall clock (s) and peak resident memory (MB) so far."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": time.perf_counter(), "peak_mb": ru.ru_maxrss / 1024}


def phase_simulate(bench: str, folder: Path) -> dict:
    from mdad.data import simulate, write_npz

    items, subtasks, _ = BENCHMARKS[bench]
    path = folder / f"{bench}.npz"
    if not path.exists():
        write_npz(simulate(seed=0, n_models=MODELS, n_items=items, n_subtasks=subtasks), path)
    return {"bytes": path.stat().st_size}


def phase_data(bench: str, folder: Path) -> dict:
    from mdad.data import read_npz

    start = usage()
    matrix = read_npz(folder / f"{bench}.npz")
    end = usage()
    return {
        "cpu": end["cpu"] - start["cpu"],
        "wall": end["wall"] - start["wall"],
        "peak_mb": end["peak_mb"],
        "shape": list(matrix.option_probs.shape),
    }


def phase_cells(bench: str, folder: Path, method: str, runs: int) -> dict:
    from mdad.data import read_npz
    from mdad.experiment.grid import Experiment, ExperimentConfig
    from mdad.experiment.store import ResultStore

    matrix = read_npz(folder / f"{bench}.npz")
    config = ExperimentConfig(methods=(method,), sizes=BENCHMARKS[bench][2], sources=SOURCES, runs=runs, targets=TARGETS, seed=0)
    start = usage()
    Experiment(matrix, config, store=ResultStore(folder / f"{bench}-{runs}")).run(workers=1)
    end = usage()
    return {"cpu": end["cpu"] - start["cpu"], "wall": end["wall"] - start["wall"], "peak_mb": end["peak_mb"]}


def phase_summary(bench: str, folder: Path, runs: int) -> dict:
    """Every metric of every cell, on 50 runs' worth of estimates: the stored runs repeated up to
    50 when fewer were run (the metrics' cost depends on the number of runs, not on the values)."""
    import pandas as pd

    from mdad.defaults import DEFAULT_THRESHOLD
    from mdad.experiment.evaluate import evaluate_cell
    from mdad.experiment.store import ResultStore

    store = ResultStore(folder / f"{bench}-{runs}")
    frames = {}
    for cell in store.cells():
        frame = store.read(cell)
        copies = -(-PAPER_RUNS // runs)
        frame = pd.concat([frame.assign(run=frame["run"] + i * runs) for i in range(copies)], ignore_index=True)
        frames[cell] = frame[frame["run"] < PAPER_RUNS]
    start = usage()
    rows = sum(len(evaluate_cell(cell, frame, threshold=DEFAULT_THRESHOLD)[0]) for cell, frame in frames.items())
    end = usage()
    return {"cpu": end["cpu"] - start["cpu"], "wall": end["wall"] - start["wall"], "peak_mb": end["peak_mb"], "rows": rows}


PAPER_CODE_GPQA_SECONDS = 228  # the paper's public code on this GPQA grid, selection + per-pair metrics (issue 16)


def phase_gpqa(path: str) -> dict:
    """The real GPQA grid of the comparison with the paper's code: 6 methods x 5 sizes x 50 runs, 300 sources."""
    from mdad.data import read_npz
    from mdad.experiment.grid import Experiment, ExperimentConfig

    matrix = read_npz(path)
    methods = METHODS[:-1]  # the paper's code has no tinyBenchmarks fit of its own to time (py-irt: days)
    Experiment(matrix, ExperimentConfig(methods=methods, sizes=(10,), sources=(300,), runs=1)).run()  # imports
    start = usage()
    result = Experiment(
        matrix, ExperimentConfig(methods=methods, sizes=(10, 25, 50, 100, 200), sources=(300,), runs=PAPER_RUNS, targets=TARGETS, seed=0)
    ).run()
    cells = usage()
    result.summary()
    end = usage()
    return {"cells": cells["cpu"] - start["cpu"], "summary": end["cpu"] - cells["cpu"]}


def tree_memory_mb(pid: int) -> tuple[float, float]:
    """(RSS, PSS) in MB of a process and all its descendants (Linux /proc); PSS shares pages that
    forked workers hold in common instead of counting them once per process."""
    children = {}
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    todo, rss, pss = [pid], 0.0, 0.0
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith(("Rss:", "Pss:")):
                    value = int(line.split()[1]) / 1024
                    rss, pss = (rss + value, pss) if line.startswith("Rss:") else (rss, pss + value)
        except OSError:
            continue
    return rss, pss


def phase_tree(bench: str, folder: Path) -> dict:
    """Peak memory of the process tree of a two-worker run of the heavy methods at the largest size."""
    import threading

    from mdad.data import read_npz
    from mdad.experiment.grid import Experiment, ExperimentConfig

    peak = [0.0, 0.0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            rss, pss = tree_memory_mb(os.getpid())
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            time.sleep(0.2)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        matrix = read_npz(folder / f"{bench}.npz")
        config = ExperimentConfig(
            methods=("anchor-points", "diversity", "tinybenchmarks"),
            sizes=(max(BENCHMARKS[bench][2]),),
            sources=(300,),
            runs=2,
            targets=TARGETS,
            seed=0,
        )
        Experiment(matrix, config).run(workers=2, runs_per_task=1)
    finally:
        done.set()
        sampler.join()
    return {"rss_mb": peak[0], "pss_mb": peak[1]}


def in_child(*args: str) -> dict:
    """Run one phase in a fresh one-thread process; its measurements."""
    env = {**os.environ, **ONE_THREAD}
    out = subprocess.run([sys.executable, __file__, "--phase", *args], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"phase {args} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def extrapolated(one: dict, many: dict, runs: int) -> dict:
    """CPU and wall time of a method's cells at the paper's 50 runs, from a process that did 1 run
    (``one``) and one that did ``runs`` (``many``): fixed part + 50 x the per-run part (taken as 0 when
    the difference is negative: a method whose runs cost less than the timing's noise)."""
    if runs >= PAPER_RUNS:
        return many
    return {key: one[key] + max(0.0, many[key] - one[key]) * (PAPER_RUNS - 1) / (runs - 1) for key in ("cpu", "wall")} | {"peak_mb": many["peak_mb"]}


def report(args, session: suite.Session) -> None:
    if not 2 <= args.runs <= PAPER_RUNS:
        raise SystemExit(f"--runs must be between 2 and {PAPER_RUNS}, got {args.runs}.")
    methods = args.methods.split(",")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (a shared machine inflates wall times; CPU times are the measure)")
    if args.runs < PAPER_RUNS:
        print(
            f"Ran 1 and {args.runs} of the paper's {PAPER_RUNS} runs: cells' times are EXTRAPOLATED to {PAPER_RUNS} "
            f"(the 1-run process's time + {PAPER_RUNS - 1} x the per-run difference)."
        )
    print(f"Simulated matrices ({MODELS} models), sources {SOURCES}, {TARGETS} targets.\n")
    if args.gpqa:
        g = in_child("gpqa", "gpqa", args.gpqa)
        total = g["cells"] + g["summary"]
        print(
            f"Real GPQA ({args.gpqa}), 6 methods x 5 sizes x 50 runs, 300 sources: cells {g['cells']:.2f} + summary "
            f"{g['summary']:.2f} = {total:.2f} CPU s, {PAPER_CODE_GPQA_SECONDS / total:.0f}x less than the paper's "
            f"code ({PAPER_CODE_GPQA_SECONDS} s, measured in issue 16, not rerun here)\n"
        )
    folder = Path(args.folder or tempfile.mkdtemp(prefix="mdad-paper-grid-"))
    folder.mkdir(parents=True, exist_ok=True)
    totals = {"cpu": 0.0, "two_workers": 0.0}
    line = "{:10s} {:32s} {:>10s} {:>10s} {:>9s}"
    print(line.format("benchmark", "phase", "CPU s", "wall s", "peak MB"))
    for bench in args.benchmarks.split(","):
        for runs in {1, args.runs}:
            shutil.rmtree(folder / f"{bench}-{runs}", ignore_errors=True)  # results of an earlier call
        in_child("simulate", bench, str(folder))
        data = in_child("data", bench, str(folder))
        print(
            line.format(
                bench, f"data: read {'x'.join(map(str, data['shape']))}", f"{data['cpu']:.1f}", f"{data['wall']:.1f}", f"{data['peak_mb']:.0f}"
            ),
            flush=True,
        )
        cells_cpu, peaks = 0.0, [data["peak_mb"]]
        for method in methods:
            many = in_child("cells", bench, str(folder), method, str(args.runs))
            one = in_child("cells", bench, str(folder), method, "1") if args.runs < PAPER_RUNS else many
            m = extrapolated(one, many, args.runs)
            cells_cpu += m["cpu"]
            peaks.append(m["peak_mb"])
            session.add(f"{bench} cells: {method}", cpu_s=m["cpu"], wall_s=m["wall"], peak_mb=m["peak_mb"])
            print(line.format(bench, f"cells: {method}", f"{m['cpu']:.1f}", f"{m['wall']:.1f}", f"{m['peak_mb']:.0f}"), flush=True)
        s = in_child("summary", bench, str(folder), str(args.runs))
        print(line.format(bench, f"summary ({s['rows']} rows, 50 runs)", f"{s['cpu']:.1f}", f"{s['wall']:.1f}", f"{s['peak_mb']:.0f}"), flush=True)
        cpu = data["cpu"] + cells_cpu + s["cpu"]
        two = data["cpu"] + (cells_cpu + s["cpu"]) / 2
        totals["cpu"] += cpu
        totals["two_workers"] += two
        tree = data["peak_mb"] + 2 * max(peaks[1:])  # parent holding the data + two workers at their largest
        session.add(
            bench,
            data_cpu_s=data["cpu"],
            cells_cpu_s=cells_cpu,
            summary_cpu_s=s["cpu"],
            cpu_s=cpu,
            two_workers_s=two,
            peak_tree_mb=tree,
            runs=args.runs,
            extrapolated=args.runs < PAPER_RUNS,
        )
        print(line.format(bench, "TOTAL (CPU; 2 workers est.)", f"{cpu:.0f}", f"{two:.0f}", f"{tree:.0f}*"))
        print(f"{'':10s} = {two / 60:.1f} min on 2 cores; * process tree with 2 workers (upper bound)", flush=True)
        if args.tree:
            t = in_child("tree", bench, str(folder))
            print(
                f"{'':10s} process tree of a 2-worker run (anchor-points, diversity, tinyBenchmarks at the largest "
                f"size): peak {t['pss_mb']:.0f} MB (PSS; RSS summed {t['rss_mb']:.0f} MB)",
                flush=True,
            )
        print()
    session.add("all", cpu_s=totals["cpu"], two_workers_s=totals["two_workers"], extrapolated=args.runs < PAPER_RUNS)
    print(
        f"All: {totals['cpu'] / 60:.1f} CPU min; {totals['two_workers'] / 60:.1f} min with 2 worker processes"
        + (f" (extrapolated from {args.runs} runs)" if args.runs < PAPER_RUNS else "")
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--phase":
        from mdad.cli import allocator

        allocator.tune()  # what `mdad run` sets for its process and workers (mdad.cli.allocator)
        phase, bench, folder, *rest = sys.argv[2:]
        if phase == "tree":
            result = phase_tree(bench, Path(folder))
        elif phase == "gpqa":
            result = phase_gpqa(folder)
        elif phase == "simulate":
            result = phase_simulate(bench, Path(folder))
        elif phase == "data":
            result = phase_data(bench, Path(folder))
        elif phase == "cells":
            result = phase_cells(bench, Path(folder), rest[0], int(rest[1]))
        else:
            result = phase_summary(bench, Path(folder), int(rest[0]))
        print(json.dumps(result))
        return
    parser = suite.parser(__doc__)
    parser.add_argument("--runs", type=int, default=PAPER_RUNS, help="runs to do, at least 2 (below 50: also 1, times extrapolated to 50)")
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--gpqa", metavar="NPZ", help="first time the real GPQA grid of the comparison with the paper's code")
    parser.add_argument("--tree", action="store_true", help="also measure a 2-worker run's process-tree memory")
    parser.add_argument("--folder", help="where the matrices and results go (default: a new temporary folder)")
    args = parser.parse_args()
    if args.smoke:
        args.benchmarks, args.methods, args.runs = "gpqa", "random", 2
    with suite.Session("bench_paper_grid", args) as session:
        report(args, session)


if __name__ == "__main__":
    main()
