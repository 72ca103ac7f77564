"""Tables of the meta-evaluation in the shapes people read: one row per method and size."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mdad.experiment.evaluate import METRICS, VIEWS

NOT_REACHED = "not reached"
NOT_ESTIMABLE = "no estimate"  # too few targets or runs: the row's ``mdad_warning`` says why
PAIR_METRICS = ("kendall_tau",)  # metrics of pair orders: not estimated where MDAD cannot be
MARK = "*"  # after an MDAD whose first crossing is noise (the row's ``mdad_warning`` says why)


def format_points(value: float) -> str:
    return NOT_REACHED if value is None or np.isnan(value) else f"{value:g}"


def format_mdad(row: pd.Series) -> str:
    """'3.5 [3, 4.5]', '17* [14.5, 18.5]' when marked as noise, 'not reached' when no bin reaches the
    threshold, 'cannot be estimated' when the data are too few for any MDAD."""
    if not row.get("mdad_estimable", True):
        return NOT_ESTIMABLE
    if not row["mdad_reached"]:
        return NOT_REACHED
    mark = MARK if row.get("mdad_marked", False) else ""
    return f"{row['mdad']:g}{mark} [{format_points(row['mdad_low'])}, {format_points(row['mdad_high'])}]"


def format_robust(row: pd.Series) -> str:
    """The monotone-fit MDAD with its interval, like ``format_mdad``."""
    if not row.get("mdad_estimable", True):
        return NOT_ESTIMABLE
    if "mdad_robust" not in row or np.isnan(row["mdad_robust"]):
        return NOT_REACHED
    return f"{row['mdad_robust']:g} [{format_points(row['mdad_robust_low'])}, {format_points(row['mdad_robust_high'])}]"


def format_exact(row: pd.Series) -> str:
    """The exact MDAD of a uniform random cell ('21', 'not reached'); '' for the rows of other methods."""
    reached = row.get("mdad_exact_reached", pd.NA)
    return "" if pd.isna(reached) else f"{row['mdad_exact']:g}" if reached else NOT_REACHED


def headline(row: pd.Series, exact: dict[tuple[str, int], float] | None = None) -> tuple[float, str]:
    """The MDAD plain words lead with, and its name: the exact MDAD of a uniform random cell when
    ``exact`` (see :func:`mdad.report.analytic.exact_mdads`) has it, the robust MDAD when the first
    crossing is marked as noise, else the first crossing (NaN: not reached)."""
    key = (str(row["method"]), int(row["size"]))
    if exact and key in exact:
        return exact[key], "exact MDAD"
    if row.get("mdad_marked", False) and "mdad_robust" in row:
        return float(row["mdad_robust"]), "robust MDAD"
    return (float(row["mdad"]) if row["mdad_reached"] else np.nan), "MDAD"


def warnings(summary: pd.DataFrame, views: tuple[str, ...] = VIEWS, robust: bool = True) -> list[str]:
    """One line per marked or inestimable MDAD of ``views``: which cell, why (the library's sentence) and,
    for a marked first crossing, the robust MDAD to read instead (unless ``robust`` is False: where the
    robust MDAD is given beside every MDAD already)."""
    if "mdad_warning" not in summary:
        return []
    rows = summary[summary["view"].isin(views) & (summary["mdad_warning"].fillna("") != "")]
    order = {view: i for i, view in enumerate(VIEWS)}
    rows = rows.assign(_view=rows["view"].map(order)).sort_values(["method", "sources", "_view", "size"], kind="stable")
    lines = []
    for _, row in rows.iterrows():
        where = "" if row["view"] == "seen" else f", {row['view']} items"
        said = not robust or "robust MDAD" in row["mdad_warning"] or not row.get("mdad_estimable", True) or "mdad_robust" not in row
        beside = "" if said else f" Robust MDAD: {format_robust(row)}."
        lines.append(f"{MARK} {row['method']}, {row['size']} items ({row['sources']} sources{where}): {row['mdad_warning']}{beside}")
    return lines


def share_of_seen(sizes: pd.Series, n_seen: int | None) -> pd.Series:
    return (100.0 * sizes / n_seen).round(1) if n_seen else pd.Series(np.nan, index=sizes.index)


def wide_summary(summary: pd.DataFrame, n_seen: int | None = None) -> pd.DataFrame:
    """One row per (method, size, sources): MDAD with interval and every metric of ``METRICS``, seen
    and unseen, each MDAD with the robust (monotone-fit) MDAD and the pairs in its crossing bin when
    the summary has them."""
    if summary.empty:
        return pd.DataFrame()
    parts = []
    for view in VIEWS:
        part = summary[summary["view"] == view].set_index(["method", "size", "sources"])
        columns = {f"MDAD {view} (pts)": part.apply(format_mdad, axis=1)}
        if "mdad_exact_reached" in part and part["mdad_exact_reached"].notna().any():
            # uniform random: the exact MDAD (no simulation) beside the simulated one (docs/protocol.md#exact-answers)
            columns[f"exact MDAD {view} (pts)"] = part.apply(format_exact, axis=1)
        if "mdad_robust" in part:
            columns[f"robust MDAD {view} (pts)"] = part.apply(format_robust, axis=1)
        if "mdad_pairs" in part:
            columns[f"pairs at MDAD {view}"] = part["mdad_pairs"].astype(int)
        estimable = part["mdad_estimable"].astype(bool) if "mdad_estimable" in part else pd.Series(True, index=part.index)
        for metric in METRICS:
            shown = metric.shown(part[metric.key])
            # Kendall tau of a handful of pairs is as much noise as their MDAD (docs/protocol.md#mdad-trust)
            columns[metric.column(view)] = shown.astype(object).where(estimable, NOT_ESTIMABLE) if metric.key in PAIR_METRICS else shown
        if view == "seen" and "flagged_per_run" in part and part["flagged_per_run"].notna().any():
            # the extrapolation guard of model-based estimates (docs/adaptive.md); blank for other methods
            columns["flagged targets per run"] = part["flagged_per_run"].map(lambda v: "" if np.isnan(v) else f"{v:.1f}")
        if view == "seen" and "items_used_mean" in part and part["items_used_mean"].notna().any():
            # a stopping rule: the items each target answered, mean (sd); blank for fixed-length tests
            columns["items used"] = [
                "" if np.isnan(mean) else f"{mean:.1f} ({sd:.1f})" for mean, sd in zip(part["items_used_mean"], part["items_used_sd"], strict=True)
            ]
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

    return pd.DataFrame(
        {
            "method": shares["method"],
            "size": shares["size"],
            "% of seen": share_of_seen(shares["size"], n_seen),
            "MDAD seen (pts)": shares.apply(format_mdad, axis=1),
            "pairs below MDAD": shares.apply(share, axis=1),
        }
    )
