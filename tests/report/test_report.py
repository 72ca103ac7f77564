"""The report: every figure, tables, the group analysis, and a rebuild from stored results alone."""

from __future__ import annotations

import itertools
import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from support.report_fixture import FIGURE_KEYS, GROUP, built_report_fixture  # noqa: F401  (registers the built_report fixture)
from typer.testing import CliRunner

from mdad.cli import app
from mdad.experiment.store import ResultStore
from mdad.report import figures
from mdad.report.group import group_differences, group_shares, share_below
from mdad.report.html import build_outputs, comparison_sentences, summary_sentences

runner = CliRunner()


def embedded_pngs(html: str) -> list[str]:
    return re.findall(r'src="data:image/png;base64,([^"]+)"', html)


def test_run_writes_every_figure_embedded_and_as_files(built_report):
    html = (built_report / "report.html").read_text()
    assert len(embedded_pngs(html)) == len(FIGURE_KEYS)
    assert sorted(p.stem for p in (built_report / "figures").glob("*.svg")) == sorted(FIGURE_KEYS)
    assert all(png.startswith("iVBORw0KGgo") for png in embedded_pngs(html))  # PNG signature
    for words in (
        "Seen vs unseen",
        "Number of source models",
        f"Fixed group: {GROUP}",
        "@per-subtask",
        "probability of the gold option",
        "4% = 7 items",
        "--group close",
        "Seed",
    ):
        assert words in html, words
    config = json.loads((built_report / "config.json").read_text())
    assert config["size_requests"][1] == {"requested": "4%", "items": 7}  # max(2, floor(0.04 * 199))
    assert set(config["methods"]) == {"random", "random-stratified-equal", "random@per-subtask", "random-stratified-equal@per-subtask"}


def test_not_reached_is_never_a_number(built_report):
    summary = pd.read_csv(built_report / "summary.csv")
    missed = summary[~summary["mdad_reached"]]
    assert len(missed), "the fixture should contain a cell where MDAD is not reached"
    table = pd.read_csv(built_report / "table.csv")
    merged = table.merge(missed[missed["view"] == "seen"], on=["method", "size", "sources"])
    assert (merged["MDAD seen (pts)"] == "not reached").all()
    text = re.sub(r"data:image/png;base64,[^\"]+", "", (built_report / "report.html").read_text())
    assert "not reached" in text and not re.search(r"\bnan\b", text, re.IGNORECASE)


def test_rebuild_from_config_index_and_cells_alone_gives_the_same_page(built_report, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(built_report / "config.json", copy / "config.json")
    shutil.copy(built_report / "index.json", copy / "index.json")
    shutil.copytree(built_report / "cells", copy / "cells")
    result = runner.invoke(app, ["report", str(copy)])
    assert result.exit_code == 0, result.output
    assert (copy / "report.html").read_text() == (built_report / "report.html").read_text()
    for name in ("summary.csv", "curves.csv", "table.csv", "group.csv"):
        assert (copy / name).read_text() == (built_report / name).read_text(), name


def test_one_process_builds_the_same_page_and_figures_as_several(built_report, tmp_path):
    """The fixture's run drew its report in two worker processes; one process gives the same bytes."""
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(built_report / "config.json", copy / "config.json")
    shutil.copy(built_report / "index.json", copy / "index.json")
    shutil.copytree(built_report / "cells", copy / "cells")
    result = runner.invoke(app, ["report", str(copy), "--workers", "1", "--figures", "svg"])
    assert result.exit_code == 0, result.output
    assert (copy / "report.html").read_text() == (built_report / "report.html").read_text()
    for name in ("summary.csv", "curves.csv", "group.csv"):
        assert (copy / name).read_text() == (built_report / name).read_text(), name
    for svg in (built_report / "figures").glob("*.svg"):
        assert (copy / "figures" / svg.name).read_bytes() == svg.read_bytes(), svg.name


def test_group_shares_against_a_pair_loop(built_report):
    store = ResultStore(built_report)
    diffs = group_differences(store)
    frame = store.read(store.cells()[0])
    first = frame[frame["run"] == 0].set_index("model")["full"]
    loop = [abs(first[a] - first[b]) * 100 for a, b in itertools.combinations(first.index, 2)]
    np.testing.assert_allclose(np.sort(diffs), np.sort(loop), atol=1e-9)
    assert len(first) == len(json.loads((built_report.parent / "data" / "groups.json").read_text())[GROUP])
    for mdad in (0.5, 2.0, 3.5, 7.0):
        brute = np.mean([np.floor(d / 0.5 + 1e-9) * 0.5 < mdad for d in loop])
        assert share_below(diffs, mdad) == pytest.approx(brute)
    assert share_below(diffs, float("nan")) == 1.0
    shares = pd.read_csv(built_report / "group.csv")
    assert ((shares["share_low"] <= shares["share_below"]) & (shares["share_below"] <= shares["share_high"])).all()
    summary = pd.read_csv(built_report / "summary.csv")
    again = group_shares(summary, diffs, int(summary["sources"].max()))
    np.testing.assert_allclose(again["share_below"], shares["share_below"])


def test_threshold_and_curve_sizes_on_report(built_report, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(built_report, copy)
    result = runner.invoke(app, ["report", str(copy), "--threshold", "0.7", "--curve-sizes", "8,4%,120", "--figures", "pdf"])
    assert result.exit_code == 0, result.output
    html = (copy / "report.html").read_text()
    assert "at least 70% of the time" in html and "Sizes: 7, 8, 120." in html
    assert (copy / "figures" / "agreement_curves.pdf").read_bytes().startswith(b"%PDF")
    looser, stricter = pd.read_csv(copy / "summary.csv"), pd.read_csv(built_report / "summary.csv")
    both = looser.merge(stricter, on=["method", "size", "sources", "view"])
    assert (both["mdad_reached_x"] >= both["mdad_reached_y"]).all()
    ok = both["mdad_reached_y"]
    assert (both.loc[ok, "mdad_x"] <= both.loc[ok, "mdad_y"]).all()
    bad = runner.invoke(app, ["report", str(copy), "--curve-sizes", "9"])
    assert bad.exit_code == 2 and "No stored results for curve size 9" in bad.output
    bad = runner.invoke(app, ["report", str(copy), "--figures", "gif"])
    assert bad.exit_code == 2 and "Invalid value for '--figures': 'gif' is not one of 'png', 'svg', 'pdf'" in " ".join(bad.output.split())


def test_summary_sentences_in_plain_words():
    summary = pd.DataFrame(
        {
            "method": ["anchor-points"] * 3,
            "size": [10, 25, 100],
            "sources": 300,
            "view": "seen",
            "mdad": [np.nan, 8.0, 4.5],
            "mdad_reached": [False, True, True],
        }
    )
    (sentence,) = summary_sentences(summary, 0.8, n_seen=224)
    assert sentence == (
        "With 10 items (4.5% of the seen pool), no accuracy difference is ordered correctly 80% of the time "
        "(MDAD not reached); with 25 items, anchor-points orders models at least 8 points apart correctly "
        "80% of the time; with 100 items, models at least 4.5 points apart."
    )


def test_comparison_sentences_name_the_best_method_and_where_random_stands():
    nan = np.nan
    summary = pd.DataFrame(
        {
            "method": ["random", "anchor-points", "diversity"] * 3,
            "sources": 300,
            "view": "seen",
            "size": [10] * 3 + [50] * 3 + [100] * 3,
            "mdad": [19, 6.5, 15, 7, 5.5, 5.5, 2, 2, 2.5],
            "mdad_low": [17, 6, 14, 6, 5, 5, 1.5, 1.5, 2],
            "mdad_high": [21, 7, 16, 8, 6.5, 6, 2.5, 2.5, 3],
            "mdad_reached": True,
        }
    )
    unseen = summary.assign(view="unseen", mdad=nan, mdad_reached=False)  # other views do not count
    assert comparison_sentences(pd.concat([summary, unseen])) == [
        "With 10 items, the lowest MDAD is 6.5 points (anchor-points); uniform random: 19 points.",
        "With 50 items, the lowest MDAD is 5.5 points (anchor-points, diversity); uniform random: 7 points "
        "(its 95% interval overlaps the best one's: no clear difference).",
        "With 100 items, the lowest MDAD is 2 points (anchor-points, random), uniform random among them.",
    ]
    lost = summary.assign(mdad=nan, mdad_reached=False)[summary["size"] == 10]
    assert comparison_sentences(lost) == ["With 10 items, no method reaches the threshold (MDAD not reached for all)."]
    assert comparison_sentences(summary[summary["method"] == "random"]) == []


def test_figures_mark_not_reached_and_label_sizes_with_shares():
    summary = pd.DataFrame(
        {
            "method": ["random"] * 4,
            "size": [10, 10, 50, 50],
            "sources": 100,
            "view": ["seen", "unseen"] * 2,
            "mdad": [np.nan, np.nan, 6.0, 7.5],
            "mdad_low": [9.0, np.nan, 5.0, 6.0],
            "mdad_high": [np.nan, np.nan, 7.0, 9.0],
            "mdad_reached": [False, False, True, True],
            "error": 0.05,
            "kendall_tau": 0.6,
        }
    )
    fig = figures.mdad_vs_size(summary, n_seen=200)
    seen_ax = fig.axes[0]
    assert [t.get_text() for t in seen_ax.get_xticklabels()] == ["10\n5%", "50\n25%"]
    assert "not reached" in [t.get_text() for t in seen_ax.get_yticklabels()]
    hollow = [c for c in seen_ax.collections if c.get_offsets().shape[0] == 1 and c.get_offsets()[0, 0] == 10]
    assert hollow, "the not-reached size should carry a marker in the strip"
    assert hollow[0].get_offsets()[0, 1] > max(t for t in seen_ax.get_yticks() if t < 20) - 1e-9
    figures.render(fig)


def test_empty_store_still_writes_a_page(tmp_path):
    ResultStore(tmp_path).open_for({"seed": 0, "data_source": "x"})
    out = build_outputs(tmp_path)
    assert "No finished cells yet." in out.report.read_text()


def test_real_gpqa_report_has_every_figure(shared_data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MDAD_DATA_DIR", str(shared_data_dir))
    out = tmp_path / "gpqa"
    result = runner.invoke(
        app,
        [
            "run",
            "--dataset",
            "oll2-gpqa",
            "--methods",
            "random,random-stratified-equal",
            "--per-subtask",
            "--sizes",
            "10,5%,100",
            "--sources",
            "50,300",
            "--runs",
            "5",
            "--group",
            "7b_instruct",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text()
    assert len(embedded_pngs(html)) == len(FIGURE_KEYS)
    assert "oll2-gpqa" in html and "real model outputs" in html and "0/1 correctness" in html
    assert json.loads((out / "config.json").read_text())["size_requests"][1] == {"requested": "5%", "items": 11}


def test_trust_section_checks_calibration_on_runs_it_did_not_see(built_report):
    """Coverage and decision curve of one cell against a direct loop over its stored runs."""
    from mdad.experiment.evaluate import cell_arrays
    from mdad.experiment.store import Cell, ResultStore
    from mdad.report.trust import trust_frames

    store = ResultStore(built_report)
    coverage, decision = trust_frames(store, 60)
    arrays = cell_arrays(store.read(Cell("random", 40, 60)))
    est, truth = arrays["estimate"], arrays["seen"]  # 4 runs of the 10-model group: 2 calibrate (one bin), 2 check
    residuals = np.sort((truth[:2] - est[:2]).ravel())
    assert len(residuals) == 20  # ranks floor(21 x 0.05) = 1 and ceil(21 x 0.95) = 20
    low, high = est[2:] + residuals[0], est[2:] + residuals[19]
    row = coverage[(coverage["method"] == "random") & (coverage["size"] == 40) & (coverage["level"] == 0.9)]
    assert row["coverage"].iloc[0] == pytest.approx(np.mean((low <= truth[2:]) & (truth[2:] <= high)))
    held, pairs = {}, {}
    for run in (2, 3):
        for i in range(est.shape[1]):
            for j in range(i + 1, est.shape[1]):
                gap = 100 * abs(est[run, i] - est[run, j])
                if gap == 0:
                    continue
                b = int(np.floor(gap / 0.5 + 1e-9))
                pairs[b] = pairs.get(b, 0) + 1
                held[b] = held.get(b, 0) + ((est[run, i] - est[run, j]) * (truth[run, i] - truth[run, j]) > 0)
    curve = decision[(decision["method"] == "random") & (decision["size"] == 40)]
    assert curve["pairs"].tolist() == [pairs[b] for b in sorted(pairs)]
    np.testing.assert_allclose(curve["held"], [held[b] / pairs[b] for b in sorted(pairs)])
    assert "Trust in single estimates" in (built_report / "report.html").read_text()


def test_the_report_checks_calibration_from_the_evaluations_reading_of_each_cell(built_report):
    """The report computes the trust section's frames beside the evaluation, in its worker processes, from one
    reading of each cell: the same frames as reading the cells again, the same summary as the evaluation alone,
    and the work done meanwhile in this process."""
    import os

    from mdad.experiment.evaluate import evaluate_store, evaluate_store_with
    from mdad.experiment.store import ResultStore
    from mdad.report.trust import cell_trust, combine_trust, trust_frames

    store = ResultStore(built_report)
    here: list[int] = []
    summary, curves, parts = evaluate_store_with(store, cell_trust, workers=2, meanwhile=lambda: here.append(os.getpid()))
    assert here == [os.getpid()]
    alone_summary, alone_curves = evaluate_store(store)
    pd.testing.assert_frame_equal(summary, alone_summary)
    pd.testing.assert_frame_equal(curves, alone_curves)
    coverage, decision = combine_trust([parts[cell] for cell in store.cells() if cell.sources == 60])
    direct_coverage, direct_decision = trust_frames(store, 60)
    assert len(direct_coverage) and len(direct_decision)
    pd.testing.assert_frame_equal(coverage, direct_coverage)
    pd.testing.assert_frame_equal(decision, direct_decision)


def test_the_evaluation_reads_the_frames_the_run_holds_not_the_files_again(built_report, tmp_path):
    """`mdad run` hands the evaluation the cells' frames it has just stored: the same summary and curves as
    reading every file (test_rebuild_from_config_and_cells_alone_gives_the_same_page: the same page), and the
    files are not read again (here they are damaged after the frames were taken)."""
    from mdad.experiment.evaluate import evaluate_store, evaluate_store_with

    copy = tmp_path / "copy"
    shutil.copytree(built_report, copy)
    store = ResultStore(copy)
    frames = {cell: store.read(cell) for cell in store.cells()}
    summary, curves = evaluate_store(store)
    for cell in frames:
        (copy / cell.relative_path).write_bytes(b"damaged")
    for workers in (1, 2):
        held_summary, held_curves, _ = evaluate_store_with(store, None, workers=workers, frames=frames)
        pd.testing.assert_frame_equal(held_summary, summary)
        pd.testing.assert_frame_equal(held_curves, curves)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_summary_is_handed_over_once_while_the_figures_are_drawn(built_report, tmp_path, workers):
    """``on_summary`` (what `mdad run` prints its tables from) is called once, in this process, with the
    summary and exact MDADs the outputs hold, the summary files already written; the page is unchanged."""
    import os

    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(built_report / "config.json", copy / "config.json")
    shutil.copy(built_report / "index.json", copy / "index.json")
    shutil.copytree(built_report / "cells", copy / "cells")
    calls = []
    outputs = build_outputs(
        copy, workers=workers, on_summary=lambda summary, exact: calls.append((os.getpid(), summary, exact, (copy / "table.csv").is_file()))
    )
    assert len(calls) == 1
    pid, summary, exact, written = calls[0]
    assert pid == os.getpid() and written
    pd.testing.assert_frame_equal(summary, outputs.summary)
    assert exact == outputs.exact
    assert (copy / "report.html").read_text() == (built_report / "report.html").read_text()


def test_report_rebuilds_the_same_page_from_another_folder_and_says_when_the_data_is_gone(small_sim, tmp_path, monkeypatch):
    """The run records the absolute path of its data and its reading options; `mdad report` reads the data
    again from any folder and checks its fingerprint; when the data has changed or gone, the page says so."""
    from mdad.data import write_npz

    work = tmp_path / "work"
    work.mkdir()
    write_npz(small_sim.take(items=np.arange(120)), work / "data.npz")
    monkeypatch.chdir(work)
    first = runner.invoke(
        app,
        [
            "run",
            "--data",
            "data.npz",
            "--methods",
            "random",
            "--sizes",
            "10",
            "--runs",
            "3",
            "--targets",
            "10",
            "--sources",
            "30",
            "--workers",
            "1",
            "--out",
            "out",
        ],
    )
    assert first.exit_code == 0, first.output
    config = json.loads((work / "out" / "config.json").read_text())
    assert config["data"]["path"] == str((work / "data.npz").resolve()) and config["data"]["missing"] == "error"
    monkeypatch.chdir(tmp_path)
    again = runner.invoke(app, ["report", str(work / "out")])
    assert again.exit_code == 0, again.output
    html = (work / "out" / "report.html").read_text()
    assert "Exact and simulated agreement, 10 items" in html and "Not drawn" not in html
    write_npz(small_sim.take(items=np.arange(100)), work / "data.npz")  # the data changed since the run
    changed = runner.invoke(app, ["report", str(work / "out")])
    assert changed.exit_code == 0, changed.output
    html = " ".join((work / "out" / "report.html").read_text().split())
    assert "Not drawn: the data at" in html and "has changed since the run" in html
    (work / "data.npz").unlink()
    runner.invoke(app, ["report", str(work / "out")])
    html = " ".join((work / "out" / "report.html").read_text().split())
    assert "Not drawn: the run&#39;s data" in html and "no longer exists" in html


def test_a_one_item_size_is_titled_in_the_singular():
    from mdad.report.figures import size_title

    assert size_title(1, 200) == "1 item (0.5% of the seen pool)"
    assert size_title(10, None) == "10 items"
