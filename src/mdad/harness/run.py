"""``MicroRun``: a static micro-benchmark as a harness runs it, and the estimate from the answers it gets.

The estimate and its interval come from ``SelectedMicroBenchmark.intervals`` on a response matrix of
the one model the harness ran, built from the answers the harness scored: the same code and the same
numbers as ``mdad estimate`` on that run's logs. The checks are those ``mdad estimate`` makes (task
version and n-shot, each item's document and gold answer, every item answered), in its own sentences.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_LEVEL
from mdad.errors import MdadError
from mdad.estimates import written
from mdad.micro.selected import SelectedMicroBenchmark
from mdad.wording import plural


@dataclass(frozen=True)
class HarnessEstimate:
    """One model's estimated full-benchmark accuracy (fraction) with its interval at ``level`` (NaN when the
    micro-benchmark carries nothing to compute one from), where the interval comes from (``calibration``),
    and how many items the model answered."""

    estimate: float
    low: float
    high: float
    level: float
    calibration: str
    answered: int


class MicroRun:
    """A static micro-benchmark read from micro.json (``path``), run by ``harness`` (the reader's name, "lm-eval"
    or "inspect"); refuses, in one sentence, an adaptive test, an estimator a harness metric cannot feed, and a
    micro-benchmark chosen from another harness's logs."""

    def __init__(self, path: str | Path, harness: str) -> None:
        self.path = Path(path)
        self.chosen = SelectedMicroBenchmark.load(self.path)
        self.harness = harness
        chosen = self.chosen
        if chosen.adaptive:
            raise MdadError(
                f"{self.path} is an adaptive test ({chosen.method}): each model answers its own items one at a time, so it runs "
                "through the 'mdad estimate' loop, not as one harness task."
            )
        if chosen.micro.uses_gold_prob:
            raise MdadError(
                f"{chosen.method}'s estimator weighs each model's probability of the gold option, which a harness metric does not "
                "receive; run the items and read the logs with 'mdad estimate'."
            )
        found = {str(chosen.tasks.get(str(s), {}).get("harness", "")) for s in chosen.all_subtasks}
        if found != {harness}:
            where = " and ".join(sorted(f or "a table" for f in found))
            raise MdadError(f"{self.path} was selected from the results of {where}, not from {harness} logs; its items cannot be run by {harness}.")

    @property
    def by_task(self) -> dict[str, list[str]]:
        """The sample ids to run per task (the harness's own ids: lm-eval's document index, inspect's sample id),
        audit items included, in the order of the file."""
        return self.chosen.items_by_task()

    @property
    def level(self) -> float:
        """The level of the interval reported inside the harness (``mdad estimate``'s default)."""
        return DEFAULT_LEVEL

    def check_task(self, task: str, *, version: object = None, n_shot: object = None) -> None:
        """Refuse a task the micro-benchmark was not chosen from, or another version or n-shot of it."""
        if task not in self.by_task:
            raise MdadError(
                f"Task {task!r} is not one {self.path} was selected from (its {plural(len(self.by_task), 'task')}: {', '.join(self.by_task)})."
            )
        self._check(task, {}, version=version, n_shot=n_shot)

    def check_samples(self, task: str, hashes: Mapping[str, str], *, version: object = None, n_shot: object = None) -> None:
        """Refuse, before the run, a task whose chosen samples are missing or whose document or gold answer changed.

        ``hashes``: sample id -> its content hash as the reader computes it (mdad.data.readers.base.content_hash;
        "" where unknown) for at least every chosen sample of ``task``."""
        self.check_task(task, version=version, n_shot=n_shot)
        missing = [sample for sample in self.by_task[task] if sample not in hashes]
        if missing:
            raise MdadError(
                f"{len(missing)} of the {len(self.by_task[task])} chosen samples of task {task!r} are not in the task's dataset "
                f"(e.g. {task}/{missing[0]}); the task changed since the micro-benchmark was selected."
            )
        self._check(task, hashes, version=version, n_shot=n_shot)

    def estimate(
        self,
        scores: Mapping[str, Mapping[str, float]],
        *,
        versions: Mapping[str, object] | None = None,
        n_shots: Mapping[str, object] | None = None,
        partial: bool = False,
    ) -> HarnessEstimate:
        """The estimate and interval from one model's ``scores`` (task -> sample id -> score), as ``mdad estimate``
        computes them; ``versions`` and ``n_shots`` (per task) are checked as it checks them (the samples' content is
        checked before the run: ``check_samples``). An item
        left unanswered is refused, or with ``partial`` (a harness showing its metrics while it runs) gives NaN
        estimate and interval beside the number of items answered so far."""
        ids, subtasks, values = [], [], []
        for task, answered in scores.items():
            self.check_task(task, version=(versions or {}).get(task), n_shot=(n_shots or {}).get(task))
            for sample, score in answered.items():
                ids.append(f"{task}/{sample}")
                subtasks.append(task)
                values.append(float(score))
        if not ids and not partial:
            raise MdadError(f"The harness scored no sample of the tasks of {self.path}.")
        answered_items = int(np.isin(ids, self.chosen.all_item_ids.astype(str)).sum())
        if partial and not np.isin(self.chosen.item_ids.astype(str), ids).all():
            return HarnessEstimate(np.nan, np.nan, np.nan, self.level, "not every item answered yet", answered_items)
        tasks = {t: self._identity((versions or {}).get(t), (n_shots or {}).get(t)) for t in scores}
        matrix = ResponseMatrix(
            scores=np.array([values], dtype=np.float64),
            models=np.array(["the harness's model"]),
            items=np.array(ids),
            subtasks=np.array(subtasks),
            source=self._source(list(scores)),
            tasks=tasks,
        )
        intervals = self.chosen.intervals(matrix, level=self.level)
        estimate, low, high = written([intervals.estimate[0], intervals.low[0], intervals.high[0]])  # as estimate's CSV writes them
        return HarnessEstimate(
            estimate=float(estimate),
            low=float(low),
            high=float(high),
            level=self.level,
            calibration=intervals.calibration,
            answered=answered_items,
        )

    def _source(self, tasks: list[str]) -> str:
        """The answers' name in sentences (``ResponseMatrix.source``)."""
        return f"the {self.harness} run of {', '.join(map(repr, tasks))}"

    @staticmethod
    def _identity(version: object, n_shot: object) -> dict[str, str]:
        """What identifies a task as ``ResponseMatrix.tasks`` records it: its version and n-shot, where known."""
        return {**({"version": str(version)} if version is not None else {}), **({"n_shot": str(n_shot)} if n_shot is not None else {})}

    def _check(self, task: str, hashes: Mapping[str, str], *, version: object, n_shot: object) -> None:
        """Check ``task``'s chosen samples (version, n-shot, content hashes) with ``SelectedMicroBenchmark.check_results``."""
        samples = self.by_task[task]
        matrix = ResponseMatrix(
            scores=np.full((1, len(samples)), np.nan),
            models=np.array(["the harness's model"]),
            items=np.array([f"{task}/{s}" for s in samples]),
            subtasks=np.array([task] * len(samples)),
            source=self._source([task]),
            tasks={task: self._identity(version, n_shot)},
            item_hashes=np.array([str(hashes.get(s, "")) for s in samples]),
        )
        self.chosen.check_results(matrix)
