"""The experiment grid: every (method, size, sources) cell over shared runs, as independent tasks.

A task groups the pending cells that share size-independent work: the methods with one
``preparation`` key (or one method alone) at one number of source models, over all
runs and all its pending sizes. ``run_task`` is a pure function of its arguments, so
tasks can go to local processes or to a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, nullcontext
from dataclasses import KW_ONLY, dataclass, field
from typing import overload

import numpy as np
import pandas as pd

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix, fingerprint
from mdad.defaults import DEFAULT_SOURCES, DEFAULT_TARGETS, DEFAULT_THRESHOLD, EXPERIMENT_RUNS, EXPERIMENT_SIZES, check_threshold
from mdad.errors import MdadError
from mdad.experiment.evaluate import evaluate_frames
from mdad.experiment.executors import execute
from mdad.experiment.splits import Splits, make_splits, n_seen_items
from mdad.experiment.store import BLOCK_DTYPE, Cell, ResultStore
from mdad.methods.base import Outcome, SourceView, check_size
from mdad.methods.names import canonical, parse
from mdad.methods.per_subtask import allocate
from mdad.results_version import RESULTS_VERSION
from mdad.seeding import rng_for

RUNS_PER_TASK = 5  # runs per task: the unit of parallel work and of what an interrupted run keeps


def default_targets(n_models: int) -> int:
    """Target models per run when none are asked for: 50, or half the models when there are fewer than 100."""
    return min(DEFAULT_TARGETS, n_models // 2)


def default_sources(free: int) -> int:
    """Source models per run when none are asked for: 300, or every model besides the targets if fewer."""
    return min(DEFAULT_SOURCES, free)


def default_sizes(n_seen: int) -> tuple[int, ...]:
    """The paper's sizes that fit in the seen pool (the whole pool when none does)."""
    return tuple(k for k in EXPERIMENT_SIZES if k <= n_seen) or (n_seen,)


@overload
def one_or_many(value: str | Sequence[str]) -> tuple[str, ...]: ...
@overload
def one_or_many(value: int | np.integer | Sequence[int]) -> tuple[int, ...]: ...
def one_or_many(value):
    """A tuple of the values: one value alone (a name or a number) or any sequence of them."""
    return (value,) if isinstance(value, (str, int, np.integer)) else tuple(value)


@dataclass(frozen=True, kw_only=True)
class ExperimentConfig:
    """What to run. ``sources`` may list several numbers of source models (a sweep).

    Use :meth:`for_matrix` to fill the defaults that depend on the data (targets, sources, sizes).

    Parameters
    ----------
    methods : tuple of str
        Selection methods by name (``mdad.methods.available()``; ``NAME@per-subtask`` too).
    sizes : tuple of int
        Numbers of items of the micro-benchmarks.
    sources : tuple of int
        Numbers of source models.
    runs, targets : int
        Random runs per cell and target models per run (ignored with ``group``).
    group : str, optional
        A named group of models (groups.json beside the data) as the targets of every run.
    targets_from : str
        "random" (a fresh random draw of targets per run) or "top" (the ``targets`` models of
        highest accuracy on all items are the targets of every run; docs/adaptive.md).
    seed : int
        The one seed behind every random draw.
    """

    methods: tuple[str, ...]
    sizes: tuple[int, ...]
    sources: tuple[int, ...] = (DEFAULT_SOURCES,)
    runs: int = EXPERIMENT_RUNS
    targets: int = DEFAULT_TARGETS
    group: str | None = None
    seed: int = 0
    targets_from: str = "random"

    def __post_init__(self) -> None:
        # one method, size or number of sources may be given alone, and any sequence of them
        for name in ("methods", "sizes", "sources"):
            object.__setattr__(self, name, one_or_many(getattr(self, name)))
        for name in self.methods:
            method_registry.get(name)
        object.__setattr__(self, "methods", tuple(dict.fromkeys(canonical(name) for name in self.methods)))  # one spelling, once
        if not self.methods or not self.sizes or not self.sources:
            raise MdadError("At least one method, one size and one number of source models are needed.")

    @classmethod
    def for_matrix(
        cls,
        matrix: ResponseMatrix,
        *,
        methods: Sequence[str] | str | None = None,
        sizes: Sequence[int] | int | None = None,
        sources: Sequence[int] | int | None = None,
        runs: int = EXPERIMENT_RUNS,
        targets: int | None = None,
        group: str | None = None,
        seed: int = 0,
        targets_from: str = "random",
    ) -> ExperimentConfig:
        """The configuration for ``matrix`` with the data-dependent defaults filled in.

        Defaults: every method but the adaptive family (``mdad.methods.defaults()``); targets :func:`default_targets`;
        sources :func:`default_sources` of the models left besides the targets; sizes :func:`default_sizes` of the seen pool.

        Examples
        --------
        >>> import mdad
        >>> config = ExperimentConfig.for_matrix(mdad.simulate(seed=0, n_models=40, n_items=100), methods="random")
        >>> config.targets, config.sources, config.sizes
        (20, (20,), (10, 25))
        """
        n_targets = default_targets(matrix.n_models) if targets is None else targets
        probe = make_splits(matrix, 1, n_targets, seed, group, targets_from=targets_from)
        return cls(
            methods=tuple(method_registry.defaults()) if methods is None else one_or_many(methods),
            sizes=tuple(default_sizes(n_seen_items(matrix))) if sizes is None else one_or_many(sizes),
            sources=(default_sources(probe.source_pool.shape[1]),) if sources is None else one_or_many(sources),
            runs=runs,
            targets=int(probe.targets.shape[1]),
            group=group,
            seed=seed,
            targets_from=targets_from,
        )


@dataclass(frozen=True)
class Task:
    """Pending cells that share their per-run preparation, over the runs ``first_run`` to ``stop_run`` - 1."""

    methods: tuple[str, ...]
    sources: int
    sizes: tuple[int, ...]
    first_run: int = 0
    stop_run: int | None = None

    @property
    def cells(self) -> list[Cell]:
        """The (method, size) cells of this task, at its number of sources."""
        return [Cell(m, k, self.sources) for m in self.methods for k in self.sizes]

    def runs(self, n_runs: int) -> range:
        return range(self.first_run, n_runs if self.stop_run is None else self.stop_run)


def plan_tasks(config: ExperimentConfig, done: Callable[[Cell], bool] = lambda cell: False, runs_per_task: int | None = None) -> list[Task]:
    """Group the cells that are not yet done into tasks, each over blocks of ``runs_per_task`` runs (default all)."""
    groups: dict[str, list[str]] = {}
    for name in config.methods:
        key = method_registry.get(name).preparation or f"method:{name}"
        groups.setdefault(key, []).append(name)
    block = runs_per_task or config.runs
    tasks = []
    for names in groups.values():
        for sources in config.sources:
            pending = tuple(k for k in config.sizes if not all(done(Cell(m, k, sources)) for m in names))
            if pending:
                tasks += [Task(tuple(names), sources, pending, start, min(start + block, config.runs)) for start in range(0, config.runs, block)]
    return tasks


def task_outcomes(matrix: ResponseMatrix, splits: Splits, task: Task) -> Iterator[tuple[int, dict[Cell, Outcome]]]:
    """(run, outcome of every cell of ``task``) for each of its runs in turn: what every method
    chose and estimated, each from its own generator keyed by (seed, method, size, run)."""
    scores = matrix.scores
    gold_prob = matrix.gold_prob()
    codes = matrix.subtask_codes
    sources_all = splits.sources(task.sources)
    chosen = {name: method_registry.get(name) for name in task.methods}
    for run in task.runs(splits.n_runs):
        pool, src, tgt = splits.seen[run], sources_all[run], splits.targets[run]
        view = SourceView.from_arrays(scores[np.ix_(src, pool)], gold_prob[np.ix_(src, pool)], codes[pool], matrix.has_option_probs)
        target_scores, target_probs = scores[tgt], gold_prob[tgt]
        prepared: dict[str, object] = {}
        outcomes: dict[Cell, Outcome] = {}
        for name, method in chosen.items():
            key = method.preparation or f"method:{name}"
            if key not in prepared:
                prepared[key] = method.prepare_checked(view, rng_for(splits.seed, "prepare", key, task.sources, run))

            def rng_of(k: int, name: str = name, run: int = run) -> np.random.Generator:
                return rng_for(splits.seed, "select", name, k, run)

            by_size = method.estimated(
                view,
                task.sizes,
                scores=target_scores[:, pool],
                gold_prob=target_probs[:, pool],
                rng_of=rng_of,
                prepared=prepared[key],
            )
            outcomes.update((Cell(name, k, task.sources), outcome) for k, outcome in by_size.items())
        yield run, outcomes


def run_task(
    matrix: ResponseMatrix,
    splits: Splits,
    task: Task,
    on_run: Callable[[], None] | None = None,
) -> dict[Cell, np.ndarray]:
    """Select and estimate every cell of ``task`` on its runs: per cell, task runs x targets records
    of ``BLOCK_DTYPE`` (the estimate, the guard's flag and the items answered)."""
    estimates: dict[Cell, list[np.ndarray]] = {cell: [] for cell in task.cells}
    for _, outcomes in task_outcomes(matrix, splits, task):
        for cell, outcome in outcomes.items():
            record = np.empty(len(outcome.estimates), BLOCK_DTYPE)
            record["estimate"] = outcome.estimates
            record["flagged"] = np.nan if outcome.flagged is None else outcome.flagged
            record["used"] = np.nan if outcome.used is None else outcome.used
            estimates[cell].append(record)
        if on_run is not None:
            on_run()
    return {cell: np.array(est, dtype=BLOCK_DTYPE) for cell, est in estimates.items()}


def _truths(matrix: ResponseMatrix, splits: Splits) -> dict[str, np.ndarray]:
    """Each run's targets' accuracy on the seen items, the unseen items and all items (runs x T)."""
    out: dict[str, list[np.ndarray]] = {"seen": [], "unseen": [], "full": []}
    for run in range(splits.n_runs):
        target_scores = matrix.scores[splits.targets[run]].astype(np.float64)
        out["seen"].append(target_scores[:, splits.seen[run]].mean(axis=1))
        out["unseen"].append(target_scores[:, splits.unseen[run]].mean(axis=1))
        out["full"].append(target_scores.mean(axis=1))
    return {key: np.array(value) for key, value in out.items()}


def _cell_frame(records: np.ndarray, truth: dict[str, np.ndarray], splits: Splits, matrix) -> pd.DataFrame:
    """One row per run and target; a ``flagged`` column when the method has an extrapolation guard, an
    ``items_used`` column when its tests stop early (docs/adaptive.md#stopping-rule-and-exposure-control)."""
    runs, n_targets = records.shape
    frame = pd.DataFrame(
        {
            "run": np.repeat(np.arange(runs, dtype=np.int32), n_targets),
            "model": pd.Categorical(matrix.models[splits.targets.ravel()]),
            "estimate": records["estimate"].ravel(),
            "seen": truth["seen"].ravel(),
            "unseen": truth["unseen"].ravel(),
            "full": truth["full"].ravel(),
        }
    )
    flagged = records["flagged"].ravel()
    if not np.isnan(flagged).all():
        frame["flagged"] = flagged == 1
    used = records["used"].ravel()
    if not np.isnan(used).all():
        frame["items_used"] = used.astype(np.int32)
    return frame


@dataclass(eq=False)
class ExperimentResult:
    """The cells of a finished experiment and their meta-evaluation.

    Attributes
    ----------
    frames : dict
        Per :class:`~mdad.experiment.store.Cell`, one row per run and target: the estimate and the
        target's true accuracy on the seen, unseen and all items.
    seed : int
        The experiment's seed (it also seeds the bootstrap intervals of MDAD).
    """

    frames: dict[Cell, pd.DataFrame]
    seed: int = 0
    _evaluated: dict[float, tuple[pd.DataFrame, pd.DataFrame]] = field(default_factory=dict, repr=False)

    def _evaluate(self, threshold: float) -> tuple[pd.DataFrame, pd.DataFrame]:
        threshold = check_threshold(threshold)
        if threshold not in self._evaluated:
            self._evaluated[threshold] = evaluate_frames(self.frames, threshold=threshold, seed=self.seed)
        return self._evaluated[threshold]

    def summary(self, *, threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
        """One row per cell and view (seen, unseen): MDAD with its interval, robust MDAD, error,
        Kendall tau, pair agreement (docs/protocol.md#meta-evaluation)."""
        return self._evaluate(threshold)[0]

    def curves(self) -> pd.DataFrame:
        """Agreement per 0.5-point bin of true accuracy difference, per cell and view."""
        return self._evaluate(DEFAULT_THRESHOLD)[1]


@dataclass(eq=False)
class Experiment:
    """The paper's experiment on one response matrix: splits, tasks, execution and storage.

    Examples
    --------
    >>> import mdad
    >>> matrix = mdad.simulate(seed=0, n_models=40, n_items=100)
    >>> config = mdad.ExperimentConfig.for_matrix(matrix, methods="random", sizes=10, runs=5)
    >>> result = mdad.Experiment(matrix, config).run()
    >>> result.summary()[["method", "size", "view"]].values.tolist()
    [['random', 10, 'seen'], ['random', 10, 'unseen']]
    """

    matrix: ResponseMatrix
    config: ExperimentConfig
    _: KW_ONLY
    store: ResultStore | None = None
    splits: Splits = field(init=False)
    recovered: list[str] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        matrix, config = self.matrix, self.config
        if matrix.n_missing:
            raise MdadError(
                f"{matrix.source} has {matrix.n_missing} cells that were not evaluated; "
                "drop the incomplete items or models first (ResponseMatrix.require_complete)."
            )
        self.splits = make_splits(matrix, config.runs, config.targets, config.seed, config.group, targets_from=config.targets_from)
        seen_per_subtask = np.bincount(matrix.subtask_codes[self.splits.seen[0]])
        for k in config.sizes:
            check_size(k, self.splits.n_seen)
            if any(parse(name).per_subtask for name in config.methods):
                allocate(seen_per_subtask[seen_per_subtask > 0], k)
        for s in config.sources:
            if s < 2:
                raise MdadError(f"At least 2 source models are needed, got {s}.")
            self.splits.sources(s)

    def identity(self) -> dict:
        """What the stored numbers depend on, written to config.json."""
        c = self.config
        return {
            "results_version": RESULTS_VERSION,
            "data_source": self.matrix.source,
            "simulated": self.matrix.simulated,
            "data_fingerprint": fingerprint(self.matrix),
            "n_models": self.matrix.n_models,
            "n_items": self.matrix.n_items,
            "n_seen": self.splits.n_seen,
            "has_option_probs": self.matrix.has_option_probs,
            "items_with_option_probs": int(self.matrix.option_items.sum()),
            "data_notes": list(self.matrix.notes),
            "runs": c.runs,
            "targets": int(self.splits.targets.shape[1]),
            "group": c.group,
            "seed": c.seed,
            "targets_from": c.targets_from,
            "methods": list(c.methods),
            "sizes": list(c.sizes),
            "sources": list(c.sources),
        }

    def cells(self) -> list[Cell]:
        """Every (method, size, sources) cell of the experiment, in the order they are reported."""
        c = self.config
        return [Cell(m, k, s) for m in c.methods for k in c.sizes for s in c.sources]

    def open_store(self, extra_config: dict | None = None) -> None:
        """Create the store, or check that it holds this experiment's results (an error otherwise).

        Blocks of runs left beside a finished cell (a run killed between writing the cell and
        removing its blocks) are removed. Damaged files of this grid (unreadable, or not what the
        store's index vouches for) are moved aside to be computed again; ``recovered`` says which,
        one sentence each."""
        if self.store is None:
            return
        self.recovered += self.store.open_for({**self.identity(), **(extra_config or {})})
        with self.store.locked():
            self.recovered += self.store.set_aside_damaged(self.cells())
            for cell in self.cells():
                if self.store.has(cell):
                    self.store.remove_blocks(cell)

    def pending_tasks(self, runs_per_task: int | None = None) -> list[Task]:
        """The tasks whose cells are not yet in the store (all of them without a store), in blocks of runs."""
        done = self.store.has if self.store is not None else (lambda cell: False)
        return plan_tasks(self.config, done, runs_per_task)

    def run(
        self,
        *,
        workers: int = 1,
        on_cells: Callable[[float], None] | None = None,
        extra_config: dict | None = None,
        scheduler: str | None = None,
        runs_per_task: int | None = None,
        meanwhile: Callable[[], None] | None = None,
    ) -> ExperimentResult:
        """Run every pending task; finished cells are stored as soon as their last block of runs ends.

        Parameters
        ----------
        workers : int
            Local worker processes (1: this process only).
        on_cells : callable, optional
            Called as work finishes with the amount done, in cells (for a progress bar).
        extra_config : dict, optional
            More settings to record in the store's config.json.
        scheduler : str, optional
            A Dask scheduler address: run the tasks on that cluster instead.
        runs_per_task : int, optional
            Runs per task (default 5): blocks run in parallel, and with a store every finished
            block is kept until its cell is complete, so an interruption loses no finished block.
        meanwhile : callable, optional
            Work for this process while worker processes or a cluster run the tasks (before them
            without workers); its error stops them.

        Returns
        -------
        ExperimentResult
            Every cell of the configuration (cells already stored are read, not recomputed).
            Results are the same whatever the split and the executor.
        """
        with self.store.locked() if self.store is not None else nullcontext():
            return self._run(workers, on_cells, extra_config, scheduler, runs_per_task, meanwhile)

    def _run(self, workers, on_cells, extra_config, scheduler, runs_per_task, meanwhile=None) -> ExperimentResult:
        block = runs_per_task or RUNS_PER_TASK
        store = self.store
        self.open_store(extra_config)
        needed = (lambda cell: True) if store is None else (lambda cell: not store.has(cell))
        blocks: dict[Cell, dict[int, np.ndarray]] = {}
        results: dict[Cell, pd.DataFrame] = {}
        truth = _truths(self.matrix, self.splits)
        n_runs = self.splits.n_runs

        def add(cell: Cell, first_run: int, estimates: np.ndarray) -> None:
            blocks.setdefault(cell, {})[first_run] = estimates
            if sum(len(b) for b in blocks[cell].values()) < n_runs:
                return
            parts = blocks.pop(cell)
            frame = _cell_frame(np.concatenate([parts[start] for start in sorted(parts)]), truth, self.splits, self.matrix)
            if store is not None:
                store.write(cell, frame)
                store.remove_blocks(cell)
            results[cell] = frame

        todo = []
        for task in self.pending_tasks(block):
            cells = [cell for cell in task.cells if needed(cell)]
            stop = task.runs(n_runs).stop
            stored = [cell for cell in cells if store is not None and store.has_block(cell, task.first_run, stop)]
            if len(stored) < len(cells):
                todo.append(task)
                continue
            if store is not None:  # else no cell is stored
                for cell in stored:
                    add(cell, task.first_run, store.read_block(cell, task.first_run, stop))
            if on_cells is not None:
                on_cells(len(task.cells) * (stop - task.first_run) / n_runs)
        # closing: an interruption between two results stops the workers now, not at interpreter exit
        with closing(execute(run_task, self.matrix, self.splits, todo, workers, on_cells, scheduler, meanwhile)) as finished:
            for task, estimates in finished:
                stop = task.runs(n_runs).stop
                for cell, runs in estimates.items():
                    if not needed(cell) or task.first_run in blocks.get(cell, {}):
                        continue
                    if store is not None:
                        store.write_block(cell, task.first_run, stop, runs)
                    add(cell, task.first_run, runs)
        if store is not None:
            results.update({cell: store.read(cell) for cell in self.cells() if cell not in results})
        return ExperimentResult({cell: results[cell] for cell in self.cells()}, seed=self.config.seed)
