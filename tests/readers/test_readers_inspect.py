"""inspect_ai evaluation logs: JSON export and zipped .eval, built from a known matrix."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from support.paths import FIXTURES

from mdad.data import describe, read_source
from mdad.errors import MdadError

LETTER = {1.0: "C", 0.0: "I", 0.5: "P"}


def _eval_spec(task: str, model: str, version: int = 0) -> dict:
    """The ``eval`` part of an EvalLog (EvalSpec), with the fields inspect writes."""
    return {
        "eval_id": "E1",
        "run_id": "R1",
        "created": "2025-05-01T10:00:00+00:00",
        "task": task,
        "task_id": "T1",
        "task_version": version,
        "task_file": "tasks.py",
        "task_attribs": {},
        "task_args": {},
        "solver": None,
        "dataset": {"name": "qa", "location": "qa.jsonl", "samples": 4, "sample_ids": [1, 2, 3, 4], "shuffled": False},
        "model": model,
        "model_args": {},
        "config": {"epochs": 1},
        "revision": None,
        "packages": {"inspect_ai": "0.3.100"},
        "metadata": None,
        "scorers": [{"name": "match", "options": {}}],
    }


def _sample(sample_id, epoch: int, scores: dict) -> dict:
    """An EvalSample as the JSON log holds it."""
    return {
        "id": sample_id,
        "epoch": epoch,
        "input": f"Question {sample_id}?",
        "choices": None,
        "target": "A",
        "messages": [{"role": "user", "content": f"Question {sample_id}?", "source": "input"}],
        "output": {"model": "m", "choices": [{"message": {"role": "assistant", "content": "A"}, "stop_reason": "stop"}], "usage": None},
        "scores": {name: {"value": v, "answer": "A", "explanation": "A", "metadata": {}} for name, v in scores.items()},
        "metadata": {},
        "store": {},
        "events": [],
        "model_usage": {},
        "attachments": {},
    }


def _log(task: str, model: str, samples: list[dict], version: int = 0) -> dict:
    return {
        "version": 2,
        "status": "success",
        "eval": _eval_spec(task, model, version),
        "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {}},
        "results": {
            "total_samples": len(samples),
            "completed_samples": len(samples),
            "scores": [{"name": "match", "scorer": "match", "params": {}, "metrics": {}}],
        },
        "stats": {"started_at": "2025-05-01T10:00:00+00:00", "completed_at": "2025-05-01T10:01:00+00:00", "model_usage": {}},
        "samples": samples,
    }


KNOWN = {"openai/gpt-x": [1.0, 0.0, 0.5, 1.0], "anthropic/claude-y": [0.0, 0.0, 1.0, 1.0]}


def _write_known(root: Path, as_zip: bool = False) -> None:
    for n, (model, scores) in enumerate(KNOWN.items()):
        samples = [_sample(i + 1, 1, {"match": LETTER[s], "length": float(i) / 10}) for i, s in enumerate(scores)]
        log = _log("qa", model, samples)
        if as_zip:
            with zipfile.ZipFile(root / f"2025-05-01_qa_{n}.eval", "w") as z:
                z.writestr("header.json", json.dumps({k: v for k, v in log.items() if k != "samples"}))
                for s in samples:
                    z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        else:
            (root / f"2025-05-01_qa_{n}.json").write_text(json.dumps(log, indent=2))


def _ordered(m):
    return m.take(m.model_index(list(KNOWN)), np.array([list(m.items).index(f"qa/{i}") for i in range(1, 5)]))


@pytest.mark.parametrize("as_zip", [False, True])
def test_known_matrix_from_letter_grades(tmp_path, as_zip):
    _write_known(tmp_path, as_zip)
    m = _ordered(read_source(tmp_path))
    np.testing.assert_array_equal(m.scores, np.array(list(KNOWN.values()), dtype=np.float32))
    assert set(m.subtasks) == {"qa"} and not m.has_option_probs
    lengths = _ordered(read_source(tmp_path, metric="length"))
    np.testing.assert_allclose(lengths.scores, [[0, 0.1, 0.2, 0.3]] * 2, rtol=1e-6)


def test_single_log_file_numbers_words_and_no_answer(tmp_path):
    samples = [_sample(i, 1, {"s": v}) for i, v in enumerate(["N", "yes", "false", 0.25, True, None])]
    (tmp_path / "one.json").write_text(json.dumps(_log("t", "m", samples)))
    m = read_source(tmp_path / "one.json")
    np.testing.assert_array_equal(m.scores[0], np.array([0, 1, 0, 0.25, 1, np.nan], dtype=np.float32))


def test_epochs_are_averaged_and_errored_samples_are_missing(tmp_path):
    samples = [_sample("a", 1, {"match": "C"}), _sample("a", 2, {"match": "I"}), _sample("b", 1, {"match": "C"})]
    (tmp_path / "m1.json").write_text(json.dumps(_log("t", "m1", samples)))
    failed = dict(_sample("b", 1, {}), scores=None, error={"message": "boom"})
    (tmp_path / "m2.json").write_text(json.dumps(_log("t", "m2", [_sample("a", 1, {"match": "C"}), failed])))
    m = read_source(tmp_path)
    m = m.take(m.model_index(["m1", "m2"]), np.array([list(m.items).index(i) for i in ("t/a", "t/b")]))
    np.testing.assert_array_equal(m.scores, np.array([[0.5, 1.0], [1.0, np.nan]], dtype=np.float32))
    assert describe(m)["models_missing_items"] == {"m2": 1}


def test_dict_valued_scores_are_chosen_by_key(tmp_path):
    samples = [_sample(1, 1, {"multi": {"accuracy": "C", "f1": 0.5}})]
    (tmp_path / "x.json").write_text(json.dumps(_log("t", "m", samples)))
    assert read_source(tmp_path, metric="multi.f1").scores[0, 0] == 0.5
    default = read_source(tmp_path)
    assert default.scores[0, 0] == 1.0
    assert "Task 't': metric 'multi.accuracy' is read (it also has multi.f1)." in default.notes


def test_unknown_scorer_lists_the_available_ones(tmp_path):
    _write_known(tmp_path)
    with pytest.raises(MdadError, match=r"No task has the metric 'accuracy'; the tasks have qa: match, length\."):
        read_source(tmp_path, metric="accuracy")
    with pytest.raises(MdadError, match=r"Task 'qa' .* has no metric 'accuracy'; available: match, length\."):
        read_source(tmp_path, metric="qa=accuracy")


def test_mixed_task_versions_are_refused(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(_log("qa", "m1", [_sample(1, 1, {"match": "C"})], version=1)))
    (tmp_path / "b.json").write_text(json.dumps(_log("qa", "m2", [_sample(1, 1, {"match": "C"})], version=2)))
    with pytest.raises(MdadError, match=r"Task 'qa' has version 1 for model 'm1' .* but 2 .* mixed task versions"):
        read_source(tmp_path)


def test_conflicting_duplicates_and_truncated_logs(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(_log("qa", "m1", [_sample(7, 1, {"match": "C"}), _sample(7, 1, {"match": "I"})])))
    with pytest.raises(MdadError, match=r"Model 'm1' has conflicting results for task 'qa' sample 7 epoch 1"):
        read_source(tmp_path)
    text = json.dumps(_log("qa", "m1", [_sample(7, 1, {"match": "C"})]), indent=2)
    (tmp_path / "b.json").write_text(text[: len(text) // 2])
    with pytest.raises(MdadError, match=r"b\.json line \d+ is not valid JSON .* truncated"):
        read_source(tmp_path)


# ---- genuine inspect logs (mockllm models on a four-sample task; see fixtures/inspect/run.py) ------

FIXTURE = FIXTURES / "inspect"


def test_genuine_logs_json_and_eval():
    m = read_source(FIXTURE)
    assert sorted(m.models) == ["mockllm/alpha", "mockllm/beta", "mockllm/gamma"]
    expected = {"mockllm/alpha": [1, 1, 0, 1], "mockllm/beta": [0, 1, 1, 0], "mockllm/gamma": [1, 0, 1, 1]}
    m = m.take(m.model_index(list(expected)), np.array([list(m.items).index(f"tiny_qa/{i}") for i in (1, 2, 3, "q4")]))
    np.testing.assert_array_equal(m.scores, np.array(list(expected.values()), dtype=np.float32))
    assert set(m.subtasks) == {"tiny_qa"} and m.n_missing == 0
    assert read_source(FIXTURE, metric="match").scores.sum() == m.scores.sum()


def test_a_skipped_logs_error_is_shortened_between_words():
    from mdad.data.readers.inspect_logs import shortened

    message = (
        "ConnectionError(MaxRetryError(\"HTTPSConnectionPool(host='example', port=443): "
        'Max retries exceeded with url: /encodings/o200k_base.tiktoken"))'
    )
    short = shortened(message, limit=80)
    assert short.endswith(" ...") and message.startswith(short.removesuffix(" ..."))
    assert message[len(short.removesuffix(" ..."))] == " "  # the cut falls between words
    assert shortened("short message") == "short message"
