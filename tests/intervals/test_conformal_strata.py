"""The calibrated intervals keep their level in each fifth of accuracies, and always hold their own estimate."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mdad
from mdad.intervals import ConformalCalibration
from mdad.intervals.conformal import rank_bounds
from mdad.micro import SelectedMicroBenchmark


def shrunk(rng: np.random.Generator, n: int, pull: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """Estimates pulled most of the way towards 0.5 (keeping ``pull`` of the distance), as learned estimators pull
    towards the sources' typical accuracy."""
    truth = rng.uniform(0.05, 0.95, n)
    return 0.5 + pull * (truth - 0.5) + rng.normal(0.0, 0.05, n), truth


def fifth_coverage(calibration: ConformalCalibration, estimate: np.ndarray, truth: np.ndarray, level: float) -> np.ndarray:
    low, high = calibration.bounds(estimate, level=level)
    fifth = np.minimum((truth - 0.05) / 0.9 * 5, 4).astype(int)
    covered = (low <= truth) & (truth <= high)
    return np.array([covered[fifth == f].mean() for f in range(5)])


def test_every_fifth_of_accuracies_is_covered_at_the_level_where_the_older_bins_were_not():
    """Simulation with known truth: shrunk estimates. Binning on the estimate covers the best and the weakest
    fifth far under the level; binning on the true accuracy covers each at least at the level."""
    rng = np.random.default_rng(3)
    for level in (0.9, 0.95):
        new, old = [], []
        for _ in range(60):
            est, tru = shrunk(rng, 1000)
            cal_est, cal_tru = shrunk(rng, 1000)
            calibration = ConformalCalibration.fit(cal_est, cal_tru)
            older = ConformalCalibration.from_json(_estimate_binned(cal_est, cal_tru))
            new.append(fifth_coverage(calibration, est, tru, level))
            old.append(fifth_coverage(older, est, tru, level))
        new, old = np.mean(new, axis=0), np.mean(old, axis=0)
        assert (new >= level - 0.01).all(), new
        assert old[0] < level - 0.025 and old[-1] < level - 0.025, old


def test_scores_about_the_estimates_line_stop_the_middle_fifths_from_being_covered_almost_always():
    """Simulation with known truth (docs/intervals.md#conformal-intervals): with plain residuals truth - estimate,
    a strongly shrunk estimator's residuals drift across each fifth, and the hull of what the fifths allow covered
    the middle fifths 99-100% at 90%; scores about the fitted line of the estimate on the accuracy keep every fifth
    at the level and the middle fifth within 2 points of it, with narrower intervals."""
    rng = np.random.default_rng(11)
    for level in (0.8, 0.9):
        line, plain, width_line, width_plain = [], [], [], []
        for _ in range(40):
            est, tru = shrunk(rng, 1000, pull=0.3)
            cal_est, cal_tru = shrunk(rng, 1000, pull=0.3)
            fitted, residual = ConformalCalibration.fit(cal_est, cal_tru), ConformalCalibration.fit(cal_est, cal_tru, trend=False)
            assert 0.25 < fitted.trend[1] < 0.35 and residual.trend == (0.0, 1.0)
            line.append(fifth_coverage(fitted, est, tru, level))
            plain.append(fifth_coverage(residual, est, tru, level))
            width_line.append(np.subtract(*fitted.bounds(est, level=level)[::-1]).mean())
            width_plain.append(np.subtract(*residual.bounds(est, level=level)[::-1]).mean())
        line, plain = np.mean(line, axis=0), np.mean(plain, axis=0)
        assert (line >= level - 0.01).all(), line
        assert line[2] <= level + 0.02 and plain[2] >= level + 0.08, (line, plain)
        assert np.mean(width_line) < np.mean(width_plain)


def _estimate_binned(estimates: np.ndarray, truths: np.ndarray) -> dict:
    """A calibration as an older mdad stored it: up to 4 bins of equal counts of the estimate."""
    edges = np.quantile(estimates, [0.25, 0.5, 0.75])
    which = np.searchsorted(edges, estimates, side="right")
    return {"edges": edges.tolist(), "residuals": [(truths - estimates)[which == b].tolist() for b in range(4)]}


@pytest.mark.parametrize("trend", [True, False])
def test_bounds_are_the_hull_of_the_accuracies_each_bin_allows(trend):
    """Brute force: on a fine grid of accuracies t, keep t when its score intercept + slope t - estimate lies within
    the conformal ranks of t's own bin; the bounds are the smallest and largest kept t (or the estimate). Without
    the trend the score is the plain residual t - estimate (files of the previous mdad)."""
    rng = np.random.default_rng(5)
    cal_est, cal_tru = shrunk(rng, 300)
    calibration = ConformalCalibration.fit(cal_est, cal_tru, trend=trend)
    assert len(calibration.residuals) == 5 and calibration.binned_on == "accuracy"
    intercept, slope = calibration.trend
    assert (slope != 1.0) == trend
    grid = np.linspace(0.0, 1.0, 200_001)
    bins = np.searchsorted(calibration.edges, grid, side="right")
    for level in (0.8, 0.9, 0.95):
        ranks = np.array([rank_bounds(r, (1 - level) / 2) for r in calibration.residuals])
        estimates = np.array([-0.2, 0.0, 0.3, 0.36, 0.42, 0.5, 0.58, 0.64, 0.7, 1.0, 1.2])
        low, high = calibration.bounds(estimates, level=level)
        for e, lo, hi in zip(estimates, low, high, strict=True):
            score = intercept + slope * grid - e
            kept = grid[(score >= ranks[bins, 0] - 1e-12) & (score <= ranks[bins, 1] + 1e-12)]
            if not kept.size:  # an estimate no bin allows (far outside the calibration's): every bin's scores
                assert e <= 0.0 or e >= 1.0
                assert lo == pytest.approx(np.clip(min((e + ranks[:, 0].min() - intercept) / slope, e), 0, 1))
                assert hi == pytest.approx(np.clip(max((e + ranks[:, 1].max() - intercept) / slope, e), 0, 1))
                continue
            assert lo == pytest.approx(np.clip(min(kept.min(), e), 0, 1), abs=1e-5)
            assert hi == pytest.approx(np.clip(max(kept.max(), e), 0, 1), abs=1e-5)


def test_the_trend_is_the_least_squares_line_and_none_when_the_estimate_does_not_follow_the_accuracy():
    """The line against numpy's least squares; a flat or falling estimate keeps the plain residuals (slope 1)."""
    rng = np.random.default_rng(9)
    est, tru = shrunk(rng, 500, pull=0.6)
    slope, intercept = np.polyfit(tru, est, 1)
    assert ConformalCalibration.fit(est, tru).trend == pytest.approx((intercept, slope), abs=1e-12)
    flat = rng.uniform(0.4, 0.6, 500)
    assert ConformalCalibration.fit(flat, tru).trend == (0.0, 1.0)
    assert ConformalCalibration.fit(1.0 - tru, tru).trend == (0.0, 1.0)


def test_an_estimate_always_lies_inside_its_interval_and_past_the_ends_it_is_clipped():
    """Residuals all of one sign (an estimate biased one way) used to give intervals beside the estimate."""
    rng = np.random.default_rng(7)
    truth = rng.uniform(0.2, 0.4, 400)
    estimate = truth + 0.3 + rng.normal(0, 0.01, 400)  # every estimate 25-35 points too high
    for calibration in (ConformalCalibration.fit(estimate, truth), ConformalCalibration.from_json(_estimate_binned(estimate, truth))):
        est = np.array([-0.05, 0.0, 0.5, 0.62, 0.7, 1.0, 1.13])
        low, high = calibration.bounds(est, level=0.9)
        inside = np.clip(est, 0, 1)
        assert ((low <= inside) & (inside <= high)).all()
        assert ((low >= 0) & (high <= 1)).all()
        # and the interval still reaches down to where the truth is
        assert low[3] <= 0.4


def test_old_files_keep_their_estimate_bins_and_say_so():
    data = _estimate_binned(*shrunk(np.random.default_rng(2), 800))
    older = ConformalCalibration.from_json(data)
    assert older.binned_on == "estimate" and "older mdad" in older.describe()
    again = ConformalCalibration.from_json(json.loads(json.dumps(older.to_json())))
    np.testing.assert_array_equal(again.bounds([0.3, 0.6])[0], older.bounds([0.3, 0.6])[0])
    with pytest.raises(mdad.MdadError, match="binned on"):
        ConformalCalibration.from_json({**data, "binned_on": "colour"})


def test_files_of_the_previous_mdad_binned_on_the_accuracy_without_a_trend_give_what_they_gave():
    """A file stored before the trend (binned_on "accuracy", plain residuals, no "trend") reads as plain residuals
    and gives the same bounds as before: the independent brute force of the previous construction, [e + r_lo,
    e + r_hi] within each bin, hull, extended to the estimate."""
    est, tru = shrunk(np.random.default_rng(4), 400)
    edges = np.quantile(tru, [0.2, 0.4, 0.6, 0.8])
    which = np.searchsorted(edges, tru, side="right")
    stored = {"binned_on": "accuracy", "edges": edges.tolist(), "residuals": [(tru - est)[which == b].tolist() for b in range(5)]}
    previous = ConformalCalibration.from_json(stored)
    assert previous.trend == (0.0, 1.0)
    estimates = np.array([0.3, 0.45, 0.5, 0.62])
    low, high = previous.bounds(estimates, level=0.9)
    ends = np.r_[0.0, edges, 1.0]
    for e, lo, hi in zip(estimates, low, high, strict=True):
        pieces = [
            (max(ends[b], e + r[0]), min(ends[b + 1], e + r[1])) for b, r in enumerate(rank_bounds(np.sort(res), 0.05) for res in previous.residuals)
        ]
        pieces = [p for p in pieces if p[0] <= p[1]]
        assert lo == pytest.approx(min(min(p[0] for p in pieces), e)) and hi == pytest.approx(max(max(p[1] for p in pieces), e))
    stored_again = ConformalCalibration.from_json(json.loads(json.dumps(ConformalCalibration.fit(est, tru).to_json())))
    assert stored_again.trend == ConformalCalibration.fit(est, tru).trend
    assert "the level holds within each)" in previous.describe()
    assert "estimates' line" in stored_again.describe() and "measured" in stored_again.describe()
    with pytest.raises(mdad.MdadError, match="trend"):
        ConformalCalibration.from_json({**stored, "trend": [0.1, -0.5]})


@pytest.mark.parametrize("method", ["stratified-confidence", "anchor-points", "aipw", "random", "random-stratified-proportional"])
@pytest.mark.parametrize("size", [10, 40])
def test_every_printed_estimate_lies_inside_its_printed_interval(small_sim, method, size, tmp_path):
    """Over methods and sizes: what `estimate` prints (estimate and interval) never puts the estimate outside."""
    sources, new = small_sim.take(models=np.arange(0, small_sim.n_models, 2)), small_sim.take(models=np.arange(1, small_sim.n_models, 2))
    chosen = mdad.select(sources, method, size, seed=4).with_assessment(mdad.assess(sources, method, size, runs=4, seed=4))
    chosen.save(tmp_path / "m.json")
    for level in (0.8, 0.9, 0.95):
        shown = SelectedMicroBenchmark.load(tmp_path / "m.json").intervals(new, level=level)
        assert shown.available
        assert ((shown.low <= shown.estimate) & (shown.estimate <= shown.high)).all()
        assert ((shown.estimate >= 0) & (shown.estimate <= 1)).all()


def test_models_estimated_among_the_best_sources_get_a_marked_interval_in_table_csv_and_python():
    """Off-population: the best models held out as new ones. A calibrated interval of a model estimated at or above
    the sources' 90th percentile is marked (Python result, CSV frame, table cell and a note), and so is the order
    probability of every pair with a marked model (table, pairs CSV frame, Python result); a random design's
    interval, which does not rest on the sources, is not."""
    from mdad.micro.estimation import estimate_report
    from mdad.micro.trust import OFF_POPULATION_MARK

    sim = mdad.simulate(seed=3, n_models=120, n_items=400, n_subtasks=4)
    order = np.argsort(sim.scores.mean(axis=1), kind="stable")
    sources, new = sim.take(models=order[:100]), sim.take(models=np.sort(np.concatenate([order[100:], order[:5]])))
    line = np.quantile(sources.scores.mean(axis=1), 0.9)
    chosen = mdad.select(sources, "anchor-points", 20, seed=1).with_assessment(mdad.assess(sources, "anchor-points", 20, runs=4, seed=1))
    report = estimate_report(chosen, new)
    expected = report.intervals.estimate >= line - 1e-12
    assert expected.any() and not expected.all()
    np.testing.assert_array_equal(report.intervals.mark == OFF_POPULATION_MARK, expected)
    # ... and, whatever the method, a model estimated in the top fifth of its estimates of the held-out sources
    marked = expected | (report.intervals.estimate >= chosen.assessment.interval_calibration.ceiling)
    frame = report.intervals.to_frame()
    assert (frame["mark"] != "").tolist() == marked.tolist()
    cells = next(c for c in report.columns if c.name.endswith("interval"))
    assert sum(cell.endswith(" !") for cell in cells.cells) == marked.sum() == sum(cells.warned)
    assert any("marked '!'" in note.text and "random design" in note.text for note in report.notes)
    ranked = np.argsort(-report.intervals.estimate, kind="stable")
    orders = next(c for c in report.columns if c.name == "P(order holds)")
    # ... and the pairs of a model whose 90% interval reaches the best source (the order mark)
    order_marked = marked | (chosen.intervals(new, level=0.9).high >= sources.scores.mean(axis=1).max() - 1e-12)
    pair_marked = [bool(order_marked[ranked[p]] or order_marked[ranked[p + 1]]) for p in range(len(ranked) - 1)]
    assert [cell.endswith(" !") for cell in orders.cells[:-1]] == pair_marked
    pairs = report.orders.to_frame()
    assert (pairs["mark"] != "").tolist() == pair_marked
    for mark, first, second in zip(pairs["mark"], pairs["first"], pairs["second"], strict=True):
        assert not mark or (mark.startswith("order probability not valid: model ") and (f" {first}'s" in mark or f" {second}'s" in mark))
    # P(the estimated best is the best) rests on the same calibration: it carries the estimated best's mark
    assert report.best.mark == report.intervals.mark[ranked[0]] and bool(report.best.mark) == bool(marked[ranked[0]])
    best_note = next(note for note in report.notes if note.text.startswith(f"P({report.best.model}, the estimated best"))
    assert best_note.warning == bool(marked[ranked[0]])
    exact = estimate_report(mdad.select(sources, "random", 20, seed=1), new)
    assert exact.intervals.mark is None and (exact.intervals.to_frame()["mark"] == "").all()
    assert exact.orders.mark is None and (exact.orders.to_frame()["mark"] == "").all()


def test_a_compared_pair_with_a_marked_model_carries_the_mark_in_text_csv_and_python():
    """``estimate --compare``: a pair with a model whose interval is marked gets the mark its neighbouring pair
    gets (Python result, the comparisons CSV row, the printed sentence); a pair of unmarked models gets none."""
    from mdad.micro.estimation import estimate_report

    sim = mdad.simulate(seed=3, n_models=120, n_items=400, n_subtasks=4)
    order = np.argsort(sim.scores.mean(axis=1), kind="stable")
    sources, new = sim.take(models=order[:100]), sim.take(models=np.sort(np.concatenate([order[100:], order[:5]])))
    chosen = mdad.select(sources, "anchor-points", 20, seed=1).with_assessment(mdad.assess(sources, "anchor-points", 20, runs=4, seed=1))
    intervals = chosen.intervals(new)
    marked = [str(m) for m, mark in zip(new.models, intervals.mark, strict=True) if mark]
    plain = [str(m) for m, mark in zip(new.models, intervals.mark, strict=True) if not mark]
    assert marked and len(plain) >= 2
    with_marked, unmarked = chosen.comparisons(new, [(plain[0], marked[0]), (plain[0], plain[1])])
    named = f"order probability not valid: model {marked[0]}'s "
    assert with_marked.mark.startswith(named) and with_marked.order_probability == with_marked.order_probability
    assert f"! {named}" in with_marked.describe()
    assert unmarked.mark == "" and " ! " not in unmarked.describe()
    report = estimate_report(chosen, new, pairs=[(plain[0], marked[0]), (plain[0], plain[1])])
    rows = [c.to_frame() for c in report.comparisons]
    assert rows[0]["mark"].iloc[0].startswith(named) and rows[1]["mark"].iloc[0] == ""
    neighbours = chosen.order_probabilities(new).to_frame()
    first, second = neighbours["first"].iloc[0], neighbours["second"].iloc[0]
    assert chosen.compare(new, str(first), str(second)).mark == neighbours["mark"].iloc[0]


def test_an_ability_estimate_is_also_marked_where_its_90_interval_reaches_the_best_twentieth_of_the_sources():
    """tinyBenchmarks' gp-IRT reads its estimate off an IRT ability, which pulls models better than every source down
    until they look ordinary: besides the models estimated among the sources' best tenth, those whose 90% interval
    (whatever level is printed) reaches the sources' 95th percentile are marked, and so are their pairs."""
    from mdad.micro.estimation import estimate_report
    from mdad.micro.trust import OFF_POPULATION_MARK, OFF_POPULATION_REACH_MARK

    sim = mdad.simulate(seed=3, n_models=120, n_items=400, n_subtasks=4)
    order = np.argsort(sim.scores.mean(axis=1), kind="stable")
    sources, new = sim.take(models=order[:100]), sim.take(models=np.sort(np.concatenate([order[100:], order[:100:4]])))
    line, reach = np.quantile(sources.scores.mean(axis=1), [0.9, 0.95])
    method = "tinybenchmarks-gpirt"
    chosen = mdad.select(sources, method, 20, seed=1).with_assessment(mdad.assess(sources, method, 20, runs=4, seed=1))
    report = estimate_report(chosen, new, level=0.8)
    estimated = report.intervals.estimate >= line - 1e-12
    reaches = ~estimated & (chosen.intervals(new, level=0.9).high >= reach - 1e-12)
    assert estimated.any() and reaches.any() and not (estimated | reaches).all()
    np.testing.assert_array_equal(report.intervals.mark == OFF_POPULATION_MARK, estimated)
    np.testing.assert_array_equal(report.intervals.mark == OFF_POPULATION_REACH_MARK, reaches)
    assert any(OFF_POPULATION_REACH_MARK in note.text and OFF_POPULATION_MARK in note.text for note in report.notes)
    ranked = np.argsort(-report.intervals.estimate, kind="stable")
    marked = estimated | reaches | (report.intervals.estimate >= chosen.assessment.interval_calibration.ceiling)
    assert (report.orders.to_frame()["mark"] != "").tolist() == [bool(marked[ranked[p]] or marked[ranked[p + 1]]) for p in range(len(ranked) - 1)]


@pytest.mark.parametrize("method", ["aipw", "stratified-confidence"])
def test_pairs_of_a_model_whose_interval_reaches_the_best_source_carry_the_order_mark_alone(method):
    """Off-population pairs of unmarked models were overconfident (aipw printed 0.74, held 0.45): the order
    probabilities of a model whose 90% interval reaches the best source's accuracy are marked, naming it, while its
    interval and P(best) keep only the interval's own mark; a pair with a marked interval names that model."""
    from mdad.micro.estimation import estimate_report
    from mdad.micro.trust import OFF_POPULATION_ORDER_MARK

    sim = mdad.simulate(seed=3, n_models=120, n_items=400, n_subtasks=4)
    order = np.argsort(sim.scores.mean(axis=1), kind="stable")
    sources, new = sim.take(models=order[:100]), sim.take(models=np.sort(np.concatenate([order[100:], order[:100:5]])))
    best_source = sources.scores.mean(axis=1).max()
    chosen = mdad.select(sources, method, 20, seed=1).with_assessment(mdad.assess(sources, method, 20, runs=4, seed=1))
    report = estimate_report(chosen, new, level=0.8)
    interval_marked = report.intervals.mark != ""
    reaches = chosen.intervals(new, level=0.9).high >= best_source - 1e-12
    order_only = reaches & ~interval_marked
    assert order_only.any() and not (reaches | interval_marked).all()
    assert not any(OFF_POPULATION_ORDER_MARK in m for m in report.intervals.mark)  # the interval is not marked by it
    models = np.asarray(new.models, dtype=str)
    ranked = np.argsort(-report.intervals.estimate, kind="stable")
    frame = report.orders.to_frame()
    for p, mark in enumerate(frame["mark"]):
        a, b = ranked[p], ranked[p + 1]
        if interval_marked[a] or interval_marked[b]:
            named = a if interval_marked[a] else b
            assert mark.startswith(f"order probability not valid: model {models[named]}'s interval not valid")
        elif order_only[a] or order_only[b]:
            named = a if order_only[a] else b
            assert mark == f"order probability not valid: model {models[named]}'s {OFF_POPULATION_ORDER_MARK}"
        else:
            assert mark == ""
    pairs = sum(m.endswith(OFF_POPULATION_ORDER_MARK) for m in frame["mark"])
    assert pairs and any(note.text.startswith(f"{pairs} neighbouring pair") and "neither interval is" in note.text for note in report.notes)
    assert OFF_POPULATION_ORDER_MARK not in report.best.mark
    a, b = (str(m) for m in models[np.flatnonzero(order_only)[:1].tolist() + np.flatnonzero(~reaches & ~interval_marked)[:1].tolist()])
    assert chosen.compare(new, a, b).mark == f"order probability not valid: model {a}'s {OFF_POPULATION_ORDER_MARK}"
