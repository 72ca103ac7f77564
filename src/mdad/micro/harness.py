"""Harness sample lists of a micro-benchmark: which samples a new model must answer, per harness task.

Each harness's own format lives beside its reader (mdad.data.readers.lm_eval,
mdad.data.readers.inspect_logs); here the micro-benchmark's items become the per-task sample ids
those writers take.
"""

from __future__ import annotations

import numpy as np

from mdad.data.readers import inspect_logs, lm_eval
from mdad.errors import MdadError


def items_by_task(item_ids: np.ndarray, subtasks: np.ndarray) -> dict[str, list[str]]:
    """The sample ids per harness task: ``<task>/<id>`` item ids whose task is the item's subtask, as
    mdad's lm-eval and inspect readers name them (lm-eval: the document index; inspect: the sample id)."""
    by_task: dict[str, list[str]] = {}
    for item, subtask in zip(item_ids.tolist(), subtasks.tolist(), strict=True):
        task, _, sample = item.rpartition("/")
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


def inspect_commands(item_ids: np.ndarray, subtasks: np.ndarray, tasks: dict, log_dir: str = "NEW") -> list[str]:
    """One ``inspect eval FILE@TASK`` command per task that runs a new model on the items only
    (``tasks``: what identifies each subtask's task, its ``task_file`` among it)."""
    task_files = {task: spec["task_file"] for task, spec in tasks.items() if spec.get("task_file")}
    return inspect_logs.sample_id_commands(items_by_task(item_ids, subtasks), task_files, log_dir)
