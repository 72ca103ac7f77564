"""The command line (Typer): thin, each module registers its commands on one app."""

from mdad.cli import plan, run  # noqa: F401  (registers run, report, methods, plan, compare)
from mdad.cli.common import app

__all__ = ["app"]
