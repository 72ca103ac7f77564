"""How far one micro-benchmark's estimates can be trusted, measured on the data it was chosen from.

``mdad select`` chooses k items using every model as a source and every item as the pool.
Its reliability is measured the paper's way, adapted to that use: in each of ``runs``
runs, T target models are held out, the same method chooses k items from the whole pool
using the other models, and the targets' estimates are compared with their accuracy on
all items. Every registered metric (mdad.metrics.base.METRICS: estimation error, Kendall
tau, ...) and MDAD (first crossing with its bootstrap interval, and the robust logistic-fit
MDAD) summarise the runs. Unlike ``mdad run`` there
is no seen/unseen halving: the accuracy a user estimates with the micro-benchmark is the
accuracy on the whole benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field, replace

import numpy as np

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.experiment.evaluate import METRICS, view_metrics
from mdad.experiment.executors import execute
from mdad.experiment.grid import ExperimentConfig, default_targets, plan_tasks, run_task
from mdad.experiment.splits import make_splits
from mdad.intervals.conformal import ConformalCalibration
from mdad.intervals.order import OrderCalibration
from mdad.methods.base import check_size
from mdad.methods.names import canonical
from mdad.metrics.pairwise import Mdad, estimability_note
from mdad.seeding import rng_for


@dataclass(frozen=True, eq=False)
class LengthCalibration:
    """The calibrations that hold for an adaptive test's estimate after ``length`` answered items
    (docs/intervals.md#unfinished-adaptive-tests): fitted on the held-out tests stopped at that length."""

    length: int
    intervals: ConformalCalibration
    orders: OrderCalibration | None

    def to_json(self) -> dict:
        """The length and both calibrations, as micro.json stores them."""
        out: dict = {"length": self.length, "interval_calibration": self.intervals.to_json()}
        if self.orders is not None:
            out["order_calibration"] = self.orders.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict) -> LengthCalibration:
        """Read :meth:`to_json`'s output; a malformed one is one error sentence."""
        try:
            length, intervals, orders = data["length"], data["interval_calibration"], data.get("order_calibration")
        except (KeyError, TypeError):
            raise MdadError("The micro-benchmark's calibrations by length need a length and an interval calibration each.") from None
        if not isinstance(length, int) or isinstance(length, bool):
            raise MdadError(f"The micro-benchmark's calibrations by length give a length of {length!r}; it must be a whole number.")
        return cls(length, ConformalCalibration.from_json(intervals), OrderCalibration.from_json(orders) if orders else None)


def calibrated_lengths(size: int) -> tuple[int, ...]:
    """The lengths below ``size`` at which an adaptive test is calibrated besides its full length: 1, 2, 4, 8, ...
    (a model that answered n items uses the largest of them not above n, so its interval is at worst that of half
    as many items)."""
    return tuple(2**i for i in range(max(size - 1, 0).bit_length()) if 2**i < size)


@dataclass(frozen=True)
class Assessment:
    """Reliability of a method at one size on one response matrix (accuracies as fractions, MDAD in points)."""

    method: str
    size: int
    runs: int
    targets: int
    sources: int
    threshold: float
    mdad: float  # NaN when not reached
    mdad_low: float
    mdad_high: float
    mdad_robust: float
    # beside MDAD (docs/protocol.md#mdad-trust); files written by older mdad lack them
    mdad_robust_low: float = math.nan
    mdad_robust_high: float = math.nan
    mdad_pairs: int | None = None  # pairs in the crossing bin (all runs; None: not known)
    mdad_falls_back: bool = False  # a later bin with enough pairs is below the threshold again
    metrics: dict[str, float] = field(default_factory=dict)  # every registered metric by key (METRICS)
    estimates: np.ndarray | None = field(default=None, repr=False, compare=False)  # runs x targets
    truths: np.ndarray | None = field(default=None, repr=False, compare=False)  # runs x targets
    # what intervals and order probabilities of any future model need (kept in the saved file)
    interval_calibration: ConformalCalibration | None = field(default=None, repr=False, compare=False)
    order_calibration: OrderCalibration | None = field(default=None, repr=False, compare=False)
    # an adaptive test's calibrations after fewer answered items than its length (increasing lengths; empty: none)
    by_length: tuple[LengthCalibration, ...] = field(default=(), repr=False, compare=False)

    def calibration_for(self, answered: int) -> LengthCalibration | None:
        """The calibrations that hold for an estimate from ``answered`` items: the full test's from ``size`` items on,
        else those of the largest calibrated length not above ``answered`` (fewer items, wider); None when no
        length that short is calibrated (no item answered, or a file calibrated at its full length only)."""
        if answered >= self.size:
            return None if self.interval_calibration is None else LengthCalibration(self.size, self.interval_calibration, self.order_calibration)
        shorter = [c for c in self.by_length if c.length <= answered]
        return shorter[-1] if shorter else None

    @property
    def error(self) -> float:
        """Mean absolute error of the estimates (accuracy units)."""
        return self.metrics["error"]

    @property
    def kendall_tau(self) -> float:
        """Mean Kendall tau between estimated and true ranking."""
        return self.metrics["kendall_tau"]

    @property
    def mdad_reached(self) -> bool:
        """Whether some bin of differences was ordered correctly at the threshold's rate (MDAD is a number)."""
        return not math.isnan(self.mdad)

    @property
    def first_crossing(self) -> Mdad:
        """The first-crossing MDAD with its interval, pairs and note (cannot be estimated: too few targets or runs)."""
        return Mdad(
            self.mdad,
            self.mdad_low,
            self.mdad_high,
            self.threshold,
            pairs=self.mdad_pairs,
            falls_back=self.mdad_falls_back,
            note=estimability_note(self.targets, self.runs),
        )

    @property
    def robust(self) -> Mdad:
        """The robust (logistic-fit) MDAD with its interval."""
        return Mdad(self.mdad_robust, self.mdad_robust_low, self.mdad_robust_high, self.threshold)

    @property
    def mdad_warning(self) -> str:
        """Why the first crossing is not to be trusted (or cannot be estimated), "" when it can be."""
        return self.first_crossing.warning(self.robust)

    @property
    def cautious_mdad(self) -> float:
        """The larger of the first-crossing and the robust MDAD (inf when either is not reached): a
        lucky bin with few pairs can make the first crossing small, the fit guards against that."""
        values = (self.mdad, self.mdad_robust)
        return math.inf if any(math.isnan(v) for v in values) else max(values)

    def to_json(self) -> dict:
        """The summary numbers and the calibrations (not the per-run arrays); NaN becomes null."""
        out = {**{name: getattr(self, name) for name in _SUMMARY_FIELDS}, **self.metrics}
        out = {key: None if isinstance(value, float) and math.isnan(value) else value for key, value in out.items()}
        if self.interval_calibration is not None:
            out["interval_calibration"] = self.interval_calibration.to_json()
        if self.order_calibration is not None:
            out["order_calibration"] = self.order_calibration.to_json()
        if self.by_length:
            out["by_length"] = [c.to_json() for c in self.by_length]
        return out

    @classmethod
    def from_json(cls, data: dict) -> Assessment:
        """Read what :meth:`to_json` wrote; files without calibrations (older mdad) load without them, and
        the metrics are those the file holds (a metric registered since is absent)."""
        try:
            values = {name: data[name] for name in (*_SUMMARY_FIELDS, "error", "kendall_tau") if name not in _OPTIONAL_FIELDS}
        except KeyError as exc:
            raise MdadError(f"The micro-benchmark's assessment lacks the field {exc.args[0]!r}.") from None
        values.update({name: data[name] for name in _OPTIONAL_FIELDS if name in data})
        values = {key: float("nan") if value is None and key != "mdad_pairs" else value for key, value in values.items()}
        metrics = {key: float("nan") if data[key] is None else data[key] for key in METRICS.names() if key in data}
        values = {key: value for key, value in values.items() if key not in metrics}
        intervals = data.get("interval_calibration")
        order = data.get("order_calibration")
        by_length = data.get("by_length") or []
        if not isinstance(by_length, list):
            raise MdadError("The micro-benchmark's calibrations by length must be a list.")
        return cls(
            **values,
            metrics=metrics,
            interval_calibration=ConformalCalibration.from_json(intervals) if intervals else None,
            order_calibration=OrderCalibration.from_json(order) if order else None,
            by_length=tuple(LengthCalibration.from_json(c) for c in by_length),
        )


_NOT_SUMMARY = ("metrics", "estimates", "truths", "interval_calibration", "order_calibration", "by_length")
_SUMMARY_FIELDS = tuple(name for name in Assessment.__dataclass_fields__ if name not in _NOT_SUMMARY)
_OPTIONAL_FIELDS = ("mdad_robust_low", "mdad_robust_high", "mdad_pairs", "mdad_falls_back")  # absent from older files


@dataclass(frozen=True, eq=False)
class HeldOutRuns:
    """Estimates (runs x targets, per size) of held-out targets and their full-benchmark accuracies."""

    estimates: dict[int, np.ndarray]
    truths: np.ndarray
    targets: int
    sources: int
    target_ids: np.ndarray | None = None  # runs x targets: the models held out in each run


def held_out_runs(
    matrix: ResponseMatrix,
    method: str,
    sizes,
    *,
    runs: int,
    targets: int | None = None,
    seed: int = 0,
    workers: int = 1,
    on_runs: Callable[[float], None] | None = None,
    sources: int | None = None,
    meanwhile: Callable[[], None] | None = None,
    targets_from: str = "random",
    scheduler: str | None = None,
) -> HeldOutRuns:
    """The runs behind :func:`assess` for several sizes at once (size-independent work shared per run);
    ``on_runs`` receives the number of runs finished as they finish (for a progress bar). ``sources``
    keeps only the first that many non-target models of each run as sources (default: all of them);
    the targets and their truths do not depend on it, so fewer sources are nested in more. ``meanwhile``:
    work for this process while worker processes run the runs (mdad.experiment.executors.execute).
    ``targets_from="top"``: the strongest models are the targets of every run (new models stronger than the sources).
    ``scheduler``: the address of a Dask scheduler that runs the runs instead of local processes."""
    found = held_out_runs_of(
        matrix,
        (method,),
        sizes,
        runs=runs,
        targets=targets,
        seed=seed,
        workers=workers,
        on_runs=on_runs,
        sources=sources,
        meanwhile=meanwhile,
        targets_from=targets_from,
        scheduler=scheduler,
    )
    return next(iter(found.values()))  # the one method, under the name the config gives it


def held_out_runs_of(
    matrix: ResponseMatrix,
    methods: tuple[str, ...],
    sizes,
    *,
    runs: int,
    targets: int | None = None,
    seed: int = 0,
    workers: int = 1,
    on_runs: Callable[[float], None] | None = None,
    sources: int | None = None,
    meanwhile: Callable[[], None] | None = None,
    targets_from: str = "random",
    scheduler: str | None = None,
) -> dict[str, HeldOutRuns]:
    """:func:`held_out_runs` of several methods in one pass: the same runs (targets, sources, truths), one pool
    of workers, and the per-run preparation that methods declare in common (``SelectionMethod.preparation``:
    the IRT fit of the tinyBenchmarks estimators, for one) done once per run for all of them. Each method's
    estimates are those it gets alone: every generator is keyed by (seed, method, size, run)."""
    n_targets = targets if targets is not None else default_targets(matrix.n_models)
    halves = make_splits(matrix, runs, n_targets, seed, targets_from=targets_from)
    whole_pool = np.tile(np.arange(matrix.n_items), (runs, 1))
    splits = replace(halves, seen=whole_pool, unseen=np.empty((runs, 0), dtype=np.int64))
    if sources is not None:
        splits = replace(splits, source_pool=splits.sources(sources))
    n_sources = splits.source_pool.shape[1]
    config = ExperimentConfig(methods=tuple(methods), sizes=tuple(sizes), sources=(n_sources,), runs=runs, targets=n_targets, seed=seed)
    tasks = plan_tasks(config, runs_per_task=1 if workers > 1 or scheduler else None)  # one run per task: the workers stay busy to the end
    on_cells = None if on_runs is None else (lambda cells: on_runs(cells * runs / (len(config.sizes) * len(config.methods))))
    with closing(execute(run_task, matrix, splits, tasks, workers, on_cells=on_cells, meanwhile=meanwhile, scheduler=scheduler)) as finished:
        blocks: dict[tuple[str, int], dict[int, np.ndarray]] = {}
        for task, result in finished:
            for cell, out in result.items():
                blocks.setdefault((cell.method, cell.size), {})[task.first_run] = out["estimate"]
    truths = matrix.scores[splits.targets].astype(np.float64).mean(axis=2)
    return {
        method: HeldOutRuns(
            estimates={k: np.concatenate([part for _, part in sorted(blocks[method, k].items())]) for k in sizes},
            truths=truths,
            targets=n_targets,
            sources=n_sources,
            target_ids=splits.targets,
        )
        for method in config.methods
    }


def size_metrics(runs_out: HeldOutRuns, method: str, size: int, *, threshold: float, seed: int) -> dict:
    """Every metric and the MDAD with its intervals of ``method``'s held-out estimates at ``size``, as
    :func:`assess` reports them (the same bootstrap generators: the same numbers)."""
    key = ("assess", method, size, runs_out.sources)
    metrics, _ = view_metrics(
        runs_out.estimates[size],
        runs_out.truths,
        threshold=threshold,
        bootstrap_rng=rng_for(seed, "bootstrap", *key),
        robust_rng=rng_for(seed, "robust", *key),
    )
    return metrics


def assess(
    matrix: ResponseMatrix,
    method: str,
    size: int,
    *,
    runs: int = ASSESS_RUNS,
    targets: int | None = None,
    seed: int = 0,
    workers: int = 1,
    threshold: float = DEFAULT_THRESHOLD,
    on_runs: Callable[[float], None] | None = None,
    sources: int | None = None,
    meanwhile: Callable[[], None] | None = None,
    targets_from: str = "random",
    scheduler: str | None = None,
) -> Assessment:
    """Re-run ``method`` at ``size`` on ``runs`` held-out splits of ``matrix`` (docs/protocol.md#assessment).

    Parameters
    ----------
    matrix : ResponseMatrix
        Complete results (no missing cells).
    method : str
        A selection method (``mdad.methods.available()``).
    size : int
        Items of the micro-benchmark.
    runs : int
        Held-out splits.
    targets : int, optional
        Held-out target models per run (default :func:`~mdad.experiment.grid.default_targets`);
        every other model is a source.
    seed, workers : int
        Results depend on ``seed`` only, not on ``workers``.
    threshold : float
        Agreement rate that defines MDAD.
    on_runs : callable, optional
        Receives the number of runs finished as they finish (for a progress bar).
    sources : int, optional
        Source models per run (default: every model that is not a target).
    meanwhile : callable, optional
        Work for this process while worker processes run the held-out runs (``mdad select`` chooses
        the items meanwhile); with one worker it is done first. Its error stops the runs.
    targets_from : str
        "random" (default) or "top": the strongest models as the targets of every run.
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:8786``) that runs the held-out runs.

    Returns
    -------
    Assessment

    Examples
    --------
    >>> import mdad
    >>> check = mdad.assess(mdad.simulate(seed=0, n_models=40, n_items=100), "random", 10, runs=4)
    >>> (check.runs, check.targets, check.sources)
    (4, 20, 20)
    """
    if matrix.n_missing:
        raise MdadError(f"{matrix.source} has cells that were not evaluated; drop incomplete items or models first.")
    check_threshold(threshold)
    check_size(size, matrix.n_items)
    method = canonical(method)
    # an adaptive test is also calibrated at shorter lengths: its sizes nest, so the same pass serves them
    shorter = calibrated_lengths(size) if method_registry.get(method).adaptive else ()
    runs_out = held_out_runs(
        matrix,
        method,
        (*shorter, size),
        runs=runs,
        targets=targets,
        seed=seed,
        workers=workers,
        on_runs=on_runs,
        sources=sources,
        meanwhile=meanwhile,
        targets_from=targets_from,
        scheduler=scheduler,
    )
    estimates, truths, n_targets, n_sources = runs_out.estimates[size], runs_out.truths, runs_out.targets, runs_out.sources
    metrics = size_metrics(runs_out, method, size, threshold=threshold, seed=seed)
    return Assessment(
        method=method,
        size=size,
        runs=runs,
        targets=n_targets,
        sources=n_sources,
        threshold=threshold,
        mdad=metrics["mdad"],
        mdad_low=metrics["mdad_low"],
        mdad_high=metrics["mdad_high"],
        mdad_robust=metrics["mdad_robust"],
        mdad_robust_low=metrics["mdad_robust_low"],
        mdad_robust_high=metrics["mdad_robust_high"],
        mdad_pairs=int(metrics["mdad_pairs"]),
        mdad_falls_back=bool(metrics["mdad_falls_back"]),
        metrics={metric.key: metrics[metric.key] for metric in METRICS},
        estimates=estimates,
        truths=truths,
        interval_calibration=ConformalCalibration.fit(estimates, truths),
        order_calibration=OrderCalibration.fit_if_possible(estimates, truths),
        by_length=tuple(
            LengthCalibration(
                length,
                ConformalCalibration.fit(runs_out.estimates[length], truths),
                OrderCalibration.fit_if_possible(runs_out.estimates[length], truths),
            )
            for length in shorter
        ),
    )
