"""A Dask cluster started the ordinary way (`dask scheduler` and `dask worker` processes), for the tests that need
one; without Dask (an optional extra) importing it skips."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support.waiting import BOUND, DASK_TIMEOUTS, wait_until

distributed = pytest.importorskip("distributed", reason="Dask is an optional extra: pip install 'mdad[dask]'")
DASK = str(Path(sys.executable).with_name("dask"))
# the cluster's processes read the raised Dask timeouts from their environment
TIMEOUT_VARIABLES = {"DASK_" + key.upper().replace(".", "__"): value for key, value in DASK_TIMEOUTS.items()}


def scheduler_address(scheduler_file: Path) -> str | None:
    """The address in the scheduler's file, once the scheduler has written it whole."""
    try:
        return json.loads(scheduler_file.read_text())["address"]
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return None


def start_cluster(folder: Path, workers: int, procs: list[subprocess.Popen]) -> str:
    """A scheduler and ``workers`` one-thread worker processes (under a nanny) on the loopback interface;
    its address. The processes go into ``procs`` as they start, for stopping them whatever happens."""
    scheduler_file = folder / "scheduler.json"
    log = open(folder / "cluster.log", "w")  # noqa: SIM115  (the cluster's processes write to it after this returns)
    common = dict(stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, **TIMEOUT_VARIABLES})
    procs.append(
        subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)], **common
        )
    )
    address = wait_until(lambda: scheduler_address(scheduler_file), "the scheduler's address file", procs[0])
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
    with distributed.Client(address, timeout=BOUND) as client:
        client.wait_for_workers(workers, timeout=BOUND)
    return address


def stop_cluster(procs: list[subprocess.Popen]) -> None:
    for proc in reversed(procs):
        os.killpg(proc.pid, signal.SIGTERM)  # each process group was started here, by this module
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
