"""What the harness logs recorded about how the source runs were made, for commands that repeat them.

A command that evaluates a new model on chosen items must carry the options the source runs
needed: lm-eval's model type, the shape of its ``--model_args`` (the keys, with the values every
source run shared kept and the model's own name replaced by a placeholder), ``--num_fewshot``
and ``--include_path`` for tasks read from local YAML files; inspect's task file, which the log
records relative to the folder inspect ran in. The readers store these per task beside the
task's identity (``ResponseMatrix.tasks``); each reader's command writer (mdad.data.readers.commands) writes the commands.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from pathlib import Path, PurePath

MODEL_PLACEHOLDER = "YOUR_MODEL"
# model-argument keys that name the model itself: always the placeholder, even when one source run logged them
MODEL_KEYS = frozenset({"pretrained", "model", "model_name", "path", "engine"})
BUILT_IN_TASKS = ("lm_eval", "tasks")  # an installed lm-eval's own task folders end in lm_eval/tasks/...


def placeholder(key: str) -> str:
    """The placeholder for a model argument whose value differs between the source runs."""
    return MODEL_PLACEHOLDER if key in MODEL_KEYS else f"YOUR_{key.upper()}"


def model_args_shape(runs_args: Iterable[str]) -> str:
    """The ``--model_args`` of a new run from the source runs' sorted ``key=value,...`` arguments: every
    key any run logged, its value kept when every run logged the same one, else a placeholder."""
    values: dict[str, set[str]] = {}
    runs = [dict(part.partition("=")[::2] for part in args.split(",") if part) for args in runs_args]
    for args in runs:
        for key, value in args.items():
            values.setdefault(key, set()).add(value)
    shape = []
    for key in sorted(values):
        shared = len(values[key]) == 1 and all(key in args for args in runs)
        shape.append(f"{key}={next(iter(values[key])) if shared and key not in MODEL_KEYS else placeholder(key)}")
    return ",".join(shape)


def lm_eval_include_path(task_config: dict) -> str:
    """The ``--include_path`` a task needs: the folder of the YAML file it was read from
    (``metadata.config_source``), or "" for a task of lm-eval's own (or when the log does not say)."""
    metadata = task_config.get("metadata")
    source = metadata.get("config_source") if isinstance(metadata, dict) else None
    if not isinstance(source, str) or not source.endswith((".yaml", ".yml")):
        return ""
    folder = PurePath(source).parent
    parts = folder.parts
    if any(parts[i : i + 2] == BUILT_IN_TASKS for i in range(len(parts) - 1)):
        return ""
    return str(folder)


def add_lm_eval_run(spec: dict[str, str], model_type: str, model_args: str, task_config: dict) -> None:
    """Add one source run of a task to what its ``spec`` (a ``ResponseMatrix.tasks`` entry) records:
    the model type, the model arguments' shape over every run so far, the include path."""
    if model_type:
        spec.setdefault("lm_eval_model", model_type)
    if model_args:
        seen = [args for args in spec.get("_model_args_runs", "").split(";") if args]
        if model_args not in seen:
            seen.append(model_args)
        spec["_model_args_runs"] = ";".join(seen)
    include = lm_eval_include_path(task_config)
    if include:
        spec.setdefault("include_path", include)


def finish_lm_eval(spec: dict[str, str]) -> None:
    """Replace the source runs' model arguments gathered by :func:`add_lm_eval_run` by their shape."""
    runs = spec.pop("_model_args_runs", "")
    if runs:
        spec["model_args"] = model_args_shape(runs.split(";"))


def inspect_task_args(eval_spec: dict) -> str:
    """The ``-T key=value`` options the source run passed to its task (inspect logs ``task_args_passed``)."""
    passed = eval_spec.get("task_args_passed")
    if not isinstance(passed, dict):
        return ""
    return " ".join(f"-T {shlex.quote(f'{key}={value}')}" for key, value in sorted(passed.items()) if isinstance(value, str | int | float | bool))


def find_logged_path(logged_path: str, near: Iterable[str | Path], *, folder: bool = False) -> str | None:
    """A path the logs recorded relative to the folder the harness ran in (inspect's task file,
    lm-eval's include path; ``folder``: a folder), as a path that works from the current folder:
    looked for from here, then from each folder around the paths ``near`` (the logs, the
    micro-benchmark); relative when it lies under the current folder, else absolute; None when it
    is nowhere to be found."""
    logged = Path(logged_path)
    bases: list[Path] = [Path.cwd()]
    for path in near:
        start = Path(path).resolve()
        if not str(path) or not start.exists():
            continue
        bases.extend([start, *start.parents] if start.is_dir() else list(start.parents))
    for base in [Path()] if logged.is_absolute() else dict.fromkeys(bases):
        found = (base / logged).resolve()
        if found.is_dir() if folder else found.is_file():
            relative = os.path.relpath(found)
            return found.as_posix() if relative.startswith("..") else Path(relative).as_posix()
    return None


def placeholders(command: str) -> list[str]:
    """The placeholders (``YOUR_...``) left in a command for the user to fill in."""
    return [word for word in command.replace("=", " ").replace(",", " ").split() if word.startswith("YOUR_")]
