"""Per-run draws of target models, source models and seen/unseen items (docs/protocol.md#splits)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_TARGETS
from mdad.errors import MdadError
from mdad.memory import require_memory
from mdad.seeding import rng_for
from mdad.wording import plural

SPLIT_STREAM = "splits"
MIN_MODELS = 4  # 2 targets and 2 source models
TARGET_CHOICES = ("random", "top")
# Memory per held-out run and pair of its targets (estimate and accuracy differences, their signs and
# the bins of each pair): the growth of peak memory per run and pair on GPQA is 230 bytes for
# 'mdad select --assess-runs' and 207 for 'mdad run --runs' (benchmarks/audit_hostile.py
# --assess-memory, --run-memory), with a margin.
PAIR_BYTES = 256


@dataclass(frozen=True, eq=False)
class Splits:
    """The draws shared by every method: ``runs`` rows of targets, source order and seen items.

    ``source_pool[r]`` lists the non-target models of run r in random order; the S source
    models of a run are its first S, so smaller source sets are nested in larger ones.
    ``seen[r]`` / ``unseen[r]`` are sorted item indices (per subtask floor(n/2) seen).
    """

    targets: np.ndarray  # runs x T
    source_pool: np.ndarray  # runs x (models - T)
    seen: np.ndarray  # runs x n_seen
    unseen: np.ndarray  # runs x n_unseen
    seed: int
    group: str | None = None
    targets_from: str = "random"

    @property
    def n_runs(self) -> int:
        return self.targets.shape[0]

    @property
    def n_seen(self) -> int:
        return self.seen.shape[1]

    def sources(self, n_sources: int) -> np.ndarray:
        """The source models of every run (runs x n_sources)."""
        if n_sources > self.source_pool.shape[1]:
            raise MdadError(f"{n_sources} source models were asked for but only {self.source_pool.shape[1]} models are left besides the targets.")
        return self.source_pool[:, :n_sources]


def n_seen_items(matrix: ResponseMatrix) -> int:
    """Size of every run's seen pool: floor(n / 2) items of each subtask of n items; an error sentence
    when it is empty (every subtask holds a single item)."""
    per_subtask = np.bincount(matrix.subtask_codes)
    n_seen = int((per_subtask // 2).sum())
    if n_seen == 0:
        raise MdadError(
            f"No item can be seen by the selection: each subtask needs at least 2 items (half seen, half "
            f"held out), and all {plural(len(per_subtask), 'subtask')} of {matrix.source} hold one."
        )
    return n_seen


def require_runs_memory(runs: int, n_models: int, n_items: int, n_targets: int) -> None:
    """An error sentence, before any work, when ``runs`` held-out runs cannot fit in memory: the draws
    (runs x models and runs x items, built then stacked), one cell's frame (runs x targets) and the
    metrics' pairs of targets of every run (PAIR_BYTES each). One rule for 'mdad run --runs' and
    'mdad select --assess-runs'."""
    pairs = n_targets * (n_targets - 1) // 2
    per_run = 16 * (n_models + n_items) + 48 * n_targets + 400 + PAIR_BYTES * pairs
    require_memory(runs * per_run, f"{runs:,} held-out run{'' if runs == 1 else 's'} of {plural(n_targets, 'target')} ({pairs:,} pairs each)")


def make_splits(
    matrix: ResponseMatrix,
    runs: int,
    n_targets: int = DEFAULT_TARGETS,
    seed: int = 0,
    group: str | None = None,
    *,
    targets_from: str = "random",
) -> Splits:
    """Draw every run's targets (or take the named group), source order and seen/unseen halves.

    ``targets_from="top"`` makes the ``n_targets`` models of highest accuracy on all items the
    targets of every run (the rest are the sources): new models stronger than every source
    model, where estimates that lean on the sources must extrapolate."""
    if runs < 1:
        raise MdadError(f"The number of runs must be at least 1, got {runs}.")
    if targets_from not in TARGET_CHOICES:
        raise MdadError(f"Targets come from one of {', '.join(TARGET_CHOICES)}, got {targets_from!r}.")
    if group and targets_from != "random":
        raise MdadError("Targets come either from a named group or from the strongest models, not both.")
    n_seen_items(matrix)  # an empty seen pool is refused here, with the reason
    n_models = matrix.n_models
    fixed = matrix.group_index(group) if group else None
    if n_models < MIN_MODELS:
        raise MdadError(
            f"The data has only {plural(n_models, 'model')}; an experiment needs at least {MIN_MODELS} (2 target models and 2 source models)."
        )
    if fixed is None and not 2 <= n_targets <= n_models - 2:
        raise MdadError(
            f"{plural(n_targets, 'target model')} {'was' if n_targets == 1 else 'were'} asked for but the data has {plural(n_models, 'model')} "
            "(at least 2 targets and 2 source models are needed)."
        )
    if fixed is not None and len(fixed) > n_models - 2:
        raise MdadError(f"Group {group!r} holds {len(fixed)} of the {n_models} models; fewer than 2 source models would be left.")
    require_runs_memory(runs, n_models, matrix.n_items, n_targets)
    if targets_from == "top":
        accuracy = np.nanmean(matrix.scores, axis=1)
        fixed = np.sort(np.lexsort((np.arange(n_models), -accuracy))[:n_targets])  # ties: earlier model
    codes = matrix.subtask_codes
    members = [np.flatnonzero(codes == s) for s in range(len(matrix.subtask_names))]
    targets, pools, seen, unseen = [], [], [], []
    for run in range(runs):
        rng = rng_for(seed, SPLIT_STREAM, run)
        order = rng.permutation(n_models)
        run_targets = fixed if fixed is not None else np.sort(order[:n_targets])
        is_target = np.zeros(n_models, bool)
        is_target[run_targets] = True
        pools.append(order[~is_target[order]])
        targets.append(run_targets)
        halves = [rng.permutation(idx) for idx in members]
        seen.append(np.sort(np.concatenate([h[: len(h) // 2] for h in halves])))
        unseen.append(np.sort(np.concatenate([h[len(h) // 2 :] for h in halves])))
    return Splits(
        targets=np.array(targets),
        source_pool=np.array(pools),
        seen=np.array(seen),
        unseen=np.array(unseen),
        seed=seed,
        group=group,
        targets_from=targets_from,
    )
