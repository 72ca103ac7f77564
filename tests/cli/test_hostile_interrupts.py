"""Interrupts from any sender at any moment: Ctrl-C (SIGINT) sent to the main process only, as a job
scheduler or a parent process sends it, and SIGTERM, during the imports, among the cells and during the
report. Each ends with one sentence and exit code 130, no traceback, and a rerun that resumes.

The moment is made certain without the clock: a ``sitecustomize`` in the child holds the import of a
named module (and says so in a file) until the signal comes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.waiting import BOUND, ctrl_c_as_in_a_terminal, wait_until
from typer.testing import CliRunner

from mdad.cli import app, interrupts

PAUSE = '''
import os, sys, time
from pathlib import Path


class PauseAtImport:
    """Hold the import of $MDAD_TEST_PAUSE_AT, after writing the file $MDAD_TEST_PAUSED."""

    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("MDAD_TEST_PAUSE_AT"):
            sys.meta_path.remove(self)
            Path(os.environ["MDAD_TEST_PAUSED"]).write_text(name)
            while True:
                time.sleep(0.01)
        return None


sys.meta_path.insert(0, PauseAtImport())
'''
SMALL_RUN = ["run", "--runs", "2", "--sizes", "10", "--methods", "random", "--sources", "20", "--workers", "1"]
LONG_RUN = ["run", "--runs", "300", "--sizes", "10,50", "--methods", "random", "--sources", "20,40", "--workers", "2"]
CONSOLE_SCRIPT = Path(sys.executable).parent / "mdad"


def start(tmp_path: Path, args: list[str], pause_at: str | None = None, entry: list[str] | None = None):
    """The command in a child process (its own session: only the signals sent here reach it)."""
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(PAUSE)
    env = {
        **os.environ,
        "COLUMNS": "200",
        "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")]),
        "MDAD_TEST_PAUSED": str(tmp_path / "paused"),
    }
    if pause_at:
        env["MDAD_TEST_PAUSE_AT"] = pause_at
    with ctrl_c_as_in_a_terminal():
        return subprocess.Popen(
            [*(entry or [sys.executable, "-m", "mdad.cli"]), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,
        )


def interrupted(proc: subprocess.Popen, signum: int) -> str:
    """Send ``signum`` to the main process alone; its output, once it has ended."""
    try:
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=BOUND)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return output


def one_sentence(output: str, returncode: int, fragment: str) -> None:
    assert returncode == 130, output
    assert fragment in output, output
    for broken in ("Traceback", "KeyboardInterrupt", "Bad file descriptor", "Aborted"):
        assert broken not in output, output


def paused(tmp_path: Path, proc: subprocess.Popen) -> None:
    wait_until(lambda: (tmp_path / "paused").exists(), "the child to reach the held import", proc)


# SIGTERM takes the same path as SIGINT once the handler is in (test_interrupt_during_the_imports checks both
# signals): the runs with it are in the slow run only, to keep the default test run short
SIGNALS = [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("entry", ["python -m mdad.cli", "console script"])
def test_interrupt_during_the_imports(tmp_path, signum, entry):
    proc = start(tmp_path, ["methods"], pause_at="numpy", entry=[str(CONSOLE_SCRIPT)] if entry == "console script" else None)
    paused(tmp_path, proc)
    output = interrupted(proc, signum)
    one_sentence(output, proc.returncode, f"Interrupted by {interrupts.NAMES[signum]}.")


@pytest.mark.parametrize("signum", SIGNALS, ids=["SIGINT", "SIGTERM"])
def test_interrupt_among_the_cells_keeps_them_for_the_rerun(tmp_path, signum):
    out = tmp_path / "o"
    proc = start(tmp_path, [*LONG_RUN, "--out", str(out)])
    wait_until(lambda: list(out.glob("cells/*/partial/*.npy")) or list(out.glob("cells/*/*.parquet")), "a first block of runs", proc)
    output = interrupted(proc, signum)
    one_sentence(output, proc.returncode, "finished cells and blocks of runs are kept")
    rerun = subprocess.run(
        [sys.executable, "-m", "mdad.cli", *LONG_RUN, "--out", str(out)], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}
    )
    assert rerun.returncode == 0, rerun.stderr
    assert "Resuming:" in rerun.stdout


@pytest.mark.parametrize("signum", SIGNALS, ids=["SIGINT", "SIGTERM"])
def test_interrupt_during_the_report_of_a_run(tmp_path, signum):
    out = tmp_path / "o"
    proc = start(tmp_path, [*SMALL_RUN, "--out", str(out)], pause_at="mdad.report.html")
    paused(tmp_path, proc)
    output = interrupted(proc, signum)
    one_sentence(output, proc.returncode, "finished cells and blocks of runs are kept")
    rerun = subprocess.run(
        [sys.executable, "-m", "mdad.cli", *SMALL_RUN, "--out", str(out)], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}
    )
    assert rerun.returncode == 0, rerun.stderr
    assert "Resuming: 1 of 1 cells" in rerun.stdout
    assert (out / "report.html").is_file()


def test_interrupt_during_mdad_report(tmp_path):
    out = tmp_path / "o"
    done = subprocess.run([sys.executable, "-m", "mdad.cli", *SMALL_RUN, "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    proc = start(tmp_path, ["report", str(out), "--workers", "1"], pause_at="mdad.report.html")
    paused(tmp_path, proc)
    output = interrupted(proc, signal.SIGINT)
    one_sentence(output, proc.returncode, "Interrupted by Ctrl-C (SIGINT).")
    again = subprocess.run([sys.executable, "-m", "mdad.cli", "report", str(out), "--workers", "1"], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr


def test_an_interrupt_swallowed_on_the_way_is_no_success(monkeypatch):
    """A library that catches the interrupt and carries on (as logging's handlers can) does not turn it
    into exit code 0."""
    monkeypatch.setattr(interrupts, "received", [signal.SIGTERM])
    result = CliRunner().invoke(app, ["datasets"])
    assert result.exit_code == 130, result.output
    assert "Interrupted by SIGTERM." in result.output
