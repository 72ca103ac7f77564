"""Interrupts of the command line: Ctrl-C and SIGTERM, from a terminal, a job scheduler or a parent
process, become one KeyboardInterrupt in the main thread, and the command ends with one sentence
and exit code 130. Light on purpose (standard library only): installed before the heavy imports."""

from __future__ import annotations

import signal
import sys
from types import FrameType

EXIT_CODE = 130  # 128 + SIGINT, what shells report for an interrupted command
NAMES: dict[int, str] = {signal.SIGINT: "Ctrl-C (SIGINT)", signal.SIGTERM: "SIGTERM"}
received: list[int] = []  # the signals received by this process, in order


def _interrupt(signum: int, frame: FrameType | None) -> None:
    received.append(signum)
    raise KeyboardInterrupt


def install() -> None:
    """Record SIGINT and SIGTERM and raise KeyboardInterrupt for each; SIGINT is left alone where it
    is ignored (a background job of a shell), as Python itself does."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupt)
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _interrupt)


def sentence(what: str = "Nothing half-written is kept; run the same command again to redo it.") -> str:
    """The one sentence an interrupted command ends with: by which signal, and what is kept."""
    by = f" by {NAMES.get(received[-1], f'signal {received[-1]}')}" if received else ""
    return f"Interrupted{by}. {what}"


def end(what: str | None = None) -> None:
    """Print the interrupt's sentence on stderr and exit with code 130."""
    print(sentence(what) if what else sentence(), file=sys.stderr)
    raise SystemExit(EXIT_CODE)
