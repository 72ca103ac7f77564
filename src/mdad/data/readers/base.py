"""What every reader shares: its registry entry, the options it is read with, and the per-task
choice of a metric or filter.

A reader is one module defining ``READER = Reader(name, detect, read, ...)``; the registry in
``mdad.data.readers`` lists them. ``read(path, options)`` returns a ResponseMatrix whose
``notes`` say what the reader dropped, merged or chose on the user's behalf.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from mdad.data.matrix import ResponseMatrix
from mdad.data.readers._cells import Cells
from mdad.data.readers.commands import CommandWriter
from mdad.errors import MdadError

RERUN_POLICIES = ("latest", "error")
Reruns = Literal["latest", "error"]
K = TypeVar("K")
R = TypeVar("R")
A = TypeVar("A")


@dataclass(frozen=True)
class Reader:
    """One results format: how to recognise it and how to read it.

    ``detect(path)`` says whether a file or folder holds this format; ``read(path, options)``
    reads it. ``expects`` describes the format in errors; ``options`` names the options it
    understands ("metric", "filter"); a ``fallback`` reader is chosen only when no other one
    recognises the path; ``commands`` writes the harness commands that run a new model on chosen
    items only (None: its harness cannot be asked for some items; mdad.data.readers.commands).
    """

    name: str
    detect: Callable[[Path], bool]
    read: Callable[[Path, ReadOptions], ResponseMatrix]
    expects: str = ""
    options: frozenset[str] = frozenset()
    fallback: bool = False
    commands: CommandWriter | None = None


class TaskChoice:
    """Which metric (or filter) each task is read with, asked once for every task.

    ``spec`` is None (each task's main one), a name for every task that has it (the others
    keep their main one, with a note), ``"TASK=NAME,..."`` per task, or both mixed
    (``"acc_norm,tiny_gen=exact_match"``); a mapping task -> name works as the latter.
    ``finish()`` raises when a name matched no task, listing what every task offers.
    """

    def __init__(self, spec: str | Mapping[str, str] | None, what: str):
        self.what = what
        self.default: str | None = None
        self.per_task: dict[str, str] = {}
        if isinstance(spec, Mapping):
            self.per_task = {str(k): str(v) for k, v in spec.items()}
        elif spec is not None:
            for part in (p.strip() for p in str(spec).split(",")):
                if not part:
                    continue
                task, eq, name = part.partition("=")
                if eq:
                    if not task.strip() or not name.strip():
                        raise MdadError(f"{what.capitalize()} {part!r} must read TASK={what.upper()}.")
                    self.per_task[task.strip()] = name.strip()
                elif self.default is not None:
                    raise MdadError(f"Give one {what} for all tasks, not {self.default!r} and {part!r}.")
                else:
                    self.default = part
        self.offered: dict[str, list[str]] = {}
        self.notes: list[str] = []
        self._default_used = False

    @property
    def given(self) -> bool:
        return self.default is not None or bool(self.per_task)

    def choose(self, task: str, available: list[str], main: str | None, where: str) -> str:
        """The name to read for ``task``, given what it offers and its main one."""
        self.offered.setdefault(task, list(available))
        if task in self.per_task:
            name = self.per_task[task]
            if name not in available:
                raise MdadError(f"Task {task!r} ({where}) has no {self.what} {name!r}; available: {', '.join(available) or 'none'}.")
            return name
        if self.default is not None and self.default in available:
            self._default_used = True
            return self.default
        if main is None:
            raise MdadError(f"Task {task!r} ({where}) has no per-item {self.what} to read.")
        if self.default is not None:
            self._note(f"Task {task!r} has no {self.what} {self.default!r}; its {self.what} {main!r} is read.")
        elif len(available) > 1:
            self._note(f"Task {task!r}: {self.what} {main!r} is read (it also has {', '.join(a for a in available if a != main)}).")
        return main

    def finish(self) -> list[str]:
        """The notes, after checking that every name asked for matched some task."""
        listing = "; ".join(f"{t}: {', '.join(names) or 'none'}" for t, names in self.offered.items())
        if self.default is not None and not self._default_used and self.offered:
            raise MdadError(f"No task has the {self.what} {self.default!r}; the tasks have {listing}.")
        unknown = [t for t in self.per_task if t not in self.offered]
        if unknown and self.offered:
            raise MdadError(f"There is no task {unknown[0]!r} to choose a {self.what} for; the tasks are {', '.join(self.offered)}.")
        return self.notes

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


@dataclass
class ReadOptions:
    """How to read harness results: metric and filter per task, and the policy for reruns.

    ``reruns``: runs of one model (same model arguments, same folder) on one task add up,
    item by item; an item answered in several of them is a rerun of that item: "latest" keeps
    the latest answer and says so in a note, "error" refuses.
    """

    metric: str | Mapping[str, str] | None = None
    filter_name: str | Mapping[str, str] | None = None
    reruns: Reruns = "latest"
    metrics: TaskChoice = field(init=False)
    filters: TaskChoice = field(init=False)

    def __post_init__(self) -> None:
        if self.reruns not in RERUN_POLICIES:
            raise MdadError(f"Unknown rerun policy {self.reruns!r}; use {' or '.join(RERUN_POLICIES)}.")
        self.metrics = TaskChoice(self.metric, "metric")
        self.filters = TaskChoice(self.filter_name, "filter")

    def given(self) -> list[str]:
        """The options the user set (to check the format understands them)."""
        return [name for name, choice in (("metric", self.metrics), ("filter", self.filters)) if choice.given]


def rerun_policy(policy: Reruns) -> str:
    """How notes and errors name a rerun policy, for library and command-line users alike."""
    return f"rerun policy {policy!r}"


def combine_runs(
    runs: Mapping[K, list[tuple[str, R]]],
    answers: Callable[[K, R], Mapping[Hashable, A]],
    keep: Callable[[K, list[A]], None],
    *,
    reruns: Reruns,
    label: Callable[[K], str],
    where: Callable[[R], str],
) -> list[str]:
    """Each key's answers, item by item, over all its runs, handed to ``keep(key, answers)``; the notes.

    ``runs`` maps a key (a model and a task) to its [(date, run), ...]; ``answers(key, run)``
    reads one run as {item: answer}; one key's runs are held at a time. Runs of one key add up:
    an item answered in one run is kept; an item answered in several runs is a rerun of that
    item, and the policy applies to it: "latest" keeps the latest run's answer, with one note per key naming how many items
    were answered again and in which runs; "error" refuses in one sentence. ``label(key)``
    names the key ("Model 'X' on task 'T'"), ``where(run)`` a run (its file).
    """
    notes: list[str] = []
    for key, found in runs.items():
        ordered = [run for _, run in sorted(found, key=lambda date_run: date_run[0])]
        kept: dict[Hashable, A] = {}
        answered_in: dict[Hashable, list[int]] = {}
        for position, run in enumerate(ordered):
            for item, answer in answers(key, run).items():
                kept[item] = answer
                answered_in.setdefault(item, []).append(position)
        again = [positions for positions in answered_in.values() if len(positions) > 1]
        if again:
            files = ", ".join(where(ordered[p]) for p in sorted({p for positions in again for p in positions}))
            items = f"{len(again)} {'item was' if len(again) == 1 else 'items were'} answered again"
            if reruns == "error":
                raise MdadError(
                    f"{label(key)} was run {len(ordered)} times and {items} ({files}); keep one answer "
                    f"per item or read with the {rerun_policy('latest')}."
                )
            notes.append(
                f"{label(key)} was run {len(ordered)} times and {items} ({files}); the latest answer of each is read ({rerun_policy('latest')})."
            )
        keep(key, list(kept.values()))
    return notes


def add_to(cells: Cells) -> Callable[[object, list[list[dict]]], None]:
    """A ``keep`` for :func:`combine_runs` whose answers are lists of cells: each cell added to ``cells``."""

    def keep(key: object, kept: list[list[dict]]) -> None:
        for rows in kept:
            for cell in rows:
                cells.add(**cell)

    return keep


@dataclass(frozen=True)
class RunIdentity:
    """What makes a run a model of its own: its name, its arguments (revision, ...) and its folder."""

    name: str
    args: tuple[tuple[str, str], ...] = ()
    folder: str = ""


CHECKPOINT_ARGS = ("revision", "peft", "delta")
UNSET = frozenset({"", "null", "None", "main"})


def run_name(identity: RunIdentity) -> str:
    """The name a run is shown by, whatever else is read with it: its name, plus the arguments that
    tell checkpoints of one model apart (``revision``, ``peft``, ``delta``) when set to other than
    the default (``main``, empty): ``name,revision=step4000``."""
    args = dict(identity.args)
    return ",".join([identity.name, *(f"{k}={args[k]}" for k in CHECKPOINT_ARGS if args.get(k, "") not in UNSET)])


def model_names(identities: set[RunIdentity]) -> tuple[dict[RunIdentity, str], list[str]]:
    """A distinct, readable name per model, and a note per name shared by several models.

    A model is called by :func:`run_name` (its name, with its revision if any), so the name does
    not depend on the other models read with it. Only where runs still share that name are the
    other arguments that differ between them added (``name,dtype=float16``), then, when those
    are the same, the folder (``name (ckpt-1000)``). Runs are never merged.
    """
    by_name: dict[str, list[RunIdentity]] = {}
    for identity in sorted(identities, key=lambda i: (i.name, i.args, i.folder)):
        by_name.setdefault(identity.name, []).append(identity)
    names, notes = {}, []
    for name, group in by_name.items():
        labels = {identity: run_name(identity) for identity in group}
        if len(group) > 1:
            for label in set(labels.values()):
                alike = [i for i in group if labels[i] == label]
                if len(alike) > 1:
                    labels.update(_told_apart(label, alike))
            differ = _differing_args(group)
            what = f"different arguments ({', '.join(differ)})" if differ else "the same arguments in different folders"
            notes.append(f"Model {name!r} was run with {what}: each run is a model of its own ({', '.join(labels[i] for i in group)}).")
        names.update(labels)
    return names, notes


def _differing_args(runs: list[RunIdentity]) -> list[str]:
    args = [dict(identity.args) for identity in runs]
    return [k for k in sorted({k for a in args for k in a}) if len({a.get(k) for a in args}) > 1]


def _told_apart(label: str, runs: list[RunIdentity]) -> dict[RunIdentity, str]:
    """Names for runs shown alike: the arguments that differ between them, then their folder."""
    differ = [k for k in _differing_args(runs) if k not in CHECKPOINT_ARGS]
    labels = {i: ",".join([label, *(f"{k}={v}" for k, v in i.args if k in differ)]) for i in runs}
    if len(set(labels.values())) < len(runs):
        labels = {i: f"{labels[i]} ({i.folder})" for i in runs}
    return labels


def flat_args(config: object, prefix: str = "") -> tuple[tuple[str, str], ...]:
    """Nested model arguments as sorted (dotted key, value text) pairs."""
    if not isinstance(config, Mapping):
        return ()
    out: list[tuple[str, str]] = []
    for key, value in config.items():
        if isinstance(value, Mapping):
            out += flat_args(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value if isinstance(value, str) else json.dumps(value, default=str)))
    return tuple(sorted(out))


def relative_label(folder: Path, root: Path) -> str:
    """A folder as the user sees it: relative to what was read."""
    try:
        label = folder.relative_to(root).as_posix()
    except ValueError:
        label = folder.name
    return label if label not in ("", ".") else folder.name


def content_hash(*parts: object) -> str:
    """A short stable hash of an item's content (document, gold answer), to compare it across reads."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()
    return digest[:16]
