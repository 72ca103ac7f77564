"""Figures of the meta-evaluation (matplotlib, no display needed)."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def to_png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def mdad_vs_size(summary: pd.DataFrame, view: str = "seen", sources: int | None = None):
    """MDAD against the number of items, one line per method, the 95% interval as a band.

    Sizes where MDAD is not reached are drawn as open markers at the top of the axis.
    """
    data = summary[summary["view"] == view]
    sources = sources if sources is not None else int(data["sources"].max())
    data = data[data["sources"] == sources]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    top = np.nanmax(data[["mdad", "mdad_high"]].to_numpy(float)) if data["mdad_reached"].any() else 10.0
    for method, rows in data.groupby("method", sort=True):
        rows = rows.sort_values("size")
        line = ax.plot(rows["size"], rows["mdad"], marker="o", label=method)[0]
        high = rows["mdad_high"].fillna(top * 1.05)
        ax.fill_between(rows["size"], rows["mdad_low"], high, color=line.get_color(), alpha=0.15)
        missed = rows[~rows["mdad_reached"]]
        if len(missed):
            ax.scatter(missed["size"], np.full(len(missed), top * 1.05), facecolors="none",
                       edgecolors=line.get_color(), marker="^")
    ax.set_xscale("log")
    sizes = sorted(data["size"].unique())
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("number of items in the micro-benchmark")
    ax.set_ylabel("MDAD (accuracy points)")
    ax.set_title(f"MDAD vs size ({view} items, {sources} source models)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def agreement_curves(curves: pd.DataFrame, size: int, view: str = "seen", sources: int | None = None,
                     threshold: float = 0.8, max_diff: float = 20.0):
    """Probability that the micro-benchmark orders a pair as the full benchmark does, by accuracy difference."""
    data = curves[(curves["view"] == view) & (curves["size"] == size)]
    sources = sources if sources is not None else int(data["sources"].max())
    data = data[(data["sources"] == sources) & (data["diff_low"] <= max_diff)]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for method, rows in data.groupby("method", sort=True):
        ax.plot(rows["diff_low"], rows["agreement"], marker=".", label=method)
    ax.axhline(threshold, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("true accuracy difference (points, 0.5-point bins)")
    ax.set_ylabel("agreement with the full benchmark")
    ax.set_title(f"{size} items ({view} items, {sources} source models)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig
