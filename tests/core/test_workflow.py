"""An experiment run into a folder from the library: the options that are not the experiment, checked early."""

from __future__ import annotations

import pytest

import mdad
from mdad.errors import MdadError
from mdad.workflow import RunOptions, run_into_folder


def test_run_options_refuse_bad_values_before_any_work(tmp_path):
    for options, message in (
        ({"out": ""}, "it is empty"),
        ({"out": tmp_path, "scheduler": "a b"}, "scheduler"),
        ({"out": tmp_path, "threshold": 1.5}, "threshold"),
    ):
        with pytest.raises(MdadError, match=message):
            RunOptions(**options)
    (tmp_path / "file").write_text("x")
    with pytest.raises(MdadError, match="not a folder"):
        RunOptions(out=tmp_path / "file")


def test_run_into_folder_writes_the_report_and_resumes(tmp_path):
    matrix = mdad.simulate(seed=0, n_models=40, n_items=100)
    config = mdad.ExperimentConfig.for_matrix(matrix, methods="random", sizes=10, runs=2)
    options = RunOptions(out=tmp_path / "out", workers=1, record={"note": "from a test"})
    with pytest.raises(MdadError, match="curve-sizes"):
        run_into_folder(matrix, config, RunOptions(out=tmp_path / "out", curve_sizes=(25,)))
    started = []
    outputs = run_into_folder(matrix, config, options, on_start=lambda e: started.append(len(e.pending_tasks())))
    assert started == [1] and outputs.report.exists()
    assert outputs.summary[["method", "size"]].drop_duplicates().values.tolist() == [["random", 10]]
    assert mdad.experiment.store.ResultStore(tmp_path / "out").read_config()["note"] == "from a test"
    run_into_folder(matrix, config, options, on_start=lambda e: started.append(len(e.pending_tasks())))
    assert started == [1, 0]  # the rerun finds every cell stored
