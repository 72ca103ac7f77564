"""inspect: a task that runs a micro-benchmark's samples only and reports mdad's estimate among its metrics.

``micro_task(task, "micro.json")`` returns the task, under its own name and version, on the chosen
samples only; the scorer mdad read when selecting (the first, unless ``select --metric`` named another)
gains four metrics: ``mdad_estimate`` (the estimated full-benchmark accuracy), ``mdad_low`` and
``mdad_high`` (its interval at mdad estimate's default level) and ``mdad_answered`` (the items scored).
``inspect eval`` prints them and the log stores them; ``mdad estimate`` reads the same log and prints the
same numbers (mdad.harness.run). inspect-ai (the ``mdad[inspect]`` extra) is imported only when a task is
wrapped, so this module imports without it (docs/harness.md).
"""

import copy
import json
from pathlib import Path
from typing import Any

from mdad.data.readers.base import content_hash
from mdad.errors import MdadError
from mdad.harness.run import HarnessEstimate, MicroRun

__all__ = ["micro_task"]

METRICS = ("mdad_estimate", "mdad_low", "mdad_high", "mdad_answered")


def micro_task(task: Any, micro: str | Path) -> Any:
    """The inspect ``task`` on the samples of the micro-benchmark ``micro`` (micro.json) only, with mdad's estimate
    among the metrics of the scorer it was selected on. The task given is not changed.

    One sentence refuses an adaptive test, a micro-benchmark not chosen from inspect logs, a task it was not
    chosen from or of another version, a chosen sample the dataset lacks or whose input or target changed,
    and a scorer it cannot find."""
    from inspect_ai import Task, task_with
    from inspect_ai.dataset import MemoryDataset

    if not isinstance(task, Task):
        raise MdadError(f"micro_task takes an inspect Task (call the task function first), got {type(task).__name__}.")
    run = MicroRun(micro, "inspect")
    name = str(task.name)
    run.check_task(name, version=task.version)
    samples = [s if s.id is not None else s.model_copy(update={"id": n + 1}) for n, s in enumerate(task.dataset)]  # inspect's own ids
    by_id = {str(s.id): s for s in samples}
    run.check_samples(name, {sid: _content(s) for sid, s in by_id.items()}, version=task.version)
    chosen = set(run.by_task[name])
    dataset = MemoryDataset([s for s in samples if str(s.id) in chosen], name=task.dataset.name, location=task.dataset.location)
    scorers = list(task.scorer or [])
    if not scorers:
        raise MdadError(f"Task {name!r} has no scorer to estimate from.")
    metric = str(run.chosen.tasks.get(name, {}).get("metric") or "")
    scorer_name, _, key = metric.partition(".")
    names = [_scorer_name(s) for s in scorers]
    position = names.index(scorer_name) if scorer_name in names else 0 if not metric else -1
    if position < 0:
        raise MdadError(f"Task {name!r} has no scorer {scorer_name!r}, which the micro-benchmark was selected on (its scorers: {', '.join(names)}).")
    scorers[position] = _with_estimate(scorers[position], run, name, key)
    return task_with(copy.copy(task), dataset=dataset, scorer=scorers, name=name)


def _content(sample: Any) -> str:
    """The sample's content hash as the inspect reader computes it from the log ("" when its input is not text)."""
    if not isinstance(sample.input, str):
        return ""
    return content_hash(json.dumps(sample.input, sort_keys=True, default=str), json.dumps(sample.target, sort_keys=True, default=str))


def _scorer_name(scorer: Any) -> str:
    from inspect_ai._util.registry import registry_unqualified_name

    return str(registry_unqualified_name(scorer))


def _with_estimate(original: Any, run: MicroRun, task: str, key: str) -> Any:
    """A scorer scoring as ``original`` does, under its name, whose metrics add mdad's four."""
    from inspect_ai.scorer import Metric, SampleScore, metric, scorer, value_to_float
    from inspect_ai.scorer._scorer import scorer_metrics

    to_float = value_to_float()

    def estimate(scores: list[SampleScore]) -> HarnessEstimate:
        values = {}
        for sample in scores:
            value = sample.score.value
            if isinstance(value, dict):
                if key not in value:
                    raise MdadError(f"The scorer of task {task!r} gives several values; the micro-benchmark was selected on {key!r}, which it lacks.")
                value = value[key]
            values[str(sample.sample_id)] = to_float(value)
        return run.estimate({task: values}, partial=True)  # inspect also shows the metrics while the samples run

    def one(field: str) -> Metric:
        @metric(name=f"mdad_{field}")
        def made() -> Metric:
            def compute(scores: list[SampleScore]) -> float:  # annotated at run time: inspect reads the annotation
                return float(getattr(estimate(scores), field))

            return compute

        return made()

    metrics = scorer_metrics(original)
    added = [one(field) for field in ("estimate", "low", "high", "answered")]
    extended = [*metrics, *added] if isinstance(metrics, list) else {**metrics, key: [*metrics.get(key, []), *added]}

    @scorer(metrics=extended, name=_scorer_name(original))
    def wrapped() -> Any:
        async def score(state, target):
            return await original(state, target)

        return score

    return wrapped()
