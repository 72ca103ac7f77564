"""The lm-eval task class of an exported micro-benchmark (``mdad export --lm-eval``): the original task, its
chosen documents only, with mdad's estimate among its metrics.

lm-eval builds it from the exported group's YAML (``class: !function``) with the original task's whole
configuration, so the task keeps its name, version, prompts and metrics, and its logs are those of the
original task: ``mdad estimate`` reads them as it reads any run. It runs only the chosen documents under
their own indices (as ``--samples`` would), and adds four metrics whose aggregation (lm-eval's hook)
computes, from every task of the micro-benchmark in the run, mdad's estimate of the full-benchmark
accuracy, its interval and the number of items answered (``MicroRun.estimate``). Importing this module
does not need lm-eval; ``micro_task_class`` imports it, inside lm-eval (docs/harness.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mdad.data.readers.base import content_hash
from mdad.data.readers.lm_eval import OWN_METRICS, main_metric
from mdad.errors import MdadError
from mdad.harness.run import HarnessEstimate, MicroRun

METRICS = tuple(OWN_METRICS + name for name in ("estimate", "low", "high", "answered"))
# per micro.json, per task: document index -> the score the first filter gave it (the filter mdad reads
# by default), shared by the tasks of one run, which lm-eval aggregates only once every task is scored
ANSWERS: dict[str, dict[str, dict[str, float]]] = {}


def micro_task_class(path: str | Path) -> type:
    """The task class lm-eval builds each task of the micro-benchmark ``path`` (micro.json) with."""
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.utils import handle_non_serializable, hash_string

    run = MicroRun(path, "lm-eval")

    class MicroTask(ConfigurableTask):
        """The original task on the chosen documents only, with mdad's estimate among its metrics."""

        def __init__(self, config: dict[str, Any] | None = None) -> None:
            super().__init__(config={k: v for k, v in (config or {}).items() if k != "class"})
            self._mdad_task = str(self.config.task)
            run.check_task(self._mdad_task, version=self.VERSION)
            self._mdad_chosen = sorted(int(doc) for doc in run.by_task[self._mdad_task])
            self._mdad_answers = ANSWERS.setdefault(str(run.path), {}).setdefault(self._mdad_task, {})
            self._mdad_answers.clear()  # a new run of the task
            self._mdad_at = -1  # the index of the document being scored (process_results is not told it)
            docs = list(self.eval_docs)
            hashes = {str(i): self._content(docs[i]) for i in self._mdad_chosen if i < len(docs)}
            run.check_samples(self._mdad_task, hashes, version=self.VERSION)

        def _content(self, doc: dict) -> str:
            """The document's content hash as the lm-eval reader computes it from the logged doc_hash and target_hash."""
            target = self.doc_to_target(doc)
            doc_hash = hash_string(json.dumps(doc, indent=2, default=handle_non_serializable, ensure_ascii=False))
            return content_hash(doc_hash, hash_string(str(target)))

        def doc_iterator(self, *, rank: int = 0, limit: int | None = None, world_size: int = 1, samples: list[int] | None = None):
            """The chosen documents under their own indices, as ``--samples`` runs them (so the logs carry those)."""
            if limit is not None or samples:
                raise MdadError(f"Task {self._mdad_task!r} of the micro-benchmark runs its chosen documents only; drop --limit and --samples.")
            chosen = set(self._mdad_chosen)
            for n, (index, doc) in enumerate((i, d) for i, d in enumerate(self.eval_docs) if i in chosen):
                if n % world_size == rank:
                    self._mdad_at = index
                    yield index, doc

        def process_results(self, doc: dict, results: Any) -> dict:
            found = super().process_results(doc, results)
            metric = run.chosen.tasks.get(self._mdad_task, {}).get("metric") or main_metric(list(found), {"metric_list": self.config.metric_list})
            if metric not in found:
                raise MdadError(f"Task {self._mdad_task!r} no longer gives the metric {metric!r} the micro-benchmark was selected on.")
            key = str(self._mdad_at)
            self._mdad_answers.setdefault(key, float(found[metric]))  # the first filter's, mdad's default
            return {**found, **dict.fromkeys(METRICS, f"{self._mdad_task}/{key}")}

        def _estimate(self) -> HarnessEstimate:
            shot = self.config.num_fewshot or 0
            scores = ANSWERS[str(run.path)]
            return run.estimate(scores, n_shots={self._mdad_task: shot})  # versions: checked when built

        def aggregation(self) -> dict:
            return {**super().aggregation(), **{name: self._aggregate(name.removeprefix(OWN_METRICS)) for name in METRICS}}

        def _aggregate(self, field: str):
            """lm-eval's aggregation of one of mdad's metrics: the ``field`` of the estimate from every task of the run."""
            return lambda items: getattr(self._estimate(), field)

        def higher_is_better(self) -> dict:
            return {**super().higher_is_better(), **dict.fromkeys(METRICS, True)}

    return MicroTask
