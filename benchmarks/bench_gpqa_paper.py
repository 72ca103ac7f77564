"""mdad's side of the paper's GPQA grid, end to end as a user runs it, quiet and under two busy loops.

    python benchmarks/bench_gpqa_paper.py [--repeats 3] [--workers 0,1] [--busy 2]

The grid of issue 16's side-by-side comparison with the paper's public code: the built-in gpqa
(420 models x 448 items), random x3, stratified-confidence, anchor-points and diversity, sizes
10-200, 50 runs, 300 sources, 50 targets, every metric and report.html: the whole `mdad run`
command in a fresh process (CLI start-up, loading, cells, summary, report). Each setting is run
``--repeats`` times, first on the machine as it is (quiet, if nothing else runs: the load average
is printed), then with ``--busy`` processes spinning ``while True: pass`` (what a user's other
work does to a 2-core machine). Printed per run: wall time, CPU time of the command and its
workers, peak resident memory of the largest process so far, and the load average; then the
ratios to the paper's code, of wall time and of CPU time.

The paper's code is not run here (it is not part of this repository): its times are the recorded
ones, REFERENCE below, each measured on the project's 2-core machine: 228 s wall on the quiet
machine (issue 16), 387 s wall and 268 CPU s under load average 5.7-6.8 (issue 28). The
busy-loop wall ratio divides by the loaded figure, the other by the quiet one; the CPU ratio
divides by the 268 CPU s (CPU time depends less on the load than wall time).
Goals (issue 28): at least 50x quiet and 35x under two busy loops.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

METHODS = "random,random-stratified-equal,random-stratified-proportional,stratified-confidence,anchor-points,diversity"
REFERENCE = {"as-is": 228.0, "busy": 387.0}  # the paper's code, wall seconds, recorded (not rerun here)
REFERENCE_CPU = 268.0  # the paper's code, CPU seconds, recorded (not rerun here)
MDAD = str(Path(sys.executable).with_name("mdad")) if Path(sys.executable).with_name("mdad").exists() else shutil.which("mdad") or "mdad"


def children() -> tuple[float, float]:
    """CPU seconds and peak resident MB of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def run_once(out: Path, workers: int) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak MB of one whole `mdad run` of the grid."""
    command = [MDAD, "run", "--dataset", "gpqa", "--methods", METHODS, "--runs", "50", "--sources", "300", "--out", str(out)]
    command += ["--workers", str(workers)]
    cpu = children()[0]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"mdad run failed:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    shutil.rmtree(out)
    used, peak = children()
    return wall, used - cpu, peak


def measure(label: str, workers_list: list[int], repeats: int, tmp: Path) -> dict[int, list[tuple[float, float]]]:
    """(wall, CPU) seconds of every run, per --workers value."""
    walls: dict[int, list[tuple[float, float]]] = {w: [] for w in workers_list}
    for repeat in range(repeats):
        for workers in workers_list:  # interleaved, so a change of load hits every setting alike
            load = os.getloadavg()[0]
            wall, cpu, peak = run_once(tmp / f"run-{label}-{workers}-{repeat}", workers)
            walls[workers].append((wall, cpu))
            print(
                f"{label:6s} --workers {workers}  {wall:6.1f} s wall  {cpu:6.1f} s CPU  peak {peak:5.0f} MB (largest so far)  load {load:.1f}",
                flush=True,
            )
    return walls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", default="0,1", help="comma-separated --workers values (0: one per core)")
    parser.add_argument("--busy", type=int, default=2, help="busy loops for the second half (0: skip it)")
    args = parser.parse_args()
    workers_list = [int(w) for w in args.workers.split(",")]
    print(f"{os.cpu_count()} cores; mdad run on the GPQA grid ({METHODS}; sizes 10-200, 50 runs, 300 sources)")
    results: dict[str, dict[int, list[tuple[float, float]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["as-is"] = measure("as-is", workers_list, args.repeats, Path(tmp))
        if args.busy:
            loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
            try:
                time.sleep(2)
                results["busy"] = measure("busy", workers_list, args.repeats, Path(tmp))
            finally:
                for loop in loops:
                    loop.kill()
                    loop.wait()
    print("\nmedians, and the ratios to the paper's code (its recorded times, not rerun here):")
    for label, by_workers in results.items():
        for workers, times in by_workers.items():
            wall, cpu = statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)
            print(
                f"{label:6s} --workers {workers}: {wall:6.1f} s wall ({REFERENCE[label]:.0f} s: {REFERENCE[label] / wall:5.1f}x), "
                f"{cpu:5.1f} s CPU ({REFERENCE_CPU:.0f} s: {REFERENCE_CPU / cpu:5.1f}x)"
            )


if __name__ == "__main__":
    main()
