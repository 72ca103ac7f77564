"""The lm-eval reader's harness commands: ``lm-eval run --samples`` and the samples file it reads.

The items go to lm-eval as ``--samples`` (task name -> document indices, a file or the JSON list
itself); the other options are those the source logs recorded (mdad.data.readers.logged_setup):
model type, the shape of the model arguments, include path, n-shot. A model that already answered
some items gets its own model type and arguments, so that its next answers are read as the same model.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mdad.data.readers import logged_setup
from mdad.data.readers.commands import CommandWriter, HarnessCommands, ModelRun
from mdad.errors import MdadError

MODEL_TYPE_PLACEHOLDER = "YOUR_MODEL_TYPE"
MODEL_TYPE_KEY = "model"  # the key of the model type among a run's logged arguments (lm_eval._Run.identity)


def samples_list(by_task: dict[str, list[str]]) -> dict[str, list[int]]:
    """Items as lm-evaluation-harness ``--samples`` wants them: task name -> document indices.

    ``by_task``: the sample part of each ``<task>/<doc_id>`` item id, per task. lm-eval logs the
    original indices back as doc_id, so a new model's results line up with the item ids."""
    samples = {}
    for task, docs in by_task.items():
        bad = [doc for doc in docs if not doc.isdigit()]
        if bad:
            raise MdadError(f"Item {task}/{bad[0]} is not an lm-evaluation-harness '<task>/<doc_id>' id (doc_id must be a document index).")
        samples[task] = sorted(int(doc) for doc in docs)
    return samples


@dataclass(frozen=True)
class LmEvalCommands(CommandWriter):
    """``lm-eval run`` commands; ``results_file``: lm-eval's results_<date>.json names (its per-model folders hold them)."""

    results_file: re.Pattern[str]
    harness: str = "lm-eval"
    samples_file: str | None = "the lm-eval samples file"

    def samples(self, by_task: dict[str, list[str]]) -> dict[str, list[int]]:
        return samples_list(by_task)

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
        """One ``lm-eval run`` command per set of tasks that the source runs ran alike (model type, model
        arguments, include path, n-shot), the include path as found from the current folder (the logs
        record it as it was given, often relative to the folder lm-eval ran in)."""
        samples = samples_list(by_task)
        near = list(near)
        groups: dict[tuple[str, str, str, str], list[str]] = {}
        for task in samples:
            spec = tasks.get(task, {})
            key = (spec.get("lm_eval_model", ""), spec.get("model_args", ""), spec.get("include_path", ""), spec.get("n_shot", ""))
            groups.setdefault(key, []).append(task)
        found = HarnessCommands()
        for (model_type, args, include, n_shot), names in groups.items():
            if model is None:
                args = args or f"pretrained={logged_setup.MODEL_PLACEHOLDER}"
            else:  # the model's own run, exactly: its answers so far and its next ones are one model
                logged = dict(model[1])
                model_type = logged.pop(MODEL_TYPE_KEY, "") or model_type
                args = ",".join(f"{key}={value}" for key, value in sorted(logged.items()))
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
                f"--model {shlex.quote(model_type or MODEL_TYPE_PLACEHOLDER)}",
                *([f"--model_args {shlex.quote(args)}"] if args else []),
                f"--tasks {shlex.quote(','.join(names))}",
                *([f"--include_path {shlex.quote(include)}"] if include else []),
                *([f"--num_fewshot {n_shot}"] if n_shot else []),
                f"--samples {shlex.quote(listed)}",
                "--log_samples",
                f"--output_path {shlex.quote(output)}",
            ]
            found.commands.append(" ".join(parts))
        holders = sorted({word for command in found.commands for word in logged_setup.placeholders(command)})
        if holders:
            found.notes.append(
                f"Replace {', '.join(holders)} with the new model's own; keep every other option as the source runs "
                "logged it, and the same model arguments for every item of one model."
            )
        return found

    def output_folder(self, results: Path) -> str:
        """The folder itself, the folder of a file, and for lm-eval's own per-model folder (holding
        results_<date>.json files) the folder above it, where lm-eval makes that folder again."""
        folder = results if results.is_dir() else results.parent
        if any(self.results_file.match(file.name) for file in folder.glob("results_*.json")):
            folder = folder.parent
        return str(folder)
