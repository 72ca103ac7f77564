"""`mdad export`: a micro-benchmark as a harness task that reports mdad's estimate itself (mdad.harness)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mdad.cli.common import app, console, friendly_errors
from mdad.errors import MdadError
from mdad.harness.lm_eval_export import export_lm_eval, run_command


@app.command("export")
@friendly_errors
def export_command(
    micro: Annotated[Path, typer.Argument(help="The micro-benchmark (micro.json) 'mdad select' wrote.")],
    lm_eval: Annotated[
        Path | None,
        typer.Option("--lm-eval", help="Write an lm-eval task folder here: run it with --include_path and --tasks NAME."),
    ] = None,
    name: Annotated[str | None, typer.Option(help="The exported group's name (default: mdad_ and the file's stem).")] = None,
) -> None:
    """Export a static micro-benchmark as a harness task: it runs the chosen items only and reports mdad's
    estimate of the full-benchmark accuracy with its interval among the harness's own metrics. (inspect needs
    no export: wrap the task with mdad.inspect.micro_task.)"""
    if lm_eval is None:
        raise MdadError("Say which harness to export to: --lm-eval DIR (for inspect, wrap the task in Python with mdad.inspect.micro_task).")
    files = export_lm_eval(micro, lm_eval, name)
    group = next(p.stem for p in files if p.suffix == ".yaml")
    console.print(f"Wrote {', '.join(str(p) for p in files)}.")
    command, notes = run_command(micro, lm_eval, group)
    console.print(f"Run it with: {command}", soft_wrap=True, markup=False)
    for note in notes:
        console.print(note, markup=False)
