"""What ``mdad select`` does: choose the items, measure them on held-out models, write them and say so.

``build_selection`` is the whole computation (select, sample lists, assessment), callable from
Python too; ``Selection`` writes the files and gives the lines the command prints. What the options
ask is checked before any work (``check_sample_lists``, ``harness_plan``): a request refused after
the selection would have cost its whole time and left files behind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from mdad import methods as method_registry
from mdad.assessment import assess
from mdad.data.matrix import ResponseMatrix
from mdad.data.readers.commands import CommandWriter, items_by_task
from mdad.defaults import DEFAULT_THRESHOLD
from mdad.errors import MdadError
from mdad.experiment.executors import check_scheduler
from mdad.experiment.grid import default_targets
from mdad.experiment.splits import MIN_MODELS, require_runs_memory
from mdad.metrics import analytic
from mdad.metrics.pairwise import AgreementCurve
from mdad.micro import file_format
from mdad.micro.harness import command_writer, writers
from mdad.micro.notes import Note, command_notes, describe_assessment, describe_exact
from mdad.micro.selected import SelectedMicroBenchmark, check_request, select
from mdad.outputs import atomic_files, writing
from mdad.wording import plural


def check_sample_lists(method: str, *, samples_file: bool | None = None) -> None:
    """Refuse an unknown method, and a samples file asked for (``samples_file`` True) for an adaptive test
    (each model gets its own items)."""
    if method_registry.get(method).adaptive and samples_file:
        raise MdadError(
            f"{method} asks each new model its own items one at a time, so there is no fixed sample list: "
            "ask the first item it names, then 'mdad estimate' names the next after each answer."
        )


@dataclass(frozen=True)
class HarnessPlan:
    """What ``select`` will give for running new models, known before any work: the data's command
    writer (None: none), whether a samples file is written, and why there are no commands (``why_none``)."""

    writer: CommandWriter | None = None
    samples_file: bool = False
    why_none: str = ""


def harness_plan(matrix: ResponseMatrix, method: str, *, samples_file: bool | None = None) -> HarnessPlan:
    """Which harness commands a selection from ``matrix`` comes with, checked before any work.

    ``samples_file``: True to require a samples file (an error sentence when the data's harness reads
    none, or for an adaptive test), None to write one when the harness reads one (not for an adaptive
    test), False never (the commands then carry the items)."""
    check_sample_lists(method, samples_file=samples_file)
    writer = command_writer(matrix.tasks, matrix.subtasks.tolist())
    if samples_file and (writer is None or writer.samples_file is None):
        raise MdadError(
            f"A samples file can only be written for the logs of a harness that reads one ({writers(samples_file=True)}); "
            f"{matrix.source} is not, so there is no samples file to write."
        )
    if writer is None:
        return HarnessPlan()
    try:  # every item, as any of them may be chosen
        writer.check(items_by_task(matrix.items, matrix.subtasks))
    except MdadError as exc:
        if samples_file:
            raise
        return HarnessPlan(why_none=f"No {writer.harness} command is printed: {exc}")
    adaptive = method_registry.get(method).adaptive
    return HarnessPlan(writer, samples_file=writer.samples_file is not None and samples_file is not False and not adaptive)


def assessment_runs(n_models: int, runs: int, targets: int | None) -> int:
    """The held-out runs that can be made: none when, with the default targets, there are too few models
    to hold out 2 targets and keep 2 source models."""
    return 0 if runs and targets is None and n_models < MIN_MODELS else runs


@dataclass(frozen=True, eq=False)
class Selection:
    """A micro-benchmark chosen from ``matrix`` with what goes with it: the content of the harness's
    samples file (None: none to write), what the harness commands will be (``plan``), and the
    held-out runs asked for (``runs_asked``)."""

    chosen: SelectedMicroBenchmark
    matrix: ResponseMatrix
    samples: object | None = None
    runs_asked: int = 0
    plan: HarnessPlan = HarnessPlan()

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
        """Write the micro-benchmark to ``out`` and, when there is one, the samples file to ``samples_path``:
        both whole or neither (an error leaves each as it was)."""
        writes = [(out, "the micro-benchmark file")]
        if self.samples is not None and samples_path is not None:
            writes.append((samples_path, str(self.plan.writer.samples_file) if self.plan.writer else "the samples file"))
        texts = [file_format.dumps(self.chosen.to_json()), json.dumps(self.samples) + "\n"]
        with atomic_files(writes) as temps:
            for (path, what), temp, text in zip(writes, temps, texts, strict=False):
                with writing(path, what):
                    temp.write_text(text, encoding="utf-8")

    def report(self, out: str | Path, samples_path: str | Path | None = None) -> list[Note]:
        """What was written where, how reliable it is, and how to run new models on it."""
        chosen, matrix, writer = self.chosen, self.matrix, self.plan.writer
        method, size, n_subtasks = chosen.method, chosen.size, len(set(chosen.subtasks.tolist()))
        if chosen.adaptive:
            first = chosen.first_item()
            notes = [
                Note(
                    f"{method}: an adaptive test of {plural(size, 'item')} from the pool of {matrix.n_items} items of "
                    f"{matrix.source} ({plural(n_subtasks, 'subtask')}) written to {out}. Every new model "
                    f"starts with item {first}; after each answer 'mdad estimate {out} RESULTS' "
                    "names its next item."
                )
            ]
            if writer is not None:
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
                    "that holds whatever the source models are" + (" (the commands below include them)." if writer is not None else ".")
                )
            )
            if chosen.adaptive and writer is not None:
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
        if writer is not None and not chosen.adaptive:
            written = self.samples is not None and samples_path is not None
            notes.extend(
                command_notes(
                    chosen.harness_commands(samples_file=str(samples_path) if written else None, near=[matrix.source]),
                    (f"Items also written to {writer.samples_file} {samples_path}. " if written else "")
                    + f"Evaluate a new model on these items only with {writer.harness}, then: mdad estimate {out} NEW",
                )
            )
        if self.plan.why_none:
            notes.append(Note(self.plan.why_none))
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
    samples_file: bool | None = None,
    audit_items: int = 0,
    on_selected: Callable[[], None] | None = None,
    on_runs: Callable[[float], None] | None = None,
    scheduler: str | None = None,
) -> Selection:
    """Choose ``size`` items of ``matrix`` with ``method`` (``mdad.select``), the content of the harness's samples
    file (``samples_file``: see ``harness_plan``), and its assessment on ``runs`` held-out splits (``mdad.assess``;
    skipped with too few models); ``audit_items``: uniformly drawn items on top (``mdad.select``).

    The options (``harness_plan``) and the runs, against memory as ``mdad run``'s are, are checked before
    anything else, so a request that cannot be met is refused before the long part. The items are chosen, and the sample lists made,
    in this process while worker processes run the held-out runs (one worker: first); an error there
    stops the runs. For a progress display, ``on_selected`` is called once the items are chosen and
    ``on_runs`` with the number of held-out runs finished as they finish. ``scheduler``: the address of a Dask
    scheduler that runs the held-out runs instead of local processes (as ``mdad run --scheduler``)."""
    if scheduler is not None:
        check_scheduler(scheduler)
    plan = harness_plan(matrix, method, samples_file=samples_file)
    check_request(matrix, method, size, audit_items)
    made = assessment_runs(matrix.n_models, runs, targets)
    if made:  # the rule that bounds 'mdad run --runs' (draws and pairs of targets), before the selection
        require_runs_memory(made, matrix.n_models, matrix.n_items, targets or default_targets(matrix.n_models))
    found: list[tuple[SelectedMicroBenchmark, object | None]] = []

    def choose() -> None:
        chosen = select(matrix, method, size, seed=seed, audit_items=audit_items)
        found.append((chosen, chosen.harness_samples() if plan.samples_file else None))
        if on_selected is not None:
            on_selected()

    if not made and scheduler is not None:
        why = "--assess-runs 0 asks for none" if not runs else f"{matrix.n_models} models are too few to hold any out"
        raise MdadError(f"--scheduler runs the held-out runs of the assessment and {why}; drop --scheduler.")
    if not made:
        choose()
        chosen, samples = found[0]
        return Selection(chosen, matrix, samples, runs, plan)
    assessment = assess(
        matrix,
        method,
        size,
        runs=made,
        targets=targets,
        seed=seed,
        workers=workers,
        threshold=threshold,
        on_runs=on_runs,
        meanwhile=choose,
        scheduler=scheduler,
    )
    chosen, samples = found[0]
    return Selection(chosen.with_assessment(assessment), matrix, samples, runs, plan)
