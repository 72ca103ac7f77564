"""Tables of the meta-evaluation in the shapes people read: one row per method and size."""

from __future__ import annotations

import numpy as np
import pandas as pd


def format_points(value: float) -> str:
    return "not reached" if value is None or np.isnan(value) else f"{value:g}"


def format_mdad(row: pd.Series) -> str:
    """'3.5 [3, 4.5]', or 'not reached' when no bin reaches the threshold."""
    if not row["mdad_reached"]:
        return "not reached"
    return f"{row['mdad']:g} [{format_points(row['mdad_low'])}, {format_points(row['mdad_high'])}]"


def wide_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (method, size, sources): MDAD with interval, error and Kendall tau, seen and unseen."""
    if summary.empty:
        return pd.DataFrame()
    parts = []
    for view in ("seen", "unseen"):
        part = summary[summary["view"] == view].set_index(["method", "size", "sources"])
        parts.append(pd.DataFrame({
            f"MDAD {view} (pts)": part.apply(format_mdad, axis=1),
            f"error {view} (pts)": (100 * part["error"]).round(2),
            f"tau {view}": part["kendall_tau"].round(3),
        }))
    table = pd.concat(parts, axis=1).reset_index()
    return table.sort_values(["method", "sources", "size"], kind="stable").reset_index(drop=True)
