"""The variational IRT fit round by round: what each of its rounds changes, to choose when to stop.

    python benchmarks/bench_irt_rounds.py [--real DATA_DIR] [--rounds 12]
    python benchmarks/bench_irt_rounds.py --only simulated --items 6016 --rounds 20   # the paper grid's MMLU-Pro pool

For each matrix, 80% of the models are the sources (350 of a simulated 400 x 12,000 of MMLU-Pro's
shape) and the rest the targets. The fit on the sources, with 10% of their cells held out, runs the
full fixed schedule (12 rounds of 3 L-BFGS-B iterations, the stopping rule off); after each round it
prints the objective, its relative change over the round, the mean |change| of the fitted
probabilities of the training cells and the largest change of a hierarchical scale (|log ratio|) over
the round (what the stopping rule of ``fit_irt`` tests), the log-likelihood per cell of the training and held-out cells,
and what the fit feeds: the anchors of tinyBenchmarks at k = 10, 50 and 100 (the share that are
also the last round's anchors) and the targets' mean absolute error of the tinyBenchmarks and p-IRT
estimates at those anchors (points). One process, one BLAS thread.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.irt import IRTFit, fit_irt
from mdad.methods.tinybenchmarks import anchor_points, pirt_estimate

SIZES = (10, 50, 100)
REAL = ("oll2-gpqa", "oll2-musr", "oll2-math-hard")


def matrices(real: Path | None, items: int = 12000) -> list[tuple[str, np.ndarray]]:
    from mdad.data import simulate
    from mdad.data.simulate import SimulationParams

    out = [
        (
            f"simulated 350 (+50) x {items:,}",
            simulate(seed=0, n_models=400, n_items=items, n_subtasks=14, params=SimulationParams(floors=(0.1,))).scores,
        )
    ]
    for name in REAL if real else ():
        path = real / name / "responses.npz"
        if path.is_file():
            out.append((name, np.load(path)["scores"]))
    return out


def loglik(logits: np.ndarray, scores: np.ndarray, cells: np.ndarray) -> float:
    z, y = logits[cells], scores[cells]
    return float(np.mean(y * z - np.logaddexp(0.0, z)))


def report(label: str, scores: np.ndarray, rounds: int) -> None:
    scores = scores.astype(np.float64)
    order = np.random.default_rng([0, 3]).permutation(len(scores))
    n_src = 350 if len(scores) == 400 else round(0.8 * len(scores))
    sources, targets = scores[np.sort(order[:n_src])], scores[np.sort(order[n_src:])]
    held = np.random.default_rng([0, 7]).random(sources.shape) < 0.1
    train = np.where(held, np.nan, sources)
    truth = targets.mean(axis=1)
    rows: list[dict] = []

    def record(fit: IRTFit) -> bool:
        logits = fit.logits()
        probs = 1.0 / (1.0 + np.exp(-logits))
        scales = np.log(np.append(fit.priors.a_scale, fit.priors.b_scale))
        dp = float(np.abs(probs - rows[-1]["probs"])[~held].mean()) if rows else float("nan")
        ds = float(np.abs(scales - rows[-1]["scales"]).max()) if rows else float("nan")
        row = {
            "probs": probs,
            "scales": scales,
            "dp": dp,
            "ds": ds,
            "objective": fit.objective,
            "train": loglik(logits, sources, ~held),
            "held": loglik(logits, sources, held),
            "anchors": {},
            "errors": {},
        }
        for k in SIZES:
            anchors, weights = anchor_points(fit.embedding, k, np.random.default_rng([1, k]))
            row["anchors"][k] = set(anchors.tolist())
            weighted = targets[:, anchors] @ weights
            pirt = pirt_estimate(targets[:, anchors], anchors, fit.a, fit.b)
            row["errors"][k] = (100 * np.abs(weighted - truth).mean(), 100 * np.abs(pirt - truth).mean())
        rows.append(row)
        return False

    fit_irt(train, dims=10, rng=np.random.default_rng(0), max_rounds=rounds, max_iter=3 * rounds, until=record, stop_tol=0.0)
    print(f"\n{label}: {len(sources)} sources, {len(targets)} targets, {scores.shape[1]} items")
    head = " ".join(f"{'same@' + str(k):>7s} {'tb@' + str(k):>7s} {'pirt@' + str(k):>8s}" for k in SIZES)
    print(f"{'round':>5s} {'objective':>14s} {'rel change':>10s} {'mean|dp|':>9s} {'dlogscale':>9s} {'train ll':>9s} {'held ll':>9s} {head}")
    last = rows[-1]["anchors"]
    for i, row in enumerate(rows, 1):
        change = abs(row["objective"] - rows[i - 2]["objective"]) / abs(row["objective"]) if i > 1 else float("nan")
        cells = " ".join(f"{len(row['anchors'][k] & last[k]) / k:7.2f} {row['errors'][k][0]:7.3f} {row['errors'][k][1]:8.3f}" for k in SIZES)
        print(
            f"{i:5d} {row['objective']:14.2f} {change:10.2e} {row['dp']:9.2e} {row['ds']:9.2e} {row['train']:9.5f} {row['held']:9.5f} {cells}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", type=Path, default=None, help="folder of the real datasets (oll2-gpqa, ...)")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--only", default=None, help="only matrices whose label contains this")
    parser.add_argument("--items", type=int, default=12000, help="items of the simulated matrix (MMLU-Pro's shape: 12,000; the grid's pool: 6,016)")
    args = parser.parse_args()
    with threadpool_limits(1):
        for label, scores in matrices(args.real, args.items):
            if args.only is None or args.only in label:
                report(label, scores, args.rounds)


if __name__ == "__main__":
    main()
