"""The random designs' exact order probabilities for models better than the sources, and the best fifth's prior.

The exact order probability of a random design takes its prior from the source models' pairs
(docs/intervals.md#exact-order-probability). For new models like the sources that prior is right;
for new models better than every source the typical source pair is not like theirs: the best
models are closer to each other. So a pair of models both estimated among the sources' best fifth
takes the prior of the best fifth's pairs (PairPrior.of_sources, what `select` stores). This
measures, on real leaderboards, the probability printed against how often the full benchmark kept
the order, for every pair of new models, split by whether a model of the pair is estimated at or
above the sources' 90th percentile (the line of the learned methods' off-population mark):

- "best tenth": the best 10% of models by full-benchmark accuracy are the new models, the rest the
  sources (the everyday case of new models that beat everything the user has);
- "random 30%": a random 30% are the new models (models like the sources; marks there are false alarms).

Per dataset, split and repetition a fresh micro-benchmark of each size is drawn by the design
(mdad's own selection code) and the prior is built from the sources as `select` stores it.
Calibration bins of the printed probability, with the mean printed, the share held and its
cluster-robust SE over (dataset, repetition).

    python benchmarks/bench_exact_order_offpop.py --datasets oll2-gpqa,oll2-musr,oll2-math-hard
    python benchmarks/bench_exact_order_offpop.py --datasets gsm8k-zeroeval,mmlu-pro-tiger
    python benchmarks/bench_exact_order_offpop.py --prior all-pairs   # (or uniform) priors tried and not kept
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pandas as pd

from mdad import methods as method_registry
from mdad.data import ResponseMatrix, read_npz
from mdad.intervals.order import PairPrior
from mdad.intervals.random_designs import exact_pair_probabilities
from mdad.methods.base import SourceView
from mdad.micro.trust import design_estimates, design_strata
from mdad.seeding import rng_for

DATA = Path(os.environ.get("MDAD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
P_BINS = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0 + 1e-9])


def load(name: str) -> ResponseMatrix:
    matrix = read_npz(DATA / name / "responses.npz", source=name)
    complete = ~np.isnan(matrix.scores).any(axis=0)
    return matrix if complete.all() else matrix.take(items=np.flatnonzero(complete))


def pairs_of(
    matrix: ResponseMatrix, name: str, split: str, rep: int, methods: list[str], sizes: list[int], prior: str = "mdad"
) -> list[pd.DataFrame]:
    """Every pair of new models of one split: printed probability, whether the full benchmark kept the order, the mark.

    ``prior``: "mdad" (what select stores: PairPrior.of_sources, the best fifth's pairs for pairs both estimated
    in it), or an alternative tried: "all-pairs" (every pair of sources for every pair, what mdad did before),
    "uniform" (PairPrior.uniform)."""
    x = matrix.scores.astype(np.float64)
    truth = x.mean(axis=1)
    rng = rng_for(0, "bench-exact-order-offpop", name, split, rep)
    if split == "best tenth":
        order, n_new = np.argsort(-truth, kind="stable"), max(3, round(0.1 * matrix.n_models))
    else:
        order, n_new = rng.permutation(matrix.n_models), max(3, round(0.3 * matrix.n_models))
    new, rest = np.sort(order[:n_new]), order[n_new:]
    pair_prior = PairPrior.of_sources(x[rest]) if prior == "mdad" else PairPrior.from_scores(x[rest])
    line = np.quantile(truth[rest], 0.9)  # a pair with a model estimated at or above it counts as "near the top"
    view = SourceView.from_arrays(x[rest], matrix.gold_prob()[rest], matrix.subtask_codes, matrix.has_option_probs)
    pool_subtasks = dict(zip(matrix.subtask_names, np.bincount(matrix.subtask_codes, minlength=len(matrix.subtask_names)).tolist(), strict=True))
    out = []
    for method in methods:
        selector = method_registry.get(method)
        for k in sizes:
            items = selector.select(view, k, rng_for(0, "bench-exact-order-offpop", name, split, rep, method, k)).items
            strata = design_strata(method, matrix.n_items, np.asarray(matrix.subtask_names)[matrix.subtask_codes[items]], pool_subtasks)
            scores = x[np.ix_(new, items)]
            est = design_estimates(strata, scores, scores.mean(axis=1))  # the estimates estimate prints and ranks
            i, j = np.triu_indices(len(new), k=1)
            gap = est[i] - est[j]
            keep = gap != 0
            first, second = np.where(gap > 0, i, j)[keep], np.where(gap > 0, j, i)[keep]
            table = PairPrior.uniform() if prior == "uniform" else pair_prior
            p = exact_pair_probabilities(*strata, scores, first, second, prior=table)
            best = pair_prior.among_best(est[first], est[second]) if prior == "mdad" and pair_prior.best_fifth is not None else None
            if best is not None:
                p[best] = exact_pair_probabilities(*strata, scores, first[best], second[best], prior=pair_prior.best_fifth)
            near_top = est >= line
            out.append(
                pd.DataFrame(
                    {
                        "dataset": name,
                        "split": split,
                        "rep": rep,
                        "method": method,
                        "size": k,
                        "p": p,
                        "held": truth[new][first] > truth[new][second],
                        "near top": near_top[first] | near_top[second],
                    }
                )
            )
    return out


def calibration(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per bin of the printed probability: pairs, mean printed, share held, held - printed and its cluster SE."""
    pairs = pairs[pairs["p"] >= 0.5].assign(bin=lambda f: np.digitize(f["p"], P_BINS) - 1, gap=lambda f: f["held"] - f["p"])
    rows = []
    for b, part in pairs.groupby("bin"):
        clusters = part.groupby(["dataset", "rep"])["gap"].agg(["sum", "size"])
        mean = clusters["sum"].sum() / clusters["size"].sum()
        m = len(clusters)
        se = np.sqrt(m / max(m - 1, 1) * ((clusters["sum"] - mean * clusters["size"]) ** 2).sum()) / clusters["size"].sum()
        rows.append(
            {
                "bin": f"{P_BINS[b]:.2f}-{min(P_BINS[b + 1], 1.0):.2f}",
                "pairs": len(part),
                "printed": part["p"].mean(),
                "held": part["held"].mean(),
                "held - printed": f"{mean:+.3f} ± {se:.3f}",
            }
        )
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """A markdown table, numbers to three decimals."""
    cells = [[f"{v:.3f}" if isinstance(v, float) else str(v) for v in row] for row in table.itertuples(index=False)]
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default="oll2-gpqa,oll2-musr,oll2-math-hard")
    parser.add_argument("--methods", default="random,random-stratified-proportional")
    parser.add_argument("--sizes", default="10,50,100")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--prior", choices=("mdad", "all-pairs", "uniform"), default="mdad", help="The pair prior (mdad's, or one tried).")
    args = parser.parse_args()
    methods, sizes = args.methods.split(","), [int(s) for s in args.sizes.split(",")]
    frames = []
    for name in args.datasets.split(","):
        matrix = load(name)
        for split in ("best tenth", "random 30%"):
            for rep in range(args.reps):
                frames += pairs_of(matrix, name, split, rep, methods, sizes, args.prior)
    pairs = pd.concat(frames, ignore_index=True)
    print(f"datasets {args.datasets}; {args.reps} repetitions; sizes {args.sizes}; prior {args.prior}; every pair of new models (printed >= 0.5)\n")
    for split in ("best tenth", "random 30%"):
        part = pairs[pairs["split"] == split]
        print(f"**{split}**: {100 * part['near top'].mean():.1f}% of pairs have a model estimated at or above the sources' 90th percentile\n")
        for near in (True, False):
            print(f"pairs {'with' if near else 'without'} such a model:\n")
            print(markdown(calibration(part[part["near top"] == near])), "\n")
        print("every pair (what a user of the split sees, whatever the estimates say):\n")
        print(markdown(calibration(part)), "\n")


if __name__ == "__main__":
    main()
