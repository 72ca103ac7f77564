"""Selection per subtask: any method run separately within each subtask, estimates combined by subtask share.

The paper compares selecting over the combined benchmark (the default of every method)
with selecting within each subtask. The reference implementation treats every subtask
as a benchmark of its own (its own micro-benchmark of the same fraction of that
subtask's seen items) and pools the model pairs of all subtasks, each pair judged on its
subtask accuracy. mdad keeps the per-subtask micro-benchmarks but answers the
benchmark-level question, so both variants are measured on the same splits and the same
truths:

* the k items are split over the m subtasks in proportion to their share of the seen
  pool (largest remainders, at least one item per subtask, so k >= m is required);
* the wrapped method selects k_s items within subtask s, seeing only that subtask's
  seen items (``prepare`` also runs per subtask);
* a target's estimate is sum_s (n_s / n) * estimate_s, with n_s the subtask's seen items:
  exactly how the seen accuracy decomposes over subtasks.

The variant of method ``NAME`` is called ``NAME@per-subtask`` and is stored as its own cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mdad.errors import MdadError
from mdad.methods.base import MicroBenchmark, SelectionMethod, SourceView
from mdad.methods.names import SUFFIX, parse


def allocate(sizes: np.ndarray, k: int) -> np.ndarray:
    """k items over subtasks of ``sizes`` items, proportional to size (largest remainders), >= 1 each.

    Deterministic: ties go to the earlier subtask.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    m, total = len(sizes), int(sizes.sum())
    if k < m:
        raise MdadError(f"Selection per subtask needs at least one item per subtask: size {k} is below the {m} subtasks.")
    if k > total:
        raise MdadError(f"Size {k} is larger than the pool of {total} items.")
    quota = k * sizes / total
    alloc = np.clip(np.floor(quota).astype(np.int64), 1, sizes)
    while alloc.sum() < k:  # at most m steps: give one more to the largest shortfall with room
        gap = np.where(alloc < sizes, quota - alloc, -np.inf)
        alloc[int(np.argmax(gap))] += 1
    while alloc.sum() > k:  # only after the one-item floors: take back from the largest excess
        excess = np.where(alloc > 1, alloc - quota, -np.inf)
        alloc[int(np.argmax(excess))] -= 1
    return alloc


@dataclass(frozen=True)
class SubtaskMicroBenchmark(MicroBenchmark):
    """Per-subtask micro-benchmarks side by side; the estimate is their share-weighted sum.

    ``items`` lists the parts' items one part after the other; ``weights`` are the parts'
    weights times their share (the exact linear weights when every part is a weighted mean).
    """

    parts: tuple[MicroBenchmark, ...] = ()
    shares: np.ndarray = field(default_factory=lambda: np.ones(0))  # each part's share of the pool

    kind: ClassVar[str] = "per-subtask"

    def __post_init__(self) -> None:
        parts = tuple(self.parts)
        if parts and isinstance(parts[0], dict):  # rebuilt from saved parameters (see ``estimator_params``)
            bounds = np.cumsum([0, *(int(p["size"]) for p in parts)])
            parts = tuple(
                MicroBenchmark.from_params({k: v for k, v in p.items() if k != "size"}, self.items[a:b])
                for p, a, b in zip(parts, bounds[:-1], bounds[1:], strict=True)
            )
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "shares", np.asarray(self.shares, dtype=np.float64))

    def estimator_params(self) -> dict:
        """JSON-ready parameters: the shares and every part's own parameters with its size."""
        return {
            "kind": self.kind,
            "weights": np.asarray(self.weights).tolist(),
            "uses_gold_prob": self.uses_gold_prob,
            "shares": self.shares.tolist(),
            "parts": [{**p.estimator_params(), "size": p.size} for p in self.parts],
        }

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        bounds = np.cumsum([0, *(p.size for p in self.parts)])
        total = np.zeros(np.shape(scores)[0])
        for part, share, a, b in zip(self.parts, self.shares, bounds[:-1], bounds[1:], strict=True):
            total += share * part.estimate(scores[:, a:b], None if gold_prob is None else gold_prob[:, a:b])
        return total


def subtask_views(view: SourceView) -> list[tuple[np.ndarray, SourceView]]:
    """(pool positions, view restricted to them) for every subtask of the pool."""
    out = []
    for s in range(view.n_subtasks):
        idx = np.flatnonzero(view.subtasks == s)
        sub = SourceView(view.scores[:, idx], view.gold_prob[:, idx], np.zeros(len(idx), np.int32), view.has_option_probs)
        out.append((idx, sub))
    return out


class PerSubtask(SelectionMethod):
    """The per-subtask variant of a selection method (see the module docstring)."""

    def __init__(self, base: SelectionMethod):
        self.base = base
        self.name = str(parse(base.name).variant())
        self.description = f"{base.name} within each subtask, k split by subtask size; estimates weighted by subtask share."
        self.preparation = None if base.preparation is None else base.preparation + SUFFIX
        self.design = None if base.design is None else "stratified"  # uniform within each subtask
        self.scores = base.scores
        self.interval = "calibrated" if base.interval == "own" else base.interval  # the parts' own intervals are not combined
        self.bounded = base.bounded
        self.ability_estimate = base.ability_estimate
        self.fitted_estimate = base.fitted_estimate

    def described(self) -> str:
        """How messages name the variant: as its base method (and its plug-in), under the variant's name."""
        return self.base.described().replace(repr(self.base.name), repr(self.name), 1)

    def prepare(self, view: SourceView, rng: np.random.Generator) -> Any:
        return [self.base.prepare(sub, rng) for _, sub in subtask_views(view)]

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared) -> MicroBenchmark:
        views = subtask_views(view)
        sizes = np.array([len(idx) for idx, _ in views])
        alloc = allocate(sizes, k)
        parts = tuple(self.base.select(sub, int(k_s), rng, prep) for (_, sub), k_s, prep in zip(views, alloc, prepared, strict=True))
        shares = sizes / sizes.sum()
        items = np.concatenate([idx[p.items] for (idx, _), p in zip(views, parts, strict=True)])
        weights = np.concatenate([share * np.asarray(p.weights, float) for p, share in zip(parts, shares, strict=True)])
        return SubtaskMicroBenchmark(
            items=items,
            weights=weights,
            uses_gold_prob=any(p.uses_gold_prob for p in parts),
            parts=parts,
            shares=shares,
        )
