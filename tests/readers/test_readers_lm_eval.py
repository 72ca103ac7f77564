"""lm-evaluation-harness samples: genuine output of lm-eval's dummy model, and files built from a known matrix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.special import softmax
from support.lm_eval_samples import DATE, GEN_CONFIG, build_known, gen_row, write_jsonl, write_results
from support.paths import FIXTURES

from mdad.data import describe, load, read_source
from mdad.data.readers.lm_eval import read_lm_eval
from mdad.errors import MdadError

FIXTURE = FIXTURES / "lm_eval"


def _cells(matrix, models, items):
    """The matrix re-ordered to the given model and item names."""
    return matrix.take(matrix.model_index(models), np.array([list(matrix.items).index(i) for i in items]))


# ---- genuine lm-eval output (dummy model, two local tasks, model-c run with --limit 4) ----------


def _genuine_rows(model: str, task: str) -> list[dict]:
    (file,) = (FIXTURE / model).glob(f"samples_{task}_*.jsonl")
    return [json.loads(line) for line in file.read_text().splitlines()]


def test_genuine_output_loads_with_models_tasks_and_missing_docs():
    m = read_source(FIXTURE)
    assert list(m.models) == ["model-a", "model-b", "model-c"]
    assert m.n_items == 10 and sorted(set(m.subtasks)) == ["tiny_gen", "tiny_mc"]
    info = describe(m)
    assert info["missing_cells"] == 2 and info["models_missing_items"] == {"model-c": 2}
    c = m.model_index(["model-c"])[0]
    assert np.isnan(m.scores[c, list(m.items).index("tiny_mc/4")])
    for model in ("model-a", "model-c"):
        row = m.model_index([model])[0]
        for r in _genuine_rows(model, "tiny_mc"):
            assert m.scores[row, list(m.items).index(f"tiny_mc/{r['doc_id']}")] == r["acc"]
        strict = [r for r in _genuine_rows(model, "tiny_gen") if r["filter"] == "strict"]
        for r in strict:
            assert m.scores[row, list(m.items).index(f"tiny_gen/{r['doc_id']}")] == r["exact_match"]


@pytest.mark.parametrize("metric", ["acc", "acc_norm"])
def test_genuine_option_probabilities_reproduce_lm_evals_own_acc_and_acc_norm(tmp_path, metric):
    for model in ("model-a", "model-b", "model-c"):
        (tmp_path / model).mkdir()
        for f in (FIXTURE / model).glob("*"):
            if "tiny_gen" not in f.name:
                shutil.copy(f, tmp_path / model / f.name)
    m = read_source(tmp_path, metric=None if metric == "acc" else metric)
    assert m.has_option_probs
    for model in ("model-a", "model-b", "model-c"):
        row = m.model_index([model])[0]
        for r in _genuine_rows(model, "tiny_mc"):
            j = list(m.items).index(f"tiny_mc/{r['doc_id']}")
            lls = np.array([float(x[0]) for x in r["filtered_resps"]])
            choices = r["doc"]["choices"]
            if metric == "acc_norm":
                lls = lls / np.array([len(c) for c in choices])
            expected = softmax(lls)
            np.testing.assert_allclose(m.option_probs[row, j, : len(choices)], expected, rtol=1e-6)
            assert np.all(m.option_probs[row, j, len(choices) :] == 0)
            assert m.gold[j] == r["doc"]["label"]
            # lm-eval's own per-document metric equals "the most probable option is gold"
            assert float(np.argmax(expected) == m.gold[j]) == r[metric] == m.scores[row, j]


def test_genuine_filter_choice(tmp_path):
    strict = read_source(FIXTURE, filter_name="strict")
    lower = read_source(FIXTURE, filter_name="lower")
    assert strict.n_items == lower.n_items == 10
    with pytest.raises(MdadError, match=r"No task has the filter 'flexible'; the tasks have tiny_gen: strict, lower; tiny_mc: none\."):
        read_source(FIXTURE, filter_name="flexible")


# ---- files built from a known matrix -------------------------------------------------------------


@pytest.mark.parametrize("metric", ["acc", "acc_norm"])
def test_known_matrix_is_reproduced_exactly(tmp_path, metric):
    truth = build_known(tmp_path)
    m = read_source(tmp_path, metric=None if metric == "acc" else metric)
    assert sorted(m.models) == sorted(truth["models"])
    assert sorted(m.items) == sorted(truth["items"])
    m = _cells(m, truth["models"], truth["items"])
    np.testing.assert_array_equal(m.scores, truth[metric])
    np.testing.assert_array_equal(m.gold, truth["gold"])
    assert list(m.subtasks) == truth["subtasks"]
    for a in range(len(truth["models"])):
        for i, choices in enumerate(truth["choices"]):
            lls = truth["lls"][a][i]
            if metric == "acc_norm":
                lls = lls / np.array([len(c) for c in choices])
            np.testing.assert_allclose(m.option_probs[a, i, : len(choices)], softmax(lls), rtol=1e-6)
    np.testing.assert_allclose(
        m.gold_prob().sum(),
        sum(
            softmax(truth["lls"][a][i] / (np.array([len(c) for c in truth["choices"][i]]) if metric == "acc_norm" else 1))[truth["gold"][i]]
            for a in range(3)
            for i in range(len(truth["items"]))
        ),
        rtol=1e-6,
    )


def test_items_align_by_doc_hash_when_doc_ids_differ(tmp_path):
    truth = build_known(tmp_path)
    file = tmp_path / "model-z" / f"samples_mmlu_a_{DATE}.jsonl"
    rows = [json.loads(x) for x in file.read_text().splitlines()]
    for r in rows:  # the same documents, numbered in another order
        r["doc_id"] = 10 + (3 - r["doc_id"])
    write_jsonl(file, rows)
    m = read_source(tmp_path)
    assert m.n_items == len(truth["items"]) and m.n_missing == 0
    z = m.model_index(["model-z"])[0]
    y = m.model_index(["model-y"])[0]
    truth_z = truth["acc"][truth["models"].index("model-z")]
    for i, item in enumerate(truth["items"]):
        j = list(m.items).index(item)
        assert m.scores[z, j] == truth_z[i]
    assert not np.isnan(m.scores[y]).any()


def test_older_files_without_filter_metrics_or_hashes(tmp_path):
    """lm-eval before 0.4.2: no filter/metrics/hash keys, plain numbers, arguments as [[ctx, cont], ...]."""
    docs = [{"q": "a", "choices": ["yes", "no"]}, {"q": "b", "choices": ["red", "green", "blue"]}]
    lls = {"old-1": [[-1.0, -2.0], [-3.0, -0.5, -0.25]], "old-2": [[-2.0, -1.0], [-0.1, -0.5, -3.0]]}
    gold = [0, 1]
    for model, model_lls in lls.items():
        rows = []
        for d, (doc, ll) in enumerate(zip(docs, model_lls, strict=True)):
            rows.append(
                {
                    "doc_id": d,
                    "doc": doc,
                    "target": gold[d],
                    "arguments": [[f"Q: {doc['q']}\nA:", f" {c}"] for c in doc["choices"]],
                    "resps": [[[x, False]] for x in ll],
                    "filtered_resps": [[x, False] for x in ll],
                    "acc": float(np.argmax(ll) == gold[d]),
                }
            )
        write_jsonl(tmp_path / model / "samples_oldtask.jsonl", rows)
    m = read_source(tmp_path)
    assert list(m.models) == ["old-1", "old-2"] and list(m.items) == ["oldtask/0", "oldtask/1"]
    np.testing.assert_array_equal(m.scores, [[1, 0], [0, 0]])
    np.testing.assert_allclose(m.option_probs[1, 1], softmax([-0.1, -0.5, -3.0]), rtol=1e-6)
    np.testing.assert_allclose(m.option_probs[0, 0, :2], softmax([-1.0, -2.0]), rtol=1e-6)
    assert m.option_probs[0, 0, 2] == 0


def _gen_task(root: Path, model: str, outputs: list[str], answers: list[str]) -> None:
    docs = [{"question": f"q{d}", "answer": a} for d, a in enumerate(answers)]
    rows = [gen_row(d, doc, doc["answer"], out, f) for f in ("strict", "lower") for d, (doc, out) in enumerate(zip(docs, outputs, strict=True))]
    folder = root / model
    write_jsonl(folder / f"samples_gen_{DATE}.jsonl", rows)
    write_results(folder, model, {"gen": {"task": "gen", **GEN_CONFIG}}, {"gen": rows})


def test_generation_task_default_metric_and_filters(tmp_path):
    answers = ["paris", "rome", "oslo"]
    _gen_task(tmp_path, "g1", ["Paris", "rome", "oslo"], answers)
    _gen_task(tmp_path, "g2", ["paris", "ROME", "x"], answers)
    first = read_source(tmp_path)  # first filter: strict
    np.testing.assert_array_equal(first.scores, [[0, 1, 1], [1, 0, 0]])
    lower = read_source(tmp_path, filter_name="lower")
    np.testing.assert_array_equal(lower.scores, [[1, 1, 1], [1, 1, 0]])
    assert not first.has_option_probs


# ---- bad input --------------------------------------------------------------------------------------


def test_missing_documents_are_nan_and_reported(tmp_path):
    build_known(tmp_path)
    file = tmp_path / "model-y" / f"samples_mmlu_b_{DATE}.jsonl"
    lines = file.read_text().splitlines()
    file.write_text("\n".join(lines[:1]) + "\n")
    m = read_source(tmp_path)
    y = m.model_index(["model-y"])[0]
    assert np.isnan(m.scores[y]).sum() == 2 and np.isnan(m.option_probs[y]).any()
    assert describe(m)["models_missing_items"] == {"model-y": 2}


def test_conflicting_duplicates_name_model_task_and_doc(tmp_path):
    build_known(tmp_path)
    file = tmp_path / "model-y" / f"samples_mmlu_a_{DATE}.jsonl"
    rows = [json.loads(x) for x in file.read_text().splitlines()]
    clash = dict(rows[2], acc=1.0 - rows[2]["acc"])
    write_jsonl(file, rows + [clash])
    with pytest.raises(MdadError, match=r"Model 'model-y' has conflicting results for task 'mmlu_a' doc 2"):
        read_source(tmp_path)
    write_jsonl(file, rows + [rows[2]])  # an identical repeat is harmless
    assert read_source(tmp_path).n_items == 7


def test_unknown_metric_lists_the_available_ones(tmp_path):
    build_known(tmp_path)
    with pytest.raises(MdadError, match=r"No task has the metric 'exact_match'; the tasks have mmlu_a: acc, acc_norm; mmlu_b: acc, acc_norm\."):
        read_source(tmp_path, metric="exact_match")


def test_mixed_task_versions_are_refused(tmp_path):
    build_known(tmp_path)
    results = tmp_path / "model-z" / f"results_{DATE}.json"
    data = json.loads(results.read_text())
    data["versions"]["mmlu_b"] = 2.0
    results.write_text(json.dumps(data))
    with pytest.raises(MdadError, match=r"Task 'mmlu_b' has version .* mixed task versions"):
        read_source(tmp_path)


def test_different_task_hashes_on_the_same_documents_are_refused(tmp_path):
    build_known(tmp_path)
    results = tmp_path / "model-z" / f"results_{DATE}.json"
    data = json.loads(results.read_text())
    data["task_hashes"]["mmlu_a"] = "0" * 64
    results.write_text(json.dumps(data))
    with pytest.raises(MdadError, match=r"Task 'mmlu_a' has a different task hash"):
        read_source(tmp_path)


def test_a_different_target_for_the_same_document_is_refused(tmp_path):
    build_known(tmp_path)
    file = tmp_path / "model-z" / f"samples_mmlu_a_{DATE}.jsonl"
    rows = [json.loads(x) for x in file.read_text().splitlines()]
    rows[1]["target_hash"] = "f" * 64
    write_jsonl(file, rows)
    with pytest.raises(MdadError, match=r"Task 'mmlu_a' doc 1 has a different gold answer or document .* different versions"):
        read_source(tmp_path)


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_truncated_or_non_json_line_names_file_and_line(tmp_path, damage):
    build_known(tmp_path)
    file = tmp_path / "model-y" / f"samples_mmlu_a_{DATE}.jsonl"
    lines = file.read_text().splitlines()
    lines[2] = lines[2][: len(lines[2]) // 2] if damage == "truncate" else "<html>not json</html>"
    file.write_text("\n".join(lines) + "\n")
    with pytest.raises(MdadError, match=rf"samples_mmlu_a_{DATE}\.jsonl line 3 is not valid JSON"):
        read_source(tmp_path)


def test_non_numeric_metric_is_refused(tmp_path):
    doc = {"q": "a"}
    row = {"doc_id": 0, "doc": doc, "target": "x", "filtered_resps": ["x"], "filter": "none", "metrics": ["f1"], "f1": ["x", "x"]}
    write_jsonl(tmp_path / "m" / "samples_t.jsonl", [row])
    with pytest.raises(MdadError, match=r"metric 'f1' is not a per-document number"):
        read_lm_eval(tmp_path)


def test_load_reads_paths_and_still_names_datasets(tmp_path):
    build_known(tmp_path)
    assert load(tmp_path).n_models == 3
    assert load("simulated").simulated


def test_reruns_and_shared_folders(tmp_path):
    """A rerun of a task replaces the older file; two models writing into one folder stay apart."""
    truth = build_known(tmp_path / "src")
    shared = tmp_path / "shared"
    shared.mkdir()
    for n, folder in enumerate(sorted((tmp_path / "src").iterdir())):
        date = f"2026-01-0{n + 1}T00-00-00.000001"
        for f in folder.iterdir():
            shutil.copy(f, shared / f.name.replace(DATE, date))
    m = read_source(shared)
    assert sorted(m.models) == sorted(truth["models"]) and m.n_missing == 0
    y = tmp_path / "src" / "model-y"
    rows = [json.loads(x) for x in (y / f"samples_mmlu_b_{DATE}.jsonl").read_text().splitlines()]
    flipped = [dict(r, acc=1.0 - r["acc"]) for r in rows]
    write_jsonl(y / "samples_mmlu_b_2027-01-01T00-00-00.000001.jsonl", flipped)
    m = read_source(tmp_path / "src")
    row = m.model_index(["model-y"])[0]
    for r in flipped:
        assert m.scores[row, list(m.items).index(f"mmlu_b/{r['doc_id']}")] == r["acc"]
