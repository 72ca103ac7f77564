"""Harness commands for a micro-benchmark: asked of the reader that read its subtasks.

Writing a harness's commands is a capability of its reader (``Reader.commands``,
mdad.data.readers.commands): the lm-eval reader writes ``lm-eval run --samples`` commands and their
samples file, the inspect reader ``inspect eval --sample-id`` commands, and a reader without one
(lighteval, score tables) gives none. ``ResponseMatrix.tasks`` records which reader read each
subtask; here the items become the per-task sample ids and that reader's writer is asked for the
commands (docs/own-results.md, "Running new models on the items").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from mdad.data.readers import READERS, readers
from mdad.data.readers.commands import CommandWriter, HarnessCommands, ModelRun, items_by_task
from mdad.errors import MdadError

__all__ = ["CommandWriter", "HarnessCommands", "command_writer", "commands", "items_by_task", "writers"]


def command_writer(tasks: dict, subtasks: Iterable[str]) -> CommandWriter | None:
    """The command writer of the reader that read every one of ``subtasks`` (``tasks``: ``ResponseMatrix.tasks``),
    or None when they were not all read by one reader, or by one that writes no commands."""
    found = {str(tasks.get(subtask, {}).get("harness", "")) for subtask in subtasks}
    if len(found) != 1:
        return None
    (name,) = found
    return READERS.get(name).commands if name and name in READERS else None


def writers(*, samples_file: bool = False) -> str:
    """The readers that write harness commands (``samples_file``: those whose commands read a samples file), in words."""
    return ", ".join(r.name for r in readers() if r.commands is not None and (r.commands.samples_file is not None or not samples_file))


def commands(
    item_ids: Sequence[str] | np.ndarray,
    subtasks: Sequence[str] | np.ndarray,
    tasks: dict,
    *,
    output: str = "NEW",
    samples_file: str | None = None,
    near: Iterable[str | Path] = (),
    model: ModelRun | None = None,
) -> HarnessCommands:
    """The commands that run a model on ``item_ids`` only, writing its logs into ``output``, from the
    reader that read their ``subtasks`` (``CommandWriter.commands`` says what the other arguments do)."""
    writer = command_writer(tasks, list(subtasks))
    if writer is None:
        raise MdadError(f"Harness commands can only be written for a micro-benchmark built from the logs of one harness ({writers()}).")
    return writer.commands(items_by_task(item_ids, subtasks), tasks, output=output, samples_file=samples_file, near=near, model=model)
