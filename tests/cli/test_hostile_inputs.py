"""Hostile and broken inputs through every entry point: one sentence and exit code 2 (or, where the
input is legitimate, the right result), never a traceback; in Python the same sentence as MdadError.

Every case is generated here (no binary fixtures): names that look like rich markup or carry
terminal control codes, unwritable outputs, damaged result stores, malformed tables, requests
that cannot fit in memory, spreadsheet formulas in names, and conflicting options.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.cli_checks import flat, one_error, runner, small_experiment, small_matrix, small_store, wide_csv
from support.waiting import BOUND

from mdad.cli import app
from mdad.data import ResponseMatrix, from_frame, read_source
from mdad.errors import MdadError
from mdad.micro import SelectedMicroBenchmark, select

ESC_TITLE = "\x1b]0;owned\x07"
MARKUP_NAMES = ["[/]", "[bold]x", "m[/i]", "[red]y[/red]", '=HYPERLINK("http://evil","x")', f"esc{ESC_TITLE}z"]


# ---- 1. names and paths are printed literally ---------------------------------------------------
@pytest.mark.parametrize("name", ["data[/b]/ok.csv", "nope[/i].npz", "x[bold]y.csv"])
def test_missing_paths_that_look_like_markup_are_named_literally(name):
    one_error(runner.invoke(app, ["info", name]), f"No such file or folder: {name}")


def test_file_and_model_names_with_markup_and_control_codes_are_shown_literally(tmp_path):
    path = wide_csv(tmp_path / "ok[red]x.csv", small_matrix(MARKUP_NAMES))
    result = runner.invoke(app, ["info", str(path)])
    assert result.exit_code == 0, result.output
    assert "ok[red]x.csv" in result.output and "\x1b" not in result.output
    compare = runner.invoke(app, ["compare", "--data", str(path), "--size", "10", "--top", "0"])
    assert compare.exit_code == 0, compare.output
    for name in MARKUP_NAMES[:4]:
        assert name in compare.output
    assert "\x1b" not in compare.output and "\x07" not in compare.output
    assert "\\x1b" in compare.output and "\\x07" in compare.output  # control codes spelled out, not obeyed


def test_estimate_prints_markup_names_and_neutralises_formulas_in_csv(tmp_path):
    matrix = small_matrix(MARKUP_NAMES)
    data = wide_csv(tmp_path / "data.csv", matrix)
    micro = tmp_path / "m.json"
    assert (
        runner.invoke(app, ["select", "--data", str(data), "--method", "random", "--size", "10", "--out", str(micro), "--assess-runs", "0"]).exit_code
        == 0
    )
    csv = tmp_path / "estimates.csv"
    result = runner.invoke(app, ["estimate", str(micro), str(data), "--csv", str(csv)])
    assert result.exit_code == 0, result.output
    assert "[/]" in result.output and "[red]y[/red]" in result.output and "\x1b" not in result.output
    written = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert '\'=HYPERLINK("http://evil","x")' in set(written["model"])
    assert not written["model"].str.match(r"^[=+\-@\t\r]").any()
    pairs = tmp_path / "pairs.csv"
    assert runner.invoke(app, ["compare", "--data", str(data), "--size", "10", "--csv", str(pairs)]).exit_code == 0
    table = pd.read_csv(pairs, dtype=str, keep_default_na=False)
    for column in ("model_a", "model_b"):
        assert not table[column].str.match(r"^[=+\-@\t\r]").any()
    assert (table == '\'=HYPERLINK("http://evil","x")').any().any()
    assert pd.to_numeric(table["difference_points"]).ge(0).all()  # numbers are left as numbers


def test_csv_neutralisation_covers_every_formula_start():
    from mdad.outputs import FORMULA_STARTS, neutralise_formulas

    frame = pd.DataFrame({"name": [f"{c}cmd" for c in FORMULA_STARTS] + ["plain", "-"], "x": [-1.0] * 8})
    out = neutralise_formulas(frame)
    assert list(out["name"]) == [f"'{c}cmd" for c in FORMULA_STARTS] + ["plain", "'-"]
    assert list(out["x"]) == [-1.0] * 8 and list(frame["name"])[0] == "=cmd"  # numbers kept, input untouched


def test_run_into_a_folder_whose_name_looks_like_markup(tmp_path):
    data = wide_csv(tmp_path / "d.csv", small_matrix())
    out = tmp_path / "o[/b]"
    result = runner.invoke(
        app, ["run", "--data", str(data), "--methods", "random", "--sizes", "5", "--runs", "2", "--workers", "1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert f"{out}/ (report.html)" in flat(result.output) and (out / "report.html").is_file()


def test_reader_notes_are_printed_literally(capsys):
    from mdad.cli.common import print_notes

    matrix = ResponseMatrix(
        scores=np.ones((2, 2)), models=["a", "b"], items=["i", "j"], subtasks=["s", "s"], notes=(f"Model [/b]{ESC_TITLE}: 2 older runs dropped.",)
    )
    print_notes(matrix)
    assert capsys.readouterr().err.strip() == "note: Model [/b]\\x1b]0;owned\\x07: 2 older runs dropped."


def test_literal_spells_out_control_characters():
    from mdad.cli.text import literal, visible

    assert visible("a\x1b[31mb\u202ec\n") == "a\\x1b[31mb\\u202ec\\n"
    assert literal("[/]") == "\\[/]"


# ---- 2. outputs that cannot be written fail before the work, naming the path ---------------------
def _read_only_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root writes anywhere
        folder.chmod(0o755)
        pytest.skip("running with rights that ignore read-only folders")
    return folder


def test_read_only_outputs_are_refused_before_any_work(tmp_path):
    data = wide_csv(tmp_path / "d.csv", small_matrix())
    ro = _read_only_folder(tmp_path)
    try:
        cases = [
            (
                ["run", "--data", str(data), "--methods", "random", "--sizes", "5", "--runs", "2", "--out", str(ro / "o")],
                f"Cannot write the output folder {ro}/o",
            ),
            (
                ["select", "--data", str(data), "--method", "random", "--size", "5", "--out", str(ro / "m.json")],
                f"Cannot write the micro-benchmark file {ro}/m.json",
            ),
            (["compare", "--data", str(data), "--size", "5", "--csv", str(ro / "x.csv")], f"Cannot write the CSV file {ro}/x.csv"),
            (["convert", str(data), "--out", str(ro / "x.npz")], f"Cannot write the output file {ro}/x.npz"),
        ]
        for args, message in cases:
            one_error(runner.invoke(app, args), message)
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)


def test_read_only_file_system_is_refused_before_any_work(tmp_path, monkeypatch):
    """As the issue saw it (OSError: Read-only file system), whatever the rights of the user running the tests."""
    import mdad.outputs

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(mdad.outputs.tempfile, "mkstemp", read_only)
    data = wide_csv(tmp_path / "d.csv", small_matrix())
    for args, message in [
        (["run", "--data", str(data), "--methods", "random", "--out", str(tmp_path / "o")], "the output folder"),
        (["select", "--data", str(data), "--method", "random", "--size", "5", "--out", str(tmp_path / "m.json")], "the micro-benchmark file"),
        (["compare", "--data", str(data), "--size", "5", "--csv", str(tmp_path / "x.csv")], "the CSV file"),
        (["convert", str(data), "--out", str(tmp_path / "x.npz")], "the output file"),
    ]:
        one_error(runner.invoke(app, args), f"Cannot write {message} {args[-1]}: Read-only file system")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]


def test_report_into_a_read_only_results_folder(tmp_path):
    out = tmp_path / "o"
    small_store(out)
    out.chmod(0o555)
    try:
        if os.access(out, os.W_OK):
            pytest.skip("running with rights that ignore read-only folders")
        one_error(runner.invoke(app, ["report", str(out)]), f"Cannot write the results folder {out}")
    finally:
        out.chmod(0o755)


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--methods", "random", "--runs", "2", "--out", "/proc/mdad-x"], "Cannot write the output folder /proc/mdad-x"),
        (["run", "--methods", "random", "--runs", "2", "--out", "{tmp}/afile/sub"], "{tmp}/afile is a file, not a folder"),
        (["convert", "{tmp}/d.csv", "--out", "{tmp}/folder.npz"], "Cannot write the output file {tmp}/folder.npz: it is a folder"),
        (["select", "--method", "random", "--size", "5", "--out", "{tmp}/afile/m.json"], "its folder {tmp}/afile does not exist"),
    ],
)
def test_impossible_outputs(tmp_path, args, message):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "folder.npz").mkdir()
    wide_csv(tmp_path / "d.csv", small_matrix())
    one_error(runner.invoke(app, [a.format(tmp=tmp_path) for a in args]), message.format(tmp=tmp_path))


def test_library_store_that_cannot_be_written_is_mdad_error():
    with pytest.raises(MdadError, match="Could not write the results folder /proc/mdad-nope"):
        small_experiment(Path("/proc/mdad-nope/o")).run(workers=1)


def test_a_write_failing_during_the_work_is_one_sentence(tmp_path, monkeypatch):
    from mdad.outputs import write_csv

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device", str(tmp_path / "x.csv"))

    monkeypatch.setattr(pd.DataFrame, "to_csv", full_disk)
    with pytest.raises(MdadError, match=f"Could not write the CSV file {tmp_path}/x.csv: No space left on device"):
        write_csv(pd.DataFrame({"a": [1]}), tmp_path / "x.csv")


# ---- 3. damaged result stores -------------------------------------------------------------------
DAMAGES = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    "zero-byte": lambda p: p.write_bytes(b""),
    "garbage": lambda p: p.write_bytes(os.urandom(300)),
    "wrong columns": lambda p: pd.DataFrame({"x": [1, 2]}).to_parquet(p),
    "no rows": lambda p: pd.read_parquet(p).iloc[:0].to_parquet(p),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_report_names_a_damaged_cell_and_how_to_recover(tmp_path, damage):
    out = tmp_path / "o"
    small_store(out)
    cell = out / "cells" / "random" / "k10-s6.parquet"
    DAMAGES[damage](cell)
    one_error(runner.invoke(app, ["report", str(out)]), f"{cell} is damaged", "run the same 'mdad run' command again")


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_resume_moves_a_damaged_cell_aside_and_recomputes_it(tmp_path, damage):
    out = tmp_path / "o"
    frames = small_store(out)
    cell, sound = (out / "cells" / "random" / f"k{k}-s6.parquet" for k in (10, 5))
    original, untouched = cell.read_bytes(), sound.stat().st_mtime_ns
    DAMAGES[damage](cell)
    damaged = cell.read_bytes()
    experiment = small_experiment(out)
    redone = experiment.run(workers=1).frames
    assert sound.stat().st_mtime_ns == untouched  # only the damaged cell is computed again
    assert cell.read_bytes() == original
    for key, frame in frames.items():
        pd.testing.assert_frame_equal(redone[key], frame)
    assert (out / "damaged" / "cells" / "random" / "k10-s6.parquet").read_bytes() == damaged
    assert len(experiment.recovered) == 1 and "was damaged" in experiment.recovered[0]


def test_resumed_cli_run_says_which_file_was_damaged(tmp_path):
    data = wide_csv(tmp_path / "d.csv", small_matrix())
    out = tmp_path / "o"
    args = ["run", "--data", str(data), "--methods", "random", "--sizes", "5,10", "--runs", "2", "--workers", "1", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    cell = out / "cells" / "random" / "k5-s6.parquet"
    cell.write_bytes(b"PAR1 garbage")
    stray = out / "cells" / "random" / "kXX-s300.parquet"
    stray.write_bytes(b"stray")
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"{cell} was damaged" in flat(result.output) and "Resuming: 1 of 2 cells" in flat(result.output)
    assert runner.invoke(app, ["report", str(out)]).exit_code == 0  # the stray file is no cell


def test_a_damaged_block_of_runs_is_set_aside_on_resume(tmp_path):
    out = tmp_path / "o"
    expected = small_experiment(out, sizes=(5,), runs=10).run(workers=1, runs_per_task=5).frames
    cell = out / "cells" / "random" / "k5-s6.parquet"
    cell.unlink()
    block = out / "cells" / "random" / "partial" / "k5-s6-r0-5.npy"
    block.parent.mkdir(parents=True)
    block.write_bytes(b"\x93NUMPY garbage")
    again = small_experiment(out, sizes=(5,), runs=10)
    frames = again.run(workers=1, runs_per_task=5).frames
    pd.testing.assert_frame_equal(next(iter(frames.values())), next(iter(expected.values())))
    assert any("k5-s6-r0-5.npy was damaged" in note for note in again.recovered)


@pytest.mark.parametrize(
    "content, message",
    [
        ("[1, 2]", "holds a JSON list, not the settings of an mdad run"),
        ("{not json", "is not valid JSON"),
        ("[" * 100_000, "is not valid JSON"),
    ],
)
def test_broken_config_json(tmp_path, content, message):
    (tmp_path / "config.json").write_text(content)
    one_error(runner.invoke(app, ["report", str(tmp_path)]), message)


LOCK_HOLDER = """
import sys
from mdad.experiment.store import ResultStore
with ResultStore(sys.argv[1]).locked():
    print("locked", flush=True)
    sys.stdin.read()  # holds the lock until the test closes this pipe or kills the process
"""


def test_a_second_run_into_the_same_folder_is_refused_while_the_first_writes(tmp_path):
    out = tmp_path / "o"
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = runner.invoke(app, ["run", "--methods", "random", "--sizes", "10", "--runs", "2", "--out", str(out)])
        one_error(result, f"Another mdad run (process {holder.pid}) is writing into {out}")
        assert not (out / "config.json").exists()
        with pytest.raises(MdadError, match="Another mdad run"):
            small_store(out)
    finally:
        holder.kill()
        holder.wait()
    small_store(out)  # a killed holder leaves no stale lock


def test_two_runs_started_together_never_race(tmp_path):
    """Two processes running the same experiment into one folder: one writes, the other is refused
    or (when it starts after the first finished) resumes; the store is whole either way."""
    data = wide_csv(tmp_path / "d.csv", small_matrix())
    out = tmp_path / "o"
    args = [
        sys.executable,
        "-m",
        "mdad.cli",
        "run",
        "--data",
        str(data),
        "--methods",
        "random",
        "--sizes",
        "5,10",
        "--runs",
        "3",
        "--workers",
        "1",
        "--out",
        str(out),
    ]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=BOUND) for p in procs]
    results = [(p.returncode, stdout, stderr) for p, (stdout, stderr) in zip(procs, outputs, strict=True)]
    codes = sorted(code for code, _, _ in results)
    assert codes in ([0, 0], [0, 2]), results
    for code, stdout, stderr in results:
        assert "Traceback" not in stdout + stderr
        if code == 2:
            assert "Another mdad run" in flat(stderr)
    assert json.loads((out / "config.json").read_text())["methods"] == ["random"]
    assert runner.invoke(app, ["report", str(out)]).exit_code == 0


# ---- 4. malformed tables ------------------------------------------------------------------------
def _rows(n_models=4, n_items=3, trailing="", header_trailing=""):
    head = "model," + ",".join(f"i{j}" for j in range(n_items)) + header_trailing
    body = [f"m{i}," + ",".join(str((i + j) % 2) for j in range(n_items)) + trailing for i in range(n_models)]
    return "\n".join([head, *body]) + "\n"


MALFORMED_CSV = {
    "trailing comma on every row": (_rows(trailing=",", header_trailing=","), "column 5 has no name in the header row"),
    "trailing comma on the rows only": (_rows(trailing=","), "Expected 4 fields in line 2, saw 5"),
    "duplicate headers": ("model,i0,i0\nm0,1,0\nm1,0,1\n", "the column name 'i0' appears more than once"),
    "no header (0/1 scores)": ("m0,1,0,1,1\nm1,0,1,1,0\nm2,1,1,0,0\n", "appears more than once in the header row (does the file lack a header row"),
    "no header (scores)": ("m0,0.25,0.5\nm1,0.75,0.125\n", "the first row holds scores where the item names belong"),
    "blank model name": ("model,i0,i1\nm0,1,0\n,0,1\n", "row 3 has no model name"),
    "short row": ("model,i0,i1\nm0,1,0\nm1,0\n", "line 3 has 2 fields but the header row has 3"),
    "complex score": ("model,i0,i1\nm0,1,0\nm1,1+2j,1\n", "is '1+2j', not a score"),
    "empty file": ("", "is empty"),
    "long table without model": ("model,item,score\nm0,q1,1\n,q2,0\n", "row 3 has no model name"),
    "long table conflicting": ("model,item,score\nm0,q1,1\nm0,q1,0\nm1,q1,1\n", "Model 'm0' has conflicting results"),
}


@pytest.mark.parametrize("case", list(MALFORMED_CSV))
def test_malformed_csv_is_one_sentence_naming_the_file(tmp_path, case):
    text, message = MALFORMED_CSV[case]
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(MdadError, match=None) as caught:
        read_source(path)
    assert str(path) in str(caught.value) and message in str(caught.value), str(caught.value)
    one_error(runner.invoke(app, ["info", str(path)]), message)


@pytest.mark.parametrize("case", ["null model", "null item", "binary cells"])
def test_malformed_parquet(tmp_path, case):
    path = tmp_path / "bad.parquet"
    if case == "binary cells":
        table = pa.table({"model": pa.array([b"\xff\xfe", b"ok"], pa.binary()), "item": ["a", "b"], "score": [1.0, 0.0]})
        message = "the column 'model' holds binary data"
    else:
        column = "model" if case == "null model" else "item"
        values = {"model": ["m0", "m1", "m1"], "item": ["a", "a", "b"], "score": [1.0, 0.0, 1.0]}
        values[column] = [values[column][0], None, values[column][2]]
        table = pa.table(values)
        message = f"row 3 has no {column} name"
    pq.write_table(table, path)
    with pytest.raises(MdadError, match=message):
        read_source(path)
    one_error(runner.invoke(app, ["info", str(path)]), message)


@pytest.mark.parametrize(
    "frame, message",
    [
        (pd.DataFrame({"a": pd.to_timedelta([1, 2], unit="s"), "b": [1, 0]}, index=["x", "y"]), "holds timedelta64"),
        (pd.DataFrame({"a": [1.0, 0.0], "b": [1, 0]}, index=["x", np.nan]), "row 2 has no model name"),
        (pd.DataFrame({"a": [1.0, 0.0], "b": [1, 0]}, index=["x", None]), "row 2 has no model name"),
        (pd.DataFrame({"a": [1 + 2j, 0], "b": [1, 0]}, index=["x", "y"]), "holds complex128 values"),
        (pd.DataFrame({"a": [1 + 2j, "0"], "b": [1, 0]}, index=["x", "y"]), "is (1+2j), not a number"),
    ],
)
def test_from_frame_refuses_what_is_not_scores(frame, message):
    with pytest.raises(MdadError, match=message.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        from_frame(frame)


def test_npz_with_complex_scores_or_fractional_gold(tmp_path):
    np.savez(tmp_path / "c.npz", scores=np.ones((2, 2)) + 1j, models=["a", "b"], items=["i", "j"])
    with pytest.raises(MdadError, match="scores must be real numbers, got dtype complex128"):
        read_source(tmp_path / "c.npz")
    np.savez(
        tmp_path / "g.npz",
        scores=np.ones((2, 2)),
        models=["a", "b"],
        items=["i", "j"],
        option_probs=np.full((2, 2, 2), 0.5),
        gold=np.array([0.7, 1.0]),
    )
    with pytest.raises(MdadError, match="g.npz: gold must give each item's gold option as a whole number; item 'i' has 0.7"):
        read_source(tmp_path / "g.npz")


# ---- 5. requests that cannot fit are refused up front ------------------------------------------
def test_runs_that_cannot_fit_are_refused_before_allocating(tmp_path):
    one_error(
        runner.invoke(app, ["run", "--runs", "100000000000", "--methods", "random", "--out", str(tmp_path / "o")]),
        "100,000,000,000 held-out runs of 50 targets (1,225 pairs each) would need about",
        "of memory, but only",
    )


def test_runs_whose_pairs_of_targets_cannot_fit_are_refused_before_any_work(tmp_path, monkeypatch):
    """On GPQA (420 models, 448 items, 50 targets) the draws of 1,000,000 runs take 16.7 GB, which 20 GB
    holds, but the metrics keep 1,225 pairs of targets per run (about 256 bytes each): 330 GB."""
    monkeypatch.setattr("mdad.memory.available_bytes", lambda: 20 * 10**9)
    out = tmp_path / "o"
    result = runner.invoke(app, ["run", "--runs", "1000000", "--methods", "random", "--sizes", "10", "--out", str(out)])
    one_error(result, "1,000,000 held-out runs of 50 targets (1,225 pairs each) would need about 330.3 GB", "only 20.0 GB is available")
    assert not out.exists()


def _npz_declaring(path: Path, shape: tuple) -> Path:
    header = {"descr": "<f4", "fortran_order": False, "shape": shape}
    with zipfile.ZipFile(path, "w") as z:
        with z.open("scores.npy", "w") as f:
            np.lib.format.write_array_header_1_0(f, header)
            f.write(b"\0" * 64)
        for name in ("models", "items"):
            with z.open(f"{name}.npy", "w") as f:
                np.lib.format.write_array(f, np.array(["a"]))
    return path


def test_npz_declaring_a_huge_shape_is_damaged_not_a_memory_error(tmp_path):
    path = _npz_declaring(tmp_path / "huge.npz", (10**6, 10**7))
    with pytest.raises(MdadError, match=r"declares shape \(1000000, 10000000\) \(40.0 TB\) but holds"):
        read_source(path)
    one_error(runner.invoke(app, ["info", str(path)]), "the file is damaged")


def test_eval_log_of_whitespace_is_one_sentence(tmp_path):
    path = tmp_path / "blank.eval"
    path.write_text(" " * 1_000_000)
    one_error(runner.invoke(app, ["info", str(path)]), str(path))


def test_compare_table_of_every_pair_that_cannot_fit_is_refused_and_the_command_streams(tmp_path, monkeypatch):
    """The library's whole table of pairs is refused up front; the command streams its pairs in blocks
    (docs/plan.md), so it answers in the same little memory."""
    import mdad
    import mdad.memory

    monkeypatch.setattr(mdad.memory, "available_bytes", lambda: 10_000)
    matrix = small_matrix()
    with pytest.raises(MdadError, match="A table of 66 pairs of models would need about .* of memory, but only 10 kB is available"):
        mdad.compare(matrix, size=5)
    data = wide_csv(tmp_path / "d.csv", matrix)
    result = runner.invoke(app, ["compare", "--data", str(data), "--size", "5", "--csv", str(tmp_path / "pairs.csv")])
    assert result.exit_code == 0, result.output
    assert len(pd.read_csv(tmp_path / "pairs.csv")) == 66
    one_error(  # every pair printed (--top 0) is a whole table again
        runner.invoke(app, ["compare", "--data", str(data), "--size", "5", "--top", "0"]),
        "A table of 66 pairs of models would need about",
        "of memory, but only 10 kB is available",
    )


# ---- 6. the remaining tracebacks ----------------------------------------------------------------
def test_compare_with_a_single_model(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("model,i0,i1\nm0,1,0\n")
    one_error(runner.invoke(app, ["compare", "--data", str(path), "--size", "1"]), "holds a single model")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_and_device_links_are_not_results(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    one_error(runner.invoke(app, ["info", str(fifo)]), f"{fifo} is neither a file nor a folder")
    link = tmp_path / "zero.npz"
    link.symlink_to("/dev/zero")
    one_error(runner.invoke(app, ["info", str(link)]), f"{link} is neither a file nor a folder")


def test_json_nested_very_deep(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    one_error(runner.invoke(app, ["info", str(path)]), str(path))


def test_scheduler_that_is_not_an_address(tmp_path):
    one_error(
        runner.invoke(app, ["run", "--scheduler", "not a url", "--out", str(tmp_path / "o")]), "--scheduler 'not a url' is not a scheduler address"
    )


def _micro_file(tmp_path: Path) -> tuple[Path, dict]:
    chosen = select(small_matrix(), "random", 5, seed=0)
    path = tmp_path / "m.json"
    chosen.save(path)
    return path, json.loads(path.read_text())


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["estimator"].update(weights=[0.5, 0.5]), "the estimator has 2 weights for 5 items"),
        (lambda d: d.update(estimator="mean"), "the estimator must be an object of parameters, not str"),
        (lambda d: d.update(items=[], subtasks=[], pool_positions=[]), "it lists no items"),
        (lambda d: d["estimator"].update(weights=[float("nan")] * 5), "holds values that are not finite numbers"),
        (lambda d: d.update(pool_positions=["a"] * 5), "pool_positions must be a list of integers"),
        (lambda d: d["estimator"].update(weights="abc"), "the estimator's weights must be numbers, one per item"),
        (lambda d: d["estimator"].update(weights=[1.0] * 5), "weights must be non-negative and sum to 1"),
        (lambda d: d["estimator"].update(weights=[-0.2] * 5), "weights must be non-negative and sum to 1"),
        (lambda d: d["estimator"].update(weights=[1e308] * 5), "not sum to inf"),
        (lambda d: d.update(seed=True), "the field 'seed' must be a whole number"),
        (lambda d: d.update(tasks=[1]), "the field 'tasks' must map each subtask to an object"),
        (lambda d: d.update(method="nope"), "the field 'method': Unknown method 'nope'"),
    ],
)
def test_hand_edited_micro_benchmark_files(tmp_path, edit, message):
    path, data = _micro_file(tmp_path)
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(MdadError, match=message):
        SelectedMicroBenchmark.load(path)
    wide_csv(tmp_path / "d.csv", small_matrix())
    one_error(runner.invoke(app, ["estimate", str(path), str(tmp_path / "d.csv")]), str(path), message)


def _assessed_micro_file(tmp_path: Path) -> tuple[Path, dict]:
    import mdad

    matrix = small_matrix(n_models=20)
    chosen = select(matrix, "random", 5, seed=0).with_assessment(mdad.assess(matrix, "random", 5, runs=10, seed=0))
    path = tmp_path / "m.json"
    chosen.save(path)
    wide_csv(tmp_path / "d.csv", matrix)
    return path, json.loads(path.read_text())


def _first_residual(value: float):
    def edit(data: dict) -> None:
        data["assessment"]["interval_calibration"]["residuals"][0][0] = value

    return edit


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda a: a.update(mdad=-5.0), "gives mdad -5.0; it must be null (not reached) or between 0 and 100 points"),
        (lambda a: a.update(mdad_high=1e9), "gives mdad_high 1000000000.0"),
        (lambda a: a.update(mdad_robust="7"), "gives mdad_robust '7'"),
        (lambda a: a.update(kendall_tau=2.0), "gives kendall_tau 2.0; it must be null (not reached) or between -1 and 1"),
        (lambda a: a.update(error=-0.1), "gives error -0.1"),
        (lambda a: a["order_calibration"].update(intercept=1e400), "order calibration that is not finite numbers"),
        (lambda a: a["order_calibration"].update(pairs=0), "order calibration that is not finite numbers over at least 1 pair"),
    ],
    ids=["mdad -5", "mdad_high 1e9", "mdad_robust a text", "tau 2", "error -0.1", "order intercept inf", "order pairs 0"],
)
def test_hand_edited_assessment_numbers_are_refused(tmp_path, edit, message):
    path, data = _assessed_micro_file(tmp_path)
    edit(data["assessment"])
    path.write_text(json.dumps(data))
    with pytest.raises(MdadError, match=re.escape(message)):
        SelectedMicroBenchmark.load(path)
    one_error(runner.invoke(app, ["estimate", str(path), str(tmp_path / "d.csv")]), str(path), message)


@pytest.mark.parametrize("value", [50.0, float("inf")], ids=["residual 50", "residual inf"])
def test_interval_residuals_that_are_not_accuracy_differences_are_refused(tmp_path, value):
    path, data = _assessed_micro_file(tmp_path)
    _first_residual(value)(data)
    path.write_text(json.dumps(data))
    with pytest.raises(MdadError, match="interval calibration whose edges or residuals are not accuracies"):
        SelectedMicroBenchmark.load(path)


def test_an_undefined_kendall_tau_is_said_not_printed_as_nan(tmp_path):
    path, data = _assessed_micro_file(tmp_path)
    data["assessment"]["kendall_tau"] = None  # every run's estimates tie: tau-b is undefined
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["estimate", str(path), str(tmp_path / "d.csv")])
    assert result.exit_code == 0, result.output
    assert "no Kendall tau (every run's estimates or accuracies tie)" in flat(result.output)
    assert not re.search(r"\bnan\b", result.output, re.IGNORECASE), result.output


def test_assessment_runs_beyond_memory_are_refused_before_the_selection(tmp_path, monkeypatch):
    """The draws of 100,000 runs fit in 1 GB (264 MB), the pairs of their targets do not (4.9 GB)."""
    monkeypatch.setattr("mdad.memory.available_bytes", lambda: 10**9)
    path = tmp_path / "d.csv"
    wide_csv(path, small_matrix(n_models=40))
    out = tmp_path / "m.json"
    result = runner.invoke(app, ["select", "--data", str(path), "--method", "random", "--size", "5", "--assess-runs", "100000", "--out", str(out)])
    one_error(result, "100,000 held-out runs of 20 targets (190 pairs each) would need about", "of memory")
    assert not out.exists()


# ---- 8. conflicting options are refused ---------------------------------------------------------
@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--data", "{tmp}/d.csv", "--dataset", "simulated"], "Give the data once: --data"),
        (["plan", "--size", "5", "--data", "{tmp}/d.csv", "--dataset", "simulated"], "Give the data once: --data"),
        (["run", "--group", "g", "--targets", "5"], "Give --group (a fixed set of targets) or --targets"),
        (["run", "--metric", "acc_norm"], "--metric applies to harness results given with --data"),
        (
            ["select", "--method", "random", "--size", "5", "--out", "{tmp}/m.json", "--metric", "acc", "--dataset", "simulated"],
            "--metric applies to harness results given with --data",
        ),
        (["run", "--out", ""], "Give a name for the output folder; it is empty"),
        (["run", "--methods", ""], "--methods is empty"),
        (["run", "--methods", " , "], "--methods is empty"),
        (["run", "--sources", ""], "--sources is empty"),
        (["plan", "--size", "5", "--results", "{tmp}", "--data", "{tmp}/d.csv"], "--results answers from a finished run's"),
    ],
)
def test_conflicting_or_empty_options_are_refused(tmp_path, args, message):
    wide_csv(tmp_path / "d.csv", small_matrix())
    one_error(runner.invoke(app, [a.format(tmp=tmp_path) for a in args]), message)


# ---- the corpus as a whole: no command ever prints a traceback ----------------------------------
def test_usage_errors_are_one_line():
    one_error(runner.invoke(app, ["run", "--no-such-option"]), "No such option: --no-such-option", "(see 'mdad run --help')")
    one_error(
        runner.invoke(app, ["run", "--missing", "sometimes"]),
        "Invalid value for '--missing': 'sometimes' is not one of 'error', 'drop-items', 'drop-models'",
    )
    one_error(runner.invoke(app, ["compare", "--size", "5", "--method", "diversity"]), "Invalid value for '--method'")
    one_error(runner.invoke(app, ["run", "--runs", "0"]), "Invalid value for '--runs'")


def test_figure_formats_offered_are_those_the_report_writes():
    from mdad.cli.common import FIGURE_FORMATS
    from mdad.report.figures import FORMATS

    assert set(FIGURE_FORMATS) == set(FORMATS)


def test_no_message_says_one_models(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("model,i0,i1\nm0,1,0\n")
    result = runner.invoke(app, ["convert", str(path), "--out", str(tmp_path / "x.npz")])
    assert result.exit_code == 0 and "1 model x 2 items" in flat(result.output)
    assert "1 subtask," in repr(read_source(path))


def test_command_line_entry_point_prints_no_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mdad.cli", "info", "nope[/i].npz"], capture_output=True, text=True, timeout=BOUND
    )  # a hang fails here, however slow a busy machine makes the start
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "error: No such file or folder: nope[/i].npz."
