"""Every option either used or refused: suffix values of method names, --stop-se without an adaptive
test, the seed rule shared by select and estimate, plan's --detect, --method all on continuous
scores, --results with several methods, Monte Carlo noise in a sources curve, and `info` on
scores that are all missing. Each case gets one sentence (or the right answer with a note)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from support.cli_checks import flat, one_error, runner, small_matrix, wide_csv

from mdad import methods as method_registry
from mdad.cli import app
from mdad.data import ResponseMatrix
from mdad.errors import MdadError
from mdad.experiment.grid import ExperimentConfig
from mdad.methods.names import MAX_RANDOMESQUE, STOP_SE, SUFFIX, SUFFIXES, MethodName, parse
from mdad.planning import SimulatedPlan, plan_from_results
from mdad.planning.simulated import MAX_RUNS_TO_SETTLE
from mdad.seeding import SEED_LIMIT, check_seed, rng_for

BAD_SUFFIXES = {
    "superscript two": ("adaptive-1d@randomesque=²", "@randomesque takes a whole number of items from 1 to 100,000"),
    "5,000 digits": ("adaptive-1d@randomesque=" + "7" * 5000, "(5,000 characters)"),
    "arabic-indic three": ("adaptive-1d@randomesque=٣", "got '٣'"),
    "infinite stop-se": ("adaptive-1d@stop-se=inf", "@stop-se takes a posterior sd of the ability, a decimal strictly between 0 and 1"),
    "stop-se of one": ("adaptive-1d@stop-se=1", "strictly between 0 and 1"),
    "exponent": ("adaptive-1d@stop-se=3e-1", "got '3e-1'"),
}


# ---- suffix values ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, message", BAD_SUFFIXES.values(), ids=BAD_SUFFIXES.keys())
@pytest.mark.parametrize("command", ["select", "run", "plan"])
def test_bad_suffix_values_are_one_sentence_in_every_command(tmp_path, command, name, message):
    args = {
        "select": ["select", "--method", name, "--size", "5", "--out", str(tmp_path / "m.json")],
        "run": ["run", "--methods", name, "--out", str(tmp_path / "out")],
        "plan": ["plan", "--method", name, "--detect", "5"],
    }[command]
    one_error(runner.invoke(app, args), message)
    assert not list(tmp_path.iterdir()), "nothing is written"


def test_suffixes_are_read_in_any_order_and_written_in_one():
    for name in ("adaptive-1d@randomesque=4@stop-se=.30", "adaptive-1d@stop-se=0.3@randomesque=4", "adaptive-1d@randomesque=04@stop-se=0.300"):
        spec = parse(name)
        assert spec == MethodName("adaptive-1d", stop_se=0.3, randomesque=4)
        assert str(spec) == "adaptive-1d@stop-se=0.3@randomesque=4"
        assert method_registry.get(name).name == "adaptive-1d@stop-se=0.3@randomesque=4"
    config = ExperimentConfig(methods=("adaptive-1d@randomesque=4@stop-se=.3", "adaptive-1d@stop-se=0.30@randomesque=4"), sizes=(10,))
    assert config.methods == ("adaptive-1d@stop-se=0.3@randomesque=4",)  # one method, one set of cells
    assert str(parse("random@per-subtask")) == "random@per-subtask"
    assert ("@" + SUFFIXES[0].key, "@" + SUFFIXES[2].key + "=") == (SUFFIX, STOP_SE)
    assert str(parse("anchor-points@estimator=krr@per-subtask")) == "anchor-points@per-subtask@estimator=krr"
    assert str(parse("adaptive@stop-se=0.00001")) == "adaptive@stop-se=0.00001"  # never an exponent, which would not read back


def test_suffix_bounds_are_the_stated_ones():
    assert parse(f"adaptive@randomesque={MAX_RANDOMESQUE}").randomesque == MAX_RANDOMESQUE
    assert parse("adaptive@stop-se=0.999").stop_se == 0.999
    for name, message in (
        (f"adaptive@randomesque={MAX_RANDOMESQUE + 1}", "from 1 to 100,000"),
        ("adaptive@randomesque=0", "from 1 to 100,000"),
        ("adaptive@randomesque=-2", "from 1 to 100,000"),
        ("adaptive@stop-se=0", "strictly between 0 and 1"),
        ("adaptive@stop-se=nan", "strictly between 0 and 1"),
        ("adaptive@stop-se=", "strictly between 0 and 1"),
        ("adaptive@randomesque=3@randomesque=3", "gives @randomesque twice"),
        ("random@per-subtask=1", "@per-subtask takes no value"),
        ("random@bogus=1", "unknown suffix '@bogus=1'; a name takes @per-subtask, @estimator=VALUE"),
    ):
        with pytest.raises(MdadError, match=re.escape(message)):
            parse(name)


def test_a_valid_suffix_in_another_order_is_written_into_micro_json_canonically(tmp_path):
    data = wide_csv(tmp_path / "scores.csv", small_matrix(n_models=30, n_items=40))
    micro = tmp_path / "m.json"
    result = runner.invoke(
        app, ["select", "--data", str(data), "--method", "adaptive-1d@randomesque=2@stop-se=0.5", "--size", "5", "--out", str(micro)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(micro.read_text())["method"] == "adaptive-1d@stop-se=0.5@randomesque=2"


# ---- run --stop-se ------------------------------------------------------------------------------
def test_stop_se_without_an_adaptive_test_is_refused_before_any_work(tmp_path):
    out = tmp_path / "out"
    one_error(runner.invoke(app, ["run", "--methods", "random", "--stop-se", "0.3", "--out", str(out)]), "--stop-se applies to adaptive tests only")
    one_error(runner.invoke(app, ["run", "--stop-se", "0.3", "--out", str(out)]), "no adaptive test")  # the default methods are static
    one_error(runner.invoke(app, ["run", "--methods", "adaptive-1d", "--stop-se", "inf", "--out", str(out)]), "@stop-se takes")
    assert not out.exists()


def test_stop_se_adds_the_canonical_name_for_each_adaptive_test():
    from mdad.cli.run import with_stop_rules

    assert with_stop_rules(["random", "adaptive-1d@randomesque=3"], ["0.30", ".5"]) == [
        "adaptive-1d@stop-se=0.3@randomesque=3",
        "adaptive-1d@stop-se=0.5@randomesque=3",
    ]
    assert with_stop_rules(["random"], []) == []


# ---- one seed rule ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [str(SEED_LIMIT), str(-SEED_LIMIT), "9" * 400])
@pytest.mark.parametrize("command", ["select", "run", "plan"])
def test_a_seed_that_estimate_would_refuse_is_refused_by_every_command(tmp_path, command, seed):
    args = {
        "select": ["select", "--method", "random", "--size", "5", "--out", str(tmp_path / "m.json")],
        "run": ["run", "--methods", "random", "--out", str(tmp_path / "out")],
        "plan": ["plan", "--detect", "5"],
    }[command]
    one_error(runner.invoke(app, [*args, "--seed", seed]), "A seed must be a whole number smaller than 2**64 in size")
    assert not list(tmp_path.iterdir())


def test_the_largest_seed_select_accepts_is_one_estimate_accepts(tmp_path):
    data = wide_csv(tmp_path / "scores.csv", small_matrix(n_models=12, n_items=40))
    micro = tmp_path / "m.json"
    seed = SEED_LIMIT - 1
    chosen = runner.invoke(
        app, ["select", "--data", str(data), "--method", "random", "--size", "10", "--seed", str(seed), "--out", str(micro), "--assess-runs", "0"]
    )
    assert chosen.exit_code == 0, chosen.output
    assert json.loads(micro.read_text())["seed"] == seed
    estimated = runner.invoke(app, ["estimate", str(micro), str(data)])
    assert estimated.exit_code == 0, estimated.output
    with pytest.raises(MdadError, match="smaller than 2"):
        rng_for(SEED_LIMIT, "select")  # the library's generators keep the same rule
    assert check_seed(np.int64(-5)) == -5


# ---- info ---------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("error")
def test_info_on_scores_that_are_all_missing_says_so_without_a_numpy_warning(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("model,i0,i1\nm0,,\nm1,,\n")
    for args in ([], ["--models"]):
        result = runner.invoke(app, ["info", str(path), *args])
        assert result.exit_code == 0, result.output
        assert "Warning" not in result.output
        assert "accuracy: none, no model answered any item (every cell is missing)" in flat(result.output)
    listed = runner.invoke(app, ["info", str(path), "--models"])
    assert [line.split() for line in listed.output.splitlines()[-2:]] == [["none", "m0"], ["none", "m1"]]


# ---- plan ---------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("detect", ["inf", "100.5", "1e309", "nan", "-1"])
@pytest.mark.parametrize("method", ["random", "all", "anchor-points"])
def test_plan_refuses_a_difference_beyond_100_points(detect, method):
    result = runner.invoke(app, ["plan", f"--detect={detect}", "--method", method])
    one_error(result, "The difference to detect is an accuracy difference in points, from 0 to 100")
    assert "e+18" not in result.output and "RuntimeWarning" not in result.output


def _continuous(tmp_path: Path, missing: bool = False) -> Path:
    rng = np.random.default_rng(4)
    ability = np.linspace(0.2, 0.8, 40)[:, None]
    scores = np.clip(ability + rng.normal(0, 0.25, (40, 150)), 0, 1)
    scores[3, 7] = np.nan if missing else scores[3, 7]
    matrix = ResponseMatrix(
        scores=scores, models=[f"m{i}" for i in range(40)], items=[f"q{j}" for j in range(150)], subtasks=["a"] * 150, source="cont"
    )
    assert not matrix.is_binary
    return wide_csv(tmp_path / f"continuous{'-missing' if missing else ''}.csv", matrix)


def test_plan_paper_on_continuous_scores_answers_the_methods_that_can_and_names_the_rest(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a short path, which no console wraps inside the sentence checked
    data = Path(_continuous(tmp_path).name)
    result = runner.invoke(app, ["plan", "--data", str(data), "--method", "paper", "--detect", "10", "--runs", "2"], terminal_width=250)
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    binary_only = [n for n in method_registry.defaults() if method_registry.get(n).scores == "binary"]
    assert binary_only, "some default method needs 0/1 scores"
    answered = [n for n in method_registry.defaults() if n not in binary_only]
    rows = {line.split()[0] for line in result.output.splitlines() if line.split() and line.split()[0] in method_registry.defaults()}
    assert rows == set(answered)
    assert f"Not answered: {', '.join(binary_only)} (each needs 0/1 correctness and {data} holds continuous scores)." in text
    named = runner.invoke(app, ["plan", "--data", str(data), "--method", f"random,{binary_only[0]}", "--detect", "10"])
    one_error(named, f"{binary_only[0]} needs 0/1 correctness", "leave it out of --method")
    alone = runner.invoke(app, ["plan", "--data", str(data), "--method", binary_only[0], "--detect", "10"])
    one_error(alone, f"{binary_only[0]} needs 0/1 correctness and {data} holds continuous scores.")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run") / "run"
    done = runner.invoke(app, ["run", "--runs", "4", "--sizes", "10,50", "--methods", "random,random-stratified-equal", "--out", str(out)])
    assert done.exit_code == 0, done.output
    return out


def test_plan_results_answers_every_listed_method_from_the_run(finished_run):
    for methods in ("random,random-stratified-equal", "all"):
        result = runner.invoke(app, ["plan", "--results", str(finished_run), "--method", methods, "--size", "50"], terminal_width=250)
        assert result.exit_code == 0, result.output
        for name in ("random", "random-stratified-equal"):
            found = plan_from_results(finished_run, name, size=50)
            value = f"{found.mdad:g}" if found.reached else "not reached"
            assert re.search(rf"^{re.escape(name)} with 50 items: MDAD = {re.escape(value)}", result.output, re.M), result.output
    missing = runner.invoke(app, ["plan", "--results", str(finished_run), "--method", "random,diversity", "--size", "50"])
    one_error(missing, "holds no results for method 'diversity' (stored: random, random-stratified-equal)")
    one_error(runner.invoke(app, ["plan", "--results", str(finished_run), "--method", " , ", "--size", "50"]), "Name at least one method, or 'all'.")


def test_plan_results_with_a_sources_curve_says_why_it_is_refused(finished_run):
    result = runner.invoke(app, ["plan", "--results", str(finished_run), "--method", "diversity", "--size", "50", "--sources-curve"])
    one_error(result, "--sources-curve simulates each method again with fewer source models")
    assert "Several methods" not in result.output


def test_the_budget_table_at_80_columns_heads_every_part_in_full(small_sim, tmp_path):
    from mdad.data import write_npz

    write_npz(small_sim, tmp_path / "data.npz")
    args = ["plan", "--data", str(tmp_path / "data.npz"), "--method", "random,anchor-points", "--detect", "6", "--budget", "25", "--runs", "2"]
    result = runner.invoke(app, args, terminal_width=80)
    assert result.exit_code == 0, result.output
    headers = [line.split() for line in result.output.splitlines() if line.strip().startswith("method")]
    assert headers and all(words != ["method", "random"] for words in headers), result.output
    assert "random at" in result.output and "same size" in result.output


def test_plan_all_with_missing_cells_answers_the_random_designs_and_names_the_rest(tmp_path):
    data = _continuous(tmp_path, missing=True)
    result = runner.invoke(app, ["plan", "--data", str(data), "--method", "all", "--detect", "10"], terminal_width=250)
    assert result.exit_code == 0, result.output
    every = method_registry.available()  # "all": every registered method
    rows = {line.split()[0] for line in result.output.splitlines() if line.split() and line.split()[0] in every}
    assert rows == set(method_registry.designs())
    simulated = [n for n in every if n not in method_registry.designs() and method_registry.get(n).scores not in ("binary", "option-probabilities")]
    assert f"Not answered: {', '.join(simulated)} (each can only be simulated on complete results" in flat(result.output)
    named = runner.invoke(app, ["plan", "--data", str(data), "--method", "random,anchor-points", "--detect", "10"])
    one_error(named, "anchor-points can only be simulated on complete results")


# ---- Monte Carlo noise --------------------------------------------------------------------------
def test_a_single_simulated_plan_says_when_noise_can_flip_its_answer(monkeypatch):
    from mdad.cli import plan as plan_command

    found = _plan([0.70, 0.79, 0.85], [0.01, 0.02, 0.01])
    monkeypatch.setattr(plan_command, "plan_answer", lambda *args, **kwargs: found)
    result = runner.invoke(app, ["plan", "--method", "diversity", "--detect", "2", "--runs", "5"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert (
        "Monte Carlo noise can flip the answer here: a share that decides it lies within 2 standard errors of the threshold "
        "after 5 runs; about 80 runs (--runs 80) would settle it." in flat(result.output)
    )


def _plan(agreement, stderr, runs=5, pairs=10**9) -> SimulatedPlan:
    return SimulatedPlan("diversity", "x", 2.0, np.array([10, 25, 50]), np.array(agreement), np.array(stderr), pairs, runs, 0.8)


def test_the_shares_noise_can_flip_and_the_runs_that_would_settle_them():
    found = _plan([0.70, 0.79, 0.85], [0.01, 0.02, 0.01])
    assert found.smallest == 50 and found.undecided().tolist() == [1]  # 0.79 lies 0.5 se below 0.8
    assert found.runs_to_settle() == math.ceil(5 * (2 * 0.02 / 0.01) ** 2)  # se falls as 1/sqrt(runs): 80 runs
    clear = _plan([0.50, 0.70, 0.95], [0.01, 0.01, 0.01])
    assert not len(clear.undecided()) and clear.runs_to_settle() is None
    above = _plan([0.81, 0.95, 0.99], [0.02, 0.01, 0.01])  # answered at 10 items, but 0.81 may truly lie below 0.8
    assert above.smallest == 10 and above.undecided().tolist() == [0]
    unreached = _plan([0.60, 0.70, 0.78], [0.01, 0.01, 0.02])  # "not reached" could be 50 items
    assert unreached.smallest is None and unreached.undecided().tolist() == [2]
    assert unreached.runs_to_settle() == math.ceil(5 * (2 * 0.02 / 0.02) ** 2)
    at_threshold = _plan([0.60, 0.80, 0.90], [0.01, 0.02, 0.01])  # 0.80 at 25 items: no number of runs decides it
    assert at_threshold.undecided().tolist() == [1] and at_threshold.runs_to_settle() == MAX_RUNS_TO_SETTLE


def test_a_sources_curve_says_which_answers_noise_can_flip_and_how_many_runs_settle_them():
    result = runner.invoke(app, ["plan", "--method", "diversity", "--detect", "2.0", "--sources-curve", "--runs", "5"], terminal_width=120)
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    found = re.search(r"Monte Carlo noise can flip the answer with ([\d, ]+) source models: .* about ([\d,]+) runs \(--runs (\d+)\)", text)
    assert found, text
    flagged = [int(c) for c in found.group(1).split(", ")]
    starred = [int(line.split()[0]) for line in result.output.splitlines() if re.match(r"^\s*\d+\s+(\d+|not reached)\*\s", line)]
    assert starred == flagged
    assert int(found.group(3)) > 5 and found.group(2).replace(",", "") == found.group(3)
