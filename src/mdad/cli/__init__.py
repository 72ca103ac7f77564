"""The command line (Typer): thin, each module registers its commands on one app."""

from mdad.cli import data, micro, plan, run  # noqa: F401  (each module registers its commands)
from mdad.cli.common import app

__all__ = ["app"]
