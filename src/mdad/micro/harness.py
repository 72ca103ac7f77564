"""Harness commands for a micro-benchmark: which samples a new model must answer, per harness task,
and the lm-eval or inspect command that runs it on them, as the source logs recorded their runs.

Each harness's own format lives beside its reader (mdad.data.readers.lm_eval,
mdad.data.readers.inspect_logs), what its logs recorded about the runs in
mdad.data.readers.logged_setup; here the items become the per-task sample ids those harnesses take
and the commands that ask for them (docs/own-results.md, "Running new models on the items").
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mdad.data.readers import lm_eval, logged_setup
from mdad.errors import MdadError

MODEL_TYPE_PLACEHOLDER = "YOUR_MODEL_TYPE"


@dataclass(frozen=True)
class HarnessCommands:
    """The commands that run a new model on some items (each to be copied whole) and notes on what
    in them the logs could not tell (placeholders to fill in, a task file not found from here)."""

    commands: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def items_by_task(item_ids: Sequence[str] | np.ndarray, subtasks: Sequence[str] | np.ndarray) -> dict[str, list[str]]:
    """The sample ids per harness task: ``<task>/<id>`` item ids whose task is the item's subtask, as
    mdad's lm-eval and inspect readers name them (lm-eval: the document index; inspect: the sample id)."""
    by_task: dict[str, list[str]] = {}
    for item, subtask in zip(list(item_ids), list(subtasks), strict=True):
        task, _, sample = str(item).rpartition("/")
        if task != subtask or not sample:
            raise MdadError(
                f"Item {item!r} (subtask {subtask!r}) is not a '<task>/<id>' id; harness sample lists can only "
                "be written for a micro-benchmark built from lm-eval or inspect results."
            )
        by_task.setdefault(task, []).append(sample)
    return by_task


def lm_eval_samples(item_ids: np.ndarray, subtasks: np.ndarray) -> dict[str, list[int]]:
    """The items as lm-evaluation-harness ``--samples`` wants them: task name -> document indices."""
    return lm_eval.samples_list(items_by_task(item_ids, subtasks))


def harness_of(tasks: dict, subtasks: Iterable[str]) -> str:
    """The harness every subtask was read from ("lm-eval", "inspect"), or "" when they were not all of one."""
    found = {str(tasks.get(subtask, {}).get("harness", "")) for subtask in subtasks}
    return found.pop() if len(found) == 1 else ""


def commands(
    item_ids: Sequence[str] | np.ndarray,
    subtasks: Sequence[str] | np.ndarray,
    tasks: dict,
    *,
    output: str = "NEW",
    samples_file: str | None = None,
    near: Iterable[str | Path] = (),
) -> HarnessCommands:
    """The commands that run a new model on ``item_ids`` only, writing its logs into ``output``.

    ``tasks``: what the source logs recorded of each subtask's task (``ResponseMatrix.tasks``);
    ``samples_file``: an lm-eval ``--samples`` file holding these items (else the list is written
    into the command); ``near``: paths around which to look for an inspect task file."""
    harness = harness_of(tasks, subtasks)
    if harness == "lm-eval":
        return lm_eval_commands(lm_eval.samples_list(items_by_task(item_ids, subtasks)), tasks, output, samples_file, near)
    if harness == "inspect":
        return inspect_commands(items_by_task(item_ids, subtasks), tasks, output, near)
    raise MdadError("Harness commands can only be written for a micro-benchmark built from lm-eval or inspect logs alone.")


def lm_eval_commands(
    samples: dict[str, list[int]], tasks: dict, output: str, samples_file: str | None = None, near: Iterable[str | Path] = ()
) -> HarnessCommands:
    """One ``lm-eval run`` command per set of tasks that the source runs ran alike (model type, model
    arguments, include path, n-shot), the include path as found from the current folder (the logs
    record it as it was given, often relative to the folder lm-eval ran in)."""
    near = list(near)
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for task in samples:
        spec = tasks.get(task, {})
        key = (spec.get("lm_eval_model", ""), spec.get("model_args", ""), spec.get("include_path", ""), spec.get("n_shot", ""))
        groups.setdefault(key, []).append(task)
    found = HarnessCommands()
    for (model, args, include, n_shot), names in groups.items():
        if include:
            found_path = logged_setup.find_logged_path(include, near, folder=True)
            if found_path is None:
                found.notes.append(
                    f"The logs record the include path of {', '.join(names)} as {include!r}, as it was given to lm-eval, "
                    "and it is not found from here: run the command from the folder lm-eval ran in."
                )
            include = found_path or include
        listed = samples_file if samples_file and len(groups) == 1 else json.dumps({task: samples[task] for task in names})
        parts = [
            "lm-eval run",
            f"--model {shlex.quote(model or MODEL_TYPE_PLACEHOLDER)}",
            f"--model_args {shlex.quote(args or 'pretrained=' + logged_setup.MODEL_PLACEHOLDER)}",
            f"--tasks {shlex.quote(','.join(names))}",
            *([f"--include_path {shlex.quote(include)}"] if include else []),
            *([f"--num_fewshot {n_shot}"] if n_shot else []),
            f"--samples {shlex.quote(listed)}",
            "--log_samples",
            f"--output_path {shlex.quote(output)}",
        ]
        found.commands.append(" ".join(parts))
    holders = sorted({word for command in found.commands for word in _placeholders(command)})
    if holders:
        found.notes.append(
            f"Replace {', '.join(holders)} with the new model's own; keep every other option as the source runs "
            "logged it, and the same model arguments for every item of one model."
        )
    return found


def inspect_commands(by_task: dict[str, list[str]], tasks: dict, output: str, near: Iterable[str | Path] = ()) -> HarnessCommands:
    """One ``inspect eval FILE@TASK --sample-id ...`` command per task, with its task file as found from
    the current folder (the logs record it relative to the folder inspect ran in)."""

    def order(sample: str) -> tuple:
        return (0, int(sample), "") if sample.isdigit() else (1, 0, sample)

    near = list(near)
    found = HarnessCommands()
    for task, ids in by_task.items():
        spec = tasks.get(task, {})
        target = task
        if spec.get("task_file"):
            path = logged_setup.find_logged_path(spec["task_file"], near)
            if path is None:
                found.notes.append(
                    f"The logs record the task file of {task!r} as {spec['task_file']!r}, relative to the folder inspect "
                    "ran in, and it is not found from here: run the command from that folder."
                )
            target = f"{path or spec['task_file']}@{task}"
        parts = [
            "inspect eval",
            shlex.quote(target),
            f"--model {logged_setup.MODEL_PLACEHOLDER}",
            *([spec["task_args"]] if spec.get("task_args") else []),
            f"--sample-id {shlex.quote(','.join(sorted(ids, key=order)))}",
            f"--log-dir {shlex.quote(output)}",
        ]
        found.commands.append(" ".join(parts))
    if found.commands:
        found.notes.insert(0, f"Replace {logged_setup.MODEL_PLACEHOLDER} with the new model (provider/model), the same for every item of one model.")
    return found


def output_folder(results: Path) -> str:
    """The folder a harness should write a model's next answers to, so that they are read with those in
    ``results``: the folder itself, the folder of a file, and for lm-eval's own per-model folder (holding
    results_<date>.json files) the folder above it, where lm-eval makes that folder again."""
    folder = results if results.is_dir() else results.parent
    if any(lm_eval.RESULTS_FILE.match(file.name) for file in folder.glob("results_*.json")):
        folder = folder.parent
    return str(folder)


def _placeholders(command: str) -> list[str]:
    return [word for word in command.replace("=", " ").replace(",", " ").split() if word.startswith("YOUR_")]
