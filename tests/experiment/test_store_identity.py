"""Results that know which code made them, stores that notice tampering, no silent merging.

Each stored cell and micro.json records the results version of the code that computed it; a
store written under another one is refused. The store's index.json records a checksum of every
cell file and block of runs and of its identity: a cell edited to plausible values, or copied
over another size's, is damaged (named by report, moved aside and computed again by a resume),
and a deleted config.json does not let a resume with another seed reuse old cells. A run into a
folder that holds another command's cells says so, and config.json and the report list every
command that wrote the folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from support.cli_checks import one_error, runner, small_experiment, small_matrix, small_store

import mdad
from mdad.cli import app
from mdad.errors import MdadError
from mdad.experiment import grid
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.store import BLOCK_DTYPE, ResultStore
from mdad.micro import SelectedMicroBenchmark
from mdad.micro.estimation import estimate_report
from mdad.results_version import RESULTS_VERSION

CELL_10 = Path("cells") / "random" / "k10-s6.parquet"
CELL_5 = Path("cells") / "random" / "k5-s6.parquet"


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a folder (but the lock), by relative path: to prove that nothing was modified."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".lock"}


def _experiment(out: Path, seed: int = 0, **kwargs) -> Experiment:
    config = ExperimentConfig(methods=("random",), sizes=(5, 10), sources=(6,), runs=3, targets=4, seed=seed, **kwargs)
    return Experiment(small_matrix(), config, store=ResultStore(out))


# ---- 1. the results version -------------------------------------------------------------------


def test_every_stored_cell_and_the_store_record_the_results_version(tmp_path):
    out = tmp_path / "o"
    small_store(out)
    assert json.loads((out / "config.json").read_text())["results_version"] == RESULTS_VERSION
    index = json.loads((out / "index.json").read_text())
    assert index["experiment"]["results_version"] == RESULTS_VERSION
    assert sorted(index["files"]) == [str(CELL_10), str(CELL_5)]  # no block left once the cells are finished
    carried = json.loads(pq.read_schema(out / CELL_10).metadata[b"mdad.identity"])
    assert carried == {
        "results_version": RESULTS_VERSION,
        "data_fingerprint": carried["data_fingerprint"],
        "runs": 3,
        "targets": 4,
        "group": None,
        "seed": 0,
        "targets_from": "random",
        "method": "random",
        "size": 10,
        "sources": 6,
    }


def test_a_store_of_another_results_version_is_refused_unchanged_and_report_says_so(tmp_path, monkeypatch):
    out = tmp_path / "o"
    monkeypatch.setattr(grid, "RESULTS_VERSION", RESULTS_VERSION + 1)  # a store written by later code
    frames = small_store(out)
    monkeypatch.undo()
    before = _snapshot(out)
    with pytest.raises(MdadError) as caught:
        small_experiment(out).run(workers=1)
    message = str(caught.value)
    assert f"written under results version {RESULTS_VERSION + 1}" in message and f"writes results version {RESULTS_VERSION}" in message
    assert "write into another output folder" in message and message.count(". ") == 0
    assert _snapshot(out) == before
    # report still reads it, and says which code computed its numbers
    done = runner.invoke(app, ["report", str(out)])
    assert done.exit_code == 0, done.output
    flat = " ".join(done.output.split())
    assert f"was written under results version {RESULTS_VERSION + 1}, and this mdad writes results version {RESULTS_VERSION}" in flat
    assert len(frames) == 2


def test_plan_from_a_store_of_another_results_version_says_so_once(tmp_path, monkeypatch):
    out = tmp_path / "o"
    monkeypatch.setattr(grid, "RESULTS_VERSION", RESULTS_VERSION + 1)  # a store written by later code
    small_store(out)
    monkeypatch.undo()
    said = f"was written under results version {RESULTS_VERSION + 1}, and this mdad writes results version {RESULTS_VERSION}: plan answers from"
    for methods in ("random", "all"):  # one method, and every method the run holds: one sentence either way
        done = runner.invoke(app, ["plan", "--results", str(out), "--size", "10", "--method", methods])
        assert done.exit_code == 0, done.output
        flat = " ".join(done.output.split())
        assert flat.count(said) == 1, flat
    same = tmp_path / "same"
    small_store(same)
    done = runner.invoke(app, ["plan", "--results", str(same), "--size", "10", "--method", "random"])
    assert done.exit_code == 0 and "results version" not in done.output
    assert mdad.planning.plan_from_results(same, "random", size=10).note == ""


def test_a_store_from_before_results_versions_is_refused_and_still_reported(tmp_path):
    out = tmp_path / "o"
    small_store(out)
    config = json.loads((out / "config.json").read_text())
    del config["results_version"]
    (out / "config.json").write_text(json.dumps(config))
    (out / "index.json").unlink()  # as an older mdad left it: no index
    with pytest.raises(MdadError, match=r"holds results of other code \(written before results versions;"):
        small_experiment(out).run(workers=1)
    done = runner.invoke(app, ["report", str(out)])
    assert done.exit_code == 0, done.output
    assert "was written before results versions" in " ".join(done.output.split())
    assert "<th>Results version</th><td>none (written before results versions)</td>" in (out / "report.html").read_text()


def test_micro_json_records_the_results_version_and_estimate_notes_another(tmp_path):
    matrix = mdad.simulate(seed=0, n_models=24, n_items=80)
    path = tmp_path / "m.json"
    mdad.select(matrix, "random", 10, seed=0).save(path)
    data = json.loads(path.read_text())
    assert data["results_version"] == RESULTS_VERSION
    same = estimate_report(SelectedMicroBenchmark.load(path), matrix)
    assert not [n for n in same.notes if "results version" in n.text]
    for older, said in ((None, "before results versions"), (RESULTS_VERSION + 1, f"under results version {RESULTS_VERSION + 1}")):
        edited = {k: v for k, v in data.items() if k != "results_version"} | ({} if older is None else {"results_version": older})
        path.write_text(json.dumps(edited))
        loaded = SelectedMicroBenchmark.load(path)
        assert loaded.results_version == older
        notes = [n for n in estimate_report(loaded, matrix).notes if "results version" in n.text]
        assert len(notes) == 1 and notes[0].warning, notes
        assert f"This micro-benchmark was written {said}, and this mdad computes results version {RESULTS_VERSION}" in notes[0].text
        # the numbers are those of its items and estimator, as written
        np.testing.assert_array_equal(estimate_report(loaded, matrix).intervals.estimate, same.intervals.estimate)


@pytest.mark.parametrize("version", ["1", 0, 1.5, True])
def test_a_results_version_that_is_no_version_is_refused(tmp_path, version):
    matrix = mdad.simulate(seed=0, n_models=24, n_items=80)
    path = tmp_path / "m.json"
    mdad.select(matrix, "random", 10, seed=0).save(path)
    path.write_text(json.dumps({**json.loads(path.read_text()), "results_version": version}))
    with pytest.raises(MdadError, match="the field 'results_version' must be a whole number, at least 1"):
        SelectedMicroBenchmark.load(path)


# ---- 2. tampering -------------------------------------------------------------------------------


def _plus(path: Path, amount: float) -> None:
    """Estimates raised by ``amount``: plausible values, written as a user's pandas would."""
    frame = pd.read_parquet(path)
    frame.assign(estimate=frame["estimate"] + amount).to_parquet(path, index=False)


TAMPERING = {
    "estimates + 0.1": (lambda out: _plus(out / CELL_10, 0.1), "it is not the file index.json records a checksum of"),
    "the 5-item cell copied over the 10-item one": (
        lambda out: (out / CELL_10).write_bytes((out / CELL_5).read_bytes()),
        "it holds the cell of random at 5 items and 6 sources",
    ),
}


@pytest.mark.parametrize("case", list(TAMPERING))
def test_report_refuses_a_tampered_cell(tmp_path, case):
    out = tmp_path / "o"
    small_store(out)
    tamper, said = TAMPERING[case]
    tamper(out)
    one_error(runner.invoke(app, ["report", str(out)]), f"{out / CELL_10} is damaged (", said)


@pytest.mark.parametrize("case", list(TAMPERING))
def test_resume_sets_a_tampered_cell_aside_and_recomputes_it(tmp_path, case):
    out = tmp_path / "o"
    frames = small_store(out)
    original = (out / CELL_10).read_bytes()
    tamper, said = TAMPERING[case]
    tamper(out)
    tampered = (out / CELL_10).read_bytes()
    experiment = small_experiment(out)
    redone = experiment.run(workers=1).frames
    for key, frame in frames.items():
        pd.testing.assert_frame_equal(redone[key], frame)
    assert (out / CELL_10).read_bytes() == original
    moved = out / "damaged" / CELL_10
    assert moved.read_bytes() == tampered  # kept as it was, where the note says
    (note,) = experiment.recovered
    assert note.startswith(f"{out / CELL_10} was damaged (") and said in note
    assert note.endswith(f"; it was moved to {moved} and will be computed again.")


def test_a_tampered_block_of_runs_is_set_aside_and_recomputed(tmp_path):
    out = tmp_path / "o"
    expected = small_experiment(out, sizes=(5,), runs=10).run(workers=1, runs_per_task=5).frames
    store = ResultStore(out)
    store.open_for(json.loads((out / "config.json").read_text()))
    cell = next(iter(expected))
    store.write_block(cell, 0, 5, np.zeros((5, 4), dtype=BLOCK_DTYPE))  # a block as the run writes it, vouched for
    (out / CELL_5).unlink()
    block = out / cell.block_path(0, 5)
    edited = np.load(block)
    edited["estimate"] = 0.5  # plausible, and what no run of this matrix gives every target
    np.save(block, edited)
    again = small_experiment(out, sizes=(5,), runs=10)
    frames = again.run(workers=1, runs_per_task=5).frames
    pd.testing.assert_frame_equal(frames[cell], expected[cell])
    assert again.recovered == [
        f"{block} was damaged (it is not the file index.json records a checksum of (edited, or copied from another file)); "
        f"it was moved to {out / 'damaged' / cell.block_path(0, 5)} and will be computed again."
    ]


def test_a_deleted_config_does_not_let_another_seed_reuse_the_cells(tmp_path):
    out = tmp_path / "o"
    _experiment(out).run(workers=1)
    (out / "config.json").unlink()
    before = _snapshot(out)
    with pytest.raises(MdadError) as caught:
        _experiment(out, seed=1).run(workers=1)
    assert str(caught.value) == (
        f"{out} holds results of a different experiment (seed: 0 there, 1 now; by index.json, as config.json is missing); use another output folder."
    )
    assert _snapshot(out) == before


def test_a_config_edited_to_another_seed_does_not_let_that_seed_reuse_the_cells(tmp_path):
    out = tmp_path / "o"
    _experiment(out).run(workers=1)
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**config, "seed": 1}))
    before = _snapshot(out)
    with pytest.raises(MdadError) as caught:
        _experiment(out, seed=1).run(workers=1)
    assert str(caught.value) == f"{out} holds results of a different experiment (seed: 0 there, 1 now; by index.json); use another output folder."
    assert _snapshot(out) == before


def test_with_config_and_index_deleted_each_cell_is_recomputed_not_reused(tmp_path):
    out, fresh = tmp_path / "o", tmp_path / "fresh"
    _experiment(out).run(workers=1)
    (out / "config.json").unlink()
    (out / "index.json").unlink()
    again = _experiment(out, seed=1)
    frames = again.run(workers=1).frames
    expected = _experiment(fresh, seed=1).run(workers=1).frames
    for key, frame in expected.items():
        pd.testing.assert_frame_equal(frames[key], frame)
    assert len(again.recovered) == 2 and all("index.json records no checksum of it" in note for note in again.recovered)


def test_an_unreadable_index_is_set_aside_and_every_cell_recomputed(tmp_path):
    out = tmp_path / "o"
    frames = small_store(out)
    (out / "index.json").write_text("{not json")
    again = small_experiment(out)
    redone = again.run(workers=1).frames
    for key, frame in frames.items():
        pd.testing.assert_frame_equal(redone[key], frame)
    assert again.recovered[0].startswith(f"{out / 'index.json'} was damaged (not readable as JSON")
    assert "every file it vouched for is computed again" in again.recovered[0]
    assert len(again.recovered) == 3  # the index and the two cells it vouched for


# ---- 3. no silent merging ------------------------------------------------------------------------


def test_a_run_into_a_folder_of_another_command_says_what_else_it_shows(tmp_path):
    out = tmp_path / "o"
    first = ["run", "--methods", "random", "--sizes", "10,25", "--runs", "3", "--out", str(out)]
    second = ["run", "--methods", "random", "--sizes", "0.5%,50", "--runs", "3", "--out", str(out)]
    assert runner.invoke(app, first).exit_code == 0
    done = runner.invoke(app, second)
    assert done.exit_code == 0, done.output
    flat = " ".join(done.output.split())
    assert (
        f"{out} also holds 2 cells of earlier commands (sizes 10, 25), which the tables and the report show beside the 2 cells "
        "asked for; config.json lists every command that wrote the folder."
    ) in flat
    commands = json.loads((out / "config.json").read_text())["commands"]
    assert commands == [" ".join(["mdad", *first]), " ".join(["mdad", *second])]
    html = (out / "report.html").read_text()
    assert "Every command that wrote this folder" in html and all(f"<code>{c}</code>" in html for c in commands)
    # the same command again adds no line and no note
    again = runner.invoke(app, second)
    assert json.loads((out / "config.json").read_text())["commands"] == commands
    assert "of earlier commands" in again.output  # the first command's cells are still shown


def test_a_run_into_its_own_folder_says_nothing_of_earlier_commands(tmp_path):
    out = tmp_path / "o"
    args = ["run", "--methods", "random", "--sizes", "10", "--runs", "3", "--out", str(out)]
    for _ in range(2):
        done = runner.invoke(app, args)
        assert done.exit_code == 0 and "earlier commands" not in done.output
    assert json.loads((out / "config.json").read_text())["commands"] == [" ".join(["mdad", *args])]
    assert "<th>Command</th>" in (out / "report.html").read_text()
