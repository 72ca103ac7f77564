"""The three random designs: uniform, subtask-stratified equal, subtask-stratified proportional.

None looks at the source models; each estimate is the plain mean of the target's scores
on the chosen items.
"""

from __future__ import annotations

import numpy as np

from mdad.errors import MdadError
from mdad.methods.base import MicroBenchmark, SelectionMethod, SourceView, plain_mean


class Random(SelectionMethod):
    name = "random"
    description = "k seen items uniformly at random without replacement; plain mean."

    def select(self, view: SourceView, k: int, rng: np.random.Generator, prepared=None) -> MicroBenchmark:
        return plain_mean(np.sort(rng.choice(view.n_items, size=k, replace=False)))


def equal_allocation(sizes: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """floor(k/m) items per subtask, the remainder one each to randomly chosen subtasks.

    A subtask smaller than its share gives all its items and its deficit is spread the
    same way over the subtasks that still have room.
    """
    if k > sizes.sum():
        raise MdadError(f"Size {k} is larger than the pool of {int(sizes.sum())} items.")
    alloc = np.zeros(len(sizes), dtype=np.int64)
    remaining = k
    while remaining:
        room = np.flatnonzero(alloc < sizes)
        share, extra = divmod(remaining, len(room))
        add = np.full(len(room), share)
        add[rng.choice(len(room), size=extra, replace=False)] += 1
        add = np.minimum(add, sizes[room] - alloc[room])
        alloc[room] += add
        remaining -= int(add.sum())
    return alloc


class RandomStratifiedEqual(SelectionMethod):
    name = "random-stratified-equal"
    description = "An equal number of random items from every subtask; plain mean."

    def select(self, view: SourceView, k: int, rng: np.random.Generator, prepared=None) -> MicroBenchmark:
        members = [np.flatnonzero(view.subtasks == s) for s in range(view.n_subtasks)]
        alloc = equal_allocation(np.array([len(m) for m in members]), k, rng)
        chosen = [rng.choice(m, size=n, replace=False) for m, n in zip(members, alloc) if n]
        return plain_mean(np.sort(np.concatenate(chosen)))


class RandomStratifiedProportional(SelectionMethod):
    name = "random-stratified-proportional"
    description = "k items drawn with probability proportional to 1/(size of their subtask); plain mean."

    def select(self, view: SourceView, k: int, rng: np.random.Generator, prepared=None) -> MicroBenchmark:
        counts = np.bincount(view.subtasks)
        p = 1.0 / counts[view.subtasks]
        return plain_mean(np.sort(rng.choice(view.n_items, size=k, replace=False, p=p / p.sum())))
