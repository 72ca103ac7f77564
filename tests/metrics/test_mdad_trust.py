"""MDAD says when it is noise: marked first crossings, intervals that do not collapse, and a sentence
instead of a number when the data are too few (docs/protocol.md#mdad-trust)."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pandas as pd
import pytest
from support.paths import FIXTURES
from typer.testing import CliRunner

from mdad.cli import app
from mdad.data import simulate
from mdad.data.npz import write_npz
from mdad.defaults import MIN_CROSSING_PAIRS, MIN_TARGET_PAIRS
from mdad.experiment.sizes import parse_sizes, size_requests_note
from mdad.metrics.pairwise import AgreementCurve, agreement_curve, estimability_note, mdad_from_curve
from mdad.metrics.robust import robust_mdad

runner = CliRunner()
LOOP_SOURCES = str(FIXTURES / "lm_eval_loop" / "sources")  # genuine lm-eval logs of 8 dummy models


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_crossing_bin_with_few_pairs_is_marked_and_says_why():
    curve = AgreementCurve(
        lower=np.array([0.0, 0.5, 1.0, 1.5]), pairs=np.array([400, 6, 400, 400]), agreed=np.array([220, 6, 260, 390]), bin_width=0.5
    )
    mdad = mdad_from_curve(curve)
    assert mdad.value == 0.5 and mdad.pairs == 6 and mdad.few_pairs
    assert mdad.falls_back  # the 1-point bin, with 400 pairs, is below 80% again
    warning = mdad.warning(robust_mdad(curve))
    assert f"holds 6 pairs (fewer than {MIN_CROSSING_PAIRS})" in warning
    assert "falls back below the threshold" in warning


def test_a_well_supported_crossing_is_not_marked():
    curve = AgreementCurve(lower=np.array([0.0, 0.5, 1.0]), pairs=np.array([500, 500, 500]), agreed=np.array([250, 300, 480]), bin_width=0.5)
    mdad = mdad_from_curve(curve)
    assert mdad.value == 1.0 and not mdad.few_pairs and not mdad.falls_back
    assert mdad.warning(robust_mdad(curve)) == ""


def test_the_interval_resamples_runs_so_pairs_that_err_together_do_not_shrink_it():
    """Every pair of a run errs together (one draw of items): pooled as independent pairs the
    interval collapses onto one bin, resampled by runs it holds the run-to-run spread."""
    rng = np.random.default_rng(3)
    runs, pairs_per_bin = 40, 30
    diffs = np.repeat(np.arange(0.25, 10, 0.5), pairs_per_bin)
    luck = rng.normal(0, 1.5, size=(runs, 1))  # a run's shared luck shifts its whole curve
    agree = rng.random((runs, len(diffs))) < 1 / (1 + np.exp(-(diffs[None, :] - 4 + luck) * 0.8))
    by_runs = agreement_curve(agree, np.broadcast_to(diffs, agree.shape))
    pooled = AgreementCurve(by_runs.lower, by_runs.pairs, by_runs.agreed, by_runs.bin_width)
    wide, narrow = mdad_from_curve(by_runs), mdad_from_curve(pooled)
    assert wide.value == narrow.value
    assert wide.high - wide.low > narrow.high - narrow.low


def test_too_few_target_pairs_get_a_sentence_that_says_what_would_fix_it():
    note = estimability_note(targets=6, runs=20)
    assert note.startswith("cannot be estimated from 15 target pairs")
    assert "add models" in note and "mdad plan" in note
    assert estimability_note(targets=50, runs=1).startswith("cannot be estimated from 1 run x 50 targets")
    assert estimability_note(targets=50, runs=2) == estimability_note(targets=10, runs=10) == ""
    assert MIN_TARGET_PAIRS == 45


def test_shares_that_fall_on_the_same_count_are_said_and_run_once():
    requests = parse_sizes("0.5%,1%,2%", 224)
    assert [r.items for r in requests] == [2, 2, 4]
    assert "0.5% and 1% are the same 2 items (run once)" in size_requests_note(requests)


def test_select_on_genuine_logs_of_eight_models_prints_no_mdad(tmp_path):
    result = runner.invoke(app, ["select", "--data", LOOP_SOURCES, "--method", "random", "--size", "5", "--out", str(tmp_path / "micro.json")])
    text = flat(result.output)
    assert "MDAD and Kendall tau cannot be estimated from 6 target pairs" in text, text
    assert not re.search(r"MDAD \d", text) and "Kendall tau 0" not in text


def twelve_models(folder):
    """Genuine lm-eval logs of 12 dummy models that answer at random (tests/fixtures/README.md): model-a, -b,
    -c, five pythia checkpoints, three /ckpt/model folders and the rerun model-a of lm_eval_reruns; read with
    --missing drop-items, the 4 tiny_mc items every model answered."""
    for name in ("lm_eval", "lm_eval_checkpoints", "lm_eval_ckpt_folders"):
        shutil.copytree(FIXTURES / name, folder / name)
    shutil.copytree(FIXTURES / "lm_eval_reruns" / "model-a", folder / "reruns" / "model-a")
    return folder


def test_twelve_models_of_genuine_logs_get_a_sentence_from_run_select_and_plan(tmp_path):
    data = twelve_models(tmp_path / "logs")
    out = tmp_path / "o"
    args = ["run", "--data", str(data), "--missing", "drop-items", "--methods", "random", "--sizes", "2", "--verbose", "--out", str(out)]
    ran = runner.invoke(app, args)
    assert ran.exit_code == 0, ran.output
    text = flat(ran.output)
    assert "12 models x 4 items" in text
    assert "MDAD and Kendall tau cannot be estimated from 15 target pairs (6 targets x 50 runs)" in text and "add models" in text
    # size 2: MDAD seen and unseen, error seen and unseen, Kendall tau seen and unseen
    assert re.search(r"\b2 no estimate no estimate \d+\.\d\d \d+\.\d\d no estimate no estimate ", text), text
    summary = pd.read_csv(out / "summary.csv")
    assert not summary["mdad_estimable"].any()
    report = flat((out / "report.html").read_text())
    assert "cannot be estimated from 15 target pairs" in report and "(100% of the seen pool)" in report
    selected = runner.invoke(
        app, ["select", "--data", str(data), "--missing", "drop-items", "--method", "random", "--size", "2", "--out", str(tmp_path / "m.json")]
    )
    assert selected.exit_code == 0, selected.output
    said = flat(selected.output)
    assert "MDAD and Kendall tau cannot be estimated from 15 target pairs (6 targets x 20 runs)" in said
    assert not re.search(r"MDAD \d", said) and "Kendall tau 0" not in said and "interval" not in said
    planned = runner.invoke(app, ["plan", "--results", str(out), "--method", "random", "--size", "2"])
    assert planned.exit_code == 0, planned.output
    assert "random with 2 items: MDAD and Kendall tau cannot be estimated from 15 target pairs" in flat(planned.output)
    assert "MDAD =" not in planned.output
    simulated = runner.invoke(app, ["plan", "--data", str(data), "--missing", "drop-items", "--method", "anchor-points", "--size", "2"])
    assert simulated.exit_code == 0, simulated.output
    assert "MDAD and Kendall tau cannot be estimated from 15 target pairs (6 targets x 20 runs)" in flat(simulated.output)
    assert "MDAD =" not in simulated.output


def test_plan_simulating_a_method_gives_the_pairs_and_the_robust_mdad_beside_its_mdad(tmp_path):
    data = tmp_path / "sim.npz"
    write_npz(simulate(seed=0, n_models=60, n_items=150), data)
    result = runner.invoke(app, ["plan", "--data", str(data), "--method", "anchor-points", "--size", "20", "--runs", "4"], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    assert re.search(r"MDAD = [\d.]+\*? points? \(simulated on 4 held-out runs of 30 target models, 30 source models; 95% interval", text), text
    assert re.search(r"[\d,]+ pairs? in its bin; robust MDAD ", text), text
    assert ("* the first crossing" in text) == ("*" in text.split("MDAD = ")[1].split(" ")[0])  # marked: said why


def test_run_names_its_threshold_targets_and_pairs(tmp_path):
    result = runner.invoke(
        app,
        ["run", "--methods", "random", "--sizes", "25", "--runs", "4", "--threshold", "0.9", "--targets-from", "top", "--verbose"]
        + ["--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    assert "--threshold 0.9" in text and "the 50 strongest models as targets" in text
    assert "each MDAD rests on 4,900 target pairs" in text
    assert "exact MDAD" in text  # uniform random: the exact answer beside the simulated one
    report = (tmp_path / "o" / "report.html").read_text()
    assert "--threshold 0.9" in report and "50 strongest models" in report
    # beside each MDAD of the table: the robust MDAD with its interval and the pairs in the crossing bin
    summary = pd.read_csv(tmp_path / "o" / "summary.csv").set_index("view")
    for view in ("seen", "unseen"):
        row = summary.loc[view]
        assert f"Robust MDAD {view} [interval] (pairs in the first crossing's bin): 25 items" in text
        if not np.isnan(row["mdad_robust"]):
            high = "not reached" if np.isnan(row["mdad_robust_high"]) else f"{row['mdad_robust_high']:g}"
            assert f"25 items {row['mdad_robust']:g} [{row['mdad_robust_low']:g}, {high}] ({int(row['mdad_pairs']):,} pair" in text
        if row["mdad_marked"]:  # a marked MDAD of either view is explained under the table
            where = "" if view == "seen" else ", unseen items"
            assert f"* random, 25 items (300 sources{where}): the first crossing" in text


def test_plan_from_a_finished_run_gives_the_pairs_the_robust_mdad_and_the_mark(tmp_path):
    out = tmp_path / "o"
    ran = runner.invoke(app, ["run", "--methods", "random", "--sizes", "10", "--runs", "6", "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    row = pd.read_csv(out / "summary.csv").query("view == 'seen'").iloc[0]
    result = runner.invoke(app, ["plan", "--results", str(out), "--method", "random", "--size", "10"])
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    assert f"({int(row['mdad_pairs'])} pairs in its bin; robust MDAD" in text and "threshold 0.8" in text
    assert (f"{row['mdad']:g}* points" in text) == bool(row["mdad_marked"])


def test_plain_words_lead_with_the_exact_or_robust_mdad_when_the_first_crossing_is_noise():
    from mdad.report.html import summary_sentences

    summary = pd.DataFrame(
        {
            "method": ["anchor-points", "random"],
            "size": [10, 10],
            "sources": 300,
            "view": "seen",
            "mdad": [17.0, 16.5],
            "mdad_low": [14.5, 14.0],
            "mdad_high": [18.5, 18.0],
            "mdad_reached": True,
            "mdad_robust": [21.0, 20.0],
            "mdad_robust_low": [19.5, 18.5],
            "mdad_robust_high": [23.0, 22.0],
            "mdad_marked": True,
            "mdad_estimable": True,
            "mdad_warning": "the first crossing at 17 points is noise: its 17-point bin holds 15 pairs (fewer than 200).",
        }
    )
    anchor, random = summary_sentences(summary, 0.8, exact={("random", 10): 22.0})
    assert "at least 21 points apart" in anchor and "the first crossing, 17 points, is noise" in anchor
    assert "at least 22 points apart" in random and "(the exact MDAD; simulated: 16.5* [14, 18])" in random


def test_an_assessment_keeps_the_pairs_behind_its_mdad_and_the_robust_interval_and_says_them():
    from dataclasses import replace

    from mdad.assessment import Assessment, assess
    from mdad.micro.notes import describe_assessment

    a = assess(simulate(seed=2, n_models=60, n_items=150), "random", 20, runs=8, targets=20, seed=1)
    assert a.mdad_reached and a.mdad_robust_low <= a.mdad_robust <= a.mdad_robust_high
    # brute force: the pairs of every run whose |true difference| falls in the crossing bin
    i, j = np.triu_indices(20, 1)
    diff = np.abs(a.truths[:, i] - a.truths[:, j]) * 100
    assert a.mdad_pairs == int((np.floor(diff / 0.5 + 1e-9) * 0.5 == a.mdad).sum()) > 0
    back = Assessment.from_json(a.to_json())
    assert (back.mdad_pairs, back.mdad_robust_low, back.mdad_robust_high, back.mdad_falls_back) == (
        a.mdad_pairs,
        a.mdad_robust_low,
        a.mdad_robust_high,
        a.mdad_falls_back,
    )
    sentence = flat(describe_assessment(a))
    mark = "*" if a.mdad_warning else ""
    assert f"MDAD {a.mdad:g}{mark} points [95% interval {a.mdad_low:g}, " in sentence
    assert f"({a.mdad_pairs:,} pairs in its bin; robust MDAD {a.robust})" in sentence
    # a crossing bin with few pairs: marked, says why, and leads the reader to the robust MDAD
    few = replace(a, mdad_pairs=MIN_CROSSING_PAIRS - 1)
    sentence = flat(describe_assessment(few))
    assert f"MDAD {a.mdad:g}* points" in sentence and f"holds {MIN_CROSSING_PAIRS - 1} pairs" in sentence
    assert f"Read the robust MDAD, {a.mdad_robust:g} points." in sentence
    # a file written before these fields existed still loads, without them
    old = {k: v for k, v in a.to_json().items() if k not in ("mdad_robust_low", "mdad_robust_high", "mdad_pairs", "mdad_falls_back")}
    older = Assessment.from_json(old)
    assert older.mdad_pairs is None and np.isnan(older.mdad_robust_low) and str(older.robust) == f"{a.mdad_robust:g}"
    assert "pairs in its bin" not in describe_assessment(older) and "holds" not in describe_assessment(older)  # not known, not marked


def test_marked_mdads_of_both_views_are_explained_with_the_robust_mdad_to_read_instead():
    from mdad.report.tables import warnings

    noise = "the first crossing at 15.5 points is noise: its 15.5-point bin holds 114 pairs (fewer than 200)."
    disagree = "the first crossing at 18 points is noise: the robust MDAD (22 [20, 25]) disagrees beyond both intervals."
    summary = pd.DataFrame(
        {
            "method": "anchor-points",
            "size": [10, 10, 25],
            "sources": 300,
            "view": ["seen", "unseen", "unseen"],
            "mdad_robust": [16.5, 16.5, 22.0],
            "mdad_robust_low": [13.5, 13.5, 20.0],
            "mdad_robust_high": [21.5, np.nan, 25.0],
            "mdad_estimable": True,
            "mdad_warning": ["", noise, disagree],
        }
    )
    assert warnings(summary) == [
        f"* anchor-points, 10 items (300 sources, unseen items): {noise} Robust MDAD: 16.5 [13.5, not reached].",
        f"* anchor-points, 25 items (300 sources, unseen items): {disagree}",  # the sentence already names it
    ]
    assert warnings(summary, views=("seen",)) == []


def test_the_report_draws_no_kendall_tau_where_it_cannot_be_estimated():
    from mdad.metrics.base import METRICS
    from mdad.report.figures import error_and_tau

    summary = pd.DataFrame(
        {
            "method": "random",
            "size": [10, 25, 10, 25],
            "sources": 6,
            "view": ["seen", "seen", "unseen", "unseen"],
            "error": 0.1,
            "kendall_tau": 0.4,
            "mdad_estimable": [False, True, False, True],
        }
    )
    fig = error_and_tau(summary)
    tau_row = list(METRICS.names()).index("kendall_tau")
    axes = np.asarray(fig.axes[: 2 * len(METRICS)]).reshape(len(METRICS), 2)
    for ax in axes[tau_row]:
        drawn = ax.get_lines()[0].get_ydata()
        assert np.isnan(drawn[0]) and drawn[1] == pytest.approx(0.4)  # 10 items: too few pairs, not drawn
    error_row = list(METRICS.names()).index("error")
    for ax in axes[error_row]:
        assert np.isfinite(ax.get_lines()[0].get_ydata()).all()  # the error is drawn whatever the pairs


def test_a_micro_json_whose_assessment_gives_impossible_pairs_or_robust_ends_is_refused(tmp_path):
    import json

    from mdad.assessment import assess
    from mdad.errors import MdadError
    from mdad.micro import SelectedMicroBenchmark
    from mdad.micro.selected import select

    matrix = simulate(seed=2, n_models=40, n_items=100)
    chosen = select(matrix, "random", 10, seed=1).with_assessment(assess(matrix, "random", 10, runs=5, targets=12, seed=1))
    chosen.save(tmp_path / "m.json")
    good = json.loads((tmp_path / "m.json").read_text())
    for field, value, says in [
        ("mdad_pairs", -3, "mdad_pairs as a whole number, at least 0, or null"),
        ("mdad_robust_high", 400.0, "gives mdad_robust_high 400"),
        ("mdad_falls_back", "yes", "mdad_falls_back as true or false"),
    ]:
        bad = json.loads(json.dumps(good))
        bad["assessment"][field] = value
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(MdadError, match=re.escape(says)):
            SelectedMicroBenchmark.load(tmp_path / "bad.json")
