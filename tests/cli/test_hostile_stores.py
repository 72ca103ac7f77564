"""Stored results that read well but cannot be right: a cell holding some of its runs, every row twice
or estimates of 700%, a block of runs with the wrong number of targets, a stray cell file. Report names
the file and how to recover; a resume moves it to OUT/damaged/ and computes it again, as for unreadable
files."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from support.cli_checks import one_error, runner, small_experiment, small_store

from mdad.cli import app
from mdad.errors import MdadError
from mdad.experiment.store import BLOCK_DTYPE

CELL_EDITS = {
    "2 of its 3 runs": (lambda f: f[f["run"] < 2], "it holds 2 runs of the 3 of each cell"),
    "every row twice": (lambda f: pd.concat([f, f]), "appears more than once"),
    "an estimate of 700%": (lambda f: f.assign(estimate=np.where(np.arange(len(f)) == 0, 7.0, f["estimate"])), "an estimate of 700%"),
    "accuracy above 1": (lambda f: f.assign(full=f["full"] + 1), "accuracies outside 0 to 1"),
}


def _edit(cell: Path, edit) -> None:
    edit(pd.read_parquet(cell)).to_parquet(cell, index=False)


@pytest.mark.parametrize("case", list(CELL_EDITS))
def test_report_refuses_a_cell_that_cannot_be_right(tmp_path, case):
    out = tmp_path / "o"
    small_store(out)
    cell = out / "cells" / "random" / "k10-s6.parquet"
    edit, problem = CELL_EDITS[case]
    _edit(cell, edit)
    one_error(runner.invoke(app, ["report", str(out)]), f"{cell} is damaged (", problem)


@pytest.mark.parametrize("case", list(CELL_EDITS))
def test_resume_sets_aside_a_cell_that_cannot_be_right_and_recomputes_it(tmp_path, case):
    out = tmp_path / "o"
    frames = small_store(out)
    cell = out / "cells" / "random" / "k10-s6.parquet"
    original = cell.read_bytes()
    _edit(cell, CELL_EDITS[case][0])
    experiment = small_experiment(out)
    redone = experiment.run(workers=1).frames
    assert cell.read_bytes() == original
    for key, frame in frames.items():
        pd.testing.assert_frame_equal(redone[key], frame)
    assert len(experiment.recovered) == 1 and CELL_EDITS[case][1] in experiment.recovered[0]


def test_a_block_of_runs_with_the_wrong_number_of_targets_is_set_aside(tmp_path):
    out = tmp_path / "o"
    expected = small_experiment(out, sizes=(5,), runs=10).run(workers=1, runs_per_task=5).frames
    (out / "cells" / "random" / "k5-s6.parquet").unlink()
    block = out / "cells" / "random" / "partial" / "k5-s6-r0-5.npy"
    block.parent.mkdir(parents=True)
    np.save(block, np.zeros((5, 3), dtype=BLOCK_DTYPE))  # 4 targets per run
    again = small_experiment(out, sizes=(5,), runs=10)
    frames = again.run(workers=1, runs_per_task=5).frames
    pd.testing.assert_frame_equal(next(iter(frames.values())), next(iter(expected.values())))
    assert any("k5-s6-r0-5.npy was damaged (it holds estimates of 3 targets per run, not 4)" in note for note in again.recovered)


def test_a_stray_cell_file_is_named_by_report(tmp_path):
    out = tmp_path / "o"
    small_store(out)
    stray = out / "cells" / "random" / "k999-s20.parquet"
    stray.write_bytes((out / "cells" / "random" / "k10-s6.parquet").read_bytes())
    one_error(runner.invoke(app, ["report", str(out)]), f"{stray} is no cell of this run", "size 999")


def test_a_full_disk_names_the_file_being_written(tmp_path, monkeypatch):
    def full(self, path, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")  # as a write() fails: no file name

    monkeypatch.setattr(pq, "write_table", full)
    with pytest.raises(MdadError, match=r"Could not write the results file .*k5-s6\.parquet: No space left on device"):
        small_experiment(tmp_path / "o").run(workers=1)


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def _not_a_file(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "FIFO":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


@needs_fifo
@pytest.mark.parametrize(("kind", "said"), [("FIFO", "a FIFO (named pipe)"), ("link to /dev/zero", "a character device")])
def test_a_config_that_is_no_file_is_named_not_waited_on(tmp_path, kind, said):
    out = tmp_path / "o"
    small_store(out)
    _not_a_file(out / "config.json", kind)
    one_error(runner.invoke(app, ["report", str(out)]), f"{out / 'config.json'} is {said}, not the settings of an mdad run")


@needs_fifo
@pytest.mark.parametrize(("kind", "said"), [("FIFO", "a FIFO (named pipe)"), ("link to /dev/zero", "a character device")])
def test_a_cell_that_is_no_file_is_named_by_report_and_set_aside_on_resume(tmp_path, kind, said):
    out = tmp_path / "o"
    frames = small_store(out)
    cell = out / "cells" / "random" / "k10-s6.parquet"
    _not_a_file(cell, kind)
    one_error(runner.invoke(app, ["report", str(out)]), f"{cell} is {said}, not a cell file of results")
    experiment = small_experiment(out)
    redone = experiment.run(workers=1).frames
    for key, frame in frames.items():
        pd.testing.assert_frame_equal(redone[key], frame)
    assert experiment.recovered == [
        f"{cell} was damaged (it is {said}); it was moved to {out / 'damaged' / 'cells' / 'random' / 'k10-s6.parquet'} and will be computed again."
    ]


def _huge_header(path: Path) -> None:
    """A block whose header declares 5 x 10^9 records (120 GB) and holds none."""
    from numpy.lib import format as npy

    with open(path, "wb") as handle:
        npy.write_array_header_1_0(
            handle, {"descr": npy.dtype_to_descr(np.dtype([("estimate", "<f8")])), "fortran_order": False, "shape": (5, 10**9)}
        )


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        pytest.param(os.mkfifo, "it is a FIFO (named pipe)", marks=needs_fifo),
        (_huge_header, "not a readable numpy file: mmap length is greater than file size"),
    ],
    ids=["FIFO", "huge header"],
)
def test_a_block_of_runs_that_is_no_file_or_declares_a_huge_shape_is_set_aside_unread(tmp_path, damage, said):
    out = tmp_path / "o"
    expected = small_experiment(out, sizes=(5,), runs=10).run(workers=1, runs_per_task=5).frames
    (out / "cells" / "random" / "k5-s6.parquet").unlink()
    block = out / "cells" / "random" / "partial" / "k5-s6-r0-5.npy"
    block.parent.mkdir(parents=True)
    damage(block)
    again = small_experiment(out, sizes=(5,), runs=10)
    frames = again.run(workers=1, runs_per_task=5).frames
    pd.testing.assert_frame_equal(next(iter(frames.values())), next(iter(expected.values())))
    assert any(f"k5-s6-r0-5.npy was damaged ({said})" in note for note in again.recovered), again.recovered
