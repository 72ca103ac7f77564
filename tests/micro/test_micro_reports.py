"""What mdad select and mdad estimate compute, called from Python: mdad.micro.selection and mdad.micro.estimation."""

from __future__ import annotations

import numpy as np
import pytest
from support.paths import FIXTURES

import mdad
from mdad.data.readers import lm_eval_commands
from mdad.errors import MdadError
from mdad.methods.base import plain_mean
from mdad.micro import SelectedMicroBenchmark
from mdad.micro.estimation import estimate_report
from mdad.micro.notes import beyond_sources_note
from mdad.micro.selection import assessment_runs, build_selection


def _names(report) -> list[str]:
    return [column.name for column in report.columns]


def test_an_estimator_with_its_own_interval_adds_its_column_and_details(small_sim):
    chosen = mdad.select(small_sim, "aipw", 30, seed=0)
    new = small_sim.take(models=np.arange(6))
    own = chosen.own_intervals(new)
    assert own is not None and own.kind == "estimator" and own.level == 0.95
    assert (own.low <= own.estimate + 1e-12).all() and (own.estimate <= own.high + 1e-12).all()
    report = estimate_report(chosen, new)
    assert "AIPW 95% interval" in _names(report)
    np.testing.assert_array_equal(report.details["low"], own.low)
    plain = estimate_report(mdad.select(small_sim, "random", 30, seed=0), new)
    assert not any("AIPW" in name for name in _names(plain)) and "low" not in plain.details


def test_most_estimators_have_no_interval_of_their_own():
    assert plain_mean(np.arange(3)).own_intervals(np.ones((2, 3)), np.array(["a", "b"])) is None


def test_the_table_ranks_models_by_estimate_and_marks_unreliable_orders(small_sim):
    chosen = mdad.select(small_sim, "random", 20, seed=1)
    report = estimate_report(chosen, small_sim.take(models=np.arange(8)), level=0.8)
    assert _names(report) == ["model", "estimate", "80% interval", "gap", "P(order holds)"]
    estimates = [float(cell) for cell in report.columns[1].cells]
    assert estimates == sorted(estimates, reverse=True)
    probability = report.columns[4]
    assert probability.cells[-1] == "" and sum(probability.warned) == report.unreliable_orders
    assert any(f"below {100 * report.threshold:g}%" in note.text for note in report.notes)


def test_an_unassessed_micro_benchmark_shows_no_empty_columns_and_says_how_to_assess_it(small_sim):
    report = estimate_report(mdad.select(small_sim, "anchor-points", 10, seed=0), small_sim.take(models=np.arange(4)))
    assert _names(report) == ["model", "estimate", "gap"]  # no interval, no order probability to show
    assert report.notes[-1].text.startswith("This micro-benchmark carries no assessment (select with --assess-runs")


def test_models_beyond_the_sources_get_a_warning_that_depends_on_the_interval():
    estimates = np.array([0.5, 0.9, 0.95])
    assert beyond_sources_note(None, estimates, "exact") is None
    assert beyond_sources_note(0.96, estimates, "exact") is None
    note = beyond_sources_note(0.8, estimates, "calibrated")
    assert note.startswith("2 of the 3 models") and "calibrated on models like the sources" in note
    # the sentence names the models estimated above every source, but off-population failures are not only those
    # (docs/intervals.md#models-better-than-the-sources): it says that unmarked intervals may fail too
    assert "not measured" not in note and "an interval without the mark may still fail" in note


def test_build_selection_assesses_writes_and_reports(small_sim, tmp_path):
    selection = build_selection(small_sim, "random", 10, seed=0, runs=2)
    assert selection.chosen.assessment is not None and selection.chosen.assessment.runs == 2
    selection.save(tmp_path / "m.json")
    assert SelectedMicroBenchmark.load(tmp_path / "m.json").assessment.runs == 2
    lines = [note.text for note in selection.report(tmp_path / "m.json")]
    assert lines[0].startswith("random: 10 of 400 items") and "held-out splits" in lines[1]


def test_too_few_models_skip_the_assessment_with_a_reason(small_sim):
    assert assessment_runs(3, 20, None) == 0 and assessment_runs(3, 20, 1) == 20 and assessment_runs(40, 20, None) == 20
    selection = build_selection(small_sim.take(models=np.arange(3)), "random", 5, runs=20)
    assert selection.too_few_models and selection.report("m.json")[-1].text.startswith("Not assessed: with 3 models")


def test_an_adaptive_test_has_no_sample_list(small_sim):
    with pytest.raises(MdadError, match="no fixed sample list"):
        build_selection(small_sim, "adaptive-1d", 10, runs=0, samples_file=True)
    with pytest.raises(MdadError, match="Unknown|unknown"):
        build_selection(small_sim, "no-such-method", 10, runs=0)


def test_the_lm_eval_samples_list_is_the_lm_eval_readers_own():
    samples = lm_eval_commands.samples_list({"arc": ["10", "2"], "hella": ["0"]})
    assert samples == {"arc": [2, 10], "hella": [0]}
    with pytest.raises(MdadError, match="arc/x is not an lm-evaluation-harness"):
        lm_eval_commands.samples_list({"arc": ["x"]})


def test_selection_prints_the_inspect_command_without_asking_and_refuses_a_samples_file(tmp_path):
    matrix = mdad.load(FIXTURES / "inspect")
    with pytest.raises(MdadError, match=r"samples file can only be written for the logs of a harness that reads one \(lm-eval\)"):
        build_selection(matrix, "random", 4, runs=0, samples_file=True)
    selection = build_selection(matrix, "random", 2, runs=0)
    assert selection.samples is None
    commands = [note for note in selection.report("m.json") if note.text.lstrip().startswith("inspect eval")]
    assert len(commands) == 1 and commands[0].command


def test_points_are_counted_as_spoken():
    from mdad.wording import points

    assert (points(1.0), points(0.5), points(4.5), points(2)) == ("1 point", "0.5 points", "4.5 points", "2 points")


def test_lm_eval_logs_get_their_samples_list_and_command_without_asking(tmp_path):
    selection = build_selection(mdad.load(FIXTURES / "lm_eval_loop" / "sources"), "random", 4, runs=0)
    assert selection.samples == selection.chosen.harness_samples()
    assert sorted(f"{task}/{doc}" for task, docs in selection.samples.items() for doc in docs) == sorted(selection.chosen.item_ids)
    (command,) = [note for note in selection.report("m.json", "m.samples.json") if note.command]
    assert command.text.strip().startswith("lm-eval run") and "--samples m.samples.json" in command.text
