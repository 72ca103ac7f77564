"""The default `mdad run`, as a user first runs it (piped, 80 columns): short, and the same numbers everywhere.

- the terminal shows the overview, the plain-words sentences and the main caveats in at most 60 lines of
  at most 80 columns; `--verbose` holds the tables per method;
- uniform random's exact MDAD stands beside its simulated one in the terminal, table.csv, summary.csv and
  report.html, with the same values, and the terminal's sentences are the report's;
- what README.md and docs/running.md quote of this run is what the tool prints (each quote is checked here,
  so a page cannot drift from the tool's output without this test failing).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from support.paths import ROOT

from mdad.methods import defaults
from mdad.report.tables import format_mdad

LINES, COLUMNS = 60, 80

# page -> sentences it quotes from the default run's terminal output or report.html
QUOTES = {
    "README.md": [
        "With 100 items, the lowest MDAD is 3 points (tinybenchmarks-pirt); uniform random: 4 points (exact; simulated: 4.5 [4, 4.5]).",
    ],
    "docs/running.md": [
        "With 10 items, the lowest MDAD is 9 points (tinybenchmarks-pirt); uniform random: 21 points (exact; simulated: 17* [14, 18.5]).",
        "With 100 items, the lowest MDAD is 3 points (tinybenchmarks-pirt); uniform random: 4 points (exact; simulated: 4.5 [4, 4.5]).",
        "With 10 items (4.5% of the seen pool), anchor-points orders models at least 10.5 points apart correctly 80% of the time",
    ],
}


def flat(text: str) -> str:
    return " ".join(text.split())


def page_text(report: Path) -> str:
    """The report's words without its tags (and without its embedded figures)."""
    body = re.sub(r"<(style|script)[^>]*>.*?</\1>", " ", report.read_text(), flags=re.DOTALL)
    return flat(html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"data:image/png;base64,[^\"]+", "", body))))


@pytest.fixture(scope="module")
def default_run(tmp_path_factory) -> tuple[Path, str]:
    """`mdad run` with no options but the output folder, piped at 80 columns: the folder and what it printed."""
    out = tmp_path_factory.mktemp("default") / "out"
    env = {**os.environ, "COLUMNS": str(COLUMNS), "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-m", "mdad.cli", "run", "--out", str(out)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def test_the_default_run_prints_at_most_60_lines_of_80_columns(default_run):
    out, output = default_run
    lines = output.splitlines()
    assert len(lines) <= LINES, f"{len(lines)} lines:\n{output}"
    assert max(len(line) for line in lines) <= COLUMNS
    assert "MDAD on the seen items" in output and "In plain words" in output and "MDAD unseen" not in output  # tables: --verbose
    sentences = [line for line in lines if line.startswith("- ") or line.startswith("* ")]
    assert len(sentences) == len(set(sentences))  # each sentence and note once
    marked = int(pd.read_csv(out / "summary.csv")["mdad_marked"].sum())
    assert marked > 0 and f"* marks {marked} MDADs" in flat(output)  # the caveat counts what the tables mark


def test_exact_and_simulated_mdad_stand_side_by_side_with_the_same_numbers_everywhere(default_run):
    out, output = default_run
    summary = pd.read_csv(out / "summary.csv")
    random = summary[(summary["method"] == "random") & (summary["view"] == "seen")].sort_values("size")
    assert random["mdad_exact_reached"].all()
    # the terminal's overview: the simulated row, and under it the exact one
    for label, values in (("random", [format_mdad(r).split(" [")[0] for _, r in random.iterrows()]), ("random, exact", list(random["mdad_exact"]))):
        row = next(line for line in output.splitlines() if re.match(rf" {re.escape(label)} +[\d.]", line))
        assert row.split()[-len(values) :] == [v if isinstance(v, str) else f"{v:g}" for v in values], row
    # table.csv: the exact beside the simulated, seen and unseen
    table = pd.read_csv(out / "table.csv")
    rows = table[table["method"] == "random"].sort_values("size")
    assert [float(v) for v in rows["exact MDAD seen (pts)"]] == list(random["mdad_exact"])
    assert list(rows["MDAD seen (pts)"]) == [format_mdad(r) for _, r in random.iterrows()]
    assert "exact MDAD unseen (pts)" in table and table.loc[table["method"] != "random", "exact MDAD seen (pts)"].isna().all()
    # the sentences: the terminal's are the report's, and name both numbers
    report = page_text(out / "report.html")
    said = [flat(s) for s in re.findall(r"^- (.*?)(?=^- |^\* |^[A-Z])", output, flags=re.MULTILINE | re.DOTALL)]
    assert len(said) == random["size"].nunique()
    for sentence, (_, row) in zip(said, random.iterrows(), strict=True):
        assert sentence in report, sentence
        assert f"uniform random: {row['mdad_exact']:g} points (exact; simulated: {format_mdad(row)})" in sentence
    assert report.count("first crossing at 17 points is noise") == 1  # a note once, not twice


@pytest.mark.parametrize("page", sorted(QUOTES))
def test_the_docs_quote_what_the_default_run_prints(default_run, page):
    out, output = default_run
    text = flat((ROOT / page).read_text())
    said = flat(output) + " " + page_text(out / "report.html")
    for quote in QUOTES[page]:
        assert quote in text, f"{page} no longer quotes: {quote}"
        assert quote in said, f"{page} quotes what the tool does not print: {quote}"


def test_the_table_of_docs_running_md_is_this_run(default_run):
    out, _ = default_run
    summary = pd.read_csv(out / "summary.csv")
    random = summary[summary["method"] == "random"].set_index(["view", "size"])
    page = (ROOT / "docs" / "running.md").read_text()
    rows = [line.strip("|").split("|") for line in page.splitlines() if re.match(r"\| \d+ \| [\d.]+ \|", line)]
    assert [int(r[0]) for r in rows] == sorted(summary["size"].unique())
    for cells in rows:
        k, cells = int(cells[0]), [c.strip() for c in cells]
        seen, unseen = random.loc[("seen", k)], random.loc[("unseen", k)]
        assert cells[1] == f"{100 * seen['error']:.1f}" and cells[3] == f"{100 * unseen['error']:.1f}", (k, cells)
        assert cells[5] == f"{seen['kendall_tau']:.2f}" and cells[7] == f"{unseen['kendall_tau']:.2f}", (k, cells)
        assert cells[9] == format_mdad(seen).split(" [")[0] and cells[10] == f"{seen['mdad_exact']:g}", (k, cells)


def test_every_table_of_the_default_report_fits_1280_pixels(default_run, tmp_path):
    from support.browser import find_chromium, tables_fit

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium, or set MDAD_CHROMIUM); .ci/run installs it")
    out, _ = default_run
    assert tables_fit(chromium, out / "report.html", tmp_path / "profile") == []


def test_the_numbers_the_docs_give_in_prose_are_this_run_s(default_run):
    out, _ = default_run
    summary = pd.read_csv(out / "summary.csv")
    seen = summary[summary["view"] == "seen"].set_index(["method", "size"])
    random10, random100, anchor10 = seen.loc[("random", 10)], seen.loc[("random", 100)], seen.loc[("anchor-points", 10)]
    readme = flat((ROOT / "README.md").read_text())
    assert (
        f"simulated MDAD {random10['mdad']:g} points at 10 items and {random100['mdad']:g} at 100, "
        f"exact {random10['mdad_exact']:g} and {random100['mdad_exact']:g}"
    ) in readme
    running = flat((ROOT / "docs" / "running.md").read_text())
    assert f"this run's 95% interval is [{random10['mdad_low']:g}, {random10['mdad_high']:g}]" in running
    assert f"anchor-points at 10 items: {anchor10['mdad']:g} points here" in running


def test_default_run_writes_results_tables_and_report(default_run, tmp_path):
    out = tmp_path / "o"
    shutil.copytree(default_run[0], out)  # the report is rebuilt below: the shared run stays as it was
    output = default_run[1]
    assert "MDAD on the seen items" in output and "random-stratified-equal" in output
    assert "MDAD unseen" not in output  # the tables per method are behind --verbose
    n = len(defaults())
    # the default data: the paper's GPQA matrix, bundled
    sizes = len(json.loads((out / "config.json").read_text())["sizes"])
    assert (
        f"gpqa (the GPQA matrix of the paper, Open LLM Leaderboard v2): 420 models x 448 items (1 subtask, 224 seen "
        f"per run); 50 runs of 50 targets; {n} methods x {sizes} sizes x 1 source count = {sizes * n} cells."
    ) in flat(output)
    assert (
        'gpqa: GPQA main, Open LLM Leaderboard v2, the matrix of "How Reliable is Language Model Micro-Benchmarking?" '
        "(Yauney, Warraich, Swayamdipta, ICLR 2026)."
    ) in flat(output)
    for name in ("summary.parquet", "summary.csv", "curves.csv", "table.csv", "report.html", "config.json"):
        assert (out / name).is_file(), name
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["method"]) == set(defaults())  # every method but the adaptive family by default
    assert set(summary["view"]) == {"seen", "unseen"}
    assert {"mdad_robust", "mdad_robust_low", "mdad_robust_high"} <= set(summary.columns)
    html = (out / "report.html").read_text()
    assert "How Reliable is Language Model Micro-Benchmarking?" in html and "(real model outputs)" in html
    assert html.count("data:image/png;base64,") >= 3
    # the closing overview: one line per method with its seen MDAD at each size
    overview = output.split("MDAD on the seen items")[1]
    seen = summary[summary["view"] == "seen"]
    for method in defaults():
        line = next(row for row in overview.splitlines() if row.split()[:1] == [method])
        values = seen[seen["method"] == method].sort_values("size")
        expected = " ".join(
            f"{v:g}{'*' if marked else ''}" if ok else "not reached"  # *: the first crossing is noise
            for v, ok, marked in zip(values["mdad"], values["mdad_reached"], values["mdad_marked"], strict=True)
        )
        assert line.split()[1:] == expected.split()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "mdad.cli", "report", str(out), "--threshold", "0.9"]
    rebuilt = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert rebuilt.returncode == 0, rebuilt.stderr
    stricter = pd.read_csv(out / "summary.csv")
    merged = summary.merge(stricter, on=["method", "size", "sources", "view"])
    reached = merged["mdad_reached_x"] & merged["mdad_reached_y"]
    assert (merged.loc[reached, "mdad_y"] >= merged.loc[reached, "mdad_x"]).all()
