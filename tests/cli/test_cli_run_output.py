"""What mdad run and mdad report print: summary tables that never cut a number, an interval, 'not
reached', a method name or a header word, at 80 columns (a terminal, or a pipe where rich assumes 80)
and at 200; tables too wide are split, columns too wide even alone become lines."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from mdad.cli.tables import TableColumn, print_fitted
from mdad.experiment.evaluate import METRICS, VIEWS
from mdad.report.tables import wide_summary

# small sizes given as shares, as a user tries first; stratified-confidence at 2 items has negative taus
METHODS = ["random", "stratified-confidence", "random-stratified-proportional", "tinybenchmarks-gpirt"]
RUN = ["run", "--dataset", "gpqa", "--sizes", "0.5%,1%,2%", "--runs", "2", "--methods", ",".join(METHODS)]


def _mdad(*args: str, columns: int) -> str:
    """The command's standard output, run as a user runs it with its output piped, at ``columns``."""
    env = {**os.environ, "COLUMNS": str(columns)}
    done = subprocess.run([sys.executable, "-m", "mdad.cli", *args], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def run80(tmp_path_factory) -> tuple[Path, str]:
    """A tiny run on the built-in gpqa and what it printed at 80 columns."""
    out = tmp_path_factory.mktemp("run") / "out"
    return out, _mdad(*RUN, "--verbose", "--out", str(out), columns=80)


def _expected_cells(out: Path) -> dict[str, list[str]]:
    """Every cell of the per-method tables, from the stored summary, as the table shows it."""
    frame = wide_summary(pd.read_parquet(out / "summary.parquet"))
    cells = {f"MDAD {view}": [str(v) for v in frame[f"MDAD {view} (pts)"]] for view in VIEWS}
    for metric in METRICS:
        for view in VIEWS:
            values = frame[metric.column(view)]
            cells[metric.column(view)] = [v if isinstance(v, str) else f"{v:.{metric.digits}f}" for v in values]
    return cells


def _check_whole(output: str, out: Path, columns: int) -> None:
    assert "…" not in output  # nothing cut
    table_lines = [line for line in output.splitlines() if not line.startswith("* ")]  # the marked-cell notes are whole sentences
    assert max(len(line) for line in table_lines) <= columns
    cells = _expected_cells(out)
    taus = [cell for key, column in cells.items() if "tau" in key.lower() for cell in column]
    assert any(cell.startswith("-") for cell in taus)  # the run has negative taus to show
    for key, column in cells.items():
        for cell in column:
            # whole, between spaces on one line of a table: never '-0.0' of '-0.102' nor '[14, not reache'
            assert re.search(rf"(^| ){re.escape(cell)}( |$)", output, re.MULTILINE), (key, cell, output)
    for method in METHODS:  # the overview names every method whole at the start of its row
        assert re.search(rf"^ {re.escape(method)} ", output, re.MULTILINE), method
    for header in ("MDAD seen", "MDAD unseen", "seen", "unseen", "size", "method"):
        assert re.search(rf"(^| ){header}( |$)", output, re.MULTILINE), header


def test_run_tables_never_cut_at_80_columns(run80):
    out, output = run80
    _check_whole(output, out, 80)
    assert re.search(r"^ random, exact +(not reached|[\d.]+) ", output, re.MULTILINE)  # the exact MDAD under the simulated one


@pytest.mark.parametrize("columns", [80, 200])
def test_report_tables_never_cut(run80, columns):
    out, _ = run80
    output = _mdad("report", str(out), "--verbose", columns=columns)
    _check_whole(output, out, columns)
    splits = output.count("\n size ")  # header rows of the per-method tables
    assert splits == (2 * len(METHODS) if columns == 80 else len(METHODS))  # split at 80, one table each at 200


def _render(width: int, keys: list[TableColumn], groups: list[list[TableColumn]]) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    print_fitted(console, "a title", keys, groups)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_groups_stay_together_and_every_row_keeps_its_key():
    keys = [TableColumn("size", ["10", "250"])]
    groups = [[TableColumn(f"m{i}\nseen", ["-0.123", "0.456"]), TableColumn(f"m{i}\nunseen", ["-0.789", "0.012"])] for i in range(6)]
    wide = _render(200, keys, groups)
    narrow = _render(50, keys, groups)
    assert wide.count(" size ") == 1
    assert narrow.count(" size ") == 3  # two groups (four columns) per table at 50 columns
    for text in (wide, narrow):
        assert "…" not in text and "a title" in text
        assert text.count("-0.123") == 6 and text.count("-0.789") == 6  # every cell whole
    assert max(len(line) for line in narrow.splitlines()) <= 50
    for line in (line for line in narrow.splitlines() if " size " in line):  # a quantity's seen and unseen side by side
        words = line.split()[1:]
        assert words == ["seen", "unseen"] * (len(words) // 2)


def test_a_column_wider_than_the_console_becomes_lines():
    interval = "17.5* [14.5, not reached]"
    name = "an-organisation/a-very-long-method-name-that-fills-a-narrow-terminal"
    text = _render(30, [TableColumn("method", [name], right=False)], [[TableColumn("MDAD seen", [interval])]])
    assert "…" not in text
    assert f"method {name}: MDAD seen {interval}" in text.replace("\n", "")  # one line, wrapped, never cut
