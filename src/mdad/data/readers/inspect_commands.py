"""The inspect reader's harness commands: ``inspect eval FILE@TASK --sample-id ...``.

The items go to inspect as ``--sample-id`` (one command per task); the task file is printed as
found from the current folder (the logs record it relative to the folder inspect ran in) and the
task's ``-T`` arguments as the source runs passed them (mdad.data.readers.logged_setup). A model
that already answered some items gets its own model name and ``-M`` arguments.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mdad.data.readers import logged_setup
from mdad.data.readers.commands import CommandWriter, HarnessCommands, ModelRun

BASE_URL_KEY = "base_url"  # the key of eval.model_base_url among a run's logged arguments (inspect_logs.read_inspect)


def _model_options(model: ModelRun | None) -> list[str]:
    """``--model`` (and the model's own ``-M`` arguments and base URL when it is known), else the placeholder."""
    if model is None:
        return [f"--model {logged_setup.MODEL_PLACEHOLDER}"]
    name, args = model
    options = [f"--model {shlex.quote(name)}"]
    for key, value in args:
        if key == BASE_URL_KEY:
            options += [f"--model-base-url {shlex.quote(value)}"] if value else []
        else:
            options.append(f"-M {shlex.quote(f'{key}={value}')}")
    return options


@dataclass(frozen=True)
class InspectCommands(CommandWriter):
    """``inspect eval --sample-id`` commands, one per task."""

    harness: str = "inspect"
    samples_file: str | None = None

    def commands(
        self,
        by_task: dict[str, list[str]],
        tasks: dict,
        *,
        output: str = "NEW",
        samples_file: str | None = None,
        near: Iterable[str | Path] = (),
        model: ModelRun | None = None,
    ) -> HarnessCommands:
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
                *_model_options(model),
                *([spec["task_args"]] if spec.get("task_args") else []),
                f"--sample-id {shlex.quote(','.join(sorted(ids, key=order)))}",
                f"--log-dir {shlex.quote(output)}",
            ]
            found.commands.append(" ".join(parts))
        if found.commands and model is None:
            fill = f"Replace {logged_setup.MODEL_PLACEHOLDER} with the new model (provider/model), the same for every item of one model."
            found.notes.insert(0, fill)
        return found
