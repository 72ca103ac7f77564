"""Outputs that would destroy inputs are refused before any work, with one sentence: no output may be
a file or folder the command reads (through symlinks, ``..`` or hard links), lie inside a folder it
reads, hold an input, or be another output of the same command; the standard output stream is allowed."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli_checks import one_error, runner, small_matrix, wide_csv
from support.paths import FIXTURES, ROOT

from mdad.cli import app
from mdad.data.npz import write_npz
from mdad.errors import MdadError
from mdad.outputs import check_outputs_apart


def _npz(tmp_path: Path) -> Path:
    folder = tmp_path / "x"
    folder.mkdir()
    path = folder / "responses.npz"
    write_npz(small_matrix(), path)
    return path


def test_convert_onto_its_own_source_keeps_the_source(tmp_path):
    source = _npz(tmp_path)
    before = source.read_bytes()
    one_error(runner.invoke(app, ["convert", str(source), "--out", str(source)]), "would destroy the input")
    assert source.read_bytes() == before


@pytest.mark.parametrize("spelling", ["dots", "symlink", "hard link"])
def test_the_same_file_under_another_name_is_refused(tmp_path, spelling):
    source = _npz(tmp_path)
    if spelling == "dots":
        out = source.parent / ".." / "x" / source.name
    else:
        out = tmp_path / "other.npz"
        (out.symlink_to if spelling == "symlink" else out.hardlink_to)(source)
    before = source.read_bytes()
    one_error(runner.invoke(app, ["convert", str(source), "--out", str(out)]), "would destroy the input")
    assert source.read_bytes() == before


def test_convert_into_the_folder_it_reads_is_refused(tmp_path):
    source = tmp_path / "logs"
    source.symlink_to((FIXTURES / "lm_eval").resolve(), target_is_directory=True)
    one_error(runner.invoke(app, ["convert", str(source), "--out", str(source / "model-a" / "out.npz")]), "lies inside the results")


def test_run_into_a_folder_that_holds_the_data_is_refused(tmp_path):
    data = wide_csv(tmp_path / "scores.csv", small_matrix())
    before = data.read_bytes()
    one_error(
        runner.invoke(
            app, ["run", "--data", str(data), "--out", str(tmp_path), "--methods", "random", "--sizes", "5", "--runs", "1", "--workers", "1"]
        ),
        "holds the data",
    )
    assert data.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.csv"]


def test_run_into_the_data_file_is_refused(tmp_path):
    data = wide_csv(tmp_path / "scores.csv", small_matrix())
    one_error(runner.invoke(app, ["run", "--data", str(data), "--out", str(data)]), "would destroy the input")


def test_report_refuses_a_run_whose_data_lies_in_the_results_folder(tmp_path):
    out = tmp_path / "out"
    data = tmp_path / "scores.csv"
    wide_csv(data, small_matrix())
    result = runner.invoke(
        app,
        [
            "run",
            "--data",
            str(data),
            "--out",
            str(out),
            "--methods",
            "random",
            "--sizes",
            "5",
            "--sources",
            "6",
            "--targets",
            "4",
            "--runs",
            "1",
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    inside = out / "table.csv"
    os.replace(data, inside)  # the run's recorded data now lies where the report writes its table
    before = inside.read_bytes()
    config = (out / "config.json").read_text().replace(str(data.resolve()), str(inside.resolve()))
    (out / "config.json").write_text(config)
    one_error(runner.invoke(app, ["report", str(out), "--workers", "1"]), "holds the data of the run")
    assert inside.read_bytes() == before


def test_compare_csv_onto_its_data_is_refused_and_stdout_is_allowed(tmp_path):
    data = wide_csv(tmp_path / "scores.csv", small_matrix())
    before = data.read_bytes()
    one_error(runner.invoke(app, ["compare", "--data", str(data), "--size", "10", "--csv", str(data)]), "would destroy the input")
    assert data.read_bytes() == before
    result = runner.invoke(app, ["compare", "--data", str(data), "--size", "10", "--csv", "/dev/stdout"])
    assert result.exit_code == 0, result.output


def test_two_outputs_on_one_path_are_refused_in_the_library(tmp_path):
    with pytest.raises(MdadError, match="are the same path"):
        check_outputs_apart({}, {"the CSV file": tmp_path / "a.csv", "the pairs CSV file": tmp_path / "." / "a.csv"})
    with pytest.raises(MdadError, match="would destroy the input"):
        check_outputs_apart({"the micro-benchmark": tmp_path / "micro.json"}, {"the CSV file": tmp_path / "micro.json"})
    check_outputs_apart({"the micro-benchmark": tmp_path / "micro.json"}, {"the CSV file": "/dev/stdout", "the pairs CSV file": "/dev/stdout"})


# ---- outputs are written whole or not at all, one command at a time ------------------------------


def _full_disk_after_half(monkeypatch, target_name: str) -> None:
    """``Path.write_text`` onto ``target_name`` (or any temporary file for it) writes half its text, then the disk is full."""
    real = Path.write_text

    def write_text(self, data, *args, **kwargs):
        if target_name in self.name:
            real(self, data[: len(data) // 2], *args, **kwargs)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_text)


def test_select_on_a_full_disk_keeps_the_old_file_and_leaves_no_partial_one(tmp_path, monkeypatch):
    data = _npz(tmp_path)
    out = tmp_path / "m.json"
    out.write_text("the micro-benchmark of an earlier select\n")
    _full_disk_after_half(monkeypatch, "m.json")
    result = runner.invoke(app, ["select", "--data", str(data), "--method", "random", "--size", "5", "--out", str(out), "--assess-runs", "0"])
    one_error(result, f"Could not write the micro-benchmark file {out}", "No space left on device")
    assert out.read_text() == "the micro-benchmark of an earlier select\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "x"]  # no temporary file, no lock file


def test_a_full_disk_on_the_samples_file_leaves_neither_output(tmp_path, monkeypatch):
    out = tmp_path / "m.json"
    _full_disk_after_half(monkeypatch, "m.samples.json")
    data = str(FIXTURES / "lm_eval_loop" / "sources")
    result = runner.invoke(app, ["select", "--data", data, "--method", "random", "--size", "5", "--out", str(out), "--assess-runs", "0"])
    one_error(result, f"Could not write the lm-eval samples file {tmp_path / 'm.samples.json'}", "No space left on device")
    assert list(tmp_path.iterdir()) == []  # the micro-benchmark without its samples file would be half an answer


@pytest.mark.parametrize("writer", ["csv", "npz"])
def test_csv_and_npz_writers_keep_the_old_file_on_a_full_disk(tmp_path, monkeypatch, writer):
    import numpy as np
    import pandas as pd

    from mdad.outputs import write_csv

    path = tmp_path / f"out.{writer}"
    path.write_bytes(b"old")

    def half_then_full(target, *args, **kwargs):
        if hasattr(target, "write"):  # numpy writes to an open file
            target.write(b"half a fil")
        else:
            Path(target).write_bytes(b"half a fil")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(MdadError, match=f"Could not write the .* {path}: No space left on device"):
        if writer == "csv":
            monkeypatch.setattr(pd.DataFrame, "to_csv", lambda self, target, **kw: half_then_full(target))
            write_csv(pd.DataFrame({"a": [1]}), path)
        else:
            monkeypatch.setattr(np, "savez_compressed", half_then_full)
            write_npz(small_matrix(), path)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_an_output_keeps_its_permissions_and_a_symlinked_output_is_written_through(tmp_path):
    from mdad.outputs import write_text

    fresh = tmp_path / "fresh.txt"
    write_text(fresh, "x")
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what a plain write gives: 0666 less the umask, not a temporary file's 0600
    assert stat.S_IMODE(fresh.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    plain.chmod(0o640)
    write_text(plain, "y")
    assert stat.S_IMODE(plain.stat().st_mode) == 0o640 and plain.read_text() == "y"
    link = tmp_path / "link.txt"
    link.symlink_to(plain)
    write_text(link, "z")
    assert link.is_symlink() and plain.read_text() == "z"


HOLD = """
import sys
from mdad.outputs import locked_outputs
with locked_outputs({"the micro-benchmark file": sys.argv[1]}):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_second_command_writing_the_same_output_is_refused_while_the_first_runs(tmp_path):
    data = _npz(tmp_path)
    out = tmp_path / "m.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        args = ["select", "--data", str(data), "--method", "random", "--size", "5", "--out", str(out), "--assess-runs", "0"]
        result = runner.invoke(app, args)
        one_error(result, f"Another mdad command (process {holder.pid}) is writing the micro-benchmark file {out}")
        assert not out.exists()
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    result = runner.invoke(app, args)  # the first one done: the lock is gone with it
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "x"]
