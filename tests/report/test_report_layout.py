"""The report's layout: code as code, one table per view, one decision-curve panel per method."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from mdad.cli import app
from mdad.data import simulate, write_npz
from mdad.report.html import code_spans, results_tables
from mdad.report.trust import decision_curves


def test_backticked_text_becomes_code_and_the_rest_stays_text():
    assert str(code_spans("use `mdad plan` for <b>random</b> & co")) == "use <code>mdad plan</code> for &lt;b&gt;random&lt;/b&gt; &amp; co"
    assert str(code_spans("no code here")) == "no code here"


def test_a_report_shows_the_library_s_code_words_as_code(tmp_path):
    data = tmp_path / "d.npz"
    write_npz(simulate(seed=1, n_models=30, n_items=120, n_subtasks=2), data)
    out = tmp_path / "o"
    args = ["run", "--data", str(data), "--methods", "random", "--sizes", "10", "--runs", "2", "--targets", "4", "--workers", "1", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    page = (out / "report.html").read_text()
    assert "<code>mdad plan</code>" in page  # 4 targets: the MDAD cannot be estimated, and the note says what to use instead
    assert "`" not in page


def test_the_main_table_is_one_table_per_view_each_with_its_own_columns():
    table = pd.DataFrame(
        {
            "method": ["random", "anchor-points"],
            "size": [10, 10],
            "% of seen": [4.5, 4.5],
            "sources": [300, 300],
            "MDAD seen (pts)": ["17* [14, 18.5]", "10.5 [9.5, 13.5]"],
            "exact MDAD seen (pts)": ["21", ""],
            "tau seen": [0.25, 0.31],
            "flagged targets per run": ["", ""],
            "MDAD unseen (pts)": ["21* [19.5, not reached]", "16.5 [13, not reached]"],
            "tau unseen": [0.15, 0.21],
        }
    )
    (seen_title, seen), (unseen_title, unseen) = results_tables(table)
    assert (seen_title, unseen_title) == ("Seen items", "Unseen items")
    heads = [re.findall(r"<th>(.*?)</th>", part) for part in (seen, unseen)]
    assert heads[0] == ["method", "size", "% of seen", "MDAD (pts)", "exact MDAD (pts)", "tau", "flagged targets per run"]
    assert heads[1] == ["method", "size", "% of seen", "MDAD (pts)", "tau"]  # one number of sources: no column for it
    assert "17* [14, 18.5]" in seen and "21* [19.5, not reached]" in unseen and "21* [19.5" not in seen


def test_decision_curves_give_each_method_its_own_panel():
    methods, sizes = ["random", "anchor-points", "diversity", "tinybenchmarks"], [10, 200]
    gaps = np.arange(0, 20, 0.5)
    decision = pd.DataFrame(
        [
            {"method": m, "size": k, "gap_low": g, "pairs": 500, "fitted": min(1.0, 0.5 + g / (40 if k == 10 else 8)), "held": 0.6}
            for m in methods
            for k in sizes
            for g in gaps
        ]
    )
    curves = pd.DataFrame(
        [
            {"method": m, "size": k, "sources": 300, "view": "seen", "diff_low": g, "pairs": 500, "agreement": 0.7}
            for m in methods
            for k in sizes
            for g in gaps
        ]
    )
    fig = decision_curves(decision, curves, sizes, 300)
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
    assert sorted(ax.get_title() for ax in panels) == sorted(methods)
    for ax in panels:  # in each panel, every size: a fitted line and a dotted agreement curve each, nothing of other methods
        assert len(ax.get_lines()) == 2 * len(sizes) + 2  # + the threshold and the coin-flip lines


def test_the_main_figure_marks_uniform_random_s_exact_mdad_beside_its_simulated_line():
    from mdad.report.figures import mdad_vs_size

    rows = []
    for view in ("seen", "unseen"):
        for k, sim, exact in ((10, 17.0, 21.0), (100, 4.5, 4.0)):
            rows.append(
                dict(
                    method="random",
                    size=k,
                    sources=300,
                    view=view,
                    mdad=sim,
                    mdad_low=sim - 1,
                    mdad_high=sim + 1,
                    mdad_reached=True,
                    mdad_exact=exact if view == "seen" else np.nan,
                    mdad_exact_reached=view == "seen",
                )
            )
    summary = pd.DataFrame(rows)
    summary["mdad_exact_reached"] = summary["mdad_exact_reached"].astype("boolean")
    fig = mdad_vs_size(summary)
    seen, unseen = (ax for ax in fig.axes if ax.get_visible() and ax.get_title())
    crosses = [c.get_offsets() for c in seen.collections if len(c.get_offsets()) and c.get_offsets().shape[0] == 2]
    assert any(sorted(map(tuple, offsets.tolist())) == [(10.0, 21.0), (100.0, 4.0)] for offsets in crosses), crosses
    strip = unseen.get_ylim()[1]  # the exact MDAD of the unseen half is not reached: drawn in the grey strip at the top
    assert any(
        offsets.shape[0] == 2 and (offsets[:, 1] > 17.0 + 1).all() and (offsets[:, 1] < strip).all()
        for offsets in (c.get_offsets() for c in unseen.collections)
    )
