"""The grid on a Dask cluster started the ordinary way: `dask scheduler` and `dask worker` processes.

A worker killed while it runs a task loses nothing: the scheduler gives its tasks to a
live worker (the nanny starts a fresh one) and the results equal a run in this process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from mdad.errors import MdadError
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.store import ResultStore

distributed = pytest.importorskip("distributed", reason="Dask is an optional extra: pip install 'mdad[dask]'")
DASK = str(Path(sys.executable).with_name("dask"))


def start_cluster(folder: Path, workers: int) -> tuple[list[subprocess.Popen], str]:
    """A scheduler and ``workers`` one-thread worker processes (under a nanny) on the loopback interface."""
    scheduler_file = folder / "scheduler.json"
    log = open(folder / "cluster.log", "w")
    common = dict(stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(scheduler_file)], **common)]
    deadline = time.monotonic() + 60
    while not scheduler_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    procs.append(subprocess.Popen([DASK, "worker", "--scheduler-file", str(scheduler_file), "--nworkers", str(workers),
                                   "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"], **common))
    address = json.loads(scheduler_file.read_text())["address"]
    with distributed.Client(address, timeout=60) as client:
        client.wait_for_workers(workers, timeout=120)
    return procs, address


def stop_cluster(procs: list[subprocess.Popen]) -> None:
    for proc in reversed(procs):
        os.killpg(proc.pid, signal.SIGTERM)  # each process group was started here, by this test
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def cluster(tmp_path):
    procs, address = start_cluster(tmp_path, workers=2)
    try:
        yield address
    finally:
        stop_cluster(procs)


def kill_a_busy_worker(address: str) -> int:
    """SIGKILL a worker process that is running a task now; its pid."""
    with distributed.Client(address, timeout=30) as client:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            busy = [worker for worker, keys in client.processing().items() if keys]
            if busy:
                pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                return pid
            time.sleep(0.05)
    raise AssertionError("no worker was running a task")


def test_a_worker_killed_mid_run_loses_nothing(small_sim, cluster, tmp_path):
    config = ExperimentConfig(methods=("random", "anchor-points", "diversity"), sizes=(10, 40), sources=(20, 60), runs=6, targets=15, seed=4)
    here = Experiment(small_sim, config).run().frames
    killed = []

    def on_cells(_):
        if not killed:  # the first finished task: others are running on both workers
            killed.append(kill_a_busy_worker(cluster))

    store = ResultStore(tmp_path / "out")
    remote = Experiment(small_sim, config, store=store).run(scheduler=cluster, on_cells=on_cells, runs_per_task=1).frames
    assert killed
    assert here.keys() == remote.keys()
    for cell in here:
        pd.testing.assert_frame_equal(here[cell], remote[cell])
        pd.testing.assert_frame_equal(here[cell], store.read(cell))


def test_losing_every_worker_at_once_is_one_sentence_and_the_rerun_resumes(small_sim, cluster, tmp_path):
    config = ExperimentConfig(methods=("random", "anchor-points"), sizes=(10, 40), sources=(20, 60), runs=6, targets=15, seed=4)
    killed = []

    def on_cells(_):
        if not killed:  # the data sent to the workers go with them: the run cannot go on
            with distributed.Client(cluster, timeout=30) as client:
                killed.extend(client.run(os.getpid).values())
            for pid in killed:
                os.kill(pid, signal.SIGKILL)

    store = ResultStore(tmp_path / "out")
    with pytest.raises(MdadError, match="lost a task .*running the same experiment again continues"):
        Experiment(small_sim, config, store=store).run(scheduler=cluster, on_cells=on_cells, runs_per_task=1)
    assert len(killed) == 2
    kept = store.n_blocks() + len(store.cells())
    assert kept >= 1
    with distributed.Client(cluster, timeout=60) as client:
        client.wait_for_workers(2, timeout=120)  # the nannies' fresh workers
    Experiment(small_sim, config, store=store).run(scheduler=cluster, runs_per_task=1)
    here = Experiment(small_sim, config).run().frames
    assert sorted(here) == store.cells()
    for cell in here:
        pd.testing.assert_frame_equal(here[cell], store.read(cell))
