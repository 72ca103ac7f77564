"""The grid on a Dask cluster of real processes (`dask scheduler`, `dask worker`) beside the local pool.

    python benchmarks/bench_dask.py [--runs 10] [--items 448]
    python benchmarks/bench_dask.py --smoke      # two methods, 2 runs, a cluster of 2 workers

Starts a scheduler and one-thread workers on the loopback interface, exactly as on a cluster
(docs/cluster.md), and times the same grid (simulated 400 models, the paper's seven methods,
sizes 10-200, 300 sources) in this process, in 2 local worker processes, and on the cluster
with 1 and 2 worker processes; prints wall and CPU times (this process and its local workers,
or the Dask workers, summed) with their ratio to the in-process run, and checks that every result is
identical. Every process has imported its libraries before the timing (a first task costs
a fresh Dask worker about a second of imports). On a machine shared with other jobs wall
times are noisy; CPU times say what the executor costs.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread per process, as
    os.environ.setdefault(variable, "1")  # local and Dask workers have: CPU times then compare the work

import pandas as pd  # noqa: E402
import suite  # noqa: E402

from mdad.data import simulate  # noqa: E402
from mdad.experiment.grid import Experiment, ExperimentConfig  # noqa: E402

METHODS = (
    "random",
    "random-stratified-equal",
    "random-stratified-proportional",
    "stratified-confidence",
    "anchor-points",
    "diversity",
    "tinybenchmarks",
)
DASK = str(Path(sys.executable).with_name("dask"))


def start_cluster(folder: Path, workers: int) -> tuple[list[subprocess.Popen], str]:
    from distributed import Client

    scheduler_file = folder / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    log = open(folder / "cluster.log", "a")  # noqa: SIM115  (the cluster's processes write to it after this returns)
    common = dict(stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    procs = [
        subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)], **common
        )
    ]
    while not scheduler_file.exists():
        time.sleep(0.2)
    procs.append(
        subprocess.Popen(
            [
                DASK,
                "worker",
                "--scheduler-file",
                str(scheduler_file),
                "--nworkers",
                str(workers),
                "--nthreads",
                "1",
                "--host",
                "127.0.0.1",
                "--no-dashboard",
            ],
            **common,
        )
    )
    address = json.loads(scheduler_file.read_text())["address"]
    with Client(address, timeout=60) as client:
        client.wait_for_workers(workers, timeout=120)
    return procs, address


def worker_cpu() -> float:
    """CPU time of the process it runs in (a Dask worker, through Client.run)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def stop_cluster(procs: list[subprocess.Popen]) -> None:
    for proc in reversed(procs):
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--items", type=int, default=448)
    args = parser.parse_args()
    methods, sizes, cluster_workers = METHODS, (10, 25, 50, 100, 200), (1, 2)
    if args.smoke:
        methods, sizes, cluster_workers, args.runs, args.items = ("random", "stratified-confidence"), (10, 25), (2,), 2, 100
    with suite.Session("bench_dask", args) as session:
        measure(args, session, methods, sizes, cluster_workers)


def measure(args, session: suite.Session, methods: tuple[str, ...], sizes: tuple[int, ...], cluster_workers: tuple[int, ...]) -> None:
    """Time the grid in every executor, record each against the in-process run, check the results agree."""
    matrix = simulate(seed=0, n_models=400, n_items=args.items, n_subtasks=1)
    config = ExperimentConfig(methods=methods, sizes=sizes, sources=(300,), runs=args.runs, targets=50, seed=0)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (machine shared: wall times are noisy)")
    print(f"simulated 400 x {args.items}, {len(methods)} methods x {len(sizes)} sizes x {args.runs} runs, 300 sources\n")
    timings, results = {}, {}
    warm_up = ExperimentConfig(methods=methods, sizes=(10,), sources=(300,), runs=2, targets=50)
    Experiment(matrix, warm_up).run()  # the libraries' imports, before any timing

    def timed(label, client=None, **run_options):
        workers_cpu = (lambda: sum(client.run(worker_cpu).values())) if client else (lambda: 0.0)
        start, cpu_start, remote_start = time.perf_counter(), suite.cpu_seconds(), workers_cpu()
        results[label] = Experiment(matrix, config).run(**run_options).frames
        wall, cpu = time.perf_counter() - start, suite.cpu_seconds() - cpu_start + workers_cpu() - remote_start
        timings[label] = (wall, cpu)
        base_wall, base_cpu = timings["in this process"]
        session.add(label, wall_s=wall, cpu_s=cpu, wall_ratio=wall / base_wall, cpu_ratio=cpu / base_cpu)
        print(f"{label:34s} {wall:7.1f} s {wall / base_wall:6.2f}x {cpu:9.1f} s {cpu / base_cpu:6.2f}x", flush=True)

    print(f"{'':34s} {'wall':>9s} {'ratio':>7s} {'CPU':>11s} {'ratio':>7s}")
    timed("in this process")
    timed("local pool, 2 workers", workers=2)
    with tempfile.TemporaryDirectory() as folder:
        for workers in cluster_workers:
            procs, address = start_cluster(Path(folder), workers)
            try:
                from distributed import Client

                with Client(address) as client:
                    Experiment(matrix, warm_up).run(scheduler=address, runs_per_task=1)  # imports in every worker
                    timed(f"dask cluster, {workers} worker process{'es' if workers > 1 else ''}", client, scheduler=address)
            finally:
                stop_cluster(procs)
    base = results["in this process"]
    for label, frames in results.items():
        assert frames.keys() == base.keys(), label
        for cell in base:
            pd.testing.assert_frame_equal(frames[cell], base[cell])
    session.add("results", identical=True)
    print("\nevery executor gave identical results")


if __name__ == "__main__":
    main()
