"""Harness commands: how a reader of harness logs asks the harness to run a new model on chosen items.

A reader whose harness can run some items only declares a :class:`CommandWriter` as its
``Reader.commands``: the lm-eval reader writes ``lm-eval run --samples`` commands and the samples
file they read, the inspect reader ``inspect eval --sample-id`` commands. A reader without one
(lighteval, score tables) cannot be asked for commands, and mdad says so before any work. The
micro-benchmark code asks the reader that read its subtasks (``ResponseMatrix.tasks`` records its
name under "harness"), never a harness by name (docs/own-results.md, "Running new models on the items").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mdad.errors import MdadError

# How one model was run, as its logs recorded it (``ResponseMatrix.model_runs``): the name the logs
# give it and its model arguments as sorted (key, value) pairs.
ModelRun = tuple[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class HarnessCommands:
    """The commands that run a new model on some items (each to be copied whole) and notes on what
    in them the logs could not tell (placeholders to fill in, a task file not found from here)."""

    commands: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def items_by_task(item_ids: Sequence[str] | np.ndarray, subtasks: Sequence[str] | np.ndarray) -> dict[str, list[str]]:
    """The sample ids per harness task: ``<task>/<id>`` item ids whose task is the item's subtask, as
    the harness readers name them (lm-eval: the document index; inspect: the sample id)."""
    by_task: dict[str, list[str]] = {}
    for item, subtask in zip(list(item_ids), list(subtasks), strict=True):
        task, _, sample = str(item).rpartition("/")
        if task != subtask or not sample:
            raise MdadError(
                f"Item {item!r} (subtask {subtask!r}) is not a '<task>/<id>' id; harness commands can only "
                "be written for items read from the harness's own logs."
            )
        by_task.setdefault(task, []).append(sample)
    return by_task


class CommandWriter(ABC):
    """What a harness reader writes so that a new model answers chosen items only.

    ``harness`` names the harness in sentences; ``samples_file`` names the file of sample lists the
    commands read (written beside the micro-benchmark), or is None when the commands carry the ids."""

    harness: str = ""
    samples_file: str | None = None

    def samples(self, by_task: dict[str, list[str]]) -> object:
        """The content of the samples file (JSON) for the items ``by_task``; an error when ids cannot be written."""
        raise MdadError(f"{self.harness} takes the items on its command line; there is no samples file to write.")

    def check(self, by_task: dict[str, list[str]]) -> None:
        """An error sentence when some of the items ``by_task`` cannot be asked of the harness (before any work)."""
        if self.samples_file is not None:
            self.samples(by_task)

    @abstractmethod
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
        """The commands that run a model on the items ``by_task`` only, writing its logs into ``output``.

        ``tasks``: what the source logs recorded of each task (``ResponseMatrix.tasks``);
        ``samples_file``: a samples file holding these items (else they are written into the
        command); ``near``: paths around which to look for files the logs name relative to the
        folder the harness ran in; ``model``: the model to ask, as its own logs recorded its run
        (``ResponseMatrix.model_runs``), else placeholders for a new one."""

    def output_folder(self, results: Path) -> str:
        """The folder the harness should write a model's next answers to, so that they are read with those in ``results``."""
        return str(results if results.is_dir() else results.parent)
