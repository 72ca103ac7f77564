"""The everyday adaptive loop on genuine harness logs (tests/fixtures/lm_eval_loop, inspect_loop).

tests/make_fixtures.py chose an adaptive-1d test of 15 items on the source logs (micro.json),
then ran the harness once per item that ``mdad estimate`` named (lm-eval ``--samples``, inspect
``sample_id``), every run into one folder (new/). Replayed here: after the first r runs, the
folder reads as one model that answered r items, and the next item named is the item of run r+1.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from support.paths import FIXTURES
from typer.testing import CliRunner

from mdad import SelectedMicroBenchmark
from mdad.cli import app
from mdad.data import read_source

SIZE = 15


def lm_eval_runs(new: Path) -> list[tuple[str, list[Path]]]:
    """Each lm-eval run's asked item and files, in the order they were run (their dates)."""
    runs = []
    for results in sorted(new.rglob("results_*.json")):
        date = results.stem.removeprefix("results_")
        (samples,) = results.parent.glob(f"samples_*_{date}.jsonl")
        (row,) = [json.loads(line) for line in samples.read_text().splitlines()]
        task = samples.name.removeprefix("samples_").removesuffix(f"_{date}.jsonl")
        runs.append((f"{task}/{row['doc_id']}", [results, samples]))
    return runs


def inspect_runs(new: Path) -> list[tuple[str, list[Path]]]:
    """Each inspect log's one sample and file, in the order they were run (their names start with the time)."""
    logs = sorted(new.glob("*.eval"))
    started = [re.match(r"^[\d\-T]+", log.name)[0] for log in logs]
    assert len(set(started)) == len(logs)  # the order by name is the order of the runs
    return [(str(read_source(log).items[0]), [log]) for log in logs]


LOOPS = {"lm_eval_loop": lm_eval_runs, "inspect_loop": inspect_runs}


@pytest.mark.parametrize("folder", LOOPS)
def test_one_run_per_asked_item_adds_up_and_estimate_names_the_next_run(folder, tmp_path):
    fixture = FIXTURES / folder
    test = SelectedMicroBenchmark.load(fixture / "micro.json")
    runs = LOOPS[folder](fixture / "new")
    assert len(runs) == SIZE and len({item for item, _ in runs}) == SIZE  # fifteen runs, each of another item
    assert test.first_item() == runs[0][0]
    new = tmp_path / "new"
    for answered, (_item, files) in enumerate(runs, start=1):
        for file in files:
            (new / file.parent.relative_to(fixture / "new")).mkdir(parents=True, exist_ok=True)
            shutil.copy(file, new / file.relative_to(fixture / "new"))
        matrix = read_source(new)
        assert matrix.n_models == 1 and matrix.n_items == answered
        assert not any("answered again" in note for note in matrix.notes)
        (details,) = test.details(matrix).itertuples()
        assert details.answered == answered
        assert details.next_item == (runs[answered][0] if answered < SIZE else "")  # "" once the test is done


@pytest.mark.parametrize("folder", LOOPS)
def test_estimate_on_the_command_line_names_the_third_item_after_two_runs(folder, tmp_path):
    fixture = FIXTURES / folder
    runs = LOOPS[folder](fixture / "new")
    for _, files in runs[:2]:
        for file in files:
            (tmp_path / file.parent.relative_to(fixture / "new")).mkdir(parents=True, exist_ok=True)
            shutil.copy(file, tmp_path / file.relative_to(fixture / "new"))
    shown = CliRunner().invoke(app, ["estimate", str(fixture / "micro.json"), str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert runs[2][0] in shown.output and "dropped" not in shown.output and "answered again" not in shown.output


def test_an_item_answered_again_is_a_rerun_of_that_item_only(tmp_path):
    fixture = FIXTURES / "lm_eval_loop"
    runs = lm_eval_runs(fixture / "new")
    for _, files in runs[:3]:
        for file in files:
            (tmp_path / file.parent.relative_to(fixture / "new")).mkdir(parents=True, exist_ok=True)
            shutil.copy(file, tmp_path / file.relative_to(fixture / "new"))
    results, samples = runs[0][1]
    date = results.stem.removeprefix("results_")
    later = "2099-01-01T00-00-00.000001"  # the first item asked again, in a later run
    folder = tmp_path / results.parent.relative_to(fixture / "new")
    shutil.copy(results, folder / results.name.replace(date, later))
    shutil.copy(samples, folder / samples.name.replace(date, later))
    matrix = read_source(tmp_path)
    assert matrix.n_items == 3
    (note,) = [n for n in matrix.notes if "answered again" in n]
    task = runs[0][0].partition("/")[0]
    assert f"on task {task!r} was run" in note and "1 item was answered again" in note
    assert samples.name in note and samples.name.replace(date, later) in note
