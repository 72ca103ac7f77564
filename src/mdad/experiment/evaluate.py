"""From stored cells to the meta-evaluation: error, Kendall tau, agreement curves and MDAD."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mdad.experiment.store import Cell, ResultStore
from mdad.metrics import agreement_curve, estimation_error, mdad_from_curve
from mdad.metrics.estimation import kendall_tau_from_differences
from mdad.metrics.pairwise import agreement_from_differences, pair_differences
from mdad.metrics.robust import robust_mdad
from mdad.seeding import rng_for

VIEWS = ("seen", "unseen")


def cell_arrays(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The estimate and truths of a cell frame as runs x targets arrays."""
    runs = int(frame["run"].max()) + 1
    return {col: frame[col].to_numpy(np.float64).reshape(runs, -1) for col in ("estimate", *VIEWS, "full")}


def evaluate_cell(
    cell: Cell, frame: pd.DataFrame, threshold: float = 0.8, seed: int = 0, bin_width: float = 0.5,
    robust: bool = True,
) -> tuple[list[dict], list[pd.DataFrame]]:
    """Summary rows (one per view) and agreement-curve frames of one cell.

    Besides the paper's first-crossing MDAD, ``robust`` adds the MDAD read from a monotone
    (logistic) fit of the agreement curve, which is stable when bins hold few pairs.
    """
    arrays = cell_arrays(frame)
    est = arrays["estimate"]
    de = pair_differences(est)
    rows, curves = [], []
    for view in VIEWS:
        truth = arrays[view]
        dt = pair_differences(truth)
        agree = agreement_from_differences(de, dt)
        curve = agreement_curve(agree, dt * 100.0, bin_width)
        rng = rng_for(seed, "bootstrap", cell.method, cell.size, cell.sources, view)
        mdad = mdad_from_curve(curve, threshold, rng)
        tau = kendall_tau_from_differences(de, dt)
        rows.append({
            "method": cell.method, "size": cell.size, "sources": cell.sources, "view": view,
            "mdad": mdad.value, "mdad_low": mdad.low, "mdad_high": mdad.high, "mdad_reached": mdad.reached,
            "error": estimation_error(est, truth), "kendall_tau": float(np.nanmean(tau)),
            "pair_agreement": float(agree.mean()), "runs": est.shape[0], "targets": est.shape[1],
        })
        if robust:
            fitted = robust_mdad(curve, threshold, rng_for(seed, "robust", cell.method, cell.size, cell.sources, view))
            rows[-1].update(mdad_robust=fitted.value, mdad_robust_low=fitted.low, mdad_robust_high=fitted.high)
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
