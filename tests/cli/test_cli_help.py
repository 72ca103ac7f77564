"""Every command's --help at 80 and 200 columns: flags show no type, and no choice is cut."""

from __future__ import annotations

import pytest
import typer.main
from typer.core import TyperOption
from typer.testing import CliRunner

from mdad.cli import app

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_flags_without_a_type_and_every_choice_whole(command, columns):
    shown = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": str(columns)})
    assert shown.exit_code == 0, shown.output
    assert "<bool>" not in shown.output and "…" not in shown.output
    cells = {cell.strip() for line in shown.output.splitlines() for cell in line.split("│")}
    words = {word.strip(".,;:()'<>") for cell in cells for word in cell.replace("|", " ").split()}
    for param in typer.main.get_command(app).commands[command].params:  # type: ignore[attr-defined]
        if isinstance(param, TyperOption) and param.type_descriptor.is_choice and not param.hidden:
            for choice in param.type_descriptor.choices:
                assert str(choice) in words, (command, param.name, choice)  # named whole in its help
