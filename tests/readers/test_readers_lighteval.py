"""lighteval details parquet, current (doc/model_response/metric structs) and older flat schema."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.special import softmax

from mdad.data import describe, read_source
from mdad.errors import MdadError

DATE = "2025-06-01T10-20-30.123456"
TASK = "leaderboard|mmlu:anatomy|5"


def _doc(i: int, choices: list[str], gold: int) -> dict:
    """lighteval's Doc dataclass as asdict() logs it."""
    return {
        "query": f"Question {i}?",
        "choices": choices,
        "gold_index": gold,
        "id": str(i),
        "original_query": "",
        "specific": None,
        "task_name": TASK,
        "system_prompt": None,
        "full_prompt": f"Question {i}?\nAnswer:",
        "instruction": "",
        "fewshot_sorting_class": None,
        "num_asked_few_shots": 5,
        "num_effective_few_shots": 5,
        "unconditioned_query": None,
        "fewshot_samples": [],
        "sampling_methods": ["LOGPROBS"],
        "generation_size": None,
        "do_sample": False,
        "stop_sequences": [],
        "use_logits": False,
        "num_samples": 1,
    }


def _response(logprobs: list[float]) -> dict:
    """lighteval's ModelResponse as asdict() logs it for a loglikelihood task."""
    return {
        "input": "Question?\nAnswer:",
        "text": [],
        "logprobs": logprobs,
        "argmax_logits_eq_gold": [False] * len(logprobs),
        "logits": None,
        "truncated_tokens_count": 0,
        "padded_tokens_count": 0,
        "input_tokens": [1, 2, 3],
        "output_tokens": [],
        "unconditioned_logprobs": None,
    }


def _known(seed=0):
    rng = np.random.default_rng(seed)
    choices = [[" A", " B", " C", " D"], [" yes", " no"], [" red", " green", " blue"]]
    gold = [2, 0, 1]
    models = ["org/model-1", "org/model-2"]
    lls = [[-rng.gamma(2.0, 1.0, len(c)) for c in choices] for _ in models]
    return models, choices, gold, lls


def _acc(lls, gold, norm_by=None):
    scores = lls / np.array([len(c) for c in norm_by]) if norm_by else lls
    return float(int(np.argmax(scores)) == gold)


def _write_current(root: Path) -> tuple:
    models, choices, gold, lls = _known()
    for m, model in enumerate(models):
        rows = [
            {
                "doc": _doc(i, c, gold[i]),
                "metric": {"acc": _acc(lls[m][i], gold[i]), "acc_norm": _acc(lls[m][i], gold[i], c)},
                "model_response": _response([float(x) for x in lls[m][i]]),
            }
            for i, c in enumerate(choices)
        ]
        folder = root / "details" / model / DATE
        folder.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), folder / f"details_{TASK}_{DATE}.parquet")
    return models, choices, gold, lls


def _write_flat(root: Path) -> tuple:
    models, choices, gold, lls = _known(seed=1)
    for m, model in enumerate(models):
        rows = [
            {
                "choices": c,
                "cont_tokens": [[1]] * len(c),
                "example": f"Question {i}?",
                "full_prompt": f"Question {i}?\nAnswer:",
                "gold": [],
                "gold_index": [gold[i]],
                "input_tokens": [[1, 2]] * len(c),
                "instruction": "",
                "metrics": {"loglikelihood_acc": _acc(lls[m][i], gold[i]), "loglikelihood_acc_norm": _acc(lls[m][i], gold[i], c)},
                "num_asked_few_shots": 0,
                "num_effective_few_shots": 0,
                "padded": [0] * len(c),
                "pred_logits": [],
                "prediction_logits": [],
                "predictions": [[float(x), 0.0] for x in lls[m][i]],
                "specifics": {"k": "v"},
                "truncated": [0] * len(c),
            }
            for i, c in enumerate(choices)
        ]
        folder = root / "details" / model / DATE
        folder.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), folder / f"details_{TASK}_{DATE}.parquet")
    return models, choices, gold, lls


@pytest.mark.parametrize("schema", ["current", "flat"])
@pytest.mark.parametrize("norm", [False, True])
def test_known_matrix_and_option_probabilities(tmp_path, schema, norm):
    models, choices, gold, lls = (_write_current if schema == "current" else _write_flat)(tmp_path)
    prefix = "" if schema == "current" else "loglikelihood_"
    m = read_source(tmp_path, metric=f"{prefix}acc_norm" if norm else None)
    assert list(m.models) == models
    assert list(m.items) == [f"{TASK}/{i}" for i in range(3)] and set(m.subtasks) == {TASK}
    np.testing.assert_array_equal(m.gold, gold)
    for a in range(2):
        for i, c in enumerate(choices):
            scores = lls[a][i] / np.array([len(x) for x in c]) if norm else lls[a][i]
            np.testing.assert_allclose(m.option_probs[a, i, : len(c)], softmax(scores), rtol=1e-6)
            assert m.scores[a, i] == _acc(lls[a][i], gold[i], c if norm else None)
            assert m.scores[a, i] == float(np.argmax(m.option_probs[a, i]) == gold[i])


def test_a_single_details_file_and_the_str_fallback(tmp_path):
    """lighteval writes str() of every field when a table will not convert to arrow; that text reads back."""
    rows = [
        {
            "example": "q",
            "choices": str([" a", " b"]),
            "gold_index": str([1]),
            "metrics": str({"acc": 1.0}),
            "predictions": str([(-2.0, False), (-1.0, True)]),
        }
    ]
    folder = tmp_path / "my-model" / DATE
    folder.mkdir(parents=True)
    file = folder / f"details_lighteval|arc:easy|0_{DATE}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), file)
    m = read_source(file)
    assert list(m.models) == ["my-model"] and list(m.items) == ["lighteval|arc:easy|0/0"]
    np.testing.assert_allclose(m.option_probs[0, 0], softmax([-2.0, -1.0]), rtol=1e-6)


def test_missing_examples_and_unknown_metric(tmp_path):
    _write_current(tmp_path)
    file = tmp_path / "details" / "org/model-2" / DATE / f"details_{TASK}_{DATE}.parquet"
    table = pq.read_table(file)
    pq.write_table(table.slice(0, 2), file)
    m = read_source(tmp_path)
    assert describe(m)["models_missing_items"] == {"org/model-2": 1}
    with pytest.raises(MdadError, match=r"No task has the metric 'em'; the tasks have .*: acc, acc_norm\."):
        read_source(tmp_path, metric="em")


def test_conflicting_duplicates_name_model_task_and_example(tmp_path):
    _write_current(tmp_path)
    file = tmp_path / "details" / "org/model-1" / DATE / f"details_{TASK}_{DATE}.parquet"
    rows = pq.read_table(file).to_pylist()
    rows.append(dict(rows[1], metric={"acc": 1 - rows[1]["metric"]["acc"], "acc_norm": 0.0}))
    pq.write_table(pa.Table.from_pylist(rows), file)
    with pytest.raises(MdadError, match=r"'org/model-1' has conflicting results for task '.*anatomy.*' example 1"):
        read_source(tmp_path)
