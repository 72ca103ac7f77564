"""From stored cells to the meta-evaluation: error, Kendall tau, agreement curves and MDAD.

docs/protocol.md#meta-evaluation. The per-view numbers besides MDAD are the registry
``METRICS`` (mdad.metrics.base): the summary columns, the printed and CSV tables and the
report's figure of them are all driven by it, so a new metric is one new module of
mdad.metrics (docs/extending.md#a-metric).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

import numpy as np
import pandas as pd

from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD
from mdad.experiment.executors import ordered_map
from mdad.experiment.store import Cell, ResultStore
from mdad.metrics.base import METRICS, Metric, ViewData
from mdad.metrics.pairwise import (
    AgreementCurve,
    agreement_curve,
    agreement_from_differences,
    mdad_from_curve,
    pair_differences,
)
from mdad.metrics.robust import robust_mdad
from mdad.seeding import rng_for

VIEWS = ("seen", "unseen")
T = TypeVar("T")


__all__ = [
    "METRICS",
    "VIEWS",
    "Metric",
    "ViewData",
    "cell_arrays",
    "evaluate_cell",
    "evaluate_frames",
    "evaluate_store",
    "evaluate_store_with",
    "view_metrics",
]


def cell_arrays(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The estimate and truths of a cell frame as runs x targets arrays."""
    runs = int(frame["run"].max()) + 1
    return {col: frame[col].to_numpy(np.float64).reshape(runs, -1) for col in ("estimate", *VIEWS, "full")}


def view_metrics(
    estimates: np.ndarray,
    truth: np.ndarray,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    bootstrap_rng: np.random.Generator,
    robust_rng: np.random.Generator | None = None,
    bin_width: float = DEFAULT_BIN_WIDTH,
) -> tuple[dict, AgreementCurve]:
    """Every metric of ``METRICS``, pair agreement and MDAD (runs x targets estimates against one
    truth), and the agreement curve. ``robust_rng`` adds the MDAD of a monotone (logistic) fit of
    the curve, which is stable when bins hold few pairs.

    Beside MDAD: the pairs in its crossing bin (``mdad_pairs``), whether a later bin with enough
    pairs falls below the threshold again (``mdad_falls_back``), whether it can be estimated at all
    from these targets and runs (``mdad_estimable``), the pair-runs behind it (``target_pairs``),
    and whether it is marked as noise with the sentence why (``mdad_marked``, ``mdad_warning``;
    docs/protocol.md#mdad-trust)."""
    de, dt = pair_differences(estimates), pair_differences(truth)
    data = ViewData(estimates, truth, de, dt)
    agree = agreement_from_differences(de, dt)
    curve = agreement_curve(agree, dt * 100.0, bin_width=bin_width)
    n_targets = estimates.shape[1]
    mdad = mdad_from_curve(curve, threshold=threshold, rng=bootstrap_rng, targets=n_targets)
    row: dict[str, float | int | bool | str] = {
        "mdad": mdad.value,
        "mdad_low": mdad.low,
        "mdad_high": mdad.high,
        "mdad_reached": mdad.reached,
        "mdad_pairs": curve.pairs_at(mdad.value),
        "mdad_falls_back": mdad.falls_back,
        "mdad_estimable": mdad.estimable,
        "target_pairs": int(curve.pairs.sum()),
    }
    row.update({metric.key: metric.value(data) for metric in METRICS})
    row.update({"pair_agreement": float(agree.mean()), "runs": estimates.shape[0], "targets": n_targets})
    fitted = None
    if robust_rng is not None:
        fitted = robust_mdad(curve, threshold=threshold, rng=robust_rng, targets=n_targets)
        row.update(mdad_robust=fitted.value, mdad_robust_low=fitted.low, mdad_robust_high=fitted.high)
    warning = mdad.warning(fitted)
    row.update(mdad_marked=bool(warning), mdad_warning=warning)
    return row, curve


def evaluate_cell(
    cell: Cell,
    frame: pd.DataFrame,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    seed: int = 0,
    bin_width: float = DEFAULT_BIN_WIDTH,
    robust: bool = True,
) -> tuple[list[dict], list[pd.DataFrame]]:
    """Summary rows (one per view) and agreement-curve frames of one cell (see :func:`view_metrics`)."""
    arrays = cell_arrays(frame)
    rows, curves = [], []
    key = (cell.method, cell.size, cell.sources)
    for view in VIEWS:
        metrics, curve = view_metrics(
            arrays["estimate"],
            arrays[view],
            threshold=threshold,
            bootstrap_rng=rng_for(seed, "bootstrap", *key, view),
            robust_rng=rng_for(seed, "robust", *key, view) if robust else None,
            bin_width=bin_width,
        )
        if "flagged" in frame:  # the extrapolation guard of model-based estimates (docs/adaptive.md)
            metrics["flagged_per_run"] = float(frame["flagged"].sum()) / arrays["estimate"].shape[0]
        if "items_used" in frame:  # a stopping rule: each target answered as many items as it needed
            used = frame["items_used"].to_numpy(np.float64)
            metrics["items_used_mean"], metrics["items_used_sd"] = float(used.mean()), float(used.std())
        rows.append({"method": cell.method, "size": cell.size, "sources": cell.sources, "view": view, **metrics})
        curves.append(
            pd.DataFrame(
                {
                    "method": cell.method,
                    "size": cell.size,
                    "sources": cell.sources,
                    "view": view,
                    "diff_low": curve.lower,
                    "pairs": curve.pairs,
                    "agreed": curve.agreed,
                    "agreement": curve.rate,
                }
            )
        )
    return rows, curves


def evaluate_frames(
    frames: dict[Cell, pd.DataFrame],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary (one row per cell and view) and agreement curves of cell frames."""
    done = [evaluate_cell(cell, frames[cell], threshold=threshold, seed=seed) for cell in sorted(frames)]
    return _frames([rows for rows, _ in done], [curves for _, curves in done])


def evaluate_store(store: ResultStore, *, threshold: float = DEFAULT_THRESHOLD, seed: int = 0, workers: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary (one row per cell and view) and agreement curves of every stored cell.

    With ``workers`` > 1 the cells are read and evaluated in that many local processes; every
    random draw is keyed by the cell, so the numbers do not depend on it."""
    summary, curves, _ = evaluate_store_with(store, None, threshold=threshold, seed=seed, workers=workers)
    return summary, curves


def evaluate_store_with(
    store: ResultStore,
    each: Callable[[Cell, pd.DataFrame], T] | None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    seed: int = 0,
    workers: int = 1,
    meanwhile: Callable[[], None] | None = None,
    frames: Mapping[Cell, pd.DataFrame] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[Cell, T]]:
    """:func:`evaluate_store`, and ``each(cell, frame)`` of every cell from the same reading of its file, in
    the same processes: other per-cell work (the report's calibration checks) then neither reads every
    file again nor waits for the evaluation to end. ``meanwhile``: work for this process while worker
    processes evaluate (before them without workers). ``frames``: the cells' frames as written to the
    store, where the caller holds them (the run that has just computed them): read there, not from the
    files again (the same numbers; forked workers share them)."""
    held = frames if frames is not None else {}

    def evaluated(cell: Cell) -> tuple[list[dict], list[pd.DataFrame], T | None]:
        frame = held[cell] if cell in held else store.read(cell)
        rows, curves = evaluate_cell(cell, frame, threshold=threshold, seed=seed)
        return rows, curves, (each(cell, frame) if each is not None else None)

    cells = sorted(store.cells())
    done = ordered_map(evaluated, cells, workers=workers, meanwhile=meanwhile)
    summary, curves = _frames([rows for rows, _, _ in done], [curves for _, curves, _ in done])
    return summary, curves, {cell: extra for cell, (_, _, extra) in zip(cells, done, strict=True) if each is not None}


def _frames(rows: list[list[dict]], curves: list[list[pd.DataFrame]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    flat_curves = [c for part in curves for c in part]
    return (pd.DataFrame([r for part in rows for r in part]), pd.concat(flat_curves, ignore_index=True) if flat_curves else pd.DataFrame())
