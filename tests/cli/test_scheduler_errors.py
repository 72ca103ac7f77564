"""`mdad run --scheduler`: an address Dask cannot use, and a scheduler lost mid-run, each end in one sentence.

The lost scheduler is a real `dask scheduler` process killed while the run's tasks are on its worker:
the run says that the scheduler is gone and that finished cells are kept, prints Dask's own
complaints as one-line notes, and leaves the finished blocks of runs in the folder.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest
from support.cli_checks import one_error, runner
from support.paths import ROOT
from support.waiting import BOUND, wait_until

from mdad.cli import app
from mdad.data import simulate, write_npz

dask = pytest.importorskip("dask", reason="Dask is an optional extra: pip install 'mdad[dask]'")
pytest.importorskip("distributed", reason="Dask is an optional extra: pip install 'mdad[dask]'")
from support.dask_cluster import TIMEOUT_VARIABLES, start_cluster, stop_cluster  # noqa: E402  (needs distributed)


@pytest.mark.parametrize("address", ["nonsense", "http://127.0.0.1:1", "tcp://127.0.0.1", "127.0.0.1:99999"])
def test_an_address_dask_cannot_use_is_refused_before_any_work(address, tmp_path):
    out = tmp_path / "o"
    one_error(
        runner.invoke(app, ["run", "--methods", "random", "--scheduler", address, "--out", str(out)]), f"--scheduler {address!r}", "tcp://host:8786"
    )
    assert not out.exists()


def free_port() -> int:
    """A loopback port that was free a moment ago (bound, then closed): connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_scheduler_that_does_not_answer_is_one_sentence(tmp_path):
    address = f"tcp://127.0.0.1:{free_port()}"
    args = ["run", "--methods", "random", "--sizes", "10", "--runs", "2", "--scheduler", address, "--out", str(tmp_path / "o")]
    with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):  # refused: Dask retries until this timeout
        one_error(runner.invoke(app, args), f"Cannot reach the Dask scheduler at {address}")


def test_a_scheduler_lost_mid_run_is_one_sentence_and_finished_work_is_kept(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    write_npz(simulate(seed=3, n_models=120, n_items=400, n_subtasks=4), data / "responses.npz")
    out = tmp_path / "out"
    procs: list[subprocess.Popen] = []
    env = {
        **os.environ,
        **TIMEOUT_VARIABLES,
        "PYTHONPATH": str(ROOT / "src"),
        "COLUMNS": "80",
        # once the scheduler is gone, the client stops trying to reconnect after this long
        "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "10s",
    }
    try:
        address = start_cluster(tmp_path, 1, procs)
        command = [sys.executable, "-m", "mdad.cli", "run", "--data", str(data / "responses.npz"), "--methods", "random,anchor-points,diversity"]
        command += ["--sizes", "10,40", "--sources", "60", "--targets", "15", "--runs", "40", "--scheduler", address, "--out", str(out)]
        with open(tmp_path / "stderr", "w") as stderr:
            run = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr, cwd=tmp_path)
            wait_until(lambda: any(out.glob("cells/**/*.*")), "a finished block of runs", run)
            os.killpg(procs[0].pid, signal.SIGKILL)  # the scheduler, in a process group of its own
            assert run.wait(BOUND) == 2
    finally:
        stop_cluster(procs)
    text = (tmp_path / "stderr").read_text()
    lines = [line for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, text
    flat = " ".join(text.split())
    assert f"The Dask scheduler at {address} is gone" in flat and "finished before it went are kept" in flat, text
    assert "Traceback" not in text and "Stream is closed" not in text and "distributed." not in text, text
    # every other line is an mdad note (one line each) or the continuation of the wrapped error sentence
    notes = [line for line in lines[: lines.index(errors[0])]]
    assert all(line.startswith("Dask: ") for line in notes), text
    assert len(notes) == len(set(notes))
    assert any(out.glob("cells/**/*.*"))  # the finished work is still there for the rerun


def test_dask_log_records_and_warnings_become_one_line_mdad_notes_given_once(caplog):
    import logging
    import warnings

    from mdad.experiment.executors import dask_notes

    before = {name: (logger.handlers[:], logger.propagate) for name, logger in dask_loggers()}
    with caplog.at_level(logging.WARNING, logger="mdad"), dask_notes():
        for _ in range(2):
            logging.getLogger("distributed.client").error("Failed to reconnect to scheduler after 30.00 seconds, closing client\nTraceback ...")
        logging.getLogger("distributed.worker").info("Start worker")  # below a warning: not a note
        warnings.warn_explicit("Mismatched versions found\n+---------+", UserWarning, os.path.join("x", "distributed", "client.py"), 1)
    assert [r.getMessage() for r in caplog.records if r.name == "mdad"] == [
        "Dask: Failed to reconnect to scheduler after 30.00 seconds, closing client.",
        "Dask: Mismatched versions found.",
    ]
    after = {name: (logger.handlers, logger.propagate) for name, logger in dask_loggers()}
    assert after == before  # Dask's own logging is back after the block


def dask_loggers():
    import logging

    loggers = logging.root.manager.loggerDict.items()
    return [(name, logger) for name, logger in loggers if name.split(".")[0] == "distributed" and isinstance(logger, logging.Logger)]
