"""The paper grid's cells, this code against an earlier commit, paired: CPU time per method and benchmark.

    python benchmarks/bench_grid_paired.py --before 0bb0945 --runs 2
    python benchmarks/bench_grid_paired.py --before main --runs 1 --benchmarks mmlu-pro --methods tinybenchmarks

For every benchmark shape and method of ``bench_paper_grid.py`` (simulated matrices, seven source
counts, its sizes), the cells of ``--runs`` runs are selected and estimated in a fresh one-thread
process (``bench_paper_grid.py``'s cells phase), once with the source tree of ``--before`` (extracted
with ``git archive``) and once with this working tree's, alternating which goes first, ``--repeats``
times. Process CPU time is the measure (the machine may be shared); each pair is printed with the
ratio, and the cells' CPU is scaled to the paper's 50 runs (x 50 / runs: this counts each process's
fixed part, imports and each task's preparation, 50 / runs times, which is fair to both sides of a
ratio but overstates the totals; bench_paper_grid.py extrapolates from a 1-run and an R-run process).
With ``--check-items`` the two trees' chosen items and estimates are also compared cell by cell
(every cell of the runs; both computed again, outside the timing).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GRID = HERE / "bench_paper_grid.py"
sys.path.insert(0, str(HERE))
from bench_paper_grid import BENCHMARKS, ONE_THREAD, PAPER_RUNS, SOURCES, TARGETS  # noqa: E402

HEAVY = ("anchor-points", "diversity", "tinybenchmarks")

ITEMS = """
import json, sys, numpy as np
from mdad.data import read_npz
from mdad.experiment.grid import ExperimentConfig, plan_tasks, task_outcomes
from mdad.experiment.splits import make_splits
path, method, runs, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[6]
sizes, sources = tuple(json.loads(sys.argv[4])), tuple(json.loads(sys.argv[5]))
matrix = read_npz(path)
config = ExperimentConfig(methods=(method,), sizes=sizes, sources=sources, runs=runs, targets=TARGETS, seed=0)
splits = make_splits(matrix, config.runs, config.targets, config.seed, config.group, targets_from=config.targets_from)
found = {}
for task in plan_tasks(config):
    for run, outcomes in task_outcomes(matrix, splits, task):
        for cell, outcome in outcomes.items():
            key = f"{cell.method}|{cell.size}|{cell.sources}|{run}"
            found[key + "|items"], found[key + "|estimates"] = np.asarray(outcome.items), np.asarray(outcome.estimates)
np.savez(out, **found)
"""  # TARGETS is replaced by its value


def tree_of(ref: str, folder: Path) -> Path:
    """The ``src`` folder of commit ``ref``, extracted into ``folder``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder / "src")], check=True)  # not compiled in the timing
    return folder / "src"


def cells_cpu(src: Path, bench: str, folder: Path, method: str, runs: int) -> float:
    """CPU seconds of ``runs`` runs of the method's cells, in a fresh one-thread process running ``src``."""
    shutil.rmtree(folder / f"{bench}-{runs}", ignore_errors=True)  # the cells phase skips the cells its store holds
    env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, str(GRID), "--phase", "cells", bench, str(folder), method, str(runs)], env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(f"cells of {method} on {bench} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])["cpu"]


def same_items(before: Path, now: Path, bench: str, folder: Path, method: str, runs: int) -> tuple[int, int]:
    """(cells, cells whose items or estimates differ) between the two trees."""
    import numpy as np

    sizes, results = BENCHMARKS[bench][2], []
    for src in (before, now):
        out = folder / f"items-{src.parent.name}-{bench}-{method}.npz"
        env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(src)}
        subprocess.run(
            [
                sys.executable,
                "-c",
                ITEMS.replace("TARGETS", str(TARGETS)),
                str(folder / f"{bench}.npz"),
                method,
                str(runs),
                json.dumps(sizes),
                json.dumps(SOURCES),
                str(out),
            ],
            env=env,
            check=True,
        )
        results.append(np.load(out))
    a, b = results
    if set(a.files) != set(b.files):
        return len(a.files) // 2, len(a.files) // 2
    differ = {key.rsplit("|", 1)[0] for key in a.files if not np.array_equal(a[key], b[key])}
    return len(a.files) // 2, len(differ)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier commit (any git ref)")
    parser.add_argument("--runs", type=int, default=2, help="runs per measurement (the cells' CPU is extrapolated to 50)")
    parser.add_argument("--repeats", type=int, default=1, help="pairs per benchmark and method, alternating which goes first")
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS))
    parser.add_argument("--methods", default=",".join(HEAVY))
    parser.add_argument("--check-items", action="store_true", help="also compare every cell's items and estimates")
    parser.add_argument("--folder", help="where the matrices go (default: a new temporary folder)")
    args = parser.parse_args()
    folder = Path(args.folder or tempfile.mkdtemp(prefix="mdad-grid-paired-"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "before").mkdir(exist_ok=True)
    before, now = tree_of(args.before, folder / "before"), ROOT / "src"
    scale = PAPER_RUNS / args.runs
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; before = {args.before}, now = this tree")
    print(f"{args.runs} runs per measurement, cells' CPU EXTRAPOLATED x{scale:g} to the paper's {PAPER_RUNS} runs\n")
    line = "{:10s} {:16s} {:>12s} {:>12s} {:>7s} {:>10s}"
    print(line.format("benchmark", "method", "before CPU s", "now CPU s", "ratio", "items"))
    totals = [0.0, 0.0]
    for bench in args.benchmarks.split(","):
        env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(now)}
        subprocess.run([sys.executable, str(GRID), "--phase", "simulate", bench, str(folder)], env=env, check=True, capture_output=True)
        for method in args.methods.split(","):
            pairs = []
            for repeat in range(args.repeats):
                order = (before, now) if repeat % 2 == 0 else (now, before)
                cpu = {src: cells_cpu(src, bench, folder, method, args.runs) * scale for src in order}
                pairs.append((cpu[before], cpu[now]))
            old = sum(p[0] for p in pairs) / len(pairs)
            new = sum(p[1] for p in pairs) / len(pairs)
            totals[0], totals[1] = totals[0] + old, totals[1] + new
            items = ""
            if args.check_items:
                cells, differ = same_items(before, now, bench, folder, method, args.runs)
                items = f"{cells - differ}/{cells} same"
            print(line.format(bench, method, f"{old:.0f}", f"{new:.0f}", f"{old / new:.2f}x", items), flush=True)
    print(f"\nAll measured cells: {totals[0]:.0f} -> {totals[1]:.0f} CPU s (extrapolated to {PAPER_RUNS} runs), {totals[0] / totals[1]:.2f}x")


if __name__ == "__main__":
    main()
