"""A micro-benchmark inside the harness: the estimate and interval lm-eval and inspect report equal `mdad estimate`'s.

The fixtures lm_eval_micro/ and inspect_micro/ are the harnesses' own result files of runs of the exported
lm-eval task (`mdad export --lm-eval`) and of the wrapped inspect task (`mdad.inspect.micro_task`), made by
tests/make_fixtures.py with the real harnesses; the live tests run the harness itself where it is installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from support.paths import FIXTURES

from mdad.data import read_source
from mdad.data.readers.inspect_logs import _load
from mdad.errors import MdadError
from mdad.estimates import written
from mdad.harness import MicroRun
from mdad.harness.lm_eval_export import export_lm_eval
from mdad.micro import SelectedMicroBenchmark
from mdad.micro.estimation import estimate_report

METHODS = ("random", "tinybenchmarks")


def printed(micro: Path, logs: Path) -> tuple[float, float, float]:
    """What `mdad estimate micro logs` computes for the one model of the logs: estimate, low, high."""
    report = estimate_report(SelectedMicroBenchmark.load(micro), read_source(logs))
    row = report.model_frame().iloc[0]
    return float(row["estimate"]), float(row["low"]), float(row["high"])


def same(a: float, b: float) -> bool:
    """Equal as `mdad estimate`'s CSV writes them (mdad.estimates.written: fixtures made before the harness rounded so too)."""
    a, b = (float(written([value])[0]) for value in (a, b))
    return (np.isnan(a) and np.isnan(b)) or a == b


def lm_eval_reported(folder: Path) -> dict[str, dict[str, float]]:
    (results,) = folder.glob("*/results_*.json")
    data = json.loads(results.read_text())
    results = data["results"].items()
    return {task: {k.split(",")[0]: v for k, v in found.items() if k.startswith("mdad_") and "_stderr" not in k} for task, found in results}


def inspect_reported(folder: Path) -> dict[str, float]:
    (log,) = folder.glob("*.eval")
    header, _ = _load(log)
    (scores,) = [s for s in header["results"]["scores"] if "mdad_estimate" in s["metrics"]]
    return {name: float(m["value"]) for name, m in scores["metrics"].items()}


@pytest.mark.parametrize("method", METHODS)
def test_lm_eval_results_table_reports_what_mdad_estimate_prints(method):
    micro, logs = FIXTURES / "lm_eval_micro" / f"{method}.json", FIXTURES / "lm_eval_micro" / method
    estimate, low, high = printed(micro, logs)
    reported = lm_eval_reported(logs)
    tasks = [task for task, values in reported.items() if values]
    assert sorted(tasks) == ["nb_sums", "nb_zoo"]  # each task of the group reports the micro-benchmark's estimate
    for task in tasks:
        values = reported[task]
        assert same(values["mdad_estimate"], estimate) and same(values["mdad_low"], low) and same(values["mdad_high"], high)
        assert values["mdad_answered"] == 6
    assert np.isnan(low) == (method != "random")  # a learned estimator has an interval only with an assessment


@pytest.mark.parametrize("method", METHODS)
def test_inspect_log_stores_what_mdad_estimate_prints(method):
    micro, logs = FIXTURES / "inspect_micro" / f"{method}.json", FIXTURES / "inspect_micro" / method
    estimate, low, high = printed(micro, logs)
    reported = inspect_reported(logs)
    assert same(reported["mdad_estimate"], estimate) and same(reported["mdad_low"], low) and same(reported["mdad_high"], high)
    assert reported["mdad_answered"] == 6


def test_the_random_design_inside_the_harness_is_the_plain_mean_with_its_exact_interval():
    """Checked against an independent calculation: the mean of the logged answers, and the mid-p hypergeometric
    interval of the pool total (24 items) at 90%."""
    logs = FIXTURES / "lm_eval_micro" / "random"
    answers = [json.loads(line)["acc"] for file in sorted(logs.glob("*/samples_*.jsonl")) for line in file.read_text().splitlines()]
    k, right, pool = len(answers), int(sum(answers)), 24
    values = lm_eval_reported(logs)["nb_zoo"]
    assert k == 6 and values["mdad_estimate"] == pytest.approx(right / k, abs=1e-6)

    def mid_p(total: int) -> tuple[float, float]:  # P(X > right) and P(X < right), each plus P(X = right)/2, for pool total `total`
        d = stats.hypergeom(pool, total, k)
        return d.sf(right) + 0.5 * d.pmf(right), d.cdf(right - 1) + 0.5 * d.pmf(right)

    totals = np.arange(pool + 1)
    low = totals[[mid_p(t)[0] > 0.05 for t in totals]].min() / pool  # totals not refused at 5% on either side: the 90% interval
    high = totals[[mid_p(t)[1] > 0.05 for t in totals]].max() / pool
    assert (values["mdad_low"], values["mdad_high"]) == pytest.approx((low, high))


def test_an_adaptive_test_keeps_the_estimate_loop(tmp_path):
    with pytest.raises(MdadError, match=r"adaptive test .* 'mdad estimate' loop"):
        export_lm_eval(FIXTURES / "lm_eval_loop" / "micro.json", tmp_path / "task")
    assert not (tmp_path / "task").exists()


def test_another_harness_task_or_version_is_one_sentence():
    with pytest.raises(MdadError, match="selected from the results of inspect, not from lm-eval logs"):
        MicroRun(FIXTURES / "inspect_micro" / "random.json", "lm-eval")
    run = MicroRun(FIXTURES / "lm_eval_micro" / "random.json", "lm-eval")
    with pytest.raises(MdadError, match=r"Task 'tiny_mc' is not one .* was selected from \(its 2 tasks: nb_sums, nb_zoo\)"):
        run.check_task("tiny_mc")
    with pytest.raises(MdadError, match="has version 2.0, but the micro-benchmark was built on version 1.0"):
        run.check_task("nb_zoo", version=2.0)
    with pytest.raises(MdadError, match="has n-shot 5, but the micro-benchmark was built on n-shot 0"):
        run.estimate({"nb_zoo": {"1": 1.0}}, n_shots={"nb_zoo": 5})


def test_a_changed_or_missing_sample_is_one_sentence():
    run = MicroRun(FIXTURES / "lm_eval_micro" / "random.json", "lm-eval")
    task = "nb_zoo"
    own = dict(zip(run.chosen.item_ids.astype(str), run.chosen.item_hashes.astype(str), strict=True))
    hashes = {doc: own[f"{task}/{doc}"] for doc in run.by_task[task]}
    run.check_samples(task, hashes)  # the same documents pass
    changed = {**hashes, run.by_task[task][0]: "0123456789abcdef"}
    with pytest.raises(MdadError, match="has another document or gold answer than when the micro-benchmark was built"):
        run.check_samples(task, changed)
    with pytest.raises(MdadError, match="chosen samples of task 'nb_zoo' are not in the task's dataset"):
        run.check_samples(task, dict(list(hashes.items())[1:]))


def test_every_item_must_be_answered():
    run = MicroRun(FIXTURES / "lm_eval_micro" / "random.json", "lm-eval")
    some = {task: dict.fromkeys(docs[:1], 1.0) for task, docs in run.by_task.items()}
    with pytest.raises(MdadError, match="micro-benchmark items are not in the lm-eval run"):
        run.estimate(some)
    so_far = run.estimate(some, partial=True)  # inspect shows its metrics while the samples run
    assert np.isnan([so_far.estimate, so_far.low, so_far.high]).all() and so_far.answered == 2


def test_export_writes_the_group_and_refuses_a_folder_of_other_files(tmp_path):
    micro = FIXTURES / "lm_eval_micro" / "random.json"
    done = subprocess.run(
        [sys.executable, "-m", "mdad.cli", "export", str(micro), "--lm-eval", str(tmp_path / "task"), "--name", "tiny_micro"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "--tasks tiny_micro" in done.stdout
    group = (tmp_path / "task" / "tiny_micro.yaml").read_text()
    assert "group: tiny_micro" in group and "  - task: nb_sums\n    class: !function mdad_micro.MicroTask" in group
    assert json.loads((tmp_path / "task" / "micro.json").read_text()) == json.loads(micro.read_text())
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    other = [sys.executable, "-m", "mdad.cli", "export", str(micro), "--lm-eval", str(tmp_path / "other")]
    refused = subprocess.run(other, capture_output=True, text=True)
    assert refused.returncode == 2 and "already holds other files (notes.txt)" in refused.stderr
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"
    bare = subprocess.run([sys.executable, "-m", "mdad.cli", "export", str(micro)], capture_output=True, text=True)
    assert bare.returncode == 2 and "--lm-eval DIR" in bare.stderr


def test_mdad_inspect_imports_without_inspect():
    done = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['inspect_ai'] = None; import mdad.inspect, mdad.harness.lm_eval_task; print('ok')"],
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == "ok", done.stderr


# ---- live: the harness itself, where it is installed ----------------------------------------------


def test_live_inspect_run_reports_what_mdad_estimate_prints(tmp_path, monkeypatch):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    monkeypatch.syspath_prepend(str(FIXTURES / "tasks"))
    from tasks import loop_qa  # type: ignore[import-not-found]

    from mdad.inspect import micro_task

    micro = FIXTURES / "inspect_micro" / "random.json"
    task = micro_task(loop_qa(), micro)
    assert sorted(str(s.id) for s in task.dataset) == sorted(MicroRun(micro, "inspect").by_task["loop_qa"])
    outputs = [ModelOutput.from_content(model="live", content=str(s.target) if n % 2 else "nope") for n, s in enumerate(task.dataset)]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)  # mockllm counts no tokens (no tokenizer download)
    (log,) = inspect_eval(task, model=get_model("mockllm/live", custom_outputs=outputs), log_dir=str(tmp_path), display="none", max_samples=1)
    assert log.status == "success", log.error
    assert inspect_reported(tmp_path)["mdad_estimate"] == printed(micro, tmp_path)[0] == 0.5


def test_live_lm_eval_run_reports_what_mdad_estimate_prints(tmp_path):
    pytest.importorskip("lm_eval")
    shutil.copytree(FIXTURES / "tasks" / "loop", tmp_path / "loop")
    micro = FIXTURES / "lm_eval_micro" / "random.json"
    export_lm_eval(micro, tmp_path / "loop" / "micro", "live_micro")
    command = [sys.executable, "-m", "lm_eval", "run", "--model", "dummy", "--model_args", "pretrained=live", "--tasks", "live_micro"]
    command += ["--include_path", "loop", "--output_path", "out", "--log_samples", "--seed", "3,1234,1234,1234"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env={"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "PATH": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mdad_estimate" in done.stdout
    estimate, low, high = printed(micro, tmp_path / "out")
    assert lm_eval_reported(tmp_path / "out")["nb_zoo"] == {"mdad_estimate": estimate, "mdad_low": low, "mdad_high": high, "mdad_answered": 6}


def test_live_inspect_refuses_a_changed_sample_and_another_task(monkeypatch):
    pytest.importorskip("inspect_ai")
    from inspect_ai.dataset import Sample

    monkeypatch.syspath_prepend(str(FIXTURES / "tasks"))
    from tasks import loop_qa, tiny_qa  # type: ignore[import-not-found]

    from mdad.inspect import micro_task

    micro = FIXTURES / "inspect_micro" / "random.json"
    with pytest.raises(MdadError, match=r"Task 'tiny_qa' is not one .* was selected from"):
        micro_task(tiny_qa(), micro)
    task = loop_qa()
    first = MicroRun(micro, "inspect").by_task["loop_qa"][0]
    samples = list(task.dataset)
    task.dataset.samples = [Sample(id=s.id, input=s.input, target="changed") if str(s.id) == first else s for s in samples]
    with pytest.raises(MdadError, match=f"Item 'loop_qa/{first}' .* has another document or gold answer"):
        micro_task(task, micro)
