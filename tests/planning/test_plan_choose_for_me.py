"""`plan` choosing for the user (docs/plan.md#choose-for-me): every registered method, two populations of
new models, sizes between the rungs on the same runs, errors over runs and models checked against a
brute-force bootstrap and for coverage, and the same decision for another seed."""

from __future__ import annotations

import numpy as np
import pytest

import mdad
from mdad import methods as registry
from mdad.experiment.splits import make_splits
from mdad.planning.exact import exact_smallest_size
from mdad.planning.method_sets import method_names, servable
from mdad.planning.paired import BOOTSTRAP_DRAWS, PairsInBin, bootstrap_se, paired_difference
from mdad.planning.result import BASELINE
from mdad.planning.simulated import between, refined, simulated_plan


def test_all_is_every_registered_method_and_paper_the_papers_set(small_sim):
    assert method_names("all") == [BASELINE, *[n for n in registry.available() if n != BASELINE]]
    assert method_names("paper") == [BASELINE, *[n for n in registry.defaults() if n != BASELINE]]
    assert {"lasso", "metabench", "aipw", "adaptive", "random-regression"} <= set(method_names("all"))
    assert not {"lasso", "metabench", "aipw", "adaptive"} & set(method_names("paper"))
    continuous = mdad.ResponseMatrix(
        scores=small_sim.scores * 0.5 + 0.25, models=small_sim.models, items=small_sim.items, subtasks=small_sim.subtasks, source="graded"
    )
    served, skipped = servable(continuous, method_names("all"), everything=True)
    reasons = dict(skipped)
    assert skipped and all(name not in served for name in reasons)
    assert all("continuous scores" in why for why in reasons.values())
    assert set(served) | set(reasons) == set(method_names("all"))


def brute_force_bootstrap(correct, run, first, second, runs, draws, rng):
    """Resample runs and models with replacement literally: every drawn copy of a run, and every drawn
    copy of each of its pair's models, brings the pair once more."""
    models = np.unique(np.concatenate([first, second]))
    shares = []
    for _ in range(draws):
        drawn_runs = rng.integers(0, runs, runs)
        drawn_models = models[rng.integers(0, len(models), len(models))]
        hits = total = 0
        for r in drawn_runs:
            for p in np.flatnonzero(run == r):
                copies = int(np.sum(drawn_models == first[p])) * int(np.sum(drawn_models == second[p]))
                hits += copies * int(correct[p])
                total += copies
        if total:
            shares.append(hits / total)
    return np.std(shares, ddof=1)


def test_two_way_bootstrap_and_paired_difference_against_a_brute_force_resampling():
    rng = np.random.default_rng(7)
    runs, n_targets = 4, 6
    target_ids = np.array([np.sort(rng.choice(9, n_targets, replace=False)) for _ in range(runs)])  # runs share most targets
    in_bin = rng.random((runs, n_targets * (n_targets - 1) // 2)) < 0.6
    pairs = PairsInBin.of(in_bin, target_ids)
    i, j = np.triu_indices(n_targets, 1)
    r0, p0 = np.nonzero(in_bin)[0][0], np.nonzero(in_bin)[1][0]
    assert (pairs.first[0], pairs.second[0]) == (target_ids[r0, i[p0]], target_ids[r0, j[p0]])
    a = rng.random(len(pairs.run)) < 0.7
    b = np.where(rng.random(len(a)) < 0.8, a, ~a)  # mostly the same pairs right: a paired difference
    weights = pairs.weights(seed=0)
    brute_a = brute_force_bootstrap(a, pairs.run, pairs.first, pairs.second, runs, 1500, np.random.default_rng(1))
    assert bootstrap_se(a, weights) == pytest.approx(brute_a, rel=0.12)
    diff, se = paired_difference(a, b, weights)
    assert diff == pytest.approx(a.mean() - b.mean())
    # the paired error by brute force: resample once, score both methods on the same draw
    draws, gen = [], np.random.default_rng(2)
    models = np.unique(np.concatenate([pairs.first, pairs.second]))
    for _ in range(1500):
        drawn_runs, drawn = gen.integers(0, runs, runs), models[gen.integers(0, len(models), len(models))]
        count = np.array([np.sum(drawn_runs == r) for r in pairs.run]) * np.array(
            [np.sum(drawn == f) * np.sum(drawn == s) for f, s in zip(pairs.first, pairs.second, strict=True)]
        )
        if count.sum():
            draws.append((count @ a - count @ b) / count.sum())
    assert se == pytest.approx(np.std(draws, ddof=1), rel=0.12)
    assert se < np.hypot(bootstrap_se(a, weights), bootstrap_se(b, weights))  # pairing removes the shared noise
    assert len(weights) <= BOOTSTRAP_DRAWS


def test_bootstrap_errors_cover_the_truth_when_runs_share_targets(small_sim):
    """Coverage: a 5-run simulation of uniform random among 20 of 30 models (runs share most targets);
    the truth is the share over 200 runs. Shares within 2 bootstrap errors of it: about 95%."""
    matrix = small_sim.take(models=np.arange(30))
    truth = simulated_plan(matrix, "random", detect=4.0, sizes=(25,), runs=200, targets=20, seed=99).agreement[0]
    inside, between_runs_inside = 0, 0
    seeds = range(40)
    for seed in seeds:
        found = simulated_plan(matrix, "random", detect=4.0, sizes=(25,), runs=5, targets=20, seed=seed)
        assert found.in_bin is not None and found.correct is not None
        se = bootstrap_se(found.correct[25], found.in_bin.weights(seed))
        inside += abs(found.agreement[0] - truth) <= 2 * se
        between_runs_inside += abs(found.agreement[0] - truth) <= 2 * found.stderr[0]
    assert inside / len(seeds) >= 0.85
    assert inside >= between_runs_inside  # the between-runs error covers less


def test_sizes_between_the_rungs_are_simulated_on_the_same_runs(small_sim):
    for low, high in ((10, 25), (100, 250), (250, 500)):
        grid = [low, *between(low, high), high]
        assert grid == sorted(set(grid)) and all(b - a <= max(2, 0.11 * a) for a, b in zip(grid, grid[1:], strict=False))
    found = simulated_plan(small_sim, "random", detect=3.0, runs=4, seed=5)
    assert found.bracket is not None
    low, high = found.bracket
    finer = refined(found, small_sim, detect=3.0, seed=5)
    inner = [int(k) for k in finer.sizes if low < k < high]
    assert inner == between(low, high)
    alone = simulated_plan(small_sim, "random", detect=3.0, runs=4, seed=5, sizes=inner[:2])
    np.testing.assert_array_equal(finer.agreement[np.isin(finer.sizes, inner[:2])], alone.agreement)  # same runs: paired
    assert finer.smallest is not None and low < finer.smallest <= high
    assert finer.bracket is not None and finer.bracket[1] - finer.bracket[0] <= max(2, 0.11 * finer.bracket[0])


def test_stronger_new_models_are_the_strongest_held_out(small_sim):
    choice = mdad.plan(small_sim, detect=4.0, methods="random,random-stratified-equal", new_models="both", runs=2)
    like, stronger = choice.populations
    assert (like.new_models, stronger.new_models) == ("like-sources", "stronger") and choice.stronger is stronger
    top = make_splits(small_sim, 1, 50, 0, targets_from="top").targets[0]
    accuracy = small_sim.scores.mean(axis=1)
    assert np.all(accuracy[top].min() >= np.delete(accuracy, top))
    assert stronger.row("random").items == exact_smallest_size(small_sim.take(models=top), detect=4.0).smallest
    assert like.row("random").items == exact_smallest_size(small_sim, detect=4.0).smallest
    assert choice.recommended in (like.tied or (like.recommended,)) or choice.recommended == stronger.recommended
    only = mdad.plan(small_sim, detect=4.0, methods="random", new_models="stronger", runs=2)
    assert only.new_models == "stronger" and not only.populations and only.row("random").items == stronger.row("random").items
    with pytest.raises(mdad.MdadError, match="new-models"):
        mdad.plan(small_sim, detect=4.0, methods="random", new_models="weaker")


def decision(plan) -> set[str]:
    return set(plan.tied) if plan.tied else {plan.recommended}


@pytest.mark.parametrize("dataset", ["gpqa"])
def test_another_seed_gives_the_same_decision_fast(dataset, request):
    """Two cheap learned methods (no model fit) and 8 runs: the ladder, the sizes between its rungs and the tie
    rule all run, for both populations, in a few CPU seconds; the slow test below does every method."""
    matrix = request.getfixturevalue(dataset)
    plans = [mdad.plan(matrix, detect=2.0, methods="random,stratified-confidence,diversity", seed=seed, runs=8) for seed in (0, 1)]
    for population in (0, 1):
        first, second = (p.populations[population] for p in plans)
        assert decision(first) & decision(second), (first.recommendation, second.recommendation)


@pytest.mark.slow  # every registered method, three leaderboards, two seeds: many CPU-minutes
@pytest.mark.parametrize("dataset", ["gpqa", "musr", "math_hard"])
def test_another_seed_gives_the_same_decision_for_every_method(dataset, request):
    matrix = request.getfixturevalue(dataset)
    plans = [mdad.plan(matrix, detect=2.0, methods="all", seed=seed, workers=2) for seed in (0, 1)]  # as the CLI on 2 cores
    for population in (0, 1):
        first, second = (p.populations[population] for p in plans)
        assert decision(first) & decision(second), (first.recommendation, second.recommendation)


def test_uniform_randoms_exact_estimation_error_matches_drawing_the_items(small_sim):
    from mdad.planning.exact import exact_estimation_error

    rng = np.random.default_rng(0)
    truth = small_sim.scores.mean(axis=1)
    drawn = [np.abs(small_sim.scores[:, rng.choice(small_sim.n_items, 25, replace=False)].mean(axis=1) - truth).mean() for _ in range(3000)]
    assert exact_estimation_error(small_sim, 25) == pytest.approx(100 * np.mean(drawn), rel=0.02)
    assert exact_estimation_error(small_sim, small_sim.n_items) == pytest.approx(0.0, abs=1e-9)


def test_the_size_answer_prints_the_estimation_error_and_says_when_the_smallest_mdad_errs_more(small_sim):
    from mdad.planning.recommend import recommend
    from mdad.planning.result import PlanRow

    def row(method, mdad, error, exact=False):
        return PlanRow(method, exact, 25, mdad, mdad, mdad, float("nan"), 13.0, method != "random", (), 100, error)

    rows = [row("random", 13.0, 7.5, exact=True), row("anchor-points", 5.5, 8.5)]
    _, sentence, _ = recommend("size", rows, None, 0.8)
    assert "estimation error 8.50 points against 7.50" in sentence
    _, calm, _ = recommend("size", [rows[0], row("anchor-points", 5.5, 5.0)], None, 0.8)
    assert "estimation error" not in calm
    choice = mdad.plan(small_sim, size=25, methods="random,anchor-points", runs=2, new_models="like-sources")
    errors = choice.to_frame().set_index("method")["error_points"]
    assert errors["anchor-points"] == pytest.approx(100 * mdad.assess(small_sim, "anchor-points", 25, runs=2).metrics["error"])
    assert errors["random"] > 0


def test_cli_answers_each_population_and_refuses_what_it_cannot_answer(small_sim, tmp_path):
    from typer.testing import CliRunner

    from mdad.cli import app
    from mdad.data import write_npz

    data = tmp_path / "sim.npz"
    write_npz(small_sim, data)
    runner = CliRunner()
    both = runner.invoke(app, ["plan", "--data", str(data), "--detect", "4", "--method", "random,random-stratified-equal"])
    assert both.exit_code == 0, both.output
    text = " ".join(both.output.split())
    assert "per method for new models like the sources." in text and "per method for new models stronger than the sources." in text
    assert text.count("Recommendation:") == 1
    stronger = runner.invoke(app, ["plan", "--data", str(data), "--detect", "4", "--new-models", "stronger"])
    assert stronger.exit_code == 0, stronger.output
    text = " ".join(stronger.output.split())
    assert "for new models stronger than the sources" in text and "like the sources" not in text
    wrong = runner.invoke(app, ["plan", "--data", str(data), "--detect", "4", "--new-models", "weaker"])
    assert wrong.exit_code == 2 and "weaker" in wrong.output
    stored = runner.invoke(app, ["plan", "--results", str(tmp_path), "--detect", "4", "--new-models", "stronger"])
    assert stored.exit_code == 2 and "--new-models" in stored.output and "Traceback" not in stored.output


def test_scheduler_sends_the_simulations_to_dask_and_is_refused_where_nothing_is_simulated(small_sim):
    dask = pytest.importorskip("dask", reason="Dask is an optional extra")
    pytest.importorskip("distributed", reason="Dask is an optional extra")
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "2s"}),
        pytest.raises(mdad.MdadError, match="Cannot reach the Dask scheduler at tcp://127.0.0.1:9"),
    ):
        mdad.plan(small_sim, detect=4.0, methods="random,anchor-points", runs=2, scheduler="tcp://127.0.0.1:9")
    with pytest.raises(mdad.MdadError, match="answered exactly; drop --scheduler"):
        mdad.plan(small_sim, detect=4.0, methods="random,random-stratified-equal", scheduler="tcp://127.0.0.1:9")
    with pytest.raises(mdad.MdadError, match="answered exactly; drop --scheduler"):
        mdad.plan(small_sim, detect=4.0, scheduler="tcp://127.0.0.1:9")


def test_a_population_without_pairs_that_far_apart_is_one_sentence_that_names_it():
    matrix = mdad.simulate(seed=0, n_models=12, n_items=200)
    with pytest.raises(mdad.MdadError, match=r"^For new models stronger than the sources: No pair .*--new-models like-sources answers"):
        mdad.plan(matrix, detect=5.0, methods="random,random-stratified-equal")
    assert mdad.plan(matrix, detect=5.0, methods="random,random-stratified-equal", new_models="like-sources").row("random").items


def shares_in_bin(estimates, truths, lower):
    """Independently of mdad.planning: the share of held-out pairs whose full-benchmark difference lies in
    [lower, lower + 0.5) points that the estimates order as the truths do (ties count as errors)."""
    hits = total = 0
    for est, truth in zip(estimates, truths, strict=True):
        i, j = np.triu_indices(len(truth), 1)
        gap = 100 * np.abs(truth[i] - truth[j])
        inside = (gap >= lower - 1e-9) & (gap < lower + 0.5 - 1e-9)
        right = np.sign(est[i] - est[j]) == np.sign(truth[i] - truth[j])
        hits += int(np.sum(right & inside))
        total += int(np.sum(inside))
    return hits / total


def test_the_size_answer_ranks_by_paired_differences_in_the_leaders_bin_and_names_ties(small_sim):
    import re

    methods = "random,anchor-points,adaptive"
    choice = mdad.plan(small_sim, size=25, methods=methods, runs=4, new_models="like-sources")
    frame = choice.to_frame().set_index("method")
    leader = min(("anchor-points", "adaptive"), key=lambda m: (frame.loc[m, "value"], frame.loc[m, "high"]))
    runner_up = ({"anchor-points", "adaptive"} - {leader}).pop()
    assert frame.loc[leader, "value"] < frame.loc["random", "value"]
    # the MDADs are assess's, and the printed paired differences are the shares' differences in the leader's bin
    assessed = {m: mdad.assess(small_sim, m, 25, runs=4) for m in ("random", "anchor-points", "adaptive")}
    assert frame.loc[leader, "value"] == assessed[leader].mdad
    lower = float(frame.loc[leader, "value"])
    share = {m: shares_in_bin(a.estimates, a.truths, lower) for m, a in assessed.items()}
    said = dict(re.findall(r"minus ([\w-]+)'s: ([+-][0-9.]+) ±", choice.recommendation))
    assert set(said) == {"random", runner_up}, choice.recommendation
    for other, difference in said.items():
        assert float(difference) == pytest.approx(share[leader] - share[other], abs=5e-4)
    if choice.tied:  # a tied set: its simplest is recommended, random designs first
        assert choice.recommendation.startswith("These methods are tied within noise:") and leader in choice.tied
        assert choice.recommended == choice.tied[0] and (choice.recommended == "random") == ("random" in choice.tied)
    else:
        assert choice.recommended == leader and choice.recommendation.startswith(f"Use {leader}: MDAD")
    assert "paired difference" in choice.rule and "interval's upper end" not in choice.rule


def test_only_methods_that_can_lead_or_be_runner_up_are_simulated_between_the_rungs(small_sim):
    from mdad.planning.rows import contending

    def ladder(method, reached_at):
        sizes = np.array([10, 25, 50, 100, 250])
        return mdad.planning.SimulatedPlan(method, "x", 4.0, sizes, np.where(sizes >= reached_at, 0.9, 0.5), np.zeros(5), 100, 5, 0.8)

    found = {m: ladder(m, at) for m, at in (("a", 50), ("b", 100), ("c", 250), ("d", 10))}
    # d reaches at the first rung (no bracket); the second smallest sure answer is 50: b (50-100) and c cannot beat it
    assert contending(found, random_items=254) == ["a"]
    assert contending({m: found[m] for m in "abc"}, random_items=254) == ["a", "b"]  # second smallest: 100
    assert contending({m: found[m] for m in "abc"}, random_items=40) == ["a"]  # a bracket from 50 cannot beat random's 40
    # on real simulations: a method left at its rungs, simulated between them anyway, still needs more items
    # than two methods do, so it could be neither the leader nor the runner-up of the tie rule
    methods = "random,stratified-confidence,anchor-points,diversity,tinybenchmarks,random-regression"
    choice = mdad.plan(small_sim, detect=8.0, methods=methods, runs=3, new_models="like-sources")
    simulated = [r for r in choice.rows if not r.exact and r.items is not None]
    coarse = [r for r in simulated if r.bracket is not None and r.bracket[1] - r.bracket[0] > max(2, 0.11 * r.bracket[0])]
    from mdad.planning.simulated import plan_ladder

    random_items = choice.row("random").items  # 54: the rungs end at 50, within 10% of it
    assert all(r.ladder == plan_ladder(small_sim.n_items, random_items) == (10, 25, 50) for r in choice.rows if not r.exact)
    for row in coarse:
        finer = refined(simulated_plan(small_sim, row.method, detect=8.0, runs=3), small_sim, detect=8.0)
        assert finer.smallest is not None
        assert sum(other.items < finer.smallest for other in simulated if other.method != row.method) >= 2 or (
            choice.row("random").items is not None and finer.smallest >= choice.row("random").items
        )


def test_the_simplest_of_a_tied_set_rests_least_on_the_sources_and_then_is_the_leader():
    """Random designs first; then methods whose estimate is the chosen items' mean; then those whose estimate is
    fitted to the sources (an ability or a regression, as each declares). Among equally simple methods the leader
    comes first: with few pairs a weak method can be tied with a strong one, and the point estimate is the better
    guess."""
    from mdad.planning.ties import simplest_first, simplicity

    tiers = {name: simplicity(name) for name in ("random", "random-stratified-equal", "anchor-points", "stratified-confidence", "diversity")}
    assert tiers == {"random": 0, "random-stratified-equal": 0, "anchor-points": 1, "stratified-confidence": 1, "diversity": 1}
    fitted = ("lasso", "mrmr-krr", "disco", "metabench", "tinybenchmarks-pirt", "adaptive-1d", "anchor-points@estimator=krr")
    assert {simplicity(name) for name in fitted} == {2}
    names = ["random", "anchor-points", "lasso", "adaptive-1d", "mrmr-krr"]
    assert simplest_first(["adaptive-1d", "mrmr-krr"], names, leader="mrmr-krr") == ["mrmr-krr", "adaptive-1d"]
    assert simplest_first(["lasso", "anchor-points", "random"], names, leader="lasso") == ["random", "anchor-points", "lasso"]
    assert simplest_first(["lasso", "adaptive-1d"], names, leader="mrmr-krr") == ["lasso", "adaptive-1d"]  # then the order asked
