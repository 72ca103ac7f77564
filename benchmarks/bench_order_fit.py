"""Which order calibration for learned methods: the gap alone, the gap in units of the residual spread, or a fit per level.

For each dataset and method, ``mdad.assess``'s held-out runs (targets drawn from all models,
the rest sources, whole pool) at 10, 25, 50 and 100 items; the first half of the runs fits each
candidate, the second half (other splits of the models, other micro-benchmarks) scores it:

- ``gap``: logistic fit of "order held" on the estimated gap |g| (what mdad stored before);
- ``scaled``: logistic fit on |g| in units of the held-out residual spread where the two
  estimates lie (``OrderCalibration``, docs/intervals.md#calibrated-order-probability);
- ``per-level``: one logistic fit on |g| per quarter of the pairs by their mean estimate
  (8 numbers instead of 2; monotone in the gap only within a quarter).

Printed per cell: the Brier score of the held-out pairs (lower is better) and the largest
|share held - mean probability| over the probability bins of at least 100 pairs.

    python benchmarks/bench_order_fit.py --datasets oll2-math-hard,oll2-gpqa,oll2-musr \\
        --methods stratified-confidence,tinybenchmarks-pirt --runs 16
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from bench_intervals import P_BINS, load, markdown

from mdad.assessment import held_out_runs
from mdad.intervals import OrderCalibration
from mdad.metrics.robust import logistic_coefficients

SIZES = (10, 25, 50, 100)


def pairs_of(estimates: np.ndarray, truths: np.ndarray):
    """Every pair within each run whose estimates differ: the two estimates and whether the truth keeps their order."""
    i, j = np.triu_indices(estimates.shape[1], k=1)
    e1, e2 = estimates[:, i].ravel(), estimates[:, j].ravel()
    held = np.sign(e1 - e2) == np.sign((truths[:, i] - truths[:, j]).ravel())
    keep = e1 != e2
    return e1[keep], e2[keep], held[keep].astype(np.float64)


def per_level(fit_pairs, test_pairs) -> np.ndarray:
    """The per-level candidate: one gap fit per quarter of the fitting pairs' mean estimate."""
    (e1, e2, held), (t1, t2, _) = fit_pairs, test_pairs
    edges = np.unique(np.quantile((e1 + e2) / 2, [0.25, 0.5, 0.75]))
    which, test_which = np.searchsorted(edges, (e1 + e2) / 2), np.searchsorted(edges, (t1 + t2) / 2)
    p = np.empty(len(t1))
    for b in range(len(edges) + 1):
        gap = 100 * np.abs(e1 - e2)[which == b]
        a, s = logistic_coefficients(gap, held[which == b], np.ones_like(gap))[0]
        here = test_which == b
        p[here] = 1 / (1 + np.exp(-(a + s * 100 * np.abs(t1 - t2)[here])))
    return p


def worst_bin(p: np.ndarray, held: np.ndarray) -> float:
    which = np.digitize(p, P_BINS) - 1
    offs = [abs(held[which == b].mean() - p[which == b].mean()) for b in range(len(P_BINS) - 1) if (which == b).sum() >= 100]
    return max(offs) if offs else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="oll2-math-hard,oll2-gpqa,oll2-musr")
    parser.add_argument("--methods", default="stratified-confidence")
    parser.add_argument("--runs", type=int, default=16)
    args = parser.parse_args()
    rows = []
    for name in args.datasets.split(","):
        matrix = load(name)
        for method in args.methods.split(","):
            runs = held_out_runs(matrix, method, SIZES, runs=args.runs, seed=1)
            half = args.runs // 2
            for k in SIZES:
                est, tru = runs.estimates[k], runs.truths
                test = pairs_of(est[half:], tru[half:])
                candidates = {
                    "gap": OrderCalibration.fit(est[:half], tru[:half], by_level=False).probability(*test[:2]),
                    "scaled": OrderCalibration.fit(est[:half], tru[:half]).probability(*test[:2]),
                    "per-level": per_level(pairs_of(est[:half], tru[:half]), test),
                }
                for candidate, p in candidates.items():
                    rows.append(
                        {
                            "dataset": name,
                            "method": method,
                            "size": k,
                            "fit": candidate,
                            "brier": np.mean((p - test[2]) ** 2),
                            "worst bin": worst_bin(p, test[2]),
                        }
                    )
            print(f"{name} {method} done", flush=True)
    frame = pd.DataFrame(rows)
    cells = frame.assign(cell=frame.apply(lambda r: f"{r.brier:.4f} ({r['worst bin']:.3f})", axis=1))
    print("\nBrier score of held-out pairs (largest |held - p| over probability bins of 100+ pairs)\n")
    print(
        markdown(
            cells.pivot_table(index=["dataset", "method", "size"], columns="fit", values="cell", aggfunc="first")[["gap", "scaled", "per-level"]]
        )
    )
    wins = frame.pivot_table(index=["dataset", "method", "size"], columns="fit", values="brier")
    print(
        f"\nscaled below gap in {(wins['scaled'] < wins['gap']).sum()} of {len(wins)} cells; "
        f"per-level below gap in {(wins['per-level'] < wins['gap']).sum()}; "
        f"mean Brier gap {wins['gap'].mean():.4f}, scaled {wins['scaled'].mean():.4f}, "
        f"per-level {wins['per-level'].mean():.4f}"
    )


if __name__ == "__main__":
    main()
