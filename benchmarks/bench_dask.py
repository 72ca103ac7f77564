"""The grid on a Dask cluster of real processes (`dask scheduler`, `dask worker`) beside the local pool.

    python benchmarks/bench_dask.py [--runs 10] [--items 448]

Starts a scheduler and one-thread workers on the loopback interface, exactly as on a cluster
(docs/cluster.md), and times the same grid (simulated 400 models, the paper's seven methods,
sizes 10-200, 300 sources) in this process, in 2 local worker processes, and on the cluster
with 1 and 2 worker processes; prints wall times and their ratio to the in-process run and
checks that every result is identical. Wall times: on a machine shared with other jobs they
are noisy, so compare the ratios of one call.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from mdad.data import simulate
from mdad.experiment.grid import Experiment, ExperimentConfig

METHODS = ("random", "random-stratified-equal", "random-stratified-proportional", "stratified-confidence",
           "anchor-points", "diversity", "tinybenchmarks")
DASK = str(Path(sys.executable).with_name("dask"))


def start_cluster(folder: Path, workers: int) -> tuple[list[subprocess.Popen], str]:
    from distributed import Client

    scheduler_file = folder / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    log = open(folder / "cluster.log", "a")
    common = dict(stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(scheduler_file)], **common)]
    while not scheduler_file.exists():
        time.sleep(0.2)
    procs.append(subprocess.Popen([DASK, "worker", "--scheduler-file", str(scheduler_file), "--nworkers", str(workers),
                                   "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"], **common))
    address = json.loads(scheduler_file.read_text())["address"]
    with Client(address, timeout=60) as client:
        client.wait_for_workers(workers, timeout=120)
    return procs, address


def stop_cluster(procs: list[subprocess.Popen]) -> None:
    for proc in reversed(procs):
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--items", type=int, default=448)
    args = parser.parse_args()
    matrix = simulate(seed=0, n_models=400, n_items=args.items, n_subtasks=1)
    config = ExperimentConfig(methods=METHODS, sizes=(10, 25, 50, 100, 200), sources=(300,), runs=args.runs, targets=50, seed=0)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (machine shared: wall times are noisy)")
    print(f"simulated 400 x {args.items}, {len(METHODS)} methods x 5 sizes x {args.runs} runs, 300 sources\n")
    timings, results = {}, {}

    def timed(label, **run_options):
        start = time.perf_counter()
        results[label] = Experiment(matrix, config).run(**run_options).frames
        timings[label] = time.perf_counter() - start
        base = timings["in this process"]
        print(f"{label:34s} {timings[label]:7.1f} s   {base / timings[label]:5.2f}x", flush=True)

    timed("in this process")
    timed("local pool, 2 workers", workers=2)
    with tempfile.TemporaryDirectory() as folder:
        for workers in (1, 2):
            procs, address = start_cluster(Path(folder), workers)
            try:
                timed(f"dask cluster, {workers} worker process{'es' if workers > 1 else ''}", scheduler=address)
            finally:
                stop_cluster(procs)
    base = results["in this process"]
    for label, frames in results.items():
        assert frames.keys() == base.keys(), label
        for cell in base:
            pd.testing.assert_frame_equal(frames[cell], base[cell])
    print("\nevery executor gave identical results")


if __name__ == "__main__":
    main()
