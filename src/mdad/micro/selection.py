"""What ``mdad select`` does: choose the items, measure them on held-out models, write them and say so.

``build_selection`` is the whole computation (select, sample lists, assessment), callable from
Python too; ``Selection`` writes the files and gives the lines the command prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from mdad import methods as method_registry
from mdad.assessment import assess
from mdad.data.matrix import ResponseMatrix
from mdad.data.readers import lm_eval
from mdad.defaults import DEFAULT_THRESHOLD
from mdad.errors import MdadError
from mdad.experiment.grid import default_targets
from mdad.experiment.splits import MIN_MODELS, require_runs_memory
from mdad.metrics import analytic
from mdad.metrics.pairwise import AgreementCurve
from mdad.micro.harness import harness_of
from mdad.micro.notes import Note, command_notes, describe_assessment, describe_exact
from mdad.micro.selected import SelectedMicroBenchmark, select
from mdad.wording import plural


def check_sample_lists(method: str, *, lm_eval_samples: bool, inspect: bool) -> None:
    """Refuse an unknown method, and sample lists for an adaptive test (each model gets its own items)."""
    if method_registry.get(method).adaptive and (lm_eval_samples or inspect):
        raise MdadError(
            f"{method} asks each new model its own items one at a time, so there is no fixed sample list: "
            "ask the first item it names, then 'mdad estimate' names the next after each answer."
        )


def assessment_runs(n_models: int, runs: int, targets: int | None) -> int:
    """The held-out runs that can be made: none when, with the default targets, there are too few models
    to hold out 2 targets and keep 2 source models."""
    return 0 if runs and targets is None and n_models < MIN_MODELS else runs


@dataclass(frozen=True, eq=False)
class Selection:
    """A micro-benchmark chosen from ``matrix`` with what goes with it: the lm-eval samples list (None:
    not asked for), whether the inspect commands were asked for, and the held-out runs asked for
    (``runs_asked``)."""

    chosen: SelectedMicroBenchmark
    matrix: ResponseMatrix
    lm_eval_samples: dict[str, list[int]] | None = None
    inspect: bool = False
    runs_asked: int = 0

    @cached_property
    def exact_curve(self) -> AgreementCurve | None:
        """For uniform random sampling: the agreement curve of a ``size``-item draw over every pair of the
        data's models, exactly (docs/protocol.md#exact-answers): no held-out runs, so none of their
        noise. None for the other methods (and for fewer than two models)."""
        chosen = self.chosen
        if chosen.adaptive or method_registry.get(chosen.method).design != "uniform" or self.matrix.n_models < 2:
            return None
        return analytic.streamed_curve(self.matrix, chosen.size, "random", seed=chosen.seed)

    @property
    def too_few_models(self) -> bool:
        """Assessment runs were asked for but there are too few models to make them."""
        return bool(self.runs_asked) and self.chosen.assessment is None

    def save(self, out: str | Path, samples_path: str | Path | None = None) -> None:
        """Write the micro-benchmark to ``out`` and, when there is one, the lm-eval samples list to ``samples_path``."""
        self.chosen.save(out)
        if self.lm_eval_samples is not None and samples_path is not None:
            lm_eval.write_samples_list(self.lm_eval_samples, samples_path)

    def report(self, out: str | Path, samples_path: str | Path | None = None) -> list[Note]:
        """What was written where, how reliable it is, and how to run new models on it."""
        chosen, matrix = self.chosen, self.matrix
        method, size, n_subtasks = chosen.method, chosen.size, len(set(chosen.subtasks.tolist()))
        if chosen.adaptive:
            first = chosen.first_item()
            notes = [
                Note(
                    f"{method}: an adaptive test of {size} items from the pool of {matrix.n_items} items of "
                    f"{matrix.source} ({plural(n_subtasks, 'subtask')}) written to {out}. Every new model "
                    f"starts with item {first}; after each answer 'mdad estimate {out} RESULTS' "
                    "names its next item."
                )
            ]
            if harness_of(chosen.tasks, chosen.subtasks.tolist()) in ("lm-eval", "inspect"):
                notes.extend(
                    command_notes(
                        chosen.harness_commands([first], near=[matrix.source]),
                        f"Ask item {first} with this command, every item of one new model into one folder (NEW), then: mdad estimate {out} NEW",
                    )
                )
        else:
            notes = [Note(f"{method}: {size} of {matrix.n_items} items from {matrix.source} ({plural(n_subtasks, 'subtask')}) written to {out}.")]
        if chosen.audit is not None:
            m = chosen.audit.size
            notes.append(
                Note(
                    f"Plus {plural(m, 'audit item')} drawn at random from the "
                    + (
                        f"{matrix.n_items} pool items: each new model answers its test of up to {size} items and these {m} (at most {size + m}); "
                        if chosen.adaptive
                        else f"{matrix.n_items - size} items not chosen: each new model answers {size} + {m} = {size + m} items; "
                    )
                    + "'mdad estimate' corrects the estimate with them, with an interval "
                    "that holds whatever the source models are"
                    + (" (the commands below include them)." if self.lm_eval_samples is not None or self.inspect else ".")
                )
            )
            if chosen.adaptive and harness_of(chosen.tasks, chosen.audit.subtasks.tolist()) in ("lm-eval", "inspect"):
                notes.extend(
                    command_notes(
                        chosen.harness_commands(list(chosen.audit.item_ids), near=[matrix.source]),
                        "Ask every new model the audit items too with this command, into the same folder (NEW):",
                    )
                )
        if chosen.assessment is not None:
            notes.append(Note(describe_assessment(chosen.assessment)))
        exact = self.exact_curve
        threshold = chosen.assessment.threshold if chosen.assessment is not None else DEFAULT_THRESHOLD
        exact_text = describe_exact(exact, size, threshold, self.matrix.n_models) if exact is not None else None
        if exact_text is not None:
            notes.append(Note(exact_text))
        if self.lm_eval_samples is not None and samples_path is not None:
            notes.extend(
                command_notes(
                    chosen.harness_commands(samples_file=str(samples_path), near=[matrix.source]),
                    f"lm-eval samples ({', '.join(self.lm_eval_samples)}) written to {samples_path}. Evaluate a "
                    f"new model on these items only with this command, then: mdad estimate {out} NEW",
                )
            )
        if self.inspect:
            notes.extend(
                command_notes(
                    chosen.harness_commands(near=[matrix.source]),
                    f"Evaluate a new model on these samples only with inspect, then: mdad estimate {out} NEW",
                )
            )
        if self.too_few_models:
            notes.append(
                Note(
                    f"Not assessed: with {plural(matrix.n_models, 'model')} there are too few to hold out 2 "
                    f"targets and keep 2 source models (at least {MIN_MODELS} are needed)."
                )
            )
        return notes


def build_selection(
    matrix: ResponseMatrix,
    method: str,
    size: int,
    *,
    seed: int = 0,
    runs: int = 20,
    targets: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    workers: int = 1,
    lm_eval_samples: bool = False,
    inspect: bool = False,
    audit_items: int = 0,
    on_selected: Callable[[], None] | None = None,
    on_runs: Callable[[float], None] | None = None,
) -> Selection:
    """Choose ``size`` items of ``matrix`` with ``method`` (``mdad.select``), write-ready sample lists when asked
    for, and its assessment on ``runs`` held-out splits (``mdad.assess``; skipped with too few models);
    ``audit_items``: uniformly drawn items on top (``mdad.select``).

    The runs are checked against memory as ``mdad run``'s are before anything else, so a request that
    cannot be met is refused before the long part. The items are chosen, and the sample lists made,
    in this process while worker processes run the held-out runs (one worker: first); an error there
    stops the runs. For a progress display, ``on_selected`` is called once the items are chosen and
    ``on_runs`` with the number of held-out runs finished as they finish."""
    check_sample_lists(method, lm_eval_samples=lm_eval_samples, inspect=inspect)
    made = assessment_runs(matrix.n_models, runs, targets)
    if made:  # the rule that bounds 'mdad run --runs' (draws and pairs of targets), before the selection
        require_runs_memory(made, matrix.n_models, matrix.n_items, targets or default_targets(matrix.n_models))
    found: list[tuple[SelectedMicroBenchmark, dict[str, list[int]] | None]] = []

    def choose() -> None:
        chosen = select(matrix, method, size, seed=seed, audit_items=audit_items)
        samples = chosen.lm_eval_samples() if lm_eval_samples else None
        if inspect and harness_of(chosen.tasks, chosen.subtasks.tolist()) != "inspect":
            raise MdadError(
                f"--inspect prints 'inspect eval' commands, but {matrix.source} is not inspect logs alone; "
                "for lm-eval logs write the items with --lm-eval-samples."
            )
        found.append((chosen, samples))
        if on_selected is not None:
            on_selected()

    if not made:
        choose()
        chosen, samples = found[0]
        return Selection(chosen, matrix, samples, inspect, runs)
    assessment = assess(
        matrix, method, size, runs=made, targets=targets, seed=seed, workers=workers, threshold=threshold, on_runs=on_runs, meanwhile=choose
    )
    chosen, samples = found[0]
    return Selection(chosen.with_assessment(assessment), matrix, samples, inspect, runs)
