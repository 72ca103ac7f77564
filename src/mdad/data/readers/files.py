"""Finding the files of harness logs in a folder: regular files only, symlinked folders followed
once (a link back to a folder already seen is not walked again), and nothing too large to be a log.

A FIFO would block the read forever and a link to a device (``/dev/zero``) would never end; a file
beyond ``MAX_LOG_BYTES`` is refused before it is opened rather than read into memory.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path

from mdad.errors import MdadError

MAX_LOG_BYTES = 32 * 2**30  # 32 GiB: far beyond a genuine samples file or log, within what a machine reads
KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def checked_file(path: Path, what: str = "a results file", limit: int | None = None, advice: str = "move it out of the results folder") -> Path:
    """``path`` itself, when it is a regular file (a link to one counts) no larger than ``limit`` bytes
    (None: ``MAX_LOG_BYTES``); else one sentence naming it, saying it is not ``what`` and ending with ``advice``."""
    limit = MAX_LOG_BYTES if limit is None else limit
    try:
        info = path.stat()
    except OSError:
        raise MdadError(f"{path} is a link to nothing (broken link); remove it or point it at {what}.") from None
    if not stat.S_ISREG(info.st_mode):
        kind = KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
        raise MdadError(f"{path} is {kind}, not {what}; {advice}.")
    if info.st_size > limit:
        raise MdadError(f"{path} holds {info.st_size:,} bytes, beyond the {limit:,} bytes ({limit / 2**30:.3g} GiB) {what} may hold; it is not read.")
    return path


def files_under(root: Path, pattern: str, keep: Callable[[Path], bool] | None = None) -> list[Path]:
    """Every file under ``root`` whose name matches ``pattern`` (and ``keep``), sorted; symlinked
    folders are walked once each, and a matching name that is not a regular file is refused."""
    found = []
    seen: set[tuple[int, int]] = set()
    for folder, subfolders, names in os.walk(root, followlinks=True):
        here = os.stat(folder)
        seen.add((here.st_dev, here.st_ino))
        walked = []
        for name in sorted(subfolders):
            try:
                info = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                walked.append(name)
        subfolders[:] = walked
        for name in names:
            path = Path(folder, name)
            if fnmatch(name, pattern) and (keep is None or keep(path)):
                found.append(checked_file(path))
    return sorted(found)
