"""The real response matrices that ship with mdad (0/1 correctness only; SOURCE.md and LICENSE in each folder).

``gpqa`` is the matrix of the paper mdad follows, so ``mdad run`` reproduces its GPQA
experiment with no download; ``musr`` and ``math-hard`` are two more Open LLM Leaderboard v2
benchmarks, with subtasks. The simulator's defaults are calibrated to all three
(``mdad.data.simulate``). See docs/data.md#built-in-datasets.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from mdad.data.matrix import ResponseMatrix
from mdad.data.npz import read_npz

PAPER = '"How Reliable is Language Model Micro-Benchmarking?" (Yauney, Warraich, Swayamdipta, ICLR 2026)'
ORIGIN_OLL2 = "as collected by Zhang, Dorner, Hardt (NeurIPS 2025)"


@dataclass(frozen=True)
class BuiltinDataset:
    """A bundled matrix: its name, what it is, where it comes from, and the sizes ``mdad run`` uses on it."""

    name: str
    benchmark: str
    origin: str
    label: str  # how messages and reports name the data
    sizes: tuple[int, ...] | None = None  # None: the general default sizes

    @property
    def folder(self) -> Path:
        """Where the package keeps this dataset's files (matrix, licence, source note)."""
        return Path(str(resources.files(__name__) / self.name))

    def load(self) -> ResponseMatrix:
        """The dataset's response matrix, read from the package's own files."""
        return read_npz(self.folder / "responses.npz", source=self.label)


BUILTIN = {
    d.name: d
    for d in (
        BuiltinDataset(
            "gpqa",
            "GPQA main, Open LLM Leaderboard v2",
            f"the matrix of {PAPER}",
            "gpqa (the GPQA matrix of the paper, Open LLM Leaderboard v2)",
            sizes=(10, 25, 50, 100, 200),
        ),
        BuiltinDataset("musr", "MuSR, Open LLM Leaderboard v2", ORIGIN_OLL2, "musr (MuSR, Open LLM Leaderboard v2)"),
        BuiltinDataset("math-hard", "MATH level 5, Open LLM Leaderboard v2", ORIGIN_OLL2, "math-hard (MATH level 5, Open LLM Leaderboard v2)"),
    )
}


def builtin_dataset(name: str) -> BuiltinDataset | None:
    """The bundled dataset of that name, or None."""
    return BUILTIN.get(name)
