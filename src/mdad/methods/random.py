"""The three random designs: uniform, subtask-stratified equal, subtask-stratified proportional.

None looks at the source models; each estimate is the plain mean of the target's scores
on the chosen items.
"""

from __future__ import annotations

import numpy as np

from mdad.errors import MdadError
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView, plain_mean


@METHODS.register(order=10)
class Random(SelectionMethod):
    name = "random"
    description = "k seen items uniformly at random without replacement; plain mean."
    design = "uniform"
    interval = "exact"

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared) -> MicroBenchmark:
        return plain_mean(np.sort(rng.choice(view.n_items, size=k, replace=False)))


def equal_allocation(sizes: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """floor(k/m) items per subtask, the remainder one each to randomly chosen subtasks.

    When a subtask has fewer items than its share, it gives all of them and the others
    are filled evenly instead (water-filling): every subtask gets min(size, L) items for
    the largest level L that fits in k, and the rest go one each to random subtasks
    that still have room.
    """
    alloc, with_room = equal_allocation_base(sizes, k)
    alloc[rng.choice(with_room, size=k - int(alloc.sum()), replace=False)] += 1
    return alloc


def equal_allocation_base(sizes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed part of the equal allocation, min(size, L) per subtask, and the subtasks with room.

    ``k - base.sum()`` of the subtasks with room (fewer than their number) get one more item each.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if k > sizes.sum():
        raise MdadError(f"Size {k} is larger than the pool of {int(sizes.sum())} items.")
    levels = np.arange(int(sizes.max()) + 1)
    filled = np.minimum(sizes[None, :], levels[:, None]).sum(axis=1)
    level = int(levels[filled <= k].max())
    return np.minimum(sizes, level), np.flatnonzero(sizes > level)


@METHODS.register(order=11)
class RandomStratifiedEqual(SelectionMethod):
    name = "random-stratified-equal"
    description = "An equal number of random items from every subtask; plain mean."
    design = "stratified"
    allocation = "equal"
    interval = "exact"

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared) -> MicroBenchmark:
        members = [np.flatnonzero(view.subtasks == s) for s in range(view.n_subtasks)]
        alloc = equal_allocation(np.array([len(m) for m in members]), k, rng)
        chosen = [rng.choice(m, size=n, replace=False) for m, n in zip(members, alloc, strict=True) if n]
        return plain_mean(np.sort(np.concatenate(chosen)))


@METHODS.register(order=12)
class RandomStratifiedProportional(SelectionMethod):
    name = "random-stratified-proportional"
    description = "k items drawn with probability proportional to 1/(size of their subtask); plain mean."
    design = "stratified"
    allocation = "proportional"
    interval = "exact"

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared) -> MicroBenchmark:
        counts = np.bincount(view.subtasks)
        p = 1.0 / counts[view.subtasks]
        return plain_mean(np.sort(rng.choice(view.n_items, size=k, replace=False, p=p / p.sum())))
