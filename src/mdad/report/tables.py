"""Tables of the meta-evaluation in the shapes people read: one row per method and size."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mdad.experiment.evaluate import METRICS, VIEWS

NOT_REACHED = "not reached"


def format_points(value: float) -> str:
    return NOT_REACHED if value is None or np.isnan(value) else f"{value:g}"


def format_mdad(row: pd.Series) -> str:
    """'3.5 [3, 4.5]', or 'not reached' when no bin reaches the threshold."""
    if not row["mdad_reached"]:
        return NOT_REACHED
    return f"{row['mdad']:g} [{format_points(row['mdad_low'])}, {format_points(row['mdad_high'])}]"


def format_robust(row: pd.Series) -> str:
    """The monotone-fit MDAD with its interval, like ``format_mdad``."""
    if "mdad_robust" not in row or np.isnan(row["mdad_robust"]):
        return NOT_REACHED
    return f"{row['mdad_robust']:g} [{format_points(row['mdad_robust_low'])}, {format_points(row['mdad_robust_high'])}]"


def share_of_seen(sizes: pd.Series, n_seen: int | None) -> pd.Series:
    return (100.0 * sizes / n_seen).round(1) if n_seen else pd.Series(np.nan, index=sizes.index)


def wide_summary(summary: pd.DataFrame, n_seen: int | None = None) -> pd.DataFrame:
    """One row per (method, size, sources): MDAD with interval and every metric of ``METRICS``, seen
    and unseen (plus the robust, monotone-fit MDAD on seen items when the summary has it)."""
    if summary.empty:
        return pd.DataFrame()
    parts = []
    for view in VIEWS:
        part = summary[summary["view"] == view].set_index(["method", "size", "sources"])
        columns = {f"MDAD {view} (pts)": part.apply(format_mdad, axis=1)}
        if view == "seen" and "mdad_robust" in part:
            columns["robust MDAD seen (pts)"] = part.apply(format_robust, axis=1)
        for metric in METRICS:
            columns[metric.column(view)] = metric.shown(part[metric.key])
        if view == "seen" and "flagged_per_run" in part and part["flagged_per_run"].notna().any():
            # the extrapolation guard of model-based estimates (docs/adaptive.md); blank for other methods
            columns["flagged targets per run"] = part["flagged_per_run"].map(lambda v: "" if np.isnan(v) else f"{v:.1f}")
        parts.append(pd.DataFrame(columns))
    table = pd.concat(parts, axis=1).reset_index()
    table.insert(2, "% of seen", share_of_seen(table["size"], n_seen))
    return table.sort_values(["method", "sources", "size"], kind="stable").reset_index(drop=True)


def group_table(shares: pd.DataFrame, n_seen: int | None = None) -> pd.DataFrame:
    """Per method and size: the MDAD and the share of the group's comparisons below it (unlikely to be preserved)."""
    def share(row: pd.Series) -> str:
        if not row["mdad_reached"]:
            return f"100% (MDAD {NOT_REACHED})"
        return f"{row['share_below']:.0%} [{row['share_low']:.0%}, {row['share_high']:.0%}]"

    return pd.DataFrame({
        "method": shares["method"], "size": shares["size"], "% of seen": share_of_seen(shares["size"], n_seen),
        "MDAD seen (pts)": shares.apply(format_mdad, axis=1),
        "pairs below MDAD": shares.apply(share, axis=1),
    })
