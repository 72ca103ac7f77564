"""Build one micro-benchmark from all the data, save it, and estimate new models' accuracy with it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from mdad import methods as method_registry
from mdad.assessment import Assessment
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_LEVEL
from mdad.errors import MdadError
from mdad.exact import on_estimate_grid
from mdad.data.matrix import fingerprint
from mdad.intervals.order import PairPrior
from mdad.intervals.posterior import AccuracyPrior
from mdad.intervals.results import EstimateIntervals, OrderProbabilities
from mdad.intervals.trust import estimate_intervals, neighbour_orders
from mdad.methods.adaptive import AdaptiveBenchmark
from mdad.methods.aipw import AIPWBenchmark
from mdad.outputs import writing
from mdad.methods.base import MicroBenchmark, SourceView, check_size
from mdad.seeding import rng_for

FORMAT = "mdad-microbenchmark/1"
TASK_IDENTITY = ("harness", "version", "n_shot")  # what must match between the data and later results


@dataclass(frozen=True, eq=False)
class SelectedMicroBenchmark:
    """A micro-benchmark chosen from a response matrix: item ids plus its estimator."""

    method: str
    item_ids: np.ndarray
    subtasks: np.ndarray
    micro: MicroBenchmark
    seed: int
    data_source: str
    data_fingerprint: str
    n_pool: int
    assessment: Assessment | None = None  # its reliability, measured on held-out splits (mdad.assess)
    tasks: dict = field(default_factory=dict)  # subtask -> what identifies its task (version, n-shot, task file)
    item_hashes: np.ndarray | None = None  # each item's content hash (document and gold answer), "" unknown
    pool_subtasks: dict[str, int] | None = None  # items per subtask in the pool (None: file of an older mdad)
    pair_prior: PairPrior | None = None  # how the source models' pairs split their discordant items (0/1 data)
    accuracy_prior: AccuracyPrior | None = None  # the source models' pool counts (0/1 data; None: older file)

    @property
    def size(self) -> int:
        """Items each model answers (for an adaptive test: how many it is asked, from the whole pool)."""
        return self.micro.size

    @property
    def adaptive(self) -> bool:
        return isinstance(self.micro, AdaptiveBenchmark)

    @property
    def best_source_accuracy(self) -> float | None:
        """The highest full-benchmark accuracy among the models it was chosen from (None: not stored)."""
        if self.accuracy_prior is None:
            return None
        return float(self.accuracy_prior.counts.max()) / self.accuracy_prior.pool_items

    def with_assessment(self, assessment: Assessment) -> SelectedMicroBenchmark:
        if (assessment.method, assessment.size) != (self.method, self.size):
            raise MdadError(
                f"The assessment is of {assessment.method} with {assessment.size} items, but the micro-benchmark "
                f"is {self.method} with {self.size} items."
            )
        return replace(self, assessment=assessment)

    def estimate(self, matrix: ResponseMatrix) -> pd.Series:
        """Estimated full-benchmark accuracy of every model of ``matrix`` from its answers on the items.

        Refuses results of another task version than the micro-benchmark was built on: a task
        whose version or n-shot differs, or an item whose document or gold answer differs.
        """
        return self.details(matrix)["estimate"]

    def details(self, matrix: ResponseMatrix) -> pd.DataFrame:
        """Per model of ``matrix``: the estimate and what the estimator adds. Model-based estimators
        add the extrapolation guard (``flagged``, ``reason``); AIPW its interval (``low``, ``high``);
        an adaptive test the number of items answered and the item it would ask next (``next_item``,
        empty once the test is over). A static micro-benchmark needs every model's answer on every
        item; an adaptive test takes whatever pool items each model answered."""
        index = pd.Index(matrix.models, name="model")
        if self.adaptive:
            return self._adaptive_details(matrix, {item: j for j, item in enumerate(matrix.items)}, index)
        scores, gold = self.item_scores(matrix)
        frame = pd.DataFrame({"estimate": on_estimate_grid(self.micro.estimate(scores, gold))}, index=index)
        if isinstance(self.micro, AIPWBenchmark):
            interval = self.micro.interval(scores)
            frame["low"], frame["high"] = interval.low, interval.high
        return _with_flags(frame, self.micro.flags(scores))

    def intervals(self, matrix: ResponseMatrix, *, level: float = DEFAULT_LEVEL, population: bool = False) -> EstimateIntervals:
        """Every model's estimate with an interval for its full-benchmark accuracy (mdad.intervals.trust).

        ``population``: for the random designs, the empirical-Bayes interval calibrated on the source
        models' accuracies instead of the exact one valid for every model (narrower; nominal on average
        over models like the sources, not for a model unlike all of them)."""
        scores, estimates = self._scores_and_estimates(matrix)
        return estimate_intervals(self, scores, estimates, np.asarray(matrix.models), level=level,
                                  population=population)

    def order_probabilities(self, matrix: ResponseMatrix) -> OrderProbabilities:
        """For each neighbouring pair of the ranking by estimate: its gap and P(the full benchmark keeps the order)."""
        scores, estimates = self._scores_and_estimates(matrix)
        return neighbour_orders(self, scores, estimates, np.asarray(matrix.models))

    def _scores_and_estimates(self, matrix: ResponseMatrix) -> tuple[np.ndarray, np.ndarray]:
        """The static items' scores (none for an adaptive test, which has no exact answer) and the estimates."""
        estimates = self.details(matrix)["estimate"].to_numpy(np.float64)
        scores = np.empty((matrix.n_models, 0)) if self.adaptive else self.item_scores(matrix)[0]
        return scores, estimates

    def item_scores(self, matrix: ResponseMatrix) -> tuple[np.ndarray, np.ndarray | None]:
        """The models' scores on the chosen items (models x k) and, if the estimator uses them, gold-option
        probabilities; refuses missing items, unanswered items and another task version."""
        lookup = {item: j for j, item in enumerate(matrix.items)}
        missing = [str(item) for item in self.item_ids if item not in lookup]
        if missing:
            raise MdadError(
                f"{len(missing)} of the {len(self.item_ids)} micro-benchmark items are not in {matrix.source} "
                f"(e.g. {missing[0]!r}); item ids must match those the micro-benchmark was built from."
            )
        cols = np.array([lookup[item] for item in self.item_ids])
        self._check_same_tasks(matrix, cols)
        scores = matrix.scores[:, cols]
        unanswered = np.isnan(scores).any(axis=1)
        if unanswered.any():
            model = str(matrix.models[np.flatnonzero(unanswered)[0]])
            raise MdadError(f"Model {model!r} has no score on some micro-benchmark items; every item must be answered.")
        gold = matrix.gold_prob()[:, cols] if self.micro.uses_gold_prob else None
        return scores, gold

    def first_item(self) -> str:
        """The item an adaptive test asks every new model first (it starts from one ability)."""
        if not self.adaptive:
            raise MdadError(f"{self.method} is not an adaptive test; every model answers all its items.")
        return str(self.item_ids[self.micro.next_items(np.full((1, len(self.item_ids)), np.nan))[0]])

    def _adaptive_details(self, matrix: ResponseMatrix, lookup: dict, index: pd.Index) -> pd.DataFrame:
        present = np.array([j for j, item in enumerate(self.item_ids) if item in lookup], dtype=np.int64)
        if not present.size:
            raise MdadError(f"None of the adaptive test's {len(self.item_ids)} pool items is in {matrix.source}; "
                            "item ids must match those the test was built from.")
        cols = np.array([lookup[self.item_ids[j]] for j in present])
        self._check_same_tasks(matrix, cols, present)
        answers = np.full((matrix.n_models, len(self.item_ids)), np.nan)
        answers[:, present] = matrix.scores[:, cols]
        nxt = self.micro.next_items(answers)
        frame = pd.DataFrame({
            "estimate": on_estimate_grid(self.micro.estimate(answers)),
            "answered": (~np.isnan(answers)).sum(axis=1),
            "next_item": np.where(nxt >= 0, self.item_ids[np.maximum(nxt, 0)], ""),
        }, index=index)
        return _with_flags(frame, self.micro.flags(answers))

    def _check_same_tasks(self, matrix: ResponseMatrix, cols: np.ndarray, positions: np.ndarray | None = None) -> None:
        """Refuse another task version; ``cols`` are the matrix columns of the items at ``positions``
        of ``item_ids`` (default: all of them, in order)."""
        for subtask in dict.fromkeys(self.subtasks.tolist()):
            built, new = self.tasks.get(subtask, {}), matrix.tasks.get(subtask, {})
            for key in TASK_IDENTITY:
                if key in built and key in new and built[key] != new[key]:
                    raise MdadError(
                        f"Task {subtask!r} in {matrix.source} has {key.replace('_', '-')} {new[key]}, but the "
                        f"micro-benchmark was built on {key.replace('_', '-')} {built[key]}; its estimates do not apply."
                    )
        if self.item_hashes is None or matrix.item_hashes is None:
            return
        new = matrix.item_hashes[cols]
        own = self.item_hashes if positions is None else self.item_hashes[positions]
        ids = self.item_ids if positions is None else self.item_ids[positions]
        differ = (own != "") & (new != "") & (own != new)
        if differ.any():
            item = str(ids[np.argmax(differ)])
            raise MdadError(
                f"Item {item!r} in {matrix.source} has another document or gold answer than when the micro-benchmark "
                f"was built ({int(differ.sum())} of {len(differ)} items differ): the task changed; its estimates do not apply."
            )

    def items_by_task(self) -> dict[str, list[str]]:
        """The item ids per harness task: ``<task>/<id>`` ids whose task is the item's subtask, as
        mdad's lm-eval and inspect readers name them (lm-eval: the document index; inspect: the
        sample id)."""
        by_task: dict[str, list[str]] = {}
        for item, subtask in zip(self.item_ids.tolist(), self.subtasks.tolist()):
            task, _, sample = item.rpartition("/")
            if task != subtask or not sample:
                raise MdadError(
                    f"Item {item!r} (subtask {subtask!r}) is not a '<task>/<id>' id; harness sample lists can only "
                    "be written for a micro-benchmark built from lm-eval or inspect results."
                )
            by_task.setdefault(task, []).append(sample)
        return by_task

    def lm_eval_samples(self) -> dict[str, list[int]]:
        """The items as lm-evaluation-harness ``--samples`` wants them: task name -> document indices.

        lm-eval keeps the original indices as doc_id in what it logs, so the new model's results
        line up with the micro-benchmark's item ids."""
        samples = {}
        for task, docs in self.items_by_task().items():
            bad = [doc for doc in docs if not doc.isdigit()]
            if bad:
                raise MdadError(f"Item {task}/{bad[0]} is not an lm-evaluation-harness '<task>/<doc_id>' id "
                                "(doc_id must be a document index).")
            samples[task] = sorted(int(doc) for doc in docs)
        return samples

    def inspect_commands(self, log_dir: str = "NEW") -> list[str]:
        """One ``inspect eval FILE@TASK`` command per task that runs a new model on the micro-benchmark's
        samples only (FILE: the task file the logs recorded; the bare task name when they did not)."""
        def order(sample: str) -> tuple:
            return (0, int(sample), "") if sample.isdigit() else (1, 0, sample)

        def target(task: str) -> str:
            task_file = self.tasks.get(task, {}).get("task_file")
            return f"{task_file}@{task}" if task_file else task

        return [f"inspect eval {target(task)} --model ... --sample-id {','.join(sorted(ids, key=order))} "
                f"--log-dir {log_dir}" for task, ids in self.items_by_task().items()]

    def to_json(self) -> dict:
        return {
            "format": FORMAT, "method": self.method, "size": self.size, "seed": self.seed,
            "data_source": self.data_source, "data_fingerprint": self.data_fingerprint, "pool_items": self.n_pool,
            "items": self.item_ids.tolist(), "subtasks": self.subtasks.tolist(),
            "pool_positions": self.micro.items.tolist(), "estimator": self.micro.estimator_params(),
            "tasks": self.tasks,
            **({"item_hashes": self.item_hashes.tolist()} if self.item_hashes is not None else {}),
            **({"pool_subtasks": self.pool_subtasks} if self.pool_subtasks is not None else {}),
            **({"pair_prior": self.pair_prior.to_json()} if self.pair_prior is not None else {}),
            **({"accuracy_prior": self.accuracy_prior.to_json()} if self.accuracy_prior is not None else {}),
            **({"assessment": self.assessment.to_json()} if self.assessment is not None else {}),
        }

    def save(self, path: str | Path) -> None:
        with writing(path, "the micro-benchmark file"):
            Path(path).write_text(json.dumps(self.to_json(), indent=1))

    @classmethod
    def load(cls, path: str | Path) -> "SelectedMicroBenchmark":
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise MdadError(f"No such file: {path}.") from None
        except json.JSONDecodeError as exc:
            raise MdadError(f"{path} is not valid JSON (line {exc.lineno}).") from None
        except (UnicodeDecodeError, RecursionError):
            raise MdadError(f"{path} is not a readable JSON text file.") from None
        except IsADirectoryError:
            raise MdadError(f"{path} is a folder, not a micro-benchmark file.") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise MdadError(f"{path} is not an mdad micro-benchmark file (expected format {FORMAT!r}).")
        missing = [k for k in ("method", "items", "subtasks", "pool_positions", "estimator", "seed") if k not in data]
        if missing:
            raise MdadError(f"{path} lacks the field {missing[0]!r} of a micro-benchmark file.")
        try:
            loaded = cls._from_json(data)
        except MdadError as exc:
            raise MdadError(f"{path}: {exc}") from None
        except (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError) as exc:
            raise MdadError(f"{path} is not a valid micro-benchmark file ({type(exc).__name__}: {exc}).") from None
        problem = loaded._problem()
        if problem:
            raise MdadError(f"{path} is not a valid micro-benchmark file: {problem}.")
        return loaded

    @classmethod
    def _from_json(cls, data: dict) -> "SelectedMicroBenchmark":
        if not isinstance(data["estimator"], dict):
            raise MdadError(f"the estimator must be an object of parameters, not {type(data['estimator']).__name__}")
        items = np.array(data["items"], dtype=str)
        positions = np.array(data["pool_positions"])
        if positions.ndim != 1 or (positions.size and positions.dtype.kind not in "iu"):
            raise MdadError("pool_positions must be a list of integers")
        return cls(
            method=str(data["method"]), item_ids=items, subtasks=np.array(data["subtasks"], dtype=str),
            micro=MicroBenchmark.from_params(data["estimator"], positions.astype(np.int64)),
            seed=int(data["seed"]),
            data_source=str(data.get("data_source", "")), data_fingerprint=str(data.get("data_fingerprint", "")),
            n_pool=int(data.get("pool_items", len(items))),
            assessment=Assessment.from_json(data["assessment"]) if data.get("assessment") else None,
            tasks=data.get("tasks") or {},
            item_hashes=np.array(data["item_hashes"], dtype=str) if data.get("item_hashes") is not None else None,
            pool_subtasks=_pool_subtasks(data.get("pool_subtasks")),
            pair_prior=PairPrior.from_json(data["pair_prior"]) if data.get("pair_prior") else None,
            accuracy_prior=AccuracyPrior.from_json(data["accuracy_prior"]) if data.get("accuracy_prior") else None,
        )

    def _problem(self) -> str | None:
        """What makes a loaded micro-benchmark unusable (None: nothing)."""
        n = len(self.item_ids)
        if self.item_ids.ndim != 1 or n == 0:
            return "it lists no items"
        if len(self.subtasks) != n or len(self.micro.items) != n:
            return f"it lists {n} items but {len(self.subtasks)} subtasks and {len(self.micro.items)} pool positions"
        for name, value in vars(self.micro).items():
            if name == "items" or not isinstance(value, (np.ndarray, float, int)) or isinstance(value, bool):
                continue
            array = np.asarray(value)
            if array.dtype.kind not in "biuf":
                return f"the estimator's {name!r} must be numbers"
            if not np.isfinite(array).all():
                return f"the estimator's {name!r} holds values that are not finite numbers"
        weights = getattr(self.micro, "weights", None)
        if weights is not None and np.shape(weights) != (n,):
            return f"the estimator has {np.size(weights)} weights for {n} items"
        return None


def _pool_subtasks(value) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(n, int) and n > 0 for n in value.values()):
        raise MdadError("'pool_subtasks' must map each subtask to its number of pool items")
    return {str(name): n for name, n in value.items()}


def _with_flags(frame: pd.DataFrame, flags) -> pd.DataFrame:
    """The frame with the extrapolation guard's flag and reason per model (when the estimator has one)."""
    if flags is not None:
        frame["flagged"] = flags.flagged
        frame["reason"] = [flags.reason(i) for i in range(len(frame))]
    return frame


def select(matrix: ResponseMatrix, method: str, size: int, *, seed: int = 0) -> SelectedMicroBenchmark:
    """Choose ``size`` items of ``matrix`` with ``method``, using every model as a source model.

    Parameters
    ----------
    matrix : ResponseMatrix
        Complete results (no missing cells): every model is a source, every item is in the pool.
    method : str
        A selection method (``mdad.methods.available()``).
    size : int
        Items to choose.
    seed : int
        Seed of the selection.

    Returns
    -------
    SelectedMicroBenchmark
        The item ids and the estimator; ``.estimate(new_matrix)`` estimates new models' accuracy.

    Examples
    --------
    >>> import mdad
    >>> matrix = mdad.simulate(seed=0, n_models=40, n_items=100)
    >>> micro = mdad.select(matrix, "random", 10, seed=0)
    >>> len(micro.item_ids), micro.estimate(matrix).shape
    (10, (40,))
    """
    if matrix.n_missing:
        raise MdadError(f"{matrix.source} has cells that were not evaluated; drop incomplete items or models first.")
    chosen = method_registry.get(method)
    check_size(size, matrix.n_items)
    view = SourceView.from_arrays(matrix.scores, matrix.gold_prob(), matrix.subtask_codes, matrix.has_option_probs)
    key = chosen.preparation or f"method:{method}"
    prepared = chosen.prepare(view, rng_for(seed, "prepare", key, "all"))
    micro = chosen.select(view, size, rng_for(seed, "select", method, size, "all"), prepared)
    binary = bool(np.isin(matrix.scores, (0.0, 1.0)).all())
    return SelectedMicroBenchmark(
        method=method, item_ids=matrix.items[micro.items], subtasks=matrix.subtasks[micro.items], micro=micro,
        seed=seed, data_source=matrix.source, data_fingerprint=fingerprint(matrix), n_pool=matrix.n_items,
        tasks={s: matrix.tasks[s] for s in dict.fromkeys(matrix.subtasks[micro.items].tolist()) if s in matrix.tasks},
        item_hashes=None if matrix.item_hashes is None else matrix.item_hashes[micro.items],
        pool_subtasks={str(name): int(n) for name, n in zip(*np.unique(matrix.subtasks, return_counts=True))},
        pair_prior=PairPrior.from_scores(matrix.scores) if binary and matrix.n_models >= 2 else None,
        accuracy_prior=AccuracyPrior.from_scores(matrix.scores) if binary else None,
    )
