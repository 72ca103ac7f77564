"""``select --audit-items m`` end to end: drawn, stored, printed in the harness commands, read back, and used by
``estimate`` for the corrected estimate and its check (docs/intervals.md#audit-items)."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from support.paths import FIXTURES
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.errors import MdadError
from mdad.micro import SelectedMicroBenchmark
from mdad.micro.audit import audit_sentences
from mdad.micro.estimation import estimate_report

runner = CliRunner()


@pytest.fixture(scope="module")
def matrix():
    return mdad.simulate(seed=4, n_models=60, n_items=200, n_subtasks=2)


@pytest.fixture(scope="module")
def audited_micro(matrix):
    return mdad.select(matrix, "anchor-points", 20, seed=3, audit_items=15)


def test_audit_items_are_drawn_from_the_items_not_chosen_reproducibly(matrix, audited_micro):
    audit = audited_micro.audit
    assert audit is not None and audit.size == 15
    assert not set(audit.item_ids.tolist()) & set(audited_micro.item_ids.tolist())
    assert np.array_equal(matrix.items[audit.positions], audit.item_ids)
    again = mdad.select(matrix, "anchor-points", 20, seed=3, audit_items=15)
    assert np.array_equal(again.audit.item_ids, audit.item_ids)
    other = mdad.select(matrix, "anchor-points", 20, seed=4, audit_items=15)
    assert not np.array_equal(other.audit.item_ids, audit.item_ids)
    # the learned items are those it chooses without an audit: the audit only adds
    plain = mdad.select(matrix, "anchor-points", 20, seed=3)
    assert np.array_equal(plain.item_ids, audited_micro.item_ids) and plain.audit is None


def test_micro_json_keeps_the_audit_and_older_files_still_load(matrix, audited_micro, tmp_path):
    audited_micro.save(tmp_path / "micro.json")
    back = SelectedMicroBenchmark.load(tmp_path / "micro.json")
    assert np.array_equal(back.audit.item_ids, audited_micro.audit.item_ids)
    assert np.allclose(back.audited(matrix)["corrected"], audited_micro.audited(matrix)["corrected"])
    data = json.loads((tmp_path / "micro.json").read_text())
    del data["audit"]  # a file of an mdad before audit items
    (tmp_path / "old.json").write_text(json.dumps(data))
    old = SelectedMicroBenchmark.load(tmp_path / "old.json")
    assert old.audit is None and old.audited(matrix) is None and estimate_report(old, matrix).audit is None


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda a, d: a.update(pool_positions=[d["pool_positions"][0], *a["pool_positions"][1:]]), "also a chosen item"),
        (lambda a, d: a.update(items=a["items"][:1], subtasks=a["subtasks"][:1], pool_positions=a["pool_positions"][:1]), "at least 2"),
        (lambda a, d: a["curves"].update(slope=a["curves"]["slope"][:5]), "one intercept and one slope per pool item"),
        (lambda a, d: a.pop("curves"), "item curves"),
    ],
)
def test_a_broken_audit_is_one_sentence(audited_micro, tmp_path, edit, message):
    data = audited_micro.to_json()
    edit(data["audit"], data)
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(MdadError, match=message):
        SelectedMicroBenchmark.load(tmp_path / "bad.json")


def test_estimate_carries_the_learned_and_the_corrected_estimate(matrix, audited_micro):
    report = estimate_report(audited_micro, matrix)
    audit = report.audit
    assert list(audit.index) == list(matrix.models)
    assert np.allclose(audit["learned"], report.intervals.estimate)
    # independent calculation: known chosen answers + predictions of the rest + (N - k) x mean audit residual
    micro, a = audited_micro, audited_micro.audit
    rest = np.setdiff1d(np.arange(matrix.n_items), micro.micro.items)
    predicted = a.curves.predict(audit["learned"].to_numpy(), matrix.n_items)
    residual = (matrix.scores[:, a.positions] - predicted[:, a.positions]).mean(axis=1)
    direct = (matrix.scores[:, micro.micro.items].sum(axis=1) + predicted[:, rest].sum(axis=1) + len(rest) * residual) / matrix.n_items
    assert np.allclose(audit["corrected"], direct)
    assert (audit["low"] <= audit["corrected"]).all() and (audit["corrected"] <= audit["high"]).all()
    names = [c.name for c in report.columns]
    assert "corrected" in names and "audit 90% interval" in names
    frame = report.model_frame()
    assert {"corrected", "corrected_low", "corrected_high"} <= set(frame.columns)


def test_models_missing_audit_items_get_a_sentence_not_a_traceback(matrix, audited_micro):
    positions = audited_micro.audit.positions
    without = matrix.take(items=np.setdiff1d(np.arange(matrix.n_items), positions))
    report = estimate_report(audited_micro, without)
    assert report.audit["corrected"].isna().all()
    assert any("hold none of the 15 audit items" in note.text for note in report.notes)
    assert "corrected" not in [c.name for c in report.columns]
    scores = matrix.scores.copy()
    scores[2, positions[:3]] = np.nan  # one model did not answer 3 audit items
    partly = replace(matrix, scores=scores)
    report = estimate_report(audited_micro, partly)
    assert np.isnan(report.audit["corrected"].iloc[2]) and report.audit["corrected"].drop(matrix.models[2]).notna().all()
    (note,) = [n.text for n in report.notes if "did not answer every audit item" in n.text]
    assert f"{matrix.models[2]} (12 of 15)" in note


def test_the_check_says_how_far_the_learned_estimate_is_off_only_beyond_the_noise():
    frame = pd.DataFrame(
        {
            "learned": [0.50, 0.40],
            "corrected": [0.58, 0.42],
            "low": [0.53, 0.35],
            "high": [0.63, 0.49],
            "level": 0.9,
            "audit_answered": 10,
            "audit_items": 10,
        },
        index=pd.Index(["far", "near"], name="model"),
    )
    said = [text for text, warning in audit_sentences(frame) if warning]
    assert said == ["The audit items say the learned estimate of far is 8.0 points low: corrected 58.0%, 90% interval 53.0-63.0."]


def test_lm_eval_samples_and_commands_include_the_audit_items(tmp_path):
    sources = mdad.load(FIXTURES / "lm_eval_loop" / "sources")
    micro = mdad.select(sources, "random", 6, seed=0, audit_items=4)
    samples = micro.harness_samples()
    listed = {f"{task}/{doc}" for task, docs in samples.items() for doc in docs}
    assert listed == set(micro.item_ids.tolist()) | set(micro.audit.item_ids.tolist()) and len(listed) == 10
    asked = set()
    for command in micro.harness_commands().commands:
        words = shlex.split(command)
        for task, docs in json.loads(words[words.index("--samples") + 1]).items():
            asked |= {f"{task}/{doc}" for doc in docs}
    assert asked == listed


def test_select_prints_the_price_and_estimate_the_corrected_column(tmp_path):
    data = FIXTURES / "lm_eval_loop" / "sources"
    out = tmp_path / "micro.json"
    result = runner.invoke(
        app,
        ["select", "--data", str(data), "--method", "random", "--size", "6", "--audit-items", "4", "--assess-runs", "0", "--out", str(out)],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "each new model answers 6 + 4 = 10 items" in result.output
    shown = runner.invoke(app, ["estimate", str(out), str(data), "--csv", str(tmp_path / "e.csv")], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "corrected" in shown.output and "audit 90% interval" in shown.output
    assert pd.read_csv(tmp_path / "e.csv")["corrected"].notna().all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "random", "--size", "6", "--audit-items", "1"], "between 2 and the 18 pool items"),
        (["--method", "random", "--size", "6", "--audit-items", "19"], "between 2 and the 18 pool items"),
        (["--method", "adaptive-1d", "--size", "10", "--audit-items", "25"], "between 2 and the 24 pool items"),
    ],
)
def test_bad_audit_requests_are_one_sentence(tmp_path, args, message):
    data = FIXTURES / "lm_eval_loop" / "sources"
    result = runner.invoke(
        app, ["select", "--data", str(data), *args, "--assess-runs", "0", "--out", str(tmp_path / "m.json")], env={"COLUMNS": "300"}
    )
    assert result.exit_code != 0
    assert message in " ".join(result.output.split()) and "Traceback" not in result.output
    assert not (tmp_path / "m.json").exists()


def test_an_adaptive_tests_estimate_ignores_the_audit_answers_it_did_not_ask(matrix):
    """The audit of an adaptive test is drawn from the whole pool; a model answers its test and the audit items.
    The learned estimate is the test's on the items the test asked, whatever the audit answers are."""
    micro = mdad.select(matrix, "adaptive-1d", 12, seed=1, audit_items=20)
    audit = micro.audit
    assert audit.size == 20 and set(audit.item_ids.tolist()) <= set(micro.item_ids.tolist())
    column = {item: j for j, item in enumerate(matrix.items)}
    cols = np.array([column[item] for item in micro.item_ids])
    full = matrix.scores[:, cols].astype(np.float64)
    test, rows = micro.micro, np.arange(matrix.n_models)
    asked = np.full(full.shape, np.nan)
    for _ in range(12):  # the test given by hand: its next item, answered, twelve times
        nxt = test.next_items(asked)
        asked[rows, nxt] = full[rows, nxt]
    is_audit = np.isin(micro.item_ids, audit.item_ids)
    answered = np.where(is_audit[None, :], full, asked)  # the test's items and every audit item
    scores = np.full(matrix.scores.shape, np.nan, dtype=np.float32)
    scores[:, cols] = answered
    given = replace(matrix, scores=scores)
    details = micro.details(given)
    assert np.allclose(details["estimate"], np.round(test.estimate(asked), 10), atol=1e-9)
    flipped = scores.copy()
    unasked = is_audit[None, :] & np.isnan(asked)
    flipped[:, cols] = np.where(unasked, 1 - answered, answered)
    assert np.allclose(micro.details(replace(matrix, scores=flipped))["estimate"], details["estimate"])
    report = estimate_report(micro, given)
    assert report.audit["corrected"].notna().all() and "corrected" in [c.name for c in report.columns]


def test_an_adaptive_select_prints_the_audit_command_beside_the_first_item(tmp_path):
    data = FIXTURES / "lm_eval_loop" / "sources"
    out = tmp_path / "micro.json"
    result = runner.invoke(
        app,
        ["select", "--data", str(data), "--method", "adaptive-1d", "--size", "10", "--audit-items", "5", "--assess-runs", "0", "--out", str(out)],
        env={"COLUMNS": "300"},
    )
    assert result.exit_code == 0, result.output
    assert "drawn at random from the 24 pool items" in result.output
    micro = SelectedMicroBenchmark.load(out)
    lead = result.output.splitlines().index("Ask every new model the audit items too with this command, into the same folder (NEW):")
    asked = {
        f"{task}/{doc}"
        for line in result.output.splitlines()[lead + 1 :]
        if line.strip().startswith("lm-eval run")
        for task, docs in json.loads(shlex.split(line)[shlex.split(line).index("--samples") + 1]).items()
        for doc in docs
    }
    assert asked == set(micro.audit.item_ids.tolist())
