"""mdad's own npz format as a reader: an .npz file, or a folder holding responses.npz."""

from __future__ import annotations

from pathlib import Path

from mdad.data.matrix import ResponseMatrix
from mdad.data.npz import read_npz
from mdad.data.readers import READERS
from mdad.data.readers.base import Reader, ReadOptions

RESPONSES = "responses.npz"


def detect(path: Path) -> bool:
    return (path / RESPONSES).is_file() if path.is_dir() else path.suffix.lower() == ".npz"


def read(path: Path, options: ReadOptions) -> ResponseMatrix:
    return read_npz(path / RESPONSES if path.is_dir() else path, source=str(path))


READER = READERS.add(
    Reader("npz", detect, read, expects="an .npz file or a folder with responses.npz"),
    order=10,
)
