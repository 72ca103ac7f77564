"""The command line (Typer): thin, each module registers its commands on one app.

``main`` is the console entry: it takes charge of Ctrl-C and SIGTERM first and only then imports the
commands (and with them numpy, pandas and the rest), so that an interrupt at any moment ends with
one sentence. ``app`` is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mdad.cli import interrupts

if TYPE_CHECKING:
    from mdad.cli.common import app

__all__ = ["app", "main"]


def _commands():
    from mdad.cli import data, micro, plan, run  # noqa: F401  (each module registers its commands)
    from mdad.cli.common import app

    return app


def __getattr__(name: str):
    if name == "app":
        return _commands()
    raise AttributeError(f"module 'mdad.cli' has no attribute {name!r}")


def main() -> None:
    """Run the command line: interrupts first, then the commands."""
    interrupts.install()
    try:
        app = _commands()
    except KeyboardInterrupt:
        interrupts.end()
    app()
