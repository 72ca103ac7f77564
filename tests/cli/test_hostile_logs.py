"""Harness logs that are not plain files: a FIFO would hang the read, a link to a device would never
end, a symlinked model folder must be read like any other, a link loop must not be walked forever, and
a file beyond the stated bound is refused before it is opened. Each is one sentence or the right data."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.cli_checks import one_error, runner
from support.paths import FIXTURES

from mdad.cli import app
from mdad.data import load
from mdad.data.readers import files

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def _copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


@needs_fifo
@pytest.mark.parametrize(
    ("fixture", "name"), [("lm_eval", "model-a/samples_tiny_mc_2026-01-01T00-00-00.jsonl"), ("inspect", "2026-01-01T00-00-00_tiny-qa_x.json")]
)
def test_a_fifo_inside_a_logs_folder_is_refused_not_waited_on(tmp_path, fixture, name):
    logs = _copy(fixture, tmp_path)
    os.mkfifo(logs / name)
    one_error(runner.invoke(app, ["info", str(logs)]), f"{logs / name} is a FIFO (named pipe), not a results file")


def test_a_samples_file_linked_to_dev_zero_is_refused(tmp_path):
    logs = _copy("lm_eval", tmp_path)
    link = logs / "model-a" / "samples_tiny_mc_2026-01-01T00-00-00.jsonl"
    link.symlink_to("/dev/zero")
    one_error(runner.invoke(app, ["info", str(logs)]), f"{link} is a character device")


def test_a_symlinked_model_folder_is_read_like_the_others(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for model in ("model-a", "model-b"):
        shutil.copytree(FIXTURES / "lm_eval" / model, logs / model)
    elsewhere = Path(shutil.copytree(FIXTURES / "lm_eval" / "model-c", tmp_path / "elsewhere" / "model-c"))
    (logs / "model-c").symlink_to(elsewhere, target_is_directory=True)
    assert load(logs).n_models == load(FIXTURES / "lm_eval").n_models == 3


def test_a_link_back_to_its_own_folder_is_walked_once(tmp_path):
    logs = _copy("lm_eval", tmp_path)
    (logs / "model-a" / "loop").symlink_to(logs, target_is_directory=True)
    assert list(load(logs).models) == list(load(FIXTURES / "lm_eval").models)


def test_a_file_beyond_the_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    logs = _copy("lm_eval", tmp_path)
    big = logs / "model-b" / "samples_tiny_mc_2026-12-01T09-04-37.056036.jsonl"
    bound = max(p.stat().st_size for p in logs.rglob("samples_*.jsonl"))
    os.truncate(big, bound + 1)  # a sparse tail: nothing is written, the file only declares its size
    monkeypatch.setattr(files, "MAX_LOG_BYTES", bound)
    one_error(runner.invoke(app, ["info", str(logs)]), f"{big} holds", "a results file may hold; it is not read")
    one_error(runner.invoke(app, ["info", str(big)]), f"{big} holds")


def _micro(tmp_path: Path) -> tuple[Path, Path]:
    from support.cli_checks import small_matrix, wide_csv

    from mdad.micro import select

    data = wide_csv(tmp_path / "d.csv", small_matrix())
    path = tmp_path / "m.json"
    select(small_matrix(), "random", 5, seed=0).save(path)
    return path, data


@needs_fifo
@pytest.mark.parametrize("kind", ["FIFO", "link to /dev/zero"])
def test_a_micro_benchmark_file_that_is_no_file_is_refused_not_read(tmp_path, kind):
    path, data = _micro(tmp_path)
    path.unlink()
    os.mkfifo(path) if kind == "FIFO" else path.symlink_to("/dev/zero")
    said = "a FIFO (named pipe)" if kind == "FIFO" else "a character device"
    one_error(runner.invoke(app, ["estimate", str(path), str(data)]), f"{path} is {said}, not a micro-benchmark file")


def test_a_micro_benchmark_file_beyond_the_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from mdad.micro import file_format

    path, data = _micro(tmp_path)
    monkeypatch.setattr(file_format, "MAX_FILE_BYTES", path.stat().st_size - 1)
    one_error(
        runner.invoke(app, ["estimate", str(path), str(data)]), f"{path} holds {path.stat().st_size:,} bytes", "a micro-benchmark file may hold"
    )


def _npz_with_groups(tmp_path: Path) -> Path:
    import numpy as np

    folder = tmp_path / "x"
    folder.mkdir()
    np.savez(folder / "responses.npz", scores=np.eye(4), models=np.array(["a", "b", "c", "d"]), items=np.array(["q0", "q1", "q2", "q3"]))
    return folder / "groups.json"


@needs_fifo
@pytest.mark.parametrize("kind", ["FIFO", "link to /dev/zero"])
def test_a_groups_file_that_is_no_file_is_refused_not_read(tmp_path, kind):
    groups = _npz_with_groups(tmp_path)
    os.mkfifo(groups) if kind == "FIFO" else groups.symlink_to("/dev/zero")
    said = "a FIFO (named pipe)" if kind == "FIFO" else "a character device"
    one_error(runner.invoke(app, ["info", str(groups.parent / "responses.npz")]), f"{groups} is {said}, not a groups file")


def test_a_groups_file_that_is_not_text_is_one_sentence(tmp_path):
    groups = _npz_with_groups(tmp_path)
    groups.write_bytes(b"\xff\xfe\x00garbage")
    one_error(runner.invoke(app, ["info", str(groups.parent / "responses.npz")]), f"{groups} is not a readable JSON text file of model groups")


@needs_fifo
@pytest.mark.parametrize("kind", ["FIFO", "link to /dev/zero"])
def test_a_table_in_a_folder_that_is_no_file_is_refused_not_skipped(tmp_path, kind):
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "a.csv").write_text("model,q0,q1\nm0,1,0\nm1,0,1\n")
    other = folder / "b.csv"
    os.mkfifo(other) if kind == "FIFO" else other.symlink_to("/dev/zero")
    said = "a FIFO (named pipe)" if kind == "FIFO" else "a character device"
    one_error(runner.invoke(app, ["info", str(folder)]), f"{other} is {said}, not a results file")


def test_a_table_that_cannot_fit_in_memory_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "d.csv"
    path.write_text("model,q0,q1\nm0,1,0\nm1,0,1\n")
    monkeypatch.setattr("mdad.memory.available_bytes", lambda: path.stat().st_size)  # half what reading it needs
    one_error(runner.invoke(app, ["info", str(path)]), f"Reading {path} (", "would need about", "of memory")


def test_a_table_beyond_the_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "d.csv"
    path.write_text("model,q0,q1\nm0,1,0\nm1,0,1\n")
    monkeypatch.setattr(files, "MAX_LOG_BYTES", path.stat().st_size - 1)
    one_error(runner.invoke(app, ["info", str(path)]), f"{path} holds {path.stat().st_size:,} bytes", "a results table may hold; it is not read")
