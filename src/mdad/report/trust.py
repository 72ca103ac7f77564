"""How far single estimates of a stored run can be trusted: interval coverage and decision curves (docs/intervals.md#report-and-plan).

Every cell's runs are split in two: the first half calibrates, as ``mdad select``'s
assessment does (split-conformal residuals, logistic fit of "order held" against the
estimated gap over the residual spread at the two estimates), and the second half, runs the
calibration never saw, measures it: the share of targets whose interval covers their true
accuracy on the seen pool, and, per 0.5-point bin of the *estimated* gap, the share of pairs
whose order held beside the mean fitted probability of those pairs (the decision curve). The random designs'
exact answers need the chosen items, which a run
does not store; here they are calibrated like every other method.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_LEVEL, DEFAULT_THRESHOLD, percent
from mdad.experiment.evaluate import cell_arrays
from mdad.experiment.store import Cell, ResultStore
from mdad.intervals import ConformalCalibration, OrderCalibration
from mdad.metrics.pairwise import agreement_from_differences, bin_of, pair_differences
from mdad.report.figures import finish_figure, method_order, panel_grid, size_title, styled

LEVELS = (DEFAULT_LEVEL, 0.95)
BIN_WIDTH = DEFAULT_BIN_WIDTH
MIN_PAIRS = 20


CellTrust = tuple[list[dict], pd.DataFrame | None]  # a cell's coverage rows and decision-curve bins


def trust_frames(store: ResultStore, sources: int, view: str = "seen") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(coverage, decision) frames of every cell with ``sources`` source models and at least 2 runs."""
    return combine_trust([cell_trust(cell, store.read(cell), view) for cell in store.cells() if cell.sources == sources])


def combine_trust(parts: list[CellTrust]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The (coverage, decision) frames of cells' :func:`cell_trust`, in the order given."""
    coverage = [row for rows, _ in parts for row in rows]
    decision = [frame for _, frame in parts if frame is not None]
    return pd.DataFrame(coverage), (pd.concat(decision, ignore_index=True) if decision else pd.DataFrame())


def cell_trust(cell: Cell, frame: pd.DataFrame, view: str = "seen") -> CellTrust:
    """One cell's coverage rows (one per level; none with fewer than 2 runs) and decision-curve bins (None
    when nothing could be calibrated): its first half of runs calibrates, the second half checks."""
    arrays = cell_arrays(frame)
    est, truth = arrays["estimate"], arrays[view]
    half = est.shape[0] // 2
    if half < 1:
        return [], None
    conformal = ConformalCalibration.fit(est[:half], truth[:half])
    order = OrderCalibration.fit_if_possible(est[:half], truth[:half], rankings=False)  # pairs only
    test_est, test_truth = est[half:], truth[half:]
    coverage = []
    for level in LEVELS:
        low, high = conformal.bounds(test_est, level=level)
        coverage.append(
            {
                "method": cell.method,
                "size": cell.size,
                "level": level,
                "coverage": float(np.mean((low <= test_truth) & (test_truth <= high))),
                "width": float(np.mean(high - low)) * 100,
                "runs": est.shape[0] - half,
            }
        )
    i, j = np.triu_indices(test_est.shape[1], k=1)
    first, second = test_est[:, i].ravel(), test_est[:, j].ravel()
    de, dt = first - second, pair_differences(test_truth).ravel()
    keep = de != 0
    if order is None or not keep.any():
        return coverage, None
    gap = 100 * np.abs(de[keep])
    held = agreement_from_differences(de[keep], dt[keep])
    bins = bin_of(gap, BIN_WIDTH)
    pairs = np.bincount(bins)
    shown = np.flatnonzero(pairs)
    decision = pd.DataFrame(
        {
            "method": cell.method,
            "size": cell.size,
            "gap_low": shown * BIN_WIDTH,
            "pairs": pairs[shown],
            "held": np.bincount(bins, weights=held)[shown] / pairs[shown],
            "fitted": np.bincount(bins, weights=order.probability(first[keep], second[keep]))[shown] / pairs[shown],
        }
    )
    return coverage, decision


def coverage_table(coverage: pd.DataFrame) -> pd.DataFrame:
    """Method x size: coverage of the 90% and 95% intervals (%) and the mean 90% width (points)."""
    wide = coverage.pivot_table(index=["method", "size"], columns="level", values=["coverage", "width"])
    return pd.DataFrame(
        {
            f"{percent(DEFAULT_LEVEL)} interval covers": (100 * wide[("coverage", DEFAULT_LEVEL)]).round(1).astype(str) + "%",
            "95% interval covers": (100 * wide[("coverage", 0.95)]).round(1).astype(str) + "%",
            f"mean {percent(DEFAULT_LEVEL)} width (points)": wide[("width", DEFAULT_LEVEL)].round(1),
        }
    ).reset_index()


@styled
def decision_curves(decision: pd.DataFrame, curves: pd.DataFrame, sizes, sources: int, threshold: float = DEFAULT_THRESHOLD, view: str = "seen"):
    """One small panel per method (methods overlaid would hide each other): P(order holds) against the
    estimated gap at each size (fit: line; runs not used to fit it: dots), and the agreement curve against
    the true difference (dotted) for comparison; a colour per size."""
    methods = method_order(decision["method"].unique())
    palette = matplotlib.colormaps["viridis"]
    colors = {size: palette(0.85 * i / max(1, len(sizes) - 1)) for i, size in enumerate(sizes)}
    fig, axes = panel_grid(len(methods), 3 if len(methods) > 4 else len(methods), height=2.6)
    agreement = curves[(curves["view"] == view) & (curves["sources"] == sources)]
    right = 0.0
    for ax, method in zip(axes, methods, strict=True):
        for size in sizes:
            part = decision[(decision["method"] == method) & (decision["size"] == size)]
            dense = part[part["pairs"] >= MIN_PAIRS]
            x = dense["gap_low"].to_numpy(float) + BIN_WIDTH / 2
            ax.plot(x, dense["fitted"], color=colors[size], linewidth=1.6)
            ax.scatter(x, dense["held"], s=8, color=colors[size], alpha=0.7, linewidths=0)
            truth = agreement[(agreement["method"] == method) & (agreement["size"] == size)]
            truth = truth[truth["pairs"] >= MIN_PAIRS]
            ax.plot(truth["diff_low"] + BIN_WIDTH / 2, truth["agreement"], color=colors[size], linestyle=":", linewidth=1.1)
            reach = dense[dense["fitted"] >= 0.99]
            right = max(right, float(reach["gap_low"].min()) + 2 if len(reach) else float(x.max(initial=0)))
        ax.axhline(threshold, color="#444", linestyle="--", linewidth=1)
        ax.axhline(0.5, color="#999", linewidth=0.8)
        ax.set_ylim(0.3, 1.02)
        ax.set_title(method, fontsize=10)
    for ax in axes:
        ax.set_xlim(0, max(right, 5.0))
    ncols = 3 if len(methods) > 4 else len(methods)
    for ax in axes[-ncols:]:
        ax.set_xlabel("accuracy difference (points)")
    for ax in axes[::ncols]:
        ax.set_ylabel("P(order holds)")
    fig.suptitle(f"Decision curves: estimated gap seen on the micro-benchmark ({sources} source models)", fontsize=11)
    handles = [
        *(Line2D([], [], color=colors[size], label=size_title(int(size), None)) for size in sizes),
        Line2D([], [], color="#555", label="fitted P(order holds on the full benchmark), mean over the bin's pairs"),
        Line2D([], [], linestyle="none", marker="o", markersize=3, color="#555", label="share held, unseen runs"),
        Line2D([], [], color="#555", linestyle=":", label="agreement by true difference"),
    ]
    finish_figure(fig, handles)
    return fig
