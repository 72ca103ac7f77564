"""The fixed-group analysis: which of a named group's comparisons a micro-benchmark can preserve.

When the targets of every run are one named group (``--group``), the stored cells hold
each member's accuracy on all items (``full``), so the group's pairwise differences and
the share of them below each MDAD are rebuilt from stored results alone.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mdad.defaults import DEFAULT_BIN_WIDTH
from mdad.experiment.store import ResultStore
from mdad.metrics.pairwise import bin_of, pair_differences


def group_differences(store: ResultStore) -> np.ndarray:
    """|full-benchmark accuracy difference| in points of every pair of the group (from any stored cell)."""
    cells = store.cells()
    if not cells:
        return np.array([])
    frame = store.read(cells[0])
    first = frame[frame["run"] == 0]
    return np.abs(pair_differences(first["full"].to_numpy(np.float64))) * 100.0


def share_below(differences: np.ndarray, mdad: float, bin_width: float = DEFAULT_BIN_WIDTH) -> float:
    """Share of pairs whose difference lies in a bin below ``mdad`` (all of them when MDAD is not reached)."""
    if len(differences) == 0:
        return float("nan")
    if not np.isfinite(mdad):
        return 1.0
    return float(np.mean(bin_of(differences, bin_width) * bin_width < mdad - 1e-9))


def group_shares(summary: pd.DataFrame, differences: np.ndarray, sources: int, view: str = "seen") -> pd.DataFrame:
    """Per method and size: MDAD and the share of the group's pairs below it, with the share's range over MDAD's interval."""
    rows = summary[(summary["view"] == view) & (summary["sources"] == sources)].sort_values(["method", "size"])
    out = rows[["method", "size", "sources", "mdad", "mdad_low", "mdad_high", "mdad_reached"]].copy()
    out["share_below"] = [share_below(differences, m) for m in rows["mdad"]]
    out["share_low"] = [share_below(differences, m) for m in rows["mdad_low"]]
    out["share_high"] = [share_below(differences, m) for m in rows["mdad_high"]]
    out["pairs"] = len(differences)
    return out.reset_index(drop=True)
