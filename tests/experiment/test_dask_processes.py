"""The grid on a Dask cluster started the ordinary way: `dask scheduler` and `dask worker` processes.

A worker killed while it runs a task loses nothing: the scheduler gives its tasks to a
live worker (the nanny starts a fresh one) and the results equal a run in this process.
"""

from __future__ import annotations

import os
import signal
import subprocess

import pandas as pd
import pytest
from support.waiting import BOUND, DASK_TIMEOUTS, wait_until

from mdad.errors import MdadError
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.store import ResultStore

dask = pytest.importorskip("dask", reason="Dask is an optional extra: pip install 'mdad[dask]'")
distributed = pytest.importorskip("distributed", reason="Dask is an optional extra: pip install 'mdad[dask]'")
from support.dask_cluster import start_cluster, stop_cluster  # noqa: E402  (needs distributed)

WORKERS = 2


@pytest.fixture(scope="module")
def cluster_address(tmp_path_factory):
    """One cluster for this module's tests: each of its processes takes seconds of CPU to start."""
    procs: list[subprocess.Popen] = []
    try:
        with dask.config.set(DASK_TIMEOUTS):
            yield start_cluster(tmp_path_factory.mktemp("cluster"), WORKERS, procs)
    finally:
        stop_cluster(procs)


@pytest.fixture
def cluster(cluster_address):
    """The cluster with all its workers up: the nannies replace those an earlier test killed."""
    with distributed.Client(cluster_address, timeout=BOUND) as client:
        client.wait_for_workers(WORKERS, timeout=BOUND)
    return cluster_address


def kill_a_busy_worker(address: str) -> int:
    """SIGKILL a worker process that is running a task now; its pid."""
    with distributed.Client(address, timeout=BOUND) as client:
        busy = wait_until(lambda: [worker for worker, keys in client.processing().items() if keys], "a worker running a task")
        pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
        os.kill(pid, signal.SIGKILL)
        return pid


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
            with distributed.Client(cluster, timeout=BOUND) as client:
                killed.extend(client.run(os.getpid).values())
            for pid in killed:
                os.kill(pid, signal.SIGKILL)

    store = ResultStore(tmp_path / "out")
    with pytest.raises(MdadError, match="lost a task .*running the same experiment again continues"):
        Experiment(small_sim, config, store=store).run(scheduler=cluster, on_cells=on_cells, runs_per_task=1)
    assert len(killed) == WORKERS
    kept = store.n_blocks() + len(store.cells())
    assert kept >= 1
    with distributed.Client(cluster, timeout=BOUND) as client:
        client.wait_for_workers(WORKERS, timeout=BOUND)  # the nannies' fresh workers
    Experiment(small_sim, config, store=store).run(scheduler=cluster, runs_per_task=1)
    here = Experiment(small_sim, config).run().frames
    assert sorted(here) == store.cells()
    for cell in here:
        pd.testing.assert_frame_equal(here[cell], store.read(cell))
