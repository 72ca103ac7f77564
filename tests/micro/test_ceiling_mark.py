"""The ceiling mark: a learned estimate caps the best models near the top of what it gives the sources, so a model
estimated there is marked, models sharing one estimate there get the piled-up mark and a note, and the CSVs carry it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import ResponseMatrix, write_npz
from mdad.intervals import ConformalCalibration
from mdad.micro.trust import OFF_POPULATION_CEILING_MARK, OFF_POPULATION_PILED_MARK, off_population_marks

CAP = 0.554


def capped(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A shrunk estimate that no model passes: the regression's fit tops out at ``CAP``."""
    return np.minimum(0.15 + 0.7 * truth + rng.normal(0.0, 0.02, len(truth)), CAP)


def test_models_better_than_every_source_are_covered_or_marked_while_ordinary_ones_are_rarely_marked():
    """Known truth: calibration targets at 20-62% whose estimates top out at 55.4%, and new models at 66-88% that all
    get that capped estimate (as lasso gave the best models on a real leaderboard). Their calibrated 90% intervals
    miss most of them and the rule on the sources' accuracies (which needs them) cannot see them; every one is marked,
    piled up when another shares its estimate. Ordinary new models are marked about as often as the top fifth."""
    rng = np.random.default_rng(7)
    cal_truth = rng.uniform(0.2, 0.62, 2000)
    cal_est = capped(cal_truth, rng)
    calibration = ConformalCalibration.fit(cal_est, cal_truth)
    ordered = np.sort(cal_est)
    assert ordered[int(0.8 * 2000) - 2] <= calibration.ceiling <= ordered[int(0.8 * 2000) + 1]  # the 80th percentile

    best_truth = rng.uniform(0.66, 0.88, 40)
    best_est = np.full(40, CAP)
    low, high = calibration.bounds(best_est)
    assert np.mean((low <= best_truth) & (best_truth <= high)) < 0.5  # the interval alone breaks the promise
    marks = off_population_marks(best_est, None, calibration)
    assert (marks == OFF_POPULATION_PILED_MARK).all()
    alone = off_population_marks(np.array([CAP, 0.3]), None, calibration)  # not shared: the ceiling mark
    assert alone.tolist() == [OFF_POPULATION_CEILING_MARK, ""]

    ordinary_truth = rng.uniform(0.2, 0.62, 2000)
    ordinary = off_population_marks(capped(ordinary_truth, rng), None, calibration)
    assert 0.15 < np.mean(ordinary != "") < 0.25


def test_the_ceiling_is_stored_with_the_calibration_and_an_older_file_without_it_marks_nothing():
    rng = np.random.default_rng(1)
    truth = rng.uniform(0.2, 0.65, 500)
    calibration = ConformalCalibration.fit(capped(truth, rng), truth)
    again = ConformalCalibration.from_json(calibration.to_json())
    assert again.ceiling == calibration.ceiling
    older = calibration.to_json()
    del older["ceiling"]
    older = ConformalCalibration.from_json(older)
    assert math.isnan(older.ceiling)
    assert (off_population_marks(np.full(3, CAP), None, older) == "").all()
    for bad in ("high", float("inf")):
        with pytest.raises(mdad.MdadError, match="calibration"):
            ConformalCalibration.from_json({**calibration.to_json(), "ceiling": bad})


def test_estimate_csv_and_pairs_csv_carry_the_mark_and_the_notes_say_the_piled_estimate_cannot_tell_models_apart(tmp_path):
    """Three new models right on every chosen item but of different full-benchmark accuracies get one lasso estimate at
    the ceiling: the CSV's mark column says so for each, the pairs CSV for every pair with one, and a note says the
    estimate cannot tell them apart; an ordinary model's row has an empty mark."""
    sim = mdad.simulate(seed=3, n_models=120, n_items=400, n_subtasks=4)
    order = np.argsort(sim.scores.mean(axis=1), kind="stable")
    sources = sim.take(models=order[:100])
    chosen = mdad.select(sources, "lasso", 10, seed=1).with_assessment(mdad.assess(sources, "lasso", 10, runs=4, seed=1))
    chosen.save(tmp_path / "micro.json")
    rng = np.random.default_rng(0)
    scores = np.vstack([(rng.uniform(size=(3, sim.n_items)) < np.array([[0.5], [0.7], [0.9]])), np.zeros((1, sim.n_items))]).astype(np.float32)
    pool = np.flatnonzero(np.isin(sim.items, chosen.item_ids))
    scores[:3, pool] = 1.0
    scores[3] = sim.scores[order[10]]
    new = ResponseMatrix(scores=scores, models=np.array(["a", "b", "c", "ordinary"]), items=sim.items, subtasks=sim.subtasks, source="new")
    write_npz(new, tmp_path / "new.npz")
    outputs = ["--csv", str(tmp_path / "e.csv"), "--pairs-csv", str(tmp_path / "p.csv")]
    result = CliRunner(env={"COLUMNS": "400"}).invoke(app, ["estimate", str(tmp_path / "micro.json"), str(tmp_path / "new.npz"), *outputs])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(tmp_path / "e.csv", keep_default_na=False).set_index("model")
    assert frame.loc[["a", "b", "c"], "estimate"].nunique() == 1
    assert (frame.loc[["a", "b", "c"], "mark"] == OFF_POPULATION_PILED_MARK).all() and frame.loc["ordinary", "mark"] == ""
    pairs = pd.read_csv(tmp_path / "p.csv", keep_default_na=False)
    with_piled = pairs["first"].isin(["a", "b", "c"]) | pairs["second"].isin(["a", "b", "c"])
    assert pairs.loc[with_piled, "mark"].str.startswith("order probability not valid: model ").all()
    assert " ".join(result.output.split()).count("3 models share the estimate") == 1
    assert "cannot tell those models apart" in " ".join(result.output.split())
