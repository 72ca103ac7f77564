"""The command line end to end: run, resume after a kill, report, and one-sentence errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from support.waiting import BOUND, ctrl_c_as_in_a_terminal, wait_until
from typer.testing import CliRunner

from mdad.cli import app
from mdad.data import load_dataset
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.store import ResultStore
from mdad.wording import plural

runner = CliRunner()


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--methods", "random,bogus"], "Unknown method 'bogus'"),
        (["run", "--sizes", "10,abc"], "Sizes must be whole numbers of items or percentages"),
        (["run", "--sizes", "100000"], "Size 100000 is larger than the pool"),
        (["run", "--data", "no/such/file.npz"], "No such file or folder: no/such/file.npz"),
        (["run", "--threshold", "1.5"], "agreement threshold must lie strictly between 0 and 1, got 1.5"),
        (["run", "--group", "nope"], "Unknown model group 'nope'"),
        (["report", "no-such-dir"], "holds no mdad results"),
    ],
)
def test_errors_are_one_sentence_without_traceback(args, message, tmp_path):
    result = runner.invoke(app, [*args, *(["--out", str(tmp_path / "o")] if args[0] == "run" else [])])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_real_data_with_missing_cells_needs_a_policy(shared_data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MDAD_DATA_DIR", str(shared_data_dir))
    args = ["run", "--dataset", "mmlu-pro-tiger", "--methods", "random", "--sizes", "10", "--runs", "3", "--out", str(tmp_path / "o")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "drop-items" in result.output
    result = runner.invoke(app, [*args, "--missing", "drop-models"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--workers", "-1", "--out", "{tmp}/o"], "Invalid value for '--workers'"),
        (
            ["run", "--missing", "maybe", "--out", "{tmp}/o"],
            "Invalid value for '--missing': 'maybe' is not one of 'error', 'drop-items', 'drop-models'",
        ),
        (
            ["run", "--methods", "random", "--runs", "2", "--out", "{tmp}/file.txt"],
            "Cannot write the output folder {tmp}/file.txt: it is a file, not a folder",
        ),
        (
            ["select", "--method", "random", "--size", "5", "--out", "{tmp}/no/such/m.json"],
            "Cannot write the micro-benchmark file {tmp}/no/such/m.json: its folder {tmp}/no/such does not exist",
        ),
        (["select", "--method", "random", "--size", "5", "--out", "{tmp}"], "Cannot write the micro-benchmark file {tmp}: it is a folder"),
        (["info", "{tmp}/file.npz"], "is not an npz file (a numpy .npz file is a zip archive of arrays)"),
        (["compare", "--size", "10", "--csv", "{tmp}/no/x.csv"], "Cannot write the CSV file {tmp}/no/x.csv: its folder {tmp}/no does not exist"),
    ],
)
def test_bad_outputs_and_options_fail_before_any_work(args, message, tmp_path):
    (tmp_path / "file.txt").write_text("not a folder")
    (tmp_path / "file.npz").write_text("not an archive")
    result = runner.invoke(app, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2, result.output
    assert message.format(tmp=tmp_path) in " ".join(result.output.split())
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()


def _children(pid: int) -> list[int]:
    """Child processes of ``pid`` (Linux /proc; empty elsewhere)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def _running(pid: int) -> bool:
    """Whether ``pid`` is alive and not a zombie (a dead process its new parent has not reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_ctrl_c_stops_the_run_and_its_workers_with_one_message(tmp_path):
    """Ctrl-C reaches the whole process group: one sentence, exit code 130, no worker tracebacks,
    no worker left running, and what finished is kept. Ctrl-C goes once the first block of runs is
    written; the run's 600 runs last far longer, so it lands among the cells however busy the machine."""
    out = tmp_path / "o"
    args = [
        sys.executable,
        "-m",
        "mdad.cli",
        "run",
        "--runs",
        "600",
        "--sizes",
        "10,50",
        "--workers",
        "2",
        "--methods",
        "random,anchor-points",
        "--sources",
        "20,40,80",
        "--out",
        str(out),
    ]
    with ctrl_c_as_in_a_terminal():
        proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, env={**os.environ, "COLUMNS": "200"}
        )
    try:
        wait_until(lambda: list(out.glob("cells/*/partial/*.npy")), "a first block of runs", proc)
        workers = _children(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=BOUND)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, output
    assert "Interrupted; finished cells and blocks of runs are kept" in output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output
    assert workers, "the run had no worker processes"
    wait_until(lambda: not any(_running(pid) for pid in workers), "the run's worker processes to stop")
    assert list(out.glob("cells/*/partial/*.npy")) or list(out.glob("cells/*/*.parquet"))


def test_killed_run_resumes_without_losing_or_recomputing(tmp_path):
    """SIGKILL once two cells are stored; the rerun keeps them and gives the numbers of a clean run
    (computed here, without a second report)."""
    out = tmp_path / "o"
    methods = ("random", "random-stratified-equal", "random-stratified-proportional")
    args = [
        sys.executable,
        "-m",
        "mdad.cli",
        "run",
        "--runs",
        "120",
        "--sizes",
        "10,50",
        "--methods",
        ",".join(methods),
        "--sources",
        "20,40,80",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        cells = out / "cells"
        wait_until(lambda: len(list(cells.glob("*/*.parquet"))) >= 2, "two finished cells", proc)
        workers = _children(proc.pid)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # the workers ask to be stopped when their parent dies: they go, however long a busy machine takes
    wait_until(lambda: not any(_running(pid) for pid in workers), "the killed run's worker processes to stop")
    finished = {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in cells.glob("*/*.parquet")}
    assert 2 <= len(finished) < 18, "the run should have been killed mid-way"
    # blocks of unfinished cells (a kill right after a cell was written can leave its blocks too)
    kept_blocks = sum(1 for b in cells.glob("*/partial/*.npy") if not (b.parent.parent / (b.name.split("-r")[0] + ".parquet")).exists())
    result = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert f"Resuming: {len(finished)} of 18 cells" in result.stdout
    assert (f"and {plural(kept_blocks, 'finished block')} of runs" in result.stdout) == (kept_blocks > 0)
    after = list(cells.glob("*/*.parquet"))
    assert len(after) == 18 and not list(cells.glob("*/partial/*"))
    assert all((p.stat().st_mtime_ns, p.stat().st_ino) == stamp for p, stamp in finished.items())
    gpqa = load_dataset("gpqa")  # the default data
    config = ExperimentConfig.for_matrix(gpqa, methods=methods, runs=120, sizes=(10, 50), sources=(20, 40, 80))
    clean = Experiment(gpqa, config).run().frames
    store = ResultStore(out)
    assert store.cells() == sorted(clean)
    for cell, frame in clean.items():
        pd.testing.assert_frame_equal(store.read(cell), frame)


def test_run_shows_its_phases_after_the_cells_and_no_empty_bar_when_resumed(tmp_path):
    from mdad.report.html import PHASES

    args = ["run", "--dataset", "simulated", "--methods", "random", "--sizes", "10", "--runs", "2", "--out", str(tmp_path / "o")]
    first = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert first.exit_code == 0, first.output
    assert "1/1" in first.output and all(phase in first.output for phase in PHASES)
    assert first.output.index("1/1") < first.output.index(PHASES[0]) < first.output.index(PHASES[1])
    again = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert again.exit_code == 0, again.output
    assert "Resuming: 1 of 1 cells" in again.output and "0/0" not in again.output and "-:--:--" not in again.output
    assert all(phase in again.output for phase in PHASES)
