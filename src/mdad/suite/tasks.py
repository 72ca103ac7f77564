"""One source holding several benchmarks' tasks (a folder of harness logs): which of its items and models belong to
each benchmark of a suite (docs/suites.md#one-folder-of-logs).

The rule, in one home for ``select --suite LOGS/`` and ``estimate SUITE.json LOGS/``: a benchmark's part of the
source is its items' columns, and a model that answered none of them there was not run on that benchmark, so it is
missing from it (never an error); a model that answered some but not all is kept, for the usual checks of one
benchmark to refuse or drop. Selecting from one source, each task is a benchmark named by the task, except that the
tasks of a group the harness logged (``ResponseMatrix.groups``: a leaderboard's MuSR and its three subtasks) make one
benchmark named by the group.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from mdad.data.matrix import ResponseMatrix
from mdad.errors import MdadError


def unanswered(matrix: ResponseMatrix, columns: np.ndarray | list[int]) -> np.ndarray:
    """Per model of ``matrix``: True when it answered none of the items in ``columns`` (it was not run on them)."""
    return np.isnan(matrix.scores[:, columns]).all(axis=1)


def benchmark_tasks(matrix: ResponseMatrix) -> dict[str, list[str]]:
    """Benchmark name -> its tasks, in the order the source first names them: one per group the harness logged (its
    tasks present here), one per task in no group."""
    present = list(dict.fromkeys(str(t) for t in matrix.subtasks))
    grouped: dict[str, list[str]] = {}
    taken: set[str] = set()
    for group, members in matrix.groups.items():
        tasks = [t for t in present if t in set(members) and t not in taken]
        if tasks:
            grouped[str(group)] = tasks
            taken.update(tasks)
    out: dict[str, list[str]] = {}
    for task in present:  # in the source's order, a group where its first task is
        owner = next((g for g, tasks in grouped.items() if task in tasks), None)
        if owner is None:
            out[task] = [task]
        elif owner not in out:
            out[owner] = grouped[owner]
    return out


def split_tasks(matrix: ResponseMatrix) -> dict[str, ResponseMatrix]:
    """The benchmarks of one source (``benchmark_tasks``), each without the models that answered none of its items;
    one sentence when the source holds a single benchmark."""
    mapping = benchmark_tasks(matrix)
    if len(mapping) < 2:
        only = ", ".join(mapping) or "none"
        raise MdadError(
            f"{matrix.source} holds the tasks of one benchmark ({only}); a suite from one source needs the logs of two or more tasks, "
            "or give each benchmark as NAME=PATH."
        )
    out = {}
    for name, tasks in mapping.items():
        columns = np.flatnonzero(np.isin(matrix.subtasks.astype(str), tasks))
        part = matrix.take(items=columns)
        part = part.take(models=~unanswered(part, np.arange(part.n_items)))
        groups = {name: matrix.groups[name]} if name in matrix.groups else {}
        out[name] = replace(part, groups=groups, source=f"{matrix.source} ({name})")
    return out
