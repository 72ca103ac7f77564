"""From stored cells to the meta-evaluation: error, Kendall tau, agreement curves and MDAD."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mdad.experiment.store import Cell, ResultStore
from mdad.metrics import agreement_curve, estimation_error, mdad_from_curve
from mdad.metrics.estimation import kendall_tau_from_differences
from mdad.metrics.pairwise import AgreementCurve, agreement_from_differences, pair_differences
from mdad.metrics.robust import robust_mdad
from mdad.seeding import rng_for

VIEWS = ("seen", "unseen")


def cell_arrays(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The estimate and truths of a cell frame as runs x targets arrays."""
    runs = int(frame["run"].max()) + 1
    return {col: frame[col].to_numpy(np.float64).reshape(runs, -1) for col in ("estimate", *VIEWS, "full")}


def view_metrics(
    estimates: np.ndarray, truth: np.ndarray, threshold: float, bootstrap_rng: np.random.Generator,
    robust_rng: np.random.Generator | None = None, bin_width: float = 0.5,
) -> tuple[dict, AgreementCurve]:
    """Error, Kendall tau, pair agreement and MDAD (runs x targets estimates against one truth),
    and the agreement curve. ``robust_rng`` adds the MDAD of a monotone (logistic) fit of the
    curve, which is stable when bins hold few pairs."""
    de, dt = pair_differences(estimates), pair_differences(truth)
    agree = agreement_from_differences(de, dt)
    curve = agreement_curve(agree, dt * 100.0, bin_width)
    mdad = mdad_from_curve(curve, threshold, bootstrap_rng)
    row = {
        "mdad": mdad.value, "mdad_low": mdad.low, "mdad_high": mdad.high, "mdad_reached": mdad.reached,
        "error": estimation_error(estimates, truth),
        "kendall_tau": float(np.nanmean(kendall_tau_from_differences(de, dt))),
        "pair_agreement": float(agree.mean()), "runs": estimates.shape[0], "targets": estimates.shape[1],
    }
    if robust_rng is not None:
        fitted = robust_mdad(curve, threshold, robust_rng)
        row.update(mdad_robust=fitted.value, mdad_robust_low=fitted.low, mdad_robust_high=fitted.high)
    return row, curve


def evaluate_cell(
    cell: Cell, frame: pd.DataFrame, threshold: float = 0.8, seed: int = 0, bin_width: float = 0.5,
    robust: bool = True,
) -> tuple[list[dict], list[pd.DataFrame]]:
    """Summary rows (one per view) and agreement-curve frames of one cell (see :func:`view_metrics`)."""
    arrays = cell_arrays(frame)
    rows, curves = [], []
    key = (cell.method, cell.size, cell.sources)
    for view in VIEWS:
        metrics, curve = view_metrics(
            arrays["estimate"], arrays[view], threshold, rng_for(seed, "bootstrap", *key, view),
            rng_for(seed, "robust", *key, view) if robust else None, bin_width,
        )
        rows.append({"method": cell.method, "size": cell.size, "sources": cell.sources, "view": view, **metrics})
        curves.append(pd.DataFrame({
            "method": cell.method, "size": cell.size, "sources": cell.sources, "view": view,
            "diff_low": curve.lower, "pairs": curve.pairs, "agreed": curve.agreed, "agreement": curve.rate,
        }))
    return rows, curves


def evaluate_store(store: ResultStore, threshold: float = 0.8, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary (one row per cell and view) and agreement curves of every stored cell."""
    rows, curves = [], []
    for cell in store.cells():
        r, c = evaluate_cell(cell, store.read(cell), threshold, seed)
        rows += r
        curves += c
    summary = pd.DataFrame(rows)
    return summary, (pd.concat(curves, ignore_index=True) if curves else pd.DataFrame())
