"""An unfinished adaptive test: intervals and order probabilities hold at the number of items a model answered
(docs/intervals.md#unfinished-adaptive-tests), or no verdict is given until they do."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

import mdad
from mdad.assessment import calibrated_lengths, held_out_runs
from mdad.cli import app
from mdad.data import write_npz
from mdad.intervals.conformal import ConformalCalibration
from mdad.intervals.order import OrderCalibration

runner = CliRunner()
SIZE, RUNS = 8, 4


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    """An adaptive-1d test of 8 items selected and assessed on 60 simulated sources; 6 new models of the same kind."""
    folder = tmp_path_factory.mktemp("unfinished")
    matrix = mdad.simulate(seed=11, n_models=66, n_items=150, dims=1, with_option_probs=False)
    sources, new = matrix.take(models=np.arange(60)), matrix.take(models=np.arange(60, 66))
    write_npz(sources, folder / "sources.npz")
    chosen = mdad.select(sources, "adaptive-1d", SIZE, seed=0).with_assessment(mdad.assess(sources, "adaptive-1d", SIZE, runs=RUNS, seed=0))
    chosen.save(folder / "micro.json")
    return folder, sources, new, chosen


def answered(chosen, new, n: int, rows=None):
    """``new`` with each model (of ``rows``, default all) having answered the first ``n`` items its test asked."""
    answers = np.full(new.scores.shape, np.nan, dtype=np.float32)
    column = {item: j for j, item in enumerate(new.items)}
    rows = range(new.n_models) if rows is None else rows
    for _ in range(n):
        asked = chosen.details(replace(new, scores=answers))["next_item"]
        for i in rows:
            if asked.iloc[i]:
                answers[i, column[asked.iloc[i]]] = new.scores[i, column[asked.iloc[i]]]
    return replace(new, scores=answers)


def test_the_test_is_calibrated_at_1_2_4_items_besides_its_length(setting):
    _, sources, _, chosen = setting
    assert calibrated_lengths(8) == (1, 2, 4) and calibrated_lengths(9) == (1, 2, 4, 8) and calibrated_lengths(1) == ()
    assert [c.length for c in chosen.assessment.by_length] == [1, 2, 4]
    # independently: the held-out tests stopped at 2 items, calibrated as the full test is
    runs = held_out_runs(sources, "adaptive-1d", (2,), runs=RUNS, seed=0)
    at_two = ConformalCalibration.fit(runs.estimates[2], runs.truths)
    stored = chosen.assessment.calibration_for(3)  # 3 answered: the largest calibrated length not above 3
    assert stored.length == 2
    grid = np.linspace(0.0, 1.0, 21)
    np.testing.assert_allclose(stored.intervals.bounds(grid, level=0.9), at_two.bounds(grid, level=0.9))
    order = OrderCalibration.fit(runs.estimates[2], runs.truths)
    np.testing.assert_allclose(stored.orders.probability(grid[1:], grid[:-1]), order.probability(grid[1:], grid[:-1]))
    assert chosen.assessment.calibration_for(0) is None and chosen.assessment.calibration_for(8).length == 8


def test_after_one_item_the_intervals_and_orders_are_those_of_one_item_tests(setting):
    _, _, new, chosen = setting
    partial = answered(chosen, new, 1)
    assert (chosen.calibrated_lengths(partial) == 1).all()
    intervals = chosen.intervals(partial, level=0.9)
    one = chosen.assessment.calibration_for(1)
    low, high = one.intervals.bounds(intervals.estimate, level=0.9)
    np.testing.assert_allclose(intervals.low, low)
    np.testing.assert_allclose(intervals.high, high)
    full_low, full_high = chosen.assessment.interval_calibration.bounds(intervals.estimate, level=0.9)
    assert np.mean(high - low) > np.mean(full_high - full_low)  # one item says less than eight
    a, b = new.models[0], new.models[1]
    comparison = chosen.compare(partial, str(a), str(b))
    e = chosen.details(partial)["estimate"]
    first, second = sorted((e[a], e[b]), reverse=True)
    assert comparison.order_probability == pytest.approx(float(one.orders.probability(first, second)))


def test_a_finished_test_keeps_the_full_calibration_beside_an_unfinished_one(setting):
    _, _, new, chosen = setting
    partial = answered(chosen, new, SIZE, rows=[0, 1, 2])  # rows 3-5 answered nothing yet
    lengths = chosen.calibrated_lengths(partial)
    assert list(lengths[:3]) == [SIZE] * 3 and list(lengths[3:]) == [0] * 3
    intervals = chosen.intervals(partial, level=0.9)
    assert np.isfinite(intervals.low[:3]).all() and np.isnan(intervals.low[3:]).all()
    assert np.isnan(chosen.best_probability(partial).probability)  # a model with no calibrated answer: no P(best)


def test_a_file_calibrated_only_at_full_length_gives_no_verdict_until_the_test_is_done(setting, tmp_path):
    folder, _, new, chosen = setting
    data = json.loads((folder / "micro.json").read_text())
    del data["assessment"]["by_length"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    write_npz(answered(chosen, new, 1), tmp_path / "new.npz")
    shown = runner.invoke(app, ["estimate", str(tmp_path / "old.json"), str(tmp_path / "new.npz")])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert "No interval, order probability or verdict for 6 models" in text
    assert "until they finish the test of 8 items (this file calibrates only the full test" in text
    assert "reliable" not in text.replace("not reliable", "")


def test_estimate_says_which_length_the_numbers_rest_on(setting, tmp_path):
    folder, _, new, chosen = setting
    write_npz(answered(chosen, new, 2), tmp_path / "new.npz")
    shown = runner.invoke(app, ["estimate", str(folder / "micro.json"), str(tmp_path / "new.npz")])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert "have not finished the adaptive test of 8 items" in text and "held-out tests stopped at 2 items" in text


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda by: by[0].update(length=8), "a calibration at length 8; it must be a whole number between 1 and 7"),
        (lambda by: by.reverse(), "in increasing order of length, each once"),
        (lambda by: by[1]["interval_calibration"].update(residuals=[[5.0]], edges=[]), "not accuracies"),
        (lambda by: by[0].pop("interval_calibration"), "need a length and an interval calibration each"),
    ],
)
def test_a_file_with_broken_calibrations_by_length_is_refused_in_one_sentence(setting, tmp_path, edit, message):
    folder, *_ = setting
    data = json.loads((folder / "micro.json").read_text())
    edit(data["assessment"]["by_length"])
    (tmp_path / "bad.json").write_text(json.dumps(data))
    shown = runner.invoke(app, ["estimate", str(tmp_path / "bad.json"), str(folder / "sources.npz")])
    assert shown.exit_code == 2 and "Traceback" not in shown.output
    assert message in " ".join(shown.output.split())
