"""The command line (Typer): thin, each module registers its commands on one app.

``main`` is the console entry: it takes charge of Ctrl-C and SIGTERM first and only then imports the
commands (and with them numpy, pandas and the rest), so that an interrupt at any moment ends with
one sentence, and of the commands only the module of the one asked for; kmedoids is imported
before them, without scikit-learn (``lean``). ``app`` (every command) is imported on first use.
"""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING

from mdad.cli import allocator, interrupts, lean

if TYPE_CHECKING:
    from mdad.cli.common import app

__all__ = ["app", "main"]


MODULES = ("data", "micro", "export", "plan", "run", "methods")  # in the order --help lists their commands
COMMANDS = {
    "info": "data",
    "convert": "data",
    "datasets": "data",
    "select": "micro",
    "estimate": "micro",
    "export": "export",
    "plan": "plan",
    "compare": "plan",
    "run": "run",
    "report": "run",
    "methods": "methods",
}


def _commands(argv: list[str] | None = None):
    """The app with its commands: only the module of the command ``argv`` names (so that a quick command
    does not wait for the imports of the others), else every command."""
    from importlib import import_module

    from mdad.cli.common import app

    wanted = COMMANDS.get(argv[1]) if argv and len(argv) > 1 else None
    for module in [wanted] if wanted else MODULES:
        import_module(f"mdad.cli.{module}")  # each module registers its commands
    return app


def __getattr__(name: str):
    if name == "app":
        return _commands()
    raise AttributeError(f"module 'mdad.cli' has no attribute {name!r}")


def main() -> None:
    """Run the command line: interrupts first, then the commands."""
    interrupts.install()
    allocator.tune()
    lean.kmedoids_without_scikit_learn()
    try:
        app = _commands(sys.argv)
        app()  # a command ends its own interrupts with its sentence; one before it starts (parsing) ends here
    except KeyboardInterrupt:
        interrupts.end()
    finally:
        # the interpreter's exit frees every object anyway: kept out of the collector's last passes over
        # them, which took 0.25 s at the end of `mdad run` (docs/benchmarks.md#earlier-measurements)
        gc.freeze()
