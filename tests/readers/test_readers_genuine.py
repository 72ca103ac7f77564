"""Issue-11 cases on genuine harness logs (tests/fixtures, written by tests/make_fixtures.py).

Every expected value is parsed here from the files themselves (or known from the scripted
answers the fixtures were made with), independently of mdad's readers.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.special import softmax
from support.paths import FIXTURES

import mdad
from mdad.data import describe, format_description, read_source
from mdad.data.readers import one_model_hint
from mdad.errors import MdadError


def _rows(file: Path) -> list[dict]:
    return [json.loads(line) for line in file.read_text().splitlines()]


def _column(matrix, model: str, items: list[str]) -> np.ndarray:
    row = matrix.model_index([model])[0]
    return np.array([matrix.scores[row, list(matrix.items).index(i)] for i in items])


# ---- 1. checkpoints and revisions are models of their own; reruns follow one policy ----------------


def test_revisions_of_one_model_in_one_folder_are_models_of_their_own():
    m = read_source(FIXTURES / "lm_eval_checkpoints")
    names = [f"EleutherAI/pythia-160m,revision=step{s}000" for s in (1, 2, 3, 4, 5)]
    assert sorted(m.models) == names
    assert any("each run is a model of its own" in note for note in m.notes)
    folder = FIXTURES / "lm_eval_checkpoints" / "EleutherAI__pythia-160m"
    for results in sorted(folder.glob("results_*.json")):
        revision = json.loads(results.read_text())["config"]["model_args"]["revision"]
        date = results.stem.removeprefix("results_")
        rows = _rows(folder / f"samples_tiny_mc_{date}.jsonl")
        expected = [r["acc"] for r in rows]
        got = _column(m, f"EleutherAI/pythia-160m,revision={revision}", [f"tiny_mc/{r['doc_id']}" for r in rows])
        np.testing.assert_array_equal(got, expected)


def test_same_arguments_in_checkpoint_folders_are_told_apart_by_folder():
    m = read_source(FIXTURES / "lm_eval_ckpt_folders")
    assert sorted(m.models) == [f"/ckpt/model (ckpt-{s}000)" for s in (1, 2, 3)]
    for step in (1, 2, 3):
        (file,) = (FIXTURES / "lm_eval_ckpt_folders" / f"ckpt-{step}000").rglob("samples_tiny_mc_*.jsonl")
        rows = _rows(file)
        got = _column(m, f"/ckpt/model (ckpt-{step}000)", [f"tiny_mc/{r['doc_id']}" for r in rows])
        np.testing.assert_array_equal(got, [r["acc"] for r in rows])


def test_lm_eval_rerun_keeps_the_latest_with_a_note_or_refuses():
    folder = FIXTURES / "lm_eval_reruns"
    older, latest = sorted((folder / "model-a").glob("samples_tiny_mc_*.jsonl"))
    m = read_source(folder)
    assert sorted(m.models) == ["model-a", "model-b"]
    rows = _rows(latest)
    expected = [softmax([float(x[0]) for x in r["filtered_resps"]])[int(r["target"])] for r in rows]
    row = m.model_index(["model-a"])[0]
    cols = [list(m.items).index(f"tiny_mc/{r['doc_id']}") for r in rows]
    np.testing.assert_allclose(m.gold_prob()[row, cols], expected, rtol=1e-6)
    note = next(n for n in m.notes if "answered again" in n)
    assert older.name in note and latest.name in note and "model-a" in note
    assert f"5 items were answered again ({older.name}, {latest.name})" in note  # a whole rerun: every item again
    assert "the latest answer of each is read (rerun policy 'latest')" in note
    with pytest.raises(
        MdadError,
        match=r"Model 'model-a' on task 'tiny_mc' was run 2 times and 5 items were answered "
        r"again .*; keep one answer per item or read with the rerun policy 'latest'\.",
    ):
        read_source(folder, reruns="error")


def test_inspect_rerun_error_status_and_model_arguments_on_default_eval_logs():
    folder = FIXTURES / "inspect_eval"
    for log in folder.glob("*.eval"):  # inspect's default: zstd-compressed members
        with zipfile.ZipFile(log) as z:
            assert {info.compress_type for info in z.infolist()} == {93}
    m = read_source(folder)
    # scripted answers (tasks/inspect_run.py) against the targets Default, mockllm, banana, output
    expected = {"mockllm/alpha": [1, 1, 1, 1], "mockllm/alpha,revision=v2": [0, 1, 1, 1], "mockllm/beta": [0, 1, 1, 0], "mockllm/gamma": [1, 0, 1, 1]}
    assert sorted(m.models) == sorted(expected)
    for model, scores in expected.items():
        np.testing.assert_array_equal(_column(m, model, [f"tiny_qa/{i}" for i in (1, 2, 3, "q4")]), scores)
    skipped = [n for n in m.notes if n.startswith("Skipped")]
    assert len(skipped) == 1 and "mockllm/delta" in skipped[0] and "status is 'error'" in skipped[0]
    assert any("Model 'mockllm/alpha' on task 'tiny_qa' was run 2 times and 4 items were answered again" in n for n in m.notes)
    with pytest.raises(MdadError, match=r"Model 'mockllm/alpha' on task 'tiny_qa' was run 2 times"):
        read_source(folder, reruns="error")


def test_lighteval_rerun_keeps_the_latest_with_a_note():
    folder = FIXTURES / "lighteval_reruns"
    m = read_source(folder)
    assert list(m.models) == ["org/model-a"]
    latest = sorted((folder / "details" / "org" / "model-a").iterdir())[-1]
    (mc,) = latest.glob("details_tiny_mc*.parquet")
    rows = pq.read_table(mc).to_pylist()
    np.testing.assert_array_equal(_column(m, "org/model-a", [f"tiny_mc|0/{r['doc']['id']}" for r in rows]), [r["metric"]["acc"] for r in rows])
    assert sum("was run 2 times and 5 items were answered again" in n for n in m.notes) == 2  # one per task
    with pytest.raises(MdadError, match="was run 2 times"):
        read_source(folder, reruns="error")


def _split_runs(folder: Path, target: Path, keep: dict[str, set[int]]) -> None:
    """The runs of ``folder`` copied to ``target``, each samples file cut to the documents ``keep`` names by date."""
    for file in folder.iterdir():
        date = file.stem.rsplit("_", 1)[-1]
        if file.name.startswith("samples_"):
            rows = [line for line in file.read_text().splitlines() if json.loads(line)["doc_id"] in keep[date]]
            (target / file.name).write_text("\n".join(rows) + "\n")
        else:
            shutil.copy(file, target / file.name)


def test_runs_of_one_model_on_one_task_add_up_and_only_an_item_answered_again_is_a_rerun(tmp_path):
    folder = FIXTURES / "lm_eval_reruns" / "model-a"
    older, latest = sorted(folder.glob("samples_tiny_mc_*.jsonl"))
    date = lambda file: file.stem.rsplit("_", 1)[-1]  # noqa: E731
    target = tmp_path / "model-a"
    target.mkdir()
    _split_runs(folder, target, {date(older): {0, 1, 2}, date(latest): {2, 3, 4}})
    m = read_source(tmp_path)
    rows = {**{r["doc_id"]: r for r in _rows(older)}, **{r["doc_id"]: r for r in _rows(latest) if r["doc_id"] >= 2}}
    assert list(m.models) == ["model-a"] and m.n_missing == 0
    items = [f"tiny_mc/{d}" for d in sorted(rows)]
    np.testing.assert_array_equal(_column(m, "model-a", items), [rows[d]["acc"] for d in sorted(rows)])
    expected = [softmax([float(x[0]) for x in rows[d]["filtered_resps"]])[int(rows[d]["target"])] for d in sorted(rows)]
    cols = [list(m.items).index(i) for i in items]
    np.testing.assert_allclose(m.gold_prob()[0, cols], expected, rtol=1e-6)  # document 2: the latest run's options
    (note,) = [n for n in m.notes if "answered again" in n]
    assert note == (
        f"Model 'model-a' on task 'tiny_mc' was run 2 times and 1 item was answered again ({older.name}, "
        f"{latest.name}); the latest answer of each is read (rerun policy 'latest')."
    )
    with pytest.raises(MdadError, match=r"was run 2 times and 1 item was answered again"):
        read_source(tmp_path, reruns="error")
    shutil.rmtree(target)
    target.mkdir()
    _split_runs(folder, target, {date(older): {0, 1}, date(latest): {2, 3, 4}})
    apart = read_source(tmp_path, reruns="error")  # no document twice: no rerun
    assert not any("answered again" in n for n in apart.notes) and apart.n_missing == 0


def test_a_run_of_another_task_version_is_not_added_to_a_models_runs(tmp_path):
    target = tmp_path / "model-a"
    shutil.copytree(FIXTURES / "lm_eval_reruns" / "model-a", target)
    latest = sorted(target.glob("results_*.json"))[-1]
    results = json.loads(latest.read_text())
    results["versions"]["tiny_mc"] = 2.0
    latest.write_text(json.dumps(results))
    with pytest.raises(
        MdadError,
        match=r"Task 'tiny_mc' has version 1.0 for model 'model-a' but 2.0 for model "
        r"'model-a' .*mixed task versions cannot be compared",
    ):
        read_source(tmp_path)


def test_lighteval_runs_of_one_model_add_up_example_by_example(tmp_path):
    shutil.copytree(FIXTURES / "lighteval_reruns", tmp_path / "logs")
    older, latest = sorted((tmp_path / "logs" / "details" / "org" / "model-a").iterdir())
    for run, ids in ((older, {"0", "1"}), (latest, {"2", "3", "4"})):
        (file,) = run.glob("details_tiny_mc*.parquet")
        table = pq.read_table(file)
        pq.write_table(table.filter(pa.array([r["doc"]["id"] in ids for r in table.to_pylist()])), file)
    m = read_source(tmp_path / "logs")  # tiny_mc: split between the runs; tiny_gen: run twice whole
    mc = [str(i) for i in range(5)]
    expected = {
        r["doc"]["id"]: r["metric"]["acc"] for run in (older, latest) for r in pq.read_table(next(run.glob("details_tiny_mc*.parquet"))).to_pylist()
    }
    np.testing.assert_array_equal(_column(m, "org/model-a", [f"tiny_mc|0/{i}" for i in mc]), [expected[i] for i in mc])
    assert [n for n in m.notes if "answered again" in n] == [
        f"Model 'org/model-a' on task 'tiny_gen|0' was run 2 times and 5 items were answered again ({older.name}, "
        f"{latest.name}); the latest answer of each is read (rerun policy 'latest')."
    ]


def test_a_checkpoint_keeps_its_revision_in_its_name_when_read_alone(tmp_path):
    folder = FIXTURES / "lm_eval_checkpoints" / "EleutherAI__pythia-160m"
    together = read_source(FIXTURES / "lm_eval_checkpoints")
    for results in sorted(folder.glob("results_*.json")):
        date = results.stem.removeprefix("results_")
        alone = tmp_path / date
        alone.mkdir()
        for file in folder.glob(f"*{date}*"):
            shutil.copy(file, alone / file.name)
        revision = json.loads(results.read_text())["config"]["model_args"]["revision"]
        name = f"EleutherAI/pythia-160m,revision={revision}"
        assert list(read_source(alone).models) == [name] and name in together.models
    alone = set()
    for log in (FIXTURES / "inspect_eval").glob("*.eval"):
        with contextlib.suppress(MdadError):  # the log whose status is "error": nothing to read
            alone.update(read_source(log).models)
    assert alone == set(read_source(FIXTURES / "inspect_eval").models)  # mockllm/alpha,revision=v2 included
    assert list(read_source(FIXTURES / "lm_eval" / "model-a").models) == ["model-a"]  # no revision: the plain name


# ---- 2. mixed task types keep option probabilities where present ---------------------------------


@pytest.mark.parametrize("folder, mc, gen", [("lm_eval", "tiny_mc", "tiny_gen"), ("lighteval", "tiny_mc|0", "tiny_gen|0")])
def test_mixed_task_types_keep_option_probabilities_of_multiple_choice_items(folder, mc, gen):
    m = read_source(FIXTURES / folder).require_complete("drop-items")
    assert m.has_option_probs
    np.testing.assert_array_equal(m.option_items, m.subtasks == mc)
    gold = m.gold_prob()
    assert np.all(np.isnan(m.option_probs[:, m.subtasks == gen]))
    np.testing.assert_array_equal(gold[:, m.subtasks == gen], m.scores[:, m.subtasks == gen])
    assert np.all((gold[:, m.option_items] > 0) & (gold[:, m.option_items] < 1))
    assert "on 5 of 10 items" in " ".join(format_description(describe(read_source(FIXTURES / folder))))


def test_lighteval_option_probabilities_are_the_softmax_of_the_logged_logprobs():
    m = read_source(FIXTURES / "lighteval")
    for model in ("org/model-a", "org/model-b", "org/model-d", "org/model-e"):
        (file,) = (FIXTURES / "lighteval" / "details" / model).rglob("details_tiny_mc*.parquet")
        row = m.model_index([model])[0]
        for r in pq.read_table(file).to_pylist():
            col = list(m.items).index(f"tiny_mc|0/{r['doc']['id']}")
            expected = softmax(r["model_response"]["logprobs"])[r["doc"]["gold_index"]]
            assert m.gold_prob()[row, col] == pytest.approx(expected, rel=1e-6)


# ---- 3, 4. metric per task; unknown metric and filter list what every task has ---------------------


def test_one_metric_applies_where_the_task_has_it_and_says_so_elsewhere():
    m = read_source(FIXTURES / "lm_eval", metric="acc_norm")
    a = FIXTURES / "lm_eval" / "model-a"
    mc = _rows(next(a.glob("samples_tiny_mc_*.jsonl")))
    gen = [r for r in _rows(next(a.glob("samples_tiny_gen_*.jsonl"))) if r["filter"] == "strict"]
    np.testing.assert_array_equal(_column(m, "model-a", [f"tiny_mc/{r['doc_id']}" for r in mc]), [r["acc_norm"] for r in mc])
    np.testing.assert_array_equal(_column(m, "model-a", [f"tiny_gen/{r['doc_id']}" for r in gen]), [r["exact_match"] for r in gen])
    assert "Task 'tiny_gen' has no metric 'acc_norm'; its metric 'exact_match' is read." in m.notes
    per_task = read_source(FIXTURES / "lm_eval", metric="tiny_mc=acc_norm,tiny_gen=exact_match")
    np.testing.assert_array_equal(per_task.scores, m.scores)


def test_unknown_metric_lists_every_tasks_metrics():
    with pytest.raises(
        MdadError,
        match=r"No task has the metric 'f1'; the tasks have tiny_gen: exact_match; "
        r"tiny_mc: acc, acc_norm\.",
    ):
        read_source(FIXTURES / "lm_eval", metric="f1")
    with pytest.raises(MdadError, match=r"Task 'tiny_gen' .* has no metric 'acc_norm'; available: exact_match\."):
        read_source(FIXTURES / "lm_eval", metric="tiny_gen=acc_norm")
    with pytest.raises(MdadError, match=r"There is no task 'tiny_xx' .* the tasks are"):
        read_source(FIXTURES / "lm_eval", metric="tiny_xx=acc")


def test_a_mistyped_filter_is_an_error_even_when_each_task_has_one_filter():
    with pytest.raises(MdadError, match=r"No task has the filter 'strcit'; the tasks have tiny_mc: none\."):
        read_source(FIXTURES / "lm_eval_reruns", filter_name="strcit")
    lower = read_source(FIXTURES / "lm_eval", filter_name="lower")
    assert "Task 'tiny_mc' has no filter 'lower'; its filter 'none' is read." in lower.notes


# ---- 5. estimate refuses results of another task version -----------------------------------------


def _multiple_choice_micro_benchmark():
    matrix = read_source(FIXTURES / "lm_eval").require_complete("drop-items")
    matrix = matrix.take(items=matrix.subtasks == "tiny_mc")
    return mdad.select(matrix, "random", int(matrix.n_items))  # every item, document 2 included


def test_micro_benchmark_records_the_task_and_estimate_refuses_another_version(tmp_path):
    chosen = _multiple_choice_micro_benchmark()
    chosen.save(tmp_path / "micro.json")
    saved = json.loads((tmp_path / "micro.json").read_text())
    results = json.loads(next((FIXTURES / "lm_eval" / "model-a").glob("results_*.json")).read_text())
    assert saved["tasks"]["tiny_mc"] == {
        "harness": "lm-eval",
        "metric": "acc",  # what was read, which the exported task reads too (docs/harness.md)
        "filter": "none",
        "version": str(results["versions"]["tiny_mc"]),
        "n_shot": str(results["n-shot"]["tiny_mc"]),
        # how the source runs were made, for the commands that run new models (docs/own-results.md)
        "lm_eval_model": results["config"]["model"],
        "model_args": "pretrained=YOUR_MODEL",
        "include_path": ".",  # the fixtures keep paths relative to the folder lm-eval ran in
    }
    assert len(saved["item_hashes"]) == len(saved["items"]) and all(saved["item_hashes"])
    loaded = mdad.SelectedMicroBenchmark.load(tmp_path / "micro.json")
    assert len(loaded.estimate(read_source(FIXTURES / "lm_eval_reruns"))) == 2  # same task version: accepted
    with pytest.raises(
        MdadError,
        match=r"Task 'tiny_mc' in .* has version 2.0, but the micro-benchmark was built on "
        r"version 1.0; its estimates do not apply\.",
    ):
        loaded.estimate(read_source(FIXTURES / "lm_eval_v2"))


def test_estimate_refuses_a_changed_gold_answer_even_with_the_same_version(tmp_path):
    chosen = _multiple_choice_micro_benchmark()
    data = chosen.to_json()
    data["tasks"]["tiny_mc"].pop("version")  # as if the version had not been bumped
    (tmp_path / "micro.json").write_text(json.dumps(data))
    loaded = mdad.SelectedMicroBenchmark.load(tmp_path / "micro.json")
    with pytest.raises(MdadError, match=r"Item .tiny_mc/2. .* has another document or gold answer .*\(1 of 4 items differ\)"):
        loaded.estimate(read_source(FIXTURES / "lm_eval_v2"))  # data v2 changes the gold answer of document 2 only


# ---- 6-8 covered above and in test_micro_selected; 9. lighteval gold consistency on every row ----


def test_lighteval_changed_generation_answer_is_refused(tmp_path):
    for folder in ("lighteval", "lighteval_changed"):
        shutil.copytree(FIXTURES / folder, tmp_path, dirs_exist_ok=True)
    with pytest.raises(MdadError, match=r"Task 'tiny_gen\|0' example 1 has a different gold answer .* 'org/model-c'"):
        read_source(tmp_path)


# ---- 10. one model's folder says so ----------------------------------------------------------------


def test_one_models_folder_says_the_folder_above_holds_more():
    path = FIXTURES / "lm_eval" / "model-a"
    assert one_model_hint(path, read_source(path)) == (
        f"{path} holds one model ('model-a'); comparing models needs the folder that holds all of them: "
        f"{FIXTURES / 'lm_eval'} holds more lm-eval results."
    )
    assert one_model_hint(FIXTURES / "lm_eval", read_source(FIXTURES / "lm_eval")) is None


# ---- notes survive take() and the npz round trip ---------------------------------------------------


def test_notes_and_task_identity_survive_take_and_npz(tmp_path):
    m = read_source(FIXTURES / "lm_eval_checkpoints")
    assert m.take(items=np.arange(3)).notes == m.notes
    out = tmp_path / "c.npz"
    mdad.data.convert(FIXTURES / "lm_eval_checkpoints", out)
    back = mdad.data.read_npz(out)
    assert back.notes == tuple(f"When converted: {note}" for note in m.notes) and back.tasks == m.tasks
    np.testing.assert_array_equal(back.item_hashes, m.item_hashes)
    np.testing.assert_array_equal(back.gold, m.gold)
