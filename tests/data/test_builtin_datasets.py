"""The real matrices bundled with mdad: loadable by name with no data folder, beside MDAD_DATA_DIR's folders."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.paths import ROOT
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import BUILTIN, available_datasets, dataset_catalogue, load_dataset, write_npz
from mdad.errors import MdadError

runner = CliRunner()

# name: (models after merging repeated submissions, items, subtasks)
SHAPES = {"gpqa": (420, 448, 1), "musr": (429, 756, 3), "math-hard": (428, 894, 5)}


@pytest.fixture(autouse=True)
def no_data_dir(monkeypatch):
    monkeypatch.delenv("MDAD_DATA_DIR", raising=False)


@pytest.mark.parametrize("name", SHAPES)
def test_builtin_dataset_loads_by_name_with_no_data_folder(name):
    matrix = mdad.load(name)
    models, items, subtasks = SHAPES[name]
    assert (matrix.n_models, matrix.n_items, len(matrix.subtask_names)) == (models, items, subtasks)
    assert not matrix.simulated and not matrix.has_option_probs and matrix.n_missing == 0
    assert set(np.unique(matrix.scores)) == {0.0, 1.0}  # 0/1 correctness only
    assert matrix.source.startswith(f"{name} (")
    folder = BUILTIN[name].folder
    assert {p.name for p in folder.iterdir() if not p.name.startswith("__")} == {"responses.npz", "LICENSE", "SOURCE.md"}
    assert "MIT License" in (folder / "LICENSE").read_text()
    note = (folder / "SOURCE.md").read_text()
    assert "0/1 correctness" in note and "No question text" in note


def test_gpqa_is_the_papers_matrix_and_mdad_run_uses_its_sizes():
    entry = BUILTIN["gpqa"]
    assert "How Reliable is Language Model Micro-Benchmarking?" in entry.origin
    assert entry.sizes == (10, 25, 50, 100, 200)  # the paper's GPQA sizes (its seen half holds 224 items)


def test_builtin_files_are_the_shared_data_byte_for_byte(shared_data_dir):
    for name, folder in (("gpqa", "oll2-gpqa"), ("musr", "oll2-musr"), ("math-hard", "oll2-math-hard")):
        for file in ("responses.npz", "LICENSE"):
            assert (BUILTIN[name].folder / file).read_bytes() == (shared_data_dir / folder / file).read_bytes()
        meta = json.loads((shared_data_dir / folder / "meta.json").read_text())
        assert SHAPES[name][1] == meta["items"] and meta["license"] == "MIT"


def test_data_dir_folders_work_beside_the_builtin_ones(tmp_path, monkeypatch):
    small = mdad.simulate(seed=1, n_models=6, n_items=20, n_subtasks=2)
    for name in ("mine", "gpqa"):
        (tmp_path / name).mkdir()
        write_npz(small, tmp_path / name / "responses.npz")
    monkeypatch.setenv("MDAD_DATA_DIR", str(tmp_path))
    assert load_dataset("mine").n_models == 6
    assert load_dataset("gpqa").n_models == 420  # the built-in name loads the built-in data
    assert available_datasets() == ["gpqa", "musr", "math-hard", "simulated", "mine"]
    listed = {(e.name, e.kind): e for e in dataset_catalogue()}
    assert (listed[("mine", "MDAD_DATA_DIR")].models, listed[("mine", "MDAD_DATA_DIR")].items) == (6, 20)
    assert "hidden by the built-in dataset" in listed[("gpqa", "MDAD_DATA_DIR")].source
    assert listed[("gpqa", "built-in")].models == 420


def test_unknown_name_without_data_dir_names_the_builtin_ones():
    with pytest.raises(MdadError, match="No built-in dataset 'nope' \\(built in: gpqa, musr, math-hard, simulated\\)"):
        load_dataset("nope")


def test_datasets_command_lists_shapes_and_sources():
    result = runner.invoke(app, ["datasets"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines() if line.split()[:1] in (["gpqa"], ["musr"], ["math-hard"], ["simulated"])}
    assert "420 x 448" in lines["gpqa"] and "How Reliable is Language Model Micro-Benchmarking?" in lines["gpqa"]
    assert "429 x 756" in lines["musr"] and "428 x 894" in lines["math-hard"]
    assert "400 x 1000" in lines["simulated"] and "option probabilities" in lines["simulated"]


def test_info_and_select_default_to_the_bundled_gpqa():
    info = runner.invoke(app, ["info"])
    assert info.exit_code == 0, info.output
    assert "gpqa (the GPQA matrix of the paper" in info.output and "models: 420" in info.output


def test_default_run_is_the_papers_gpqa_setting(tmp_path):
    """With no size, source or target options the run is the paper's GPQA grid (here 2 runs of one method)."""
    out = tmp_path / "o"
    result = runner.invoke(app, ["run", "--runs", "2", "--methods", "random", "--out", str(out)])
    assert result.exit_code == 0, result.output
    config = json.loads((out / "config.json").read_text())
    assert sorted(config["sizes"]) == [10, 25, 50, 100, 200] and config["sources"] == [300] and config["targets"] == 50
    assert config["data_source"].startswith("gpqa (") and not config["simulated"]


def test_package_data_ships_every_builtin_file():
    """A non-editable install copies only what pyproject's package-data names: every bundled file must match it."""

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    root = ROOT
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["mdad"]
    package = root / "src" / "mdad"
    shipped = {path for pattern in patterns for path in package.glob(pattern)}
    bundled = {
        path
        for entry in BUILTIN.values()
        for path in (root / "src" / "mdad" / "data" / "builtin" / entry.name).iterdir()
        if not path.name.startswith("__")
    }
    assert len(bundled) == 9 and bundled <= shipped


@pytest.mark.parametrize("data_dir", [True, False])
@pytest.mark.parametrize("columns", [80, 200])
def test_datasets_never_cut_a_name_a_shape_or_a_path(tmp_path, monkeypatch, columns, data_dir):
    folder = tmp_path / "a-folder-with-a-rather-long-name-for-its-leaderboards" / "my-leaderboard"
    folder.mkdir(parents=True)
    write_npz(mdad.simulate(seed=0, n_models=6, n_items=20), folder / "responses.npz")
    if data_dir:  # a long path among the sources: they go below the table at 80 columns
        monkeypatch.setenv("MDAD_DATA_DIR", str(folder.parent))
    else:
        monkeypatch.delenv("MDAD_DATA_DIR", raising=False)
    result = runner.invoke(app, ["datasets"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line.rstrip()) <= columns for line in lines if str(folder) not in line)
    for entry in dataset_catalogue():
        assert any(entry.name in line and f"{entry.models} x {entry.items}" in line for line in lines)
        for word in entry.source.split():
            assert word in result.output  # every word of the source whole: a path is never cut
