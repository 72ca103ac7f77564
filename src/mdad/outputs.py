"""Writing files users open: check before the work that they can be written, write them whole
or not at all, one command at a time, and say which path failed when a write does; CSV cells
that a spreadsheet would run as a formula are neutralised.

Every output file goes through :func:`atomic_files`: it is written to a temporary file in its own
folder and renamed onto its name only once whole, so a full disk or an interrupt leaves the old
file (or none) and never a truncated one. :func:`locked_outputs` holds an advisory lock per
output from the checks before the work to the last write, so that a second command writing the
same file is refused at once instead of silently replacing the first one's file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

try:  # advisory locks: POSIX only; elsewhere outputs are written unlocked
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

import pandas as pd

from mdad.errors import MdadError

# A text cell starting with one of these is a formula (or becomes one) in spreadsheet programs.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _probe_folder(folder: Path, what: str, path: Path) -> None:
    """An error unless a file can be created in ``folder``."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".mdad-write-check-", dir=folder)
    except OSError as exc:
        raise MdadError(f"Cannot write {what} {path}: {exc.strerror or exc} ({folder}).") from None
    os.close(fd)
    os.unlink(probe)


def _existing_ancestor(path: Path, what: str, target: Path) -> Path:
    """The nearest folder above ``path`` that exists (an error when it is a file)."""
    for parent in [path, *path.parents]:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise MdadError(f"Cannot write {what} {target}: {parent} is a file, not a folder.")
            return parent
    return Path.cwd()


def output_name(text: str | Path, what: str) -> Path:
    """The path of an output the user named; an empty name is an error, not the current folder."""
    if not str(text).strip():
        raise MdadError(f"Give a name for {what}; it is empty.")
    return Path(text)


def check_output_file(path: str | Path, what: str) -> None:
    """An error sentence, before any work, when ``path`` cannot be written as a file."""
    path = output_name(path, what)
    if is_stream(path):
        return
    if str(path) == ".":
        raise MdadError(f"Give a file name for {what}.")
    if path.is_dir():
        raise MdadError(f"Cannot write {what} {path}: it is a folder; give a file name.")
    if path.exists() and not path.is_file():
        raise MdadError(f"Cannot write {what} {path}: it is not a regular file.")
    if not path.parent.is_dir():
        raise MdadError(f"Cannot write {what} {path}: its folder {path.parent} does not exist.")
    if path.exists() and not os.access(path, os.W_OK):
        raise MdadError(f"Cannot write {what} {path}: the file is read-only.")
    _probe_folder(path.parent, what, path)


def check_output_folder(path: str | Path, what: str) -> None:
    """An error sentence, before any work, when ``path`` cannot be (created and) written as a folder."""
    path = output_name(path, what)
    if path.exists() and not path.is_dir():
        raise MdadError(f"Cannot write {what} {path}: it is a file, not a folder.")
    _probe_folder(_existing_ancestor(path, what, path), what, path)


@contextmanager
def writing(path: str | Path, what: str = "the file"):
    """Turn a failed write into one sentence naming the path."""
    try:
        yield
    except OSError as exc:  # a full disk raises without a file name: the path written is named
        raise MdadError(f"Could not write {what} {exc.filename or path}: {exc.strerror or exc}.") from None


def _target(path: str | Path) -> Path:
    """The file a write lands in: through a symlink to it, as a plain write would."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _new_file_mode(target: Path) -> int:
    """The permissions the written file gets: those of the file it replaces, else what a plain write gives."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextmanager
def atomic_files(outputs: Sequence[tuple[str | Path, str]]) -> Iterator[list[Path]]:
    """Temporary paths to write the ``(path, what)`` outputs to, each in its output's folder; once the
    block ends without an error every one is renamed onto its output (``os.replace``), else every one
    is removed, so that a failed command leaves each output as it was: never a truncated file, and
    never some outputs new and others not. A failed write is one sentence naming the path; the
    standard streams are written directly."""
    targets = [(Path(path) if is_stream(path) else _target(path), what) for path, what in outputs]
    temps: list[Path] = []
    try:
        for target, what in targets:
            if is_stream(target):
                temps.append(target)
                continue
            with writing(target, what):
                # hidden, and not ending as the output does: never taken for an output (a cell, a log) if left by a kill
                fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
                os.close(fd)
            temps.append(Path(name))
        yield list(temps)
        for (target, what), temp in zip(targets, temps, strict=True):
            if temp != target:
                with writing(target, what):
                    os.chmod(temp, _new_file_mode(target))
                    os.replace(temp, target)
    finally:
        for (target, _), temp in zip(targets, temps, strict=False):
            if temp != target and temp.exists():
                temp.unlink()


@contextmanager
def atomic_file(path: str | Path, what: str = "the file") -> Iterator[Path]:
    """A temporary path to write ``path`` to, renamed onto it once the block ends without an error (:func:`atomic_files`)."""
    with atomic_files([(path, what)]) as (temp,):
        yield temp


def write_text(path: str | Path, text: str, what: str = "the file") -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all."""
    with atomic_file(path, what) as temp, writing(path, what):
        temp.write_text(text, encoding="utf-8")


def write_bytes(path: str | Path, data: bytes, what: str = "the file") -> None:
    """Write ``data`` to ``path`` whole or not at all."""
    with atomic_file(path, what) as temp, writing(path, what):
        temp.write_bytes(data)


LOCK_SUFFIX = ".mdad-lock"


def _lock_path(target: Path) -> Path:
    return target.parent / f".{target.name}{LOCK_SUFFIX}"


@contextmanager
def _locked(target: Path, what: str) -> Iterator[None]:
    """Hold the advisory lock of one output file; another holder is an error sentence.

    The lock is a hidden file beside the output, removed when released; a lock file that another
    holder removed while this one waited for it is taken again (the lock of a removed file guards
    nothing). The system releases the lock however the process ends."""
    lock = _lock_path(target)
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise MdadError(f"Cannot write {what} {target}: {exc.strerror or exc} ({lock}).") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            raise MdadError(
                f"Another mdad command (process {holder or 'unknown'}) is writing {what} {target}; wait for it to finish or write to another file."
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    try:
        yield
    finally:
        with suppress(OSError):
            lock.unlink()
        os.close(fd)


@contextmanager
def locked_outputs(writes: dict[str, str | Path | None]) -> Iterator[None]:
    """Hold a lock on every output file of ``writes`` (``{what: path}``; None entries and the standard
    streams left out) from the checks before the work to the last write: a second command writing one
    of them meanwhile is refused with one sentence instead of both writing it and the last one
    silently winning."""
    with ExitStack() as stack:
        if fcntl is not None:
            for what, path in writes.items():
                if path is not None and str(path).strip() and not is_stream(path):
                    stack.enter_context(_locked(_target(path).absolute(), what))
        yield


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells (and column names) that start like a formula are prefixed with ``'``."""

    def safe(value):
        return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value

    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(safe)
    out.columns = [safe(c) for c in out.columns]
    if out.index.dtype == object or pd.api.types.is_string_dtype(out.index):
        out.index = out.index.map(safe).rename(safe(out.index.name))
    return out


def write_csv(frame: pd.DataFrame, path: str | Path, *, index: bool = False, what: str = "the CSV file") -> None:
    """Write ``frame`` as CSV, formulas neutralised, whole or not at all; a failure is one sentence naming the path."""
    with atomic_file(path, what) as temp, writing(path, what):
        neutralise_formulas(frame).to_csv(temp, index=index)


# Streams an output may name: writing there never touches a file the command reads.
STREAMS = ("/dev/stdout", "/dev/stderr")


def is_stream(path: str | Path) -> bool:
    """Whether ``path`` names the standard output or error stream (written to, never checked as a file)."""
    return str(path) in STREAMS


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name the same file or folder: through symlinks, ``..`` and hard links."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _inside(inner: Path, outer: Path) -> bool:
    """Whether ``inner`` lies inside the folder ``outer`` (resolved paths)."""
    return outer.is_dir() and inner.resolve().is_relative_to(outer.resolve()) and not _same(inner, outer)


def check_outputs_apart(reads: dict[str, str | Path | None], writes: dict[str, str | Path | None]) -> None:
    """An error sentence, before any work, when an output would overwrite what the command reads or
    another of its outputs: the same file or folder (through symlinks, ``..`` or hard links), a file
    inside a folder the command reads, or a folder that holds an input.

    Parameters
    ----------
    reads, writes
        What the command reads and writes, by the words that name each one in the sentence
        (``{"the data": path}``); ``None`` entries are left out, and outputs to the standard
        streams (``/dev/stdout``) are allowed.
    """
    inputs = [(what, Path(path)) for what, path in reads.items() if path is not None and str(path).strip()]
    outputs = [(what, Path(path)) for what, path in writes.items() if path is not None and str(path).strip() and not is_stream(path)]
    for what, out in outputs:
        for source_what, source in inputs:
            if _same(out, source):
                raise MdadError(f"{what.capitalize()} {out} is {source_what} {source}; writing it would destroy the input: give another path.")
            if _inside(out, source):
                raise MdadError(f"{what.capitalize()} {out} lies inside {source_what} {source}, which is read; give a path outside it.")
            if _inside(source, out):
                raise MdadError(f"{what.capitalize()} {out} holds {source_what} {source}; give a folder that does not hold the input.")
    for i, (what, out) in enumerate(outputs):
        for other_what, other in outputs[i + 1 :]:
            if _same(out, other) or _inside(out, other) or _inside(other, out):
                raise MdadError(f"{what.capitalize()} {out} and {other_what} {other} are the same path; give each its own.")
