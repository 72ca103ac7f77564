"""`plan` for several methods at once (docs/plan.md#choose-for-me): bisection against the full scan,
each row against the single-method answer, the budget against a simulation, and the rule."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import write_npz
from mdad.errors import MdadError
from mdad.metrics import analytic
from mdad.planning import PlanRow
from mdad.planning.exact import SCAN_POOL, exact_agreement_at_size, exact_smallest_size, pairs_in_bin, smallest_size
from mdad.planning.recommend import NO_BETTER, recommend

runner = CliRunner()


def scan(stats: analytic.PairStats, design: str, threshold: float) -> int | None:
    """The first size whose mean agreement reaches the threshold, every size evaluated."""
    values = analytic.mean_agreement_by_size(stats, np.arange(1, int(stats.pool.min()) + 1), design)
    hits = np.flatnonzero(values >= threshold)
    return int(hits[0]) + 1 if len(hits) else None


@pytest.mark.parametrize("detect", [2.0, 10.0])
def test_bisection_finds_the_size_the_full_scan_finds(detect, small_sim):
    _, part = pairs_in_bin(small_sim, detect)
    assert part.pool.min() > SCAN_POOL  # the bisection path, not the small-pool scan
    for threshold in (0.7, 0.8, 0.9):
        expected = scan(part, "random", threshold)
        assert smallest_size(part, "random", threshold, seed=0)[0] == expected
        for start in (1, 7, 50, 133, 399, 10_000):  # galloping from any guess finds the same size
            assert smallest_size(part, "random", threshold, seed=0, start=start)[0] == expected


@pytest.mark.slow  # the scan evaluates every size: minutes on MuSR
def test_bisection_equals_the_scan_on_real_leaderboards(gpqa, musr):
    for matrix in (gpqa, musr):
        for detect in (1.0, 2.0, 4.0, 8.0):
            _, part = pairs_in_bin(matrix, detect)
            for threshold in (0.7, 0.8, 0.9):
                assert smallest_size(part, "random", threshold, seed=0)[0] == scan(part, "random", threshold), (matrix.source, detect, threshold)


def test_bisection_answer_reaches_the_threshold_and_one_item_fewer_does_not(small_sim):
    found = exact_smallest_size(small_sim, detect=3.0, threshold=0.8)
    _, part = pairs_in_bin(small_sim, 3.0)
    below, at = analytic.mean_agreement_by_size(part, [found.smallest - 1, found.smallest])
    assert at >= 0.8 > below
    assert (found.at_smallest, found.below) == pytest.approx((at, below), abs=1e-12)


def test_budget_probability_matches_drawing_the_items(small_sim):
    """Independent check: draw 25 items uniformly many times, count the pairs of the bin ordered as the full benchmark orders them."""
    lower, pairs, exact = exact_agreement_at_size(small_sim, detect=6.0, size=25)
    scores = small_sim.scores.astype(np.float64)
    acc = 100 * scores.mean(axis=1)
    a, b = np.triu_indices(small_sim.n_models, 1)
    diff = acc[a] - acc[b]
    in_bin = np.floor(np.abs(diff) / 0.5 + 1e-9) * 0.5 == lower
    a, b, sign = a[in_bin], b[in_bin], np.sign(diff[in_bin])
    assert len(a) == pairs
    rng = np.random.default_rng(0)
    draws = 400
    hits = 0.0
    for _ in range(draws):
        items = rng.choice(small_sim.n_items, 25, replace=False)
        est = scores[:, items].mean(axis=1)
        hits += np.mean(np.sign(est[a] - est[b]) == sign)
    share = hits / draws
    assert share == pytest.approx(exact, abs=0.02)  # sd of the mean over 400 draws is well below 0.01


def test_every_row_is_the_single_method_answer(small_sim):
    choice = mdad.plan(small_sim, detect=6.0, methods="random-stratified-equal,anchor-points", runs=3, seed=1)
    assert [r.method for r in choice.rows] == ["random", "random-stratified-equal", "anchor-points"]  # uniform random always first
    for name in ("random", "random-stratified-equal"):
        single = mdad.plan(small_sim, detect=6.0, method=name)
        assert (choice.row(name).items, choice.row(name).value) == (single.smallest, pytest.approx(single.at_smallest))
    sim = mdad.plan(small_sim, detect=6.0, method="anchor-points", runs=3, seed=1)
    row = choice.row("anchor-points")
    from mdad.planning.simulated import plan_ladder

    random_items = choice.row("random").items  # beside uniform random the rungs stop at its exact answer
    assert row.ladder == plan_ladder(small_sim.n_items, random_items) == (10, 25, 50, random_items) and not row.exact
    assert row.items == sim.smallest < random_items  # the same answer as alone, below uniform random's
    assert row.stderr >= sim.stderr[list(sim.sizes).index(row.items if row.items else sim.sizes[-1])]
    frame = choice.to_frame()
    assert frame["method"].tolist() == ["random", "random-stratified-equal", "anchor-points"]
    assert choice.recommended in frame["method"].tolist() and choice.rule


def test_mdad_rows_at_a_size_and_their_intervals(small_sim):
    choice = mdad.plan(small_sim, size=40, methods="random,diversity", runs=3)
    exact = mdad.plan(small_sim, size=40)
    assert choice.row("random").value == exact.mdad
    row = choice.row("diversity")
    assert row.low <= row.value and (math.isnan(row.high) or row.value <= row.high)
    assert row.beats_random == (not math.isnan(row.high) and row.high < exact.mdad)


def row(method, items, value, se, random_value, beats, exact=False):
    return PlanRow(method, exact, items, value, value - 2 * se, value + 2 * se, se, random_value, beats, (), 100)


def test_the_rule_picks_the_fewest_items_among_methods_beyond_the_noise_else_random():
    rows = [
        row("random", 250, 0.80, 0.0, 0.80, False, exact=True),
        row("a", 50, 0.85, 0.01, 0.60, True),
        row("b", 25, 0.81, 0.01, 0.50, True),
        row("c", 10, 0.80, 0.20, 0.45, False),  # fewest items, but within its noise
    ]
    method, sentence, rule = recommend("detect", rows, 2.0, 0.8)
    assert method == "b" and "25 items" in sentence and "fewest items" in rule
    method, sentence, _ = recommend("detect", [rows[0], rows[3]], 2.0, 0.8)
    assert method == "random" and NO_BETTER in sentence


def test_options_are_checked_before_any_work(small_sim):
    for request, message in (
        ({"budget": 25}, "--budget K asks how likely"),
        ({"budget": 25, "detect": 2.0, "size": 10}, "--budget K asks how likely"),
        ({"methods": "random,bogus", "detect": 2.0}, "Unknown method 'bogus'"),
        ({"methods": " , ", "detect": 2.0}, "Name at least one method"),
    ):
        with pytest.raises(MdadError, match=message):
            mdad.plan(small_sim, **request)


def test_cli_prints_every_method_and_one_recommendation(small_sim, tmp_path):
    write_npz(small_sim, tmp_path / "data.npz")
    data = ["--data", str(tmp_path / "data.npz")]
    result = runner.invoke(app, ["plan", *data, "--method", "random,anchor-points", "--detect", "6", "--runs", "2"], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "anchor-points" in text and "simulated" in text and f"random exact {mdad.plan(small_sim, detect=6.0).smallest}" in text
    assert text.count("Recommendation:") == 1 and "Rule:" in text
    budget = runner.invoke(
        app, ["plan", *data, "--method", "random,anchor-points", "--detect", "6", "--budget", "25", "--runs", "2"], terminal_width=200
    )
    assert budget.exit_code == 0, budget.output
    expected = exact_agreement_at_size(small_sim, detect=6.0, size=25)[2]
    assert f"{expected:.3f}" in " ".join(budget.output.split())


def test_first_count_from_which_every_larger_count_is_within_the_noise_by_brute_force():
    from mdad.planning.sources import _first_for_good

    rng = np.random.default_rng(0)
    counts = [5, 10, 20, 50, 100, 137]
    for _ in range(200):
        within = rng.random(len(counts)) < 0.6
        brute = next((counts[i] for i in range(len(counts)) if within[i:].all()), None)
        assert _first_for_good(counts, within) == brute


def test_fewer_sources_keep_the_targets_and_their_truths(small_sim):
    from mdad.assessment import held_out_runs

    every = held_out_runs(small_sim, "random", (25,), runs=3, seed=2)
    few = held_out_runs(small_sim, "random", (25,), runs=3, seed=2, sources=5)
    assert few.sources == 5 and every.sources == small_sim.n_models - every.targets
    np.testing.assert_array_equal(few.truths, every.truths)  # same held-out targets
    np.testing.assert_array_equal(few.estimates[25], every.estimates[25])  # random ignores sources: same items


def test_sources_curve_answers_how_many_source_models(small_sim, tmp_path):
    from mdad.planning import sources_curve
    from mdad.planning.sources import source_counts

    assert source_counts(small_sim) == [5, 10, 20, 50, small_sim.n_models - 50]
    curve = sources_curve(small_sim, "anchor-points", size=25, runs=2)
    frame = curve.to_frame()
    assert frame["sources"].tolist() == [5, 10, 20, 50, 70]
    assert curve.enough is None or curve.enough in curve.counts
    full = mdad.plan(small_sim, size=25, method="anchor-points", runs=2)
    assert frame["mdad"].iloc[-1] == pytest.approx(full.assessment.mdad, nan_ok=True)  # every source: the plain answer
    with pytest.raises(MdadError, match="uses no source models"):
        sources_curve(small_sim, "random", size=25)
    write_npz(small_sim, tmp_path / "data.npz")
    result = runner.invoke(
        app,
        ["plan", "--data", str(tmp_path / "data.npz"), "--method", "anchor-points", "--size", "25", "--runs", "2", "--sources-curve"],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "by number of source models" in text and ("stop helping" in text or "still help" in text or "reaches no answer" in text)


def test_streamed_comparison_equals_the_whole_table_block_by_block(small_sim, monkeypatch):
    from mdad.planning import pairs

    monkeypatch.setattr(pairs, "COMPARE_BLOCK_PAIRS", 2000)  # many blocks of pairs
    whole = mdad.compare(small_sim, size=40).to_frame()
    blocks = []
    found = pairs.compare_streamed(small_sim, size=40, top=25, on_block=blocks.append)
    assert len(blocks) > 3 and sum(map(len, blocks)) == len(whole) == found.n_pairs
    streamed = pd.concat(blocks).sort_values(["difference_points", "model_a", "model_b"], kind="stable", ignore_index=True)
    pd.testing.assert_frame_equal(streamed, whole)
    pd.testing.assert_frame_equal(found.closest, whole.head(25))
    assert found.below_mdad == int(whole["below_mdad"].sum())
    assert found.mean_probability == pytest.approx(whole["p_correct_order"].mean())
    assert found.share_below_threshold == pytest.approx((whole["p_correct_order"] < 0.8).mean())


@pytest.mark.slow  # minutes per leaderboard: six methods simulated on 20 held-out runs, three designs exact
@pytest.mark.parametrize("name", ["oll2-gpqa", "oll2-musr", "oll2-math-hard"])
def test_every_method_answers_detect_two_points_on_the_real_leaderboards(name):
    from support.paths import real_dataset

    matrix = real_dataset(name)
    choice = mdad.plan(matrix, detect=2.0, methods="all", workers=2)
    assert [r.method for r in choice.rows] == mdad.methods.defaults()
    assert choice.row("random").items == mdad.plan(matrix, detect=2.0).smallest
    for row in choice.rows:
        assert row.exact == (row.method in analytic.DESIGNS)
        assert row.items is None or row.value >= 0.8
    assert choice.recommended in mdad.methods.defaults() and choice.recommendation.endswith(".")


@pytest.mark.parametrize(("stratified", "recommended"), [(0.8001, "random"), (0.95, "random-stratified-equal")])
def test_an_exact_design_must_beat_random_by_more_than_the_noise_of_its_pairs(stratified, recommended, small_sim, monkeypatch):
    """An exact share is exact for its pairs only: 0.0001 above uniform random is within the binomial
    noise of a finite set of pairs and recommends random; a large advantage recommends the design."""
    from mdad.planning import rows as per_method

    real = per_method.exact_agreement_at_size

    def shares(matrix, *, design="random", **kwargs):
        lower, pairs, value = real(matrix, design="random", **kwargs)
        return lower, pairs, (0.80 if design == "random" else stratified)

    monkeypatch.setattr(per_method, "exact_agreement_at_size", shares)
    plan = mdad.plan(small_sim, budget=25, detect=2.0, methods="random,random-stratified-equal")
    row = plan.row("random-stratified-equal")
    assert row.pairs > 0 and row.beats_random == (recommended != "random")
    assert plan.recommended == recommended
    assert per_method.exact_beats(0.95, 0.80, row.pairs) and not per_method.exact_beats(0.8001, 0.80, row.pairs)
    assert not per_method.exact_beats(0.85, 0.80, 10)  # 10 pairs: 0.05 is within two binomial errors (0.24)


@pytest.mark.parametrize(("stratified", "recommended"), [(0.8001, "random"), (0.95, "random-stratified-equal")])
def test_a_smaller_exact_mdad_counts_only_beyond_the_noise_of_its_bins_pairs(stratified, recommended, small_sim, monkeypatch):
    """--size: an exact design whose MDAD is one bin smaller than uniform random's is recommended only
    when, in that bin, its share of pairs ordered correctly beats random's by more than the binomial
    noise of the bin's pairs (docs/plan.md)."""
    import dataclasses

    from mdad.planning import rows as per_method

    real_mdad, real_share = per_method.exact_mdad_at_size, per_method.exact_agreement_at_size
    baseline = real_mdad(small_sim, size=25, design="random")
    assert baseline.reached and baseline.mdad >= 1.0
    smaller = baseline.mdad - 0.5

    def mdads(matrix, *, design="random", **kwargs):
        found = real_mdad(matrix, design="random", **kwargs)
        return found if design == "random" else dataclasses.replace(found, method=design, mdad=smaller)

    def shares(matrix, *, design="random", **kwargs):
        lower, pairs, _ = real_share(matrix, design="random", **kwargs)
        assert lower == smaller  # judged in the bin where the design crosses
        return lower, pairs, (0.80 if design == "random" else stratified)

    monkeypatch.setattr(per_method, "exact_mdad_at_size", mdads)
    monkeypatch.setattr(per_method, "exact_agreement_at_size", shares)
    plan = mdad.plan(small_sim, size=25, methods="random,random-stratified-equal", new_models="like-sources")
    assert plan.row("random-stratified-equal").value == smaller
    assert plan.recommended == recommended


def test_the_ladder_ends_at_uniform_randoms_answer_or_the_rung_within_ten_percent_below_it():
    """A method needing more items than uniform random cannot be recommended, so beside it the rungs stop there."""
    from mdad.planning.simulated import plan_ladder

    assert plan_ladder(756) == (10, 25, 50, 100, 250, 500)  # alone: every rung within the pool
    assert plan_ladder(756, 294) == (10, 25, 50, 100, 250, 294)  # not 500, which only a method worse than random needs
    assert plan_ladder(448, 254) == (10, 25, 50, 100, 250)  # 250 is within 10% of 254: reaching between the two ties random
    assert plan_ladder(894, 86) == (10, 25, 50, 86)
    assert plan_ladder(400, 8) == (8,)  # uniform random needs fewer items than the first rung
