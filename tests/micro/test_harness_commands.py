"""The harness commands mdad prints carry what the source logs recorded (docs/own-results.md).

On the genuine fixture logs: lm-eval's model type, the shape of its model arguments, the include
path of local YAML tasks and the n-shot; inspect's task file, found from wherever the command is
printed. tests/make_fixtures.py runs the printed commands as printed with the real harnesses.
"""

from __future__ import annotations

import ast
import json
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest
from support.paths import FIXTURES
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import read_source
from mdad.data.matrix import ResponseMatrix
from mdad.data.readers import READERS, Reader, logged_setup
from mdad.data.readers.commands import CommandWriter, HarnessCommands
from mdad.data.readers.lm_eval import READER as LM_EVAL
from mdad.errors import MdadError
from mdad.micro.harness import command_writer


def words(command: str) -> list[str]:
    return shlex.split(command)


def option(command: str, name: str) -> str:
    parts = words(command)
    return parts[parts.index(name) + 1]


def test_model_args_keep_what_every_source_run_shared_and_name_the_rest():
    shape = logged_setup.model_args_shape(["dtype=float32,pretrained=a,revision=s1", "dtype=float32,pretrained=b,revision=s2"])
    assert shape == "dtype=float32,pretrained=YOUR_MODEL,revision=YOUR_REVISION"
    # the model's own name is a placeholder even when one source run logged it; a key some runs lack is one too
    assert logged_setup.model_args_shape(["pretrained=a,trust_remote_code=True"]) == "pretrained=YOUR_MODEL,trust_remote_code=True"
    assert logged_setup.model_args_shape(["pretrained=a", "pretrained=b,peft=x"]) == "peft=YOUR_PEFT,pretrained=YOUR_MODEL"


def test_include_path_is_the_folder_of_a_local_task_only():
    local = {"metadata": {"config_source": "/home/me/tasks/mine/nb_zoo.yaml"}}
    built_in = {"metadata": {"config_source": "/venv/lib/python3.11/site-packages/lm_eval/tasks/arc/arc_easy.yaml"}}
    assert logged_setup.lm_eval_include_path(local) == "/home/me/tasks/mine"
    assert logged_setup.lm_eval_include_path(built_in) == ""
    assert logged_setup.lm_eval_include_path({}) == ""


def test_lm_eval_logs_record_model_type_args_shape_include_path_and_n_shot():
    tasks = read_source(FIXTURES / "lm_eval_loop" / "sources").tasks
    for task in ("nb_zoo", "nb_sums"):
        assert tasks[task]["lm_eval_model"] == "dummy"
        assert tasks[task]["model_args"] == "pretrained=YOUR_MODEL"
        assert tasks[task]["include_path"] == "loop"  # the fixtures keep paths relative to where lm-eval ran
        assert tasks[task]["n_shot"] == "0"
    checkpoints = read_source(FIXTURES / "lm_eval_checkpoints").tasks
    assert checkpoints["tiny_mc"]["model_args"] == "pretrained=YOUR_MODEL,revision=YOUR_REVISION"


def test_the_adaptive_tests_first_and_next_lm_eval_commands_ask_that_item_as_the_sources_ran(tmp_path):
    sources = mdad.load(FIXTURES / "lm_eval_loop" / "sources")
    test = mdad.select(sources, "adaptive-1d", 15, seed=0)
    first = test.first_item()
    task, _, doc = first.partition("/")
    (command,) = test.harness_commands([first], output="new").commands
    assert command.startswith("lm-eval run ")
    assert option(command, "--model") == "dummy" and option(command, "--model_args") == "pretrained=YOUR_MODEL"
    assert option(command, "--tasks") == task and option(command, "--include_path") == "loop"
    assert option(command, "--num_fewshot") == "0" and option(command, "--output_path") == "new"
    assert json.loads(option(command, "--samples")) == {task: [int(doc)]}
    assert "--log_samples" in words(command)
    with pytest.raises(MdadError, match="not an item of this micro-benchmark"):
        test.harness_commands(["nb_zoo/999"])


def test_select_and_estimate_print_the_command_for_the_next_item(tmp_path, monkeypatch):
    fixture = FIXTURES / "lm_eval_loop"
    shutil.copytree(fixture / "sources", tmp_path / "sources")
    monkeypatch.chdir(tmp_path)
    shown = CliRunner().invoke(
        app, ["select", "--data", "sources", "--method", "adaptive-1d", "--size", "15", "--assess-runs", "0", "--out", "micro.json"]
    )
    assert shown.exit_code == 0, shown.output
    first = mdad.SelectedMicroBenchmark.load(tmp_path / "micro.json").first_item()
    (printed,) = [line.strip() for line in shown.output.splitlines() if line.strip().startswith("lm-eval run")]
    assert json.loads(option(printed, "--samples")) == {first.partition("/")[0]: [int(first.partition("/")[2])]}
    assert "Replace YOUR_MODEL" in shown.output
    # one answer in new/<model>/ as lm-eval writes it: the next command writes into new/ again
    first_run = sorted((fixture / "new" / "new-model").glob("results_*.json"))[0].stem.removeprefix("results_")
    (results, samples) = sorted((fixture / "new" / "new-model").glob(f"*{first_run}*"))
    (tmp_path / "new" / "new-model").mkdir(parents=True)
    for file in (results, samples):
        shutil.copy(file, tmp_path / "new" / "new-model" / file.name)
    shown = CliRunner().invoke(app, ["estimate", "micro.json", "new"])
    assert shown.exit_code == 0, shown.output
    (details,) = mdad.SelectedMicroBenchmark.load(tmp_path / "micro.json").details(read_source(tmp_path / "new")).itertuples()
    (printed,) = [line.strip() for line in shown.output.splitlines() if line.strip().startswith("lm-eval run")]
    task, _, doc = details.next_item.partition("/")
    assert json.loads(option(printed, "--samples")) == {task: [int(doc)]} and option(printed, "--output_path") == "new"
    assert LM_EVAL.commands.output_folder(tmp_path / "new" / "new-model") == str(tmp_path / "new")


def test_the_inspect_task_file_is_printed_as_a_path_that_works_from_here(tmp_path, monkeypatch):
    run = tmp_path / "project"  # where inspect ran: its task file, its logs
    shutil.copytree(FIXTURES / "inspect_loop" / "sources", run / "logs")
    shutil.copy(FIXTURES / "tasks" / "tasks.py", run / "tasks.py")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    test = mdad.select(mdad.load(run / "logs"), "adaptive-1d", 15, seed=0)
    found = test.harness_commands([test.first_item()], output="new")
    (command,) = found.commands
    target = option(command, "eval")
    assert target == f"{(run / 'tasks.py').as_posix()}@loop_qa" and Path(target.partition("@")[0]).is_file()
    assert option(command, "--sample-id") == test.first_item().partition("/")[2] and option(command, "--log-dir") == "new"
    monkeypatch.chdir(run)  # from the folder inspect ran in, the path as logged
    assert option(test.harness_commands([test.first_item()]).commands[0], "eval") == "tasks.py@loop_qa"
    (tmp_path / "project" / "tasks.py").unlink()  # nowhere to be found: as logged, and said so
    found = test.harness_commands([test.first_item()])
    assert option(found.commands[0], "eval") == "tasks.py@loop_qa"
    assert any("not found from here" in note for note in found.notes)


def test_the_lm_eval_include_path_is_printed_as_a_path_that_works_from_here(tmp_path, monkeypatch):
    run = tmp_path / "project"  # where lm-eval ran: --include_path loop, its output
    shutil.copytree(FIXTURES / "tasks" / "loop", run / "loop")
    shutil.copytree(FIXTURES / "lm_eval_loop" / "sources", run / "out")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    test = mdad.select(mdad.load(run / "out"), "adaptive-1d", 15, seed=0)
    found = test.harness_commands([test.first_item()])
    assert option(found.commands[0], "--include_path") == (run / "loop").as_posix()
    assert not any("not found from here" in note for note in found.notes)
    monkeypatch.chdir(run)
    assert option(test.harness_commands([test.first_item()]).commands[0], "--include_path") == "loop"
    shutil.rmtree(run / "loop")  # nowhere to be found: as logged, and said so
    found = test.harness_commands([test.first_item()])
    assert option(found.commands[0], "--include_path") == "loop"
    assert any("include path" in note and "not found from here" in note for note in found.notes)


def test_inspect_task_arguments_are_passed_as_the_source_runs_passed_them():
    spec = {"task_args_passed": {"level": 3, "subject": "number theory", "ignored": [1, 2]}}
    assert logged_setup.inspect_task_args(spec) == "-T level=3 -T 'subject=number theory'"
    assert shlex.split(logged_setup.inspect_task_args(spec)) == ["-T", "level=3", "-T", "subject=number theory"]
    assert logged_setup.inspect_task_args({}) == ""


def test_estimate_finds_the_inspect_task_file_beside_the_micro_benchmark(tmp_path, monkeypatch):
    project = tmp_path / "project"  # the task file and micro.json; the new logs elsewhere
    project.mkdir()
    shutil.copy(FIXTURES / "tasks" / "tasks.py", project / "tasks.py")
    (tmp_path / "new").mkdir()
    first = sorted((FIXTURES / "inspect_loop" / "new").glob("*.eval"))[0]
    shutil.copy(first, tmp_path / "new" / first.name)
    test = mdad.select(mdad.load(FIXTURES / "inspect_loop" / "sources"), "adaptive-1d", 15, seed=0)
    test.save(project / "micro.json")
    monkeypatch.chdir(tmp_path / "new")
    shown = CliRunner().invoke(app, ["estimate", str(project / "micro.json"), "."])
    assert shown.exit_code == 0, shown.output
    (printed,) = [line.strip() for line in shown.output.splitlines() if line.strip().startswith("inspect eval")]
    assert option(printed, "eval").startswith(f"{(project / 'tasks.py').as_posix()}@")
    assert option(printed, "--log-dir") == "."


# ---- the command writer is the reader's capability -------------------------------------------------


def _compared_names(tree: ast.AST) -> list[str]:
    """String constants compared with == / != / in anywhere in ``tree`` (tuples and sets of them too)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                parts = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                found += [p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)]
    return found


def test_no_module_branches_on_a_harness_name():
    harnesses = set(READERS.names())
    source = Path(mdad.__file__).parent
    branching = {
        str(path.relative_to(source)): sorted(set(_compared_names(ast.parse(path.read_text(encoding="utf-8")))) & harnesses)
        for path in source.rglob("*.py")
    }
    assert {path: names for path, names in branching.items() if names} == {}


def test_each_reader_records_its_own_name_and_brings_its_command_writer():
    for fixture, writes in (("lm_eval", True), ("inspect", True), ("lighteval", False)):
        tasks = read_source(FIXTURES / fixture).tasks
        (name,) = {spec["harness"] for spec in tasks.values()}
        assert READERS.get(name).name == name
        writer = command_writer(tasks, list(tasks))
        assert (writer is READERS.get(name).commands) and ((writer is not None) == writes)


class _ToyCommands(CommandWriter):
    harness = "toy"

    def commands(self, by_task, tasks, *, output="NEW", samples_file=None, near=(), model=None) -> HarnessCommands:
        return HarnessCommands([f"toy {task} {','.join(ids)} -> {output}" + (f" as {model[0]}" if model else "") for task, ids in by_task.items()])


def test_a_reader_of_another_harness_is_asked_for_its_own_commands():
    reader = Reader("toy-harness", lambda path: False, lambda path, options: None, commands=_ToyCommands())  # type: ignore[arg-type,return-value]
    READERS.add(reader)
    try:
        matrix = ResponseMatrix(
            scores=np.eye(4)[:, :4].repeat(2, axis=1),
            models=["a", "b", "c", "d"],
            items=[f"t/{j}" for j in range(8)],
            subtasks=["t"] * 8,
            tasks={"t": {"harness": "toy-harness"}},
        )
        chosen = mdad.select(matrix, "random", 3, seed=0)
        ((command,), notes) = (found := chosen.harness_commands(output="out")).commands, found.notes
        assert command == f"toy t {','.join(item.partition('/')[2] for item in chosen.item_ids)} -> out" and notes == []
    finally:
        READERS.remove("toy-harness")


# ---- select: the command by default, every check before any work ---------------------------------


def test_select_on_lm_eval_logs_writes_the_samples_file_beside_out_and_prints_the_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shown = CliRunner().invoke(
        app,
        [
            "select",
            "--data",
            str(FIXTURES / "lm_eval_loop" / "sources"),
            "--method",
            "random",
            "--size",
            "5",
            "--out",
            "m.json",
            "--assess-runs",
            "0",
        ],
    )
    assert shown.exit_code == 0, shown.output
    chosen = mdad.SelectedMicroBenchmark.load(tmp_path / "m.json")
    samples = json.loads((tmp_path / "m.samples.json").read_text())
    assert sorted(f"{task}/{doc}" for task, docs in samples.items() for doc in docs) == sorted(chosen.item_ids)
    (printed,) = [line.strip() for line in shown.output.splitlines() if line.strip().startswith("lm-eval run")]
    assert option(printed, "--samples") == "m.samples.json" and option(printed, "--model") == "dummy"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "m.samples.json"]  # no temporary or lock file left


def test_a_samples_file_for_lighteval_details_is_refused_before_any_work_and_leaves_no_file(tmp_path, monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("the selection ran before the options were checked")

    monkeypatch.setattr("mdad.micro.selection.select", no_work)
    monkeypatch.setattr("mdad.micro.selection.assess", no_work)
    out, samples = tmp_path / "m.json", tmp_path / "s.json"
    shown = CliRunner().invoke(
        app,
        ["select", "--data", str(FIXTURES / "lighteval"), "--method", "random", "--size", "3", "--out", str(out), "--lm-eval-samples", str(samples)],
    )
    assert shown.exit_code == 2, shown.output
    assert "samples file can only be written for the logs of a harness that reads one (lm-eval)" in " ".join(shown.output.split())
    assert "Traceback" not in shown.output and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--size", "500"], "Size 500 is larger than the pool of 24 seen items"),
        (["--size", "5", "--audit-items", "1"], "--audit-items must be between 2 and the 19 pool items"),
        (["--size", "5", "--audit-items", "20"], "--audit-items must be between 2 and the 19 pool items"),
    ],
)
def test_a_request_select_cannot_meet_is_refused_before_the_held_out_runs(tmp_path, monkeypatch, extra, said):
    def no_work(*args, **kwargs):
        raise AssertionError("the held-out runs started before the request was checked")

    monkeypatch.setattr("mdad.micro.selection.assess", no_work)
    data = str(FIXTURES / "lm_eval_loop" / "sources")
    shown = CliRunner().invoke(app, ["select", "--data", data, "--method", "random", "--out", str(tmp_path / "m.json"), "--assess-runs", "2", *extra])
    assert shown.exit_code == 2 and said in " ".join(shown.output.split()), shown.output
    assert list(tmp_path.iterdir()) == []


def test_select_on_lighteval_details_prints_no_command_and_writes_no_samples_file(tmp_path):
    out = tmp_path / "m.json"
    shown = CliRunner().invoke(
        app, ["select", "--data", str(FIXTURES / "lighteval"), "--method", "random", "--size", "3", "--out", str(out), "--assess-runs", "0"]
    )
    assert shown.exit_code == 0, shown.output
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"] and not any(note.command for note in [])
    assert "lm-eval run" not in shown.output and "inspect eval" not in shown.output


# ---- adaptive tests: one command per model, its own run filled in ---------------------------------


def _first_answers(sources: Path, new: Path, item: str, models: list[str]) -> None:
    """Each source model's logs as if it had answered ``item`` only (lm-eval's own files, trimmed)."""
    task, _, doc = item.partition("/")
    for name in models:
        (new / name).mkdir(parents=True)
        for file in (sources / name).iterdir():
            if file.name.startswith("results_"):
                shutil.copy(file, new / name / file.name)
            elif file.name.startswith(f"samples_{task}_"):
                lines = [line for line in file.read_text().splitlines() if json.loads(line)["doc_id"] == int(doc)]
                (new / name / file.name).write_text("\n".join(lines) + "\n")


def test_each_model_of_an_adaptive_test_gets_its_own_next_command_with_its_logged_run(tmp_path):
    sources = FIXTURES / "lm_eval_loop" / "sources"
    test = mdad.select(mdad.load(sources), "adaptive-1d", 15, seed=0)
    test.save(tmp_path / "micro.json")
    _first_answers(sources, tmp_path / "new", test.first_item(), ["src-1", "src-2"])
    shown = CliRunner().invoke(app, ["estimate", str(tmp_path / "micro.json"), str(tmp_path / "new")])
    assert shown.exit_code == 0, shown.output
    details = test.details(read_source(tmp_path / "new"))
    printed = [line.strip() for line in shown.output.splitlines() if line.strip().startswith("lm-eval run")]
    assert len(printed) == 2  # one per model, even where both are asked the same item
    for model, command in zip(["src-1", "src-2"], printed, strict=True):
        task, _, doc = details.loc[model, "next_item"].partition("/")
        assert option(command, "--model") == "dummy" and option(command, "--model_args") == f"pretrained={model}"
        assert json.loads(option(command, "--samples")) == {task: [int(doc)]}
        assert f"The next item of {model}, {details.loc[model, 'next_item']}" in " ".join(shown.output.split())
    assert "YOUR_MODEL" not in shown.output
    # the command as printed adds to the same model: its answers so far and the next one are read as one model
    assert read_source(tmp_path / "new").model_runs["src-1"] == ("src-1", (("model", "dummy"), ("pretrained", "src-1")))


def test_an_inspect_model_is_asked_by_its_own_name_and_model_arguments():
    writer = READERS.get("inspect").commands
    run = ("openai/gpt-x", (("base_url", "http://localhost:8000/v1"), ("temperature", "0.5")))
    (command,) = writer.commands({"qa": ["3"]}, {}, output="logs", model=run).commands
    assert words(command) == [
        "inspect", "eval", "qa", "--model", "openai/gpt-x", "--model-base-url", "http://localhost:8000/v1",
        "-M", "temperature=0.5", "--sample-id", "3", "--log-dir", "logs",
    ]  # fmt: skip
    found = writer.commands({"qa": ["3"]}, {}, output="logs")
    assert option(found.commands[0], "--model") == "YOUR_MODEL" and "Replace YOUR_MODEL" in found.notes[0]
