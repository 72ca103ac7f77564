"""Harness logs that are not plain files: a FIFO would hang the read, a link to a device would never
end, a symlinked model folder must be read like any other, a link loop must not be walked forever, and
a file beyond the stated bound is refused before it is opened. Each is one sentence or the right data."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from test_hostile_inputs import one_error, runner

from mdad.cli import app
from mdad.data import load
from mdad.data.readers import files

FIXTURES = Path(__file__).parent / "fixtures"
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
