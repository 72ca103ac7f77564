"""``mdad export --lm-eval DIR``: an lm-eval task folder that runs a micro-benchmark and reports mdad's estimate.

The folder holds a copy of micro.json, a group YAML naming each original task with the task class of
mdad.harness.lm_eval_task (lm-eval builds it from the original task's own configuration, which it finds
among its tasks or the include path), and the small Python module that hands lm-eval that class. The
micro-benchmark is checked here first (static, chosen from lm-eval logs), as lm-eval checks it again when
it builds the tasks (docs/harness.md).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from mdad.data.readers.lm_eval_commands import MODEL_TYPE_PLACEHOLDER
from mdad.data.readers.logged_setup import MODEL_PLACEHOLDER
from mdad.errors import MdadError
from mdad.harness.run import MicroRun
from mdad.outputs import write_text

MODULE = "mdad_micro"  # the Python module of the folder (mdad_micro.py)
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")

MODULE_TEXT = '''"""The task class of this micro-benchmark for lm-eval (written by mdad export; mdad must be installed beside lm-eval)."""

from pathlib import Path

from mdad.harness.lm_eval_task import micro_task_class

MicroTask = micro_task_class(Path(__file__).with_name("micro.json"))
'''


def default_name(micro: str | Path) -> str:
    """The group's name when none is given: mdad_ and the micro-benchmark file's stem."""
    return "mdad_" + re.sub(r"[^A-Za-z0-9_]", "_", Path(micro).stem)


def group_yaml(run: MicroRun, name: str) -> str:
    """The group YAML: every task of the micro-benchmark, built with the micro-benchmark's task class."""
    lines = [
        f"# The micro-benchmark of micro.json ({run.chosen.method}, {run.chosen.size} items), written by mdad export:",
        "# each task runs its chosen documents only and reports mdad's estimate of the full-benchmark accuracy",
        "# (mdad_estimate), its interval (mdad_low, mdad_high) and the items answered (mdad_answered).",
        f"group: {name}",
        "task:",
    ]
    for task in run.by_task:
        lines += [f"  - task: {task}", f"    class: !function {MODULE}.MicroTask"]
    lines += ["metadata:", "  version: 1"]
    return "\n".join(lines) + "\n"


def export_lm_eval(micro: str | Path, folder: str | Path, name: str | None = None) -> list[Path]:
    """Write the lm-eval task folder of ``micro`` (micro.json) into ``folder``, its group named ``name``
    (default: ``default_name``); the files written. Refuses what lm-eval cannot run (MicroRun) and a folder
    holding files of its own besides an earlier export's."""
    run = MicroRun(micro, "lm-eval")
    name = name or default_name(micro)
    if not NAME.match(name):
        raise MdadError(f"--name {name!r} is not a task name lm-eval accepts (letters, digits, _ . -).")
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise MdadError(f"{out} is a file; --lm-eval takes the folder to write the task into.")
    files = {out / "micro.json": run.path.read_text(encoding="utf-8"), out / f"{MODULE}.py": MODULE_TEXT, out / f"{name}.yaml": group_yaml(run, name)}
    if out.is_dir():
        others = sorted(p.name for p in out.iterdir() if p not in files and p.name != "__pycache__" and not _exported(p))
        if others:
            raise MdadError(f"{out} already holds other files ({', '.join(others[:3])}); export into a new or empty folder.")
    out.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        write_text(path, text, "the exported task")
    return list(files)


def _exported(path: Path) -> bool:
    """Whether ``path`` is the group YAML of an earlier export."""
    return path.suffix == ".yaml" and path.read_text(encoding="utf-8").startswith("# The micro-benchmark of micro.json")


def run_command(micro: str | Path, folder: str | Path, name: str) -> tuple[str, list[str]]:
    """The lm-eval command that runs the exported group ``name`` from ``folder``, and what to mind: lm-eval must find
    the original tasks too, so when the source runs named an include path, the folder goes inside it."""
    run = MicroRun(micro, "lm-eval")
    included = sorted({str(spec["include_path"]) for spec in run.chosen.tasks.values() if spec.get("include_path")})
    include = included[0] if len(included) == 1 and Path(folder).resolve().is_relative_to(Path(included[0]).resolve()) else str(folder)
    logged = {(str(spec.get("lm_eval_model") or ""), str(spec.get("model_args") or "")) for spec in run.chosen.tasks.values()}
    model_type, args = logged.pop() if len(logged) == 1 else ("", "")  # as the source runs logged them, when they agree
    model = f"--model {shlex.quote(model_type or MODEL_TYPE_PLACEHOLDER)} --model_args {shlex.quote(args or 'pretrained=' + MODEL_PLACEHOLDER)}"
    command = f"lm-eval run {model} --include_path {shlex.quote(include)} --tasks {name}"
    notes = []
    if included and include == str(folder):
        notes.append(
            f"The source runs found the original tasks in the include path {', '.join(map(repr, included))} (as logged): lm-eval must "
            "find them too, so export into a folder inside it and pass that include path."
        )
    return command, notes
