"""Order probabilities for whole rankings: neighbouring pairs of many models estimated in one call, and P(the
estimated best is the true best), on models not used to calibrate.

For each dataset and repetition, 50 models drawn at random are the *new* models (never seen); the
rest play the user's data: ``--cal-runs`` held-out runs of 50 targets each (drawn from the rest, the
others sources) give the learned methods their calibration as ``mdad select`` does, and the final
micro-benchmark is chosen with all of the rest as sources. The new models are then estimated together
(one call of 50, and ``--calls`` random calls of 5 and of 10 of them) and compared with their accuracy
on all items:

- neighbouring pairs of the ranking by estimate: the probability printed (random designs: exact, from
  the pair's discordant items with the source pairs as prior; learned methods: the fit on held-out
  rankings, ``RankingCalibration``) against the share of orders that held, per probability bin, with
  the earlier fit on every pair of targets (``OrderCalibration.probability``) beside it;
- the estimated best: P(best is best) against the share of calls whose estimated best was the true best.

    python benchmarks/bench_rankings.py --out /tmp/rankings.parquet
    python benchmarks/bench_rankings.py --tables /tmp/rankings.parquet

Standard errors are cluster-robust over (dataset, repetition): a repetition's pairs share one split
and one micro-benchmark per size.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from bench_intervals import load, markdown, run_block

from mdad.intervals import OrderCalibration
from mdad.intervals.order import PairPrior
from mdad.intervals.posterior import AccuracyPrior
from mdad.intervals.ranking import best_probabilities, count_posteriors, normal_posteriors
from mdad.micro.trust import design_of, pair_orders
from mdad.seeding import rng_for

DATASETS = ("oll2-gpqa", "oll2-musr", "oll2-math-hard")
METHODS = ("random", "anchor-points", "stratified-confidence", "tinybenchmarks-gpirt")
NEW = 50  # models estimated together
SMALL_CALLS = (5, 10)  # sizes of the smaller calls drawn from the new models
P_BINS = np.array([0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0 + 1e-9])
BEST_BINS = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0 + 1e-9])


def one_call(matrix, method, k, micro, est, new_rows, call, truth, fit, pair_prior, accuracy_prior):
    """Neighbouring pairs and the estimated best of one call (``call``: positions among the new models)."""
    e = np.clip(est[call], 0.0, 1.0)
    t = truth[new_rows[call]]
    order = np.argsort(-e, kind="stable")
    a, b = order[:-1], order[1:]
    keep = e[a] != e[b]
    n = len(call)
    if design_of(method) is not None:
        scores = matrix.scores[np.ix_(new_rows[call], micro.items)].astype(np.float64)
        strata = (np.array([matrix.n_items]), np.array([k]), np.zeros(k, np.int64))  # a uniform draw
        models = np.arange(n).astype(str)
        p = pair_orders(scores, e, models, a, b, method=method, strata=strata, calibration=None, prior=pair_prior).probability  # as estimate does
        p_pairs = p
        best = best_probabilities(count_posteriors(accuracy_prior, k, scores.sum(axis=1).astype(np.int64)))[order[0]]
        raw = best
    else:
        p_pairs = fit.probability(e[a], e[b])
        p = fit.rankings.adjacent_probability(fit.scaled_gap(e[a], e[b]), n)
        raw = best_probabilities(normal_posteriors(e, fit.spread_at(e) / 100.0))[order[0]]
        best = float(fit.rankings.best_probability(np.array([raw]), n)[0])
    pairs = pd.DataFrame({"p": p[keep], "p_pairs_fit": p_pairs[keep], "held": (t[a] > t[b])[keep], "call": n})
    return pairs, {"p": best, "p_raw": raw, "held": bool(t[order[0]] > np.delete(t, order[0]).max()), "call": n}


def one_repetition(matrix, name, rep, methods, sizes, cal_runs, calls):
    rng = rng_for(0, "bench-rankings", name, rep)
    order = rng.permutation(matrix.n_models)
    new, rest = np.sort(order[:NEW]), order[NEW:]
    cal_targets, cal_sources = [], []
    for _ in range(cal_runs):
        shuffled = rng.permutation(rest)
        cal_targets.append(np.sort(shuffled[:NEW]))
        cal_sources.append(shuffled[NEW:])
    truth = matrix.scores.astype(np.float64).mean(axis=1)
    calibration, _ = run_block(matrix, methods, sizes, cal_sources, cal_targets, (name, rep, "cal"))
    final, _ = run_block(matrix, methods, sizes, [rest], [new], (name, rep, "final"))
    pair_prior = PairPrior.of_sources(matrix.scores[rest])  # as select stores it
    accuracy_prior = AccuracyPrior.from_scores(matrix.scores[rest])
    draws = [np.arange(NEW)] + [np.sort(rng.choice(NEW, size=s, replace=False)) for s in SMALL_CALLS for _ in range(calls)]
    pairs, best = [], []
    for (method, k), [(micro, est)] in final.items():
        fit = None
        if design_of(method) is None:
            cal_est = np.array([e for _, e in calibration[(method, k)]])
            fit = OrderCalibration.fit(cal_est, truth[np.array(cal_targets)])
        for call in draws:
            p, b = one_call(matrix, method, k, micro, est, new, call, truth, fit, pair_prior, accuracy_prior)
            pairs.append(p.assign(dataset=name, method=method, size=k, rep=rep))
            best.append({**b, "dataset": name, "method": method, "size": k, "rep": rep})
    return pd.concat(pairs, ignore_index=True), pd.DataFrame(best)


def reliability(frame: pd.DataFrame, column: str, bins: np.ndarray, by: list[str], min_n: int = 30) -> pd.DataFrame:
    """Per group and bin of ``column``: count, mean probability, share held, held - p and its cluster-robust SE."""
    frame = frame.assign(bin=np.digitize(frame[column], bins) - 1, gap=frame["held"].astype(float) - frame[column])
    rows = []
    for key, part in frame.groupby([*by, "bin"]):
        clusters = part.groupby(["dataset", "rep"]).agg(n=("gap", "size"), d=("gap", "sum"))
        off = part["gap"].mean()
        m = len(clusters)
        se = np.sqrt(m / max(m - 1, 1) * ((clusters["d"] - off * clusters["n"]) ** 2).sum()) / len(part)
        rows.append(
            {**dict(zip([*by, "bin"], key, strict=True)), "n": len(part), "p": part[column].mean(), "held": part["held"].mean(), "off": off, "se": se}
        )
    out = pd.DataFrame(rows, columns=[*by, "bin", "n", "p", "held", "off", "se"])  # no rows: no method of that kind asked
    out["bin"] = [f"{bins[b]:.2f}-{min(bins[b + 1], 1.0):.2f}" for b in out["bin"]]
    out["beyond"] = np.where((out["off"].abs() - 0.05) > 2 * out["se"], "*", "")
    return out[out["n"] >= min_n].round(3)


def print_tables(pairs: pd.DataFrame, best: pd.DataFrame) -> None:
    big = pairs[pairs["call"] == NEW]
    print(f"\nNeighbouring pairs in calls of {NEW} models: printed probability per bin (all datasets, sizes pooled)\n")
    print(markdown(reliability(big, "p", P_BINS, ["method"]), index=False))
    print("\nThe same, per size\n")
    print(markdown(reliability(big, "p", P_BINS, ["method", "size"]), index=False))
    learned = big[big["method"].map(design_of).isna()]
    print("\nLearned methods, the earlier fit on every pair of targets for the same neighbouring pairs\n")
    print(markdown(reliability(learned, "p_pairs_fit", P_BINS, ["method"]), index=False))
    for n in SMALL_CALLS:
        print(f"\nNeighbouring pairs in calls of {n} models\n")
        print(markdown(reliability(pairs[pairs["call"] == n], "p", P_BINS, ["method"]), index=False))
    print("\nP(the estimated best is the true best), all call sizes pooled\n")
    print(markdown(reliability(best, "p", BEST_BINS, ["method"], min_n=20), index=False))
    print("\nP(best is best) by call size\n")
    print(markdown(reliability(best, "p", BEST_BINS, ["method", "call"], min_n=20), index=False))
    learned_best = best[best["method"].map(design_of).isna()]
    print("\nLearned methods, before the held-out fit (normal posteriors with the held-out spread)\n")
    print(markdown(reliability(learned_best, "p_raw", BEST_BINS, ["method"], min_n=20), index=False))
    mean = best.groupby(["method", "call"]).agg(calls=("held", "size"), p=("p", "mean"), held=("held", "mean")).round(3)
    print("\nMean P(best is best) and share held per method and call size\n")
    print(markdown(mean))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--sizes", default="10,50,100")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--first-rep", type=int, default=0)
    parser.add_argument("--cal-runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=10, help="Random calls of each smaller size per repetition.")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--tables", type=Path, nargs="*", default=None, help="Only print the tables of earlier --out files.")
    args = parser.parse_args()
    if args.tables:
        pairs = pd.concat([pd.read_parquet(p) for p in args.tables], ignore_index=True)
        best = pd.concat([pd.read_parquet(p.with_suffix(".best.parquet")) for p in args.tables], ignore_index=True)
        print_tables(pairs, best)
        return
    methods, sizes = args.methods.split(","), [int(s) for s in args.sizes.split(",")]
    pairs, best = [], []
    for name in args.datasets.split(","):
        matrix = load(name)
        start = time.perf_counter()
        for rep in range(args.first_rep, args.first_rep + args.reps):
            p, b = one_repetition(matrix, name, rep, methods, sizes, args.cal_runs, args.calls)
            pairs.append(p)
            best.append(b)
            print(f"{name}: repetition {rep} done after {time.perf_counter() - start:.0f} s", flush=True)
            if args.out is not None:
                pd.concat(pairs, ignore_index=True).to_parquet(args.out)
                pd.concat(best, ignore_index=True).to_parquet(args.out.with_suffix(".best.parquet"))
    print_tables(pd.concat(pairs, ignore_index=True), pd.concat(best, ignore_index=True))


if __name__ == "__main__":
    main()
