"""`mdad plan` and `mdad compare` end to end: answers equal the library's exact numbers; errors are one sentence."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from mdad.cli import app
from mdad.metrics import analytic
from mdad.metrics.pairwise import bin_of

runner = CliRunner()


def flat(output: str) -> str:
    return " ".join(output.split())


@pytest.fixture()
def data_dir(shared_data_dir, monkeypatch):
    monkeypatch.setenv("MDAD_DATA_DIR", str(shared_data_dir))
    return shared_data_dir


def test_plan_detect_gives_the_smallest_size_reaching_the_threshold(data_dir, gpqa):
    result = runner.invoke(app, ["plan", "--dataset", "oll2-gpqa", "--detect", "2.0"])
    assert result.exit_code == 0, result.output
    k = int(re.search(r"(\d+) items order them correctly", flat(result.output)).group(1))
    stats = analytic.pair_stats(gpqa)
    part = stats.subset(bin_of(stats.diff_points) == 4)  # the 2.0-2.5 point bin

    def at(size):
        return analytic.agreement_probabilities(part, size).mean()

    assert at(k) >= 0.8 > at(k - 1)
    assert f"({len(part.first):,} pairs in the data)" in flat(result.output)
    stricter = runner.invoke(app, ["plan", "--dataset", "oll2-gpqa", "--detect", "2.2", "--threshold", "0.9"])
    k9 = int(re.search(r"(\d+) items order them correctly", flat(stricter.output)).group(1))
    assert k9 > k


def test_plan_size_gives_the_analytic_mdad(data_dir, gpqa):
    result = runner.invoke(app, ["plan", "--dataset", "oll2-gpqa", "--size", "100"])
    assert result.exit_code == 0, result.output
    want = analytic.analytic_mdad(gpqa, 100).value
    assert f"MDAD = {want:g} points" in flat(result.output)
    stratified = runner.invoke(app, ["plan", "--dataset", "oll2-gpqa", "--size", "100", "--method", "random-stratified-equal"])
    assert f"MDAD = {want:g} points" in flat(stratified.output)  # one subtask: the same design


def test_compare_group_pairs_and_share_below_mdad(data_dir, gpqa, tmp_path):
    out = tmp_path / "pairs.csv"
    result = runner.invoke(app, ["compare", "--dataset", "oll2-gpqa", "--size", "25", "--group", "7b_instruct", "--csv", str(out), "--top", "5"])
    assert result.exit_code == 0, result.output
    written = pd.read_csv(out)  # streamed in the order of the models
    assert len(written) == 50 * 49 // 2 and not written.duplicated(["model_a", "model_b"]).any()
    frame = written.sort_values(["difference_points", "model_a", "model_b"], kind="stable", ignore_index=True)
    mdad = analytic.analytic_mdad(gpqa, 25).value
    np.testing.assert_array_equal(frame["below_mdad"], frame["difference_points"] < mdad)
    share = frame["below_mdad"].mean()
    assert f"({share:.0%})" in flat(result.output) and "higher model" in result.output
    # pairs tied on the full benchmark come first and are shown as ties, not as a probability
    ties = int((frame["difference_points"].head(5) == 0).sum())
    assert ties > 0 and (frame.loc[frame["difference_points"] == 0, "p_correct_order"] == 0).all()
    table = result.output.split("...")[0]
    # a table row ends "tie  yes"; a row printed as a line (names too wide) ends "P(same order) tie; < MDAD yes"
    assert sum(bool(re.search(r"\btie;?(\s+< MDAD)?\s+yes$", line.strip())) for line in table.splitlines()) == ties
    row = frame.iloc[-1]
    idx = gpqa.model_index([row["model_a"], row["model_b"]])
    one = analytic.pair_stats(gpqa, models=idx)
    assert row["p_correct_order"] == pytest.approx(analytic.agreement_probabilities(one, 25)[0])
    assert row["difference_points"] == pytest.approx(abs(one.diff_points[0]))


def test_compare_named_models_repeated_or_comma_separated(data_dir, gpqa, tmp_path):
    names = list(gpqa.models[:3])
    a = runner.invoke(app, ["compare", "--dataset", "oll2-gpqa", "--size", "50", "--models", ",".join(names), "--csv", str(tmp_path / "a.csv")])
    b = runner.invoke(
        app, ["compare", "--dataset", "oll2-gpqa", "--size", "50", *[arg for n in names for arg in ("--models", n)], "--csv", str(tmp_path / "b.csv")]
    )
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv"))
    assert len(pd.read_csv(tmp_path / "a.csv")) == 3


def test_missing_cells_are_used_pairwise_or_as_the_policy_says(data_dir, tmp_path):
    out = tmp_path / "mmlu.csv"
    result = runner.invoke(app, ["compare", "--dataset", "mmlu-pro-tiger", "--size", "25", "--csv", str(out)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert len(frame) == 31 * 30 // 2 and frame["pool_items"].min() < 12032 == frame["pool_items"].max()
    dropped = runner.invoke(app, ["plan", "--dataset", "mmlu-pro-tiger", "--size", "100", "--missing", "drop-items"])
    assert dropped.exit_code == 0, dropped.output
    strict = runner.invoke(app, ["plan", "--dataset", "mmlu-pro-tiger", "--size", "100", "--missing", "error"])
    assert strict.exit_code == 2 and "missing policy drop-items or drop-models" in flat(strict.output)


def test_plan_from_the_simulated_curves_of_a_finished_run(tmp_path):
    out = tmp_path / "run"
    done = runner.invoke(app, ["run", "--runs", "4", "--sizes", "10,50", "--methods", "random", "--out", str(out)])
    assert done.exit_code == 0, done.output
    result = runner.invoke(app, ["plan", "--results", str(out), "--size", "50"])
    assert result.exit_code == 0, result.output
    assert "from the simulated curves of 4 runs" in flat(result.output) and "not exact" in flat(result.output)
    detect = runner.invoke(app, ["plan", "--results", str(out), "--detect", "30"])
    assert detect.exit_code == 0 and "not exact" in flat(detect.output)
    for args, message in (
        (["--size", "25"], "has no random results at size 25 (stored sizes: 10, 50)"),
        (["--size", "10", "--method", "random-stratified-equal"], "holds no results for method 'random-stratified-equal'"),
    ):
        bad = runner.invoke(app, ["plan", "--results", str(out), *args])
        assert bad.exit_code == 2 and message in flat(bad.output), bad.output


def test_plan_on_the_builtin_data_needs_no_files(monkeypatch):
    monkeypatch.delenv("MDAD_DATA_DIR", raising=False)
    result = runner.invoke(app, ["plan", "--detect", "5"])  # default: the bundled GPQA matrix
    assert result.exit_code == 0, result.output
    assert "random on gpqa (the GPQA matrix of the paper" in flat(result.output)
    simulated = runner.invoke(app, ["plan", "--detect", "5", "--dataset", "simulated"])
    assert simulated.exit_code == 0, simulated.output
    assert "random on simulated (seed 0)" in flat(simulated.output)


@pytest.mark.parametrize(
    "args, message",
    [
        (["plan", "--detect", "2", "--size", "10"], "Give either --detect (points to tell apart) or --size"),
        (["plan"], "Give either --detect (points to tell apart) or --size"),
        (["plan", "--detect", "-1"], "The difference to detect is an accuracy difference in points, from 0 to 100; got -1.0."),
        (["plan", "--detect", "2", "--method", "bogus"], "Unknown method 'bogus'"),
        (["plan", "--detect", "2", "--threshold", "1.2"], "agreement threshold must lie strictly between 0 and 1, got 1.2"),
        (["plan", "--detect", "2", "--results", "no-such-dir"], "holds no mdad results"),
        (
            ["plan", "--detect", "99"],
            "No pair of models in gpqa (the GPQA matrix of the paper, Open LLM Leaderboard v2) differs by 99 to 99.5 points; "
            "choose another --detect.",
        ),
        (["plan", "--size", "100000"], "Size 100000 must lie between 1 and the smallest pool of a pair"),
        (["plan", "--size", "10", "--data", "no/such.npz"], "No such file or folder: no/such.npz"),
        (["plan", "--size", "10", "--missing", "maybe"], "Invalid value for '--missing': 'maybe' is not one of 'pairwise', 'error'"),
        (["compare", "--size", "10", "--models", "nobody,else"], "Model 'nobody' is not in the data"),
        (["compare", "--size", "10", "--group", "g", "--models", "a"], "Give --group or --models, not both"),
        (["compare", "--size", "10", "--group", "nope"], "Unknown model group 'nope'"),
    ],
)
def test_errors_are_one_sentence(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in flat(result.output)
    assert "Traceback" not in result.output


def test_methods_without_an_exact_answer_are_simulated_and_compare_refuses_them():
    from mdad import methods
    from mdad.methods.base import plain_mean

    class Fancy(methods.SelectionMethod):
        name = "fancy"
        description = "test method"

        def choose(self, view, k, rng, prepared):
            return plain_mean(np.arange(k))

    methods.METHODS.add(Fancy)
    try:
        result = runner.invoke(app, ["plan", "--detect", "2", "--method", "fancy", "--runs", "2"])
        compare = runner.invoke(app, ["compare", "--size", "10", "--method", "fancy"])
    finally:
        methods.METHODS.remove("fancy")
    assert result.exit_code == 0 and "Simulated, not exact" in flat(result.output)
    assert compare.exit_code == 2 and "Invalid value for '--method': 'fancy' is not one of 'random'" in flat(compare.output)
