"""Outputs that would destroy inputs are refused before any work, with one sentence: no output may be
a file or folder the command reads (through symlinks, ``..`` or hard links), lie inside a folder it
reads, hold an input, or be another output of the same command; the standard output stream is allowed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_hostile_inputs import one_error, runner, small_matrix, wide_csv

from mdad.cli import app
from mdad.data.npz import write_npz
from mdad.errors import MdadError
from mdad.outputs import check_outputs_apart

FIXTURES = Path(__file__).parent / "fixtures"


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
