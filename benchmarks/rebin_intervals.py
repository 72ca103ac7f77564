"""The calibrated intervals of earlier ``bench_intervals.py`` runs, rebuilt from their stored calibration.

``bench_intervals.py --out X.csv`` stores the calibration targets' estimates and accuracies
(X.cal.parquet) beside every new model's estimate and accuracy (X.models.parquet). This script
fits the conformal calibration again from them, with another number of bins of the true
accuracy (or fewer held-out runs), and prints the coverage by fifth, the off-population mark
and the widths, without running a single selection again.

    python benchmarks/rebin_intervals.py rand-*.csv --no-trend                    # what mdad did before
    python benchmarks/rebin_intervals.py rand-*.csv                               # mdad's default now
    python benchmarks/rebin_intervals.py top-*.csv --new-top 0.1                  # the best tenth as new models

With the runs' .pairs.parquet beside them it also prints which order probabilities carry a mark and how
the unmarked ones held (the interval's mark alone, then with the order mark of mdad.micro.trust.order_marks).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from bench_intervals import _cluster_share, calibration_table, guard_table, load, markdown, split_models, stratum_table, unmarked_pairs

from mdad.intervals import ConformalCalibration
from mdad.intervals.conformal import ACCURACY_BINS, MIN_PER_ACCURACY_BIN, equal_count_edges, estimate_trend, rank_bounds
from mdad.intervals.posterior import AccuracyPrior
from mdad.micro import trust
from mdad.micro.trust import OFF_POPULATION_MARK, off_population_marks, order_marks

LEVEL = 0.9


class Belt:
    """Experiment: residual ranks of the ``window`` calibration targets nearest in true accuracy, for every accuracy
    on a grid, inverted as a Neyman belt (its hull)."""

    def __init__(self, estimates: np.ndarray, truths: np.ndarray, window: int) -> None:
        order = np.argsort(truths, kind="stable")
        self.t, self.r = truths[order], (truths - estimates)[order]
        self.window = min(window, len(self.t))
        self.grid = np.linspace(0.0, 1.0, 2001)

    def ranks(self, t: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
        n, k = len(self.t), self.window
        start = np.clip(np.searchsorted(self.t, t) - k // 2, 0, n - k)
        windows = np.sort(self.r[start[:, None] + np.arange(k)], axis=1)
        alpha = (1.0 - level) / 2.0
        lo, hi = int(np.floor((k + 1) * alpha + 1e-9)), int(np.ceil((k + 1) * (1 - alpha) - 1e-9))
        low = windows[:, lo - 1] if lo >= 1 else np.full(len(t), -np.inf)
        high = windows[:, hi - 1] if hi <= k else np.full(len(t), np.inf)
        return low, high

    def bounds(self, estimates, *, level: float) -> tuple[np.ndarray, np.ndarray]:
        est = np.asarray(estimates, dtype=np.float64)
        q_lo, q_hi = self.ranks(self.grid, level)
        d = self.grid[None, :] - est[:, None]
        ok = (d >= q_lo[None, :]) & (d <= q_hi[None, :])
        any_ok = ok.any(axis=1)
        low = np.where(any_ok, self.grid[np.argmax(ok, axis=1)], est + q_lo.min())
        high = np.where(any_ok, self.grid[len(self.grid) - 1 - np.argmax(ok[:, ::-1], axis=1)], est + q_hi.max())
        inside = np.clip(est, 0.0, 1.0)
        return np.clip(np.minimum(low, inside), 0.0, 1.0), np.clip(np.maximum(high, inside), 0.0, 1.0)


class SplitTrend(Belt):
    """Experiment: the estimate's line on the true accuracy, f(t) = a + b t, fitted on the even runs; Mondrian bins of
    the true accuracy on the odd runs' scores e - f(t) (mdad fits the line on every run); the set {t : e - f(t) within
    t's bin's ranks}, its hull."""

    def __init__(self, estimates: np.ndarray, truths: np.ndarray, runs: np.ndarray, bins: int, min_per_bin: int) -> None:
        fit_on = runs % 2 == 0
        score_on = ~fit_on
        self.a, self.b = estimate_trend(estimates[fit_on], truths[fit_on])
        t, e = truths[score_on], estimates[score_on]
        self.edges = equal_count_edges(t, bins, min_per_bin)
        which = np.searchsorted(self.edges, t, side="right")
        self.scores = [np.sort((e - self.a - self.b * t)[which == k]) for k in range(len(self.edges) + 1)]
        self.grid = np.linspace(0.0, 1.0, 2001)

    def ranks(self, t: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
        bounds = np.array([rank_bounds(u, (1.0 - level) / 2.0) for u in self.scores])
        which = np.searchsorted(self.edges, t, side="right")
        trend = t - self.a - self.b * t
        return trend - bounds[which, 1], trend - bounds[which, 0]


def rebuild(
    models: pd.DataFrame,
    cal: pd.DataFrame,
    *,
    bins: int,
    min_per_bin: int,
    runs: int | None,
    new_top: float,
    belt: int = 0,
    split_trend: bool = False,
    trend: bool = True,
) -> pd.DataFrame:
    """Every new model's 90% interval and mark again, from a calibration fitted with ``bins`` and ``min_per_bin``
    on the first ``runs`` held-out runs (all when None); ``allowed``: the truth lies in the set before its hull."""
    key = ["dataset", "method", "size", "rep"]
    cal = cal if runs is None else cal[cal["run"] < runs]
    fits = {k: part for k, part in cal.groupby(key)}
    sources = {}
    out = []
    for k, part in models.groupby(key):
        if k not in fits:  # a random design: exact intervals, nothing to rebuild
            continue
        dataset, rep = k[0], k[3]
        if (dataset, rep) not in sources:
            matrix = load(dataset)
            rest = split_models(matrix, dataset, rep, new_top)[2]
            sources[(dataset, rep)] = AccuracyPrior.from_scores(matrix.scores[rest])
        cal_est, cal_truth = fits[k]["estimate"].to_numpy(), fits[k]["truth"].to_numpy()
        est = part["unclipped"].to_numpy()
        truth = part["truth"].to_numpy()
        if split_trend:
            calibration = SplitTrend(cal_est, cal_truth, fits[k]["run"].to_numpy(), bins, min_per_bin)
        if belt:
            calibration = Belt(cal_est, cal_truth, belt)
        if belt or split_trend:
            q_lo, q_hi = calibration.ranks(truth, LEVEL)  # type: ignore[union-attr]
            allowed = (truth - est >= q_lo) & (truth - est <= q_hi)
            n_bins = 0
        else:
            calibration = ConformalCalibration.fit(cal_est, cal_truth, bins=bins, min_per_bin=min_per_bin, trend=trend)
            which = np.searchsorted(calibration.edges, truth, side="right")
            ranks = np.array([rank_bounds(r, (1.0 - LEVEL) / 2.0) for r in calibration.residuals])
            score = calibration.trend[0] + calibration.trend[1] * truth - est
            allowed = (score >= ranks[which, 0]) & (score <= ranks[which, 1])
            n_bins = len(calibration.residuals)
        low, high = calibration.bounds(est, level=LEVEL)
        marks = off_population_marks(np.clip(est, 0.0, 1.0), sources[(dataset, rep)], calibration, method=k[1])
        pair_marked = order_marks(np.clip(est, 0.0, 1.0), sources[(dataset, rep)], calibration, method=k[1]) != ""
        out.append(
            part.assign(
                order_marked=pair_marked,
                low=low,
                high=high,
                allowed=allowed,
                bins=n_bins,
                mark=np.where(marks == OFF_POPULATION_MARK, "estimated", np.where(marks != "", "reach", "")),
            )
        )
    return pd.concat(out, ignore_index=True)


def fifth_table(models: pd.DataFrame) -> pd.DataFrame:
    """Per method and size: 90% coverage (%) in each fifth of the leaderboard by true accuracy, ± cluster-robust SE
    over (dataset, repetition)."""
    models = models.assign(cover=(models["low"] <= models["truth"] + 1e-12) & (models["truth"] <= models["high"] + 1e-12))
    cells = {}
    for (method, size, fifth), part in models.groupby(["method", "size", "fifth"]):
        share, se = _cluster_share(part, "cover")
        cells[(method, size, f"fifth {fifth + 1}")] = f"{100 * share:.1f}±{100 * se:.1f}"
    table = pd.Series(cells).unstack()
    table.index.names = ["method", "size"]
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", type=Path, nargs="+", help="--out files of bench_intervals.py (with their .cal and .models parquet).")
    parser.add_argument("--bins", type=int, default=ACCURACY_BINS)
    parser.add_argument("--min-per-bin", type=int, default=MIN_PER_ACCURACY_BIN)
    parser.add_argument("--belt", type=int, default=0, help="Experiment: a sliding window of this many residuals instead of bins.")
    parser.add_argument("--no-trend", action="store_true", help="Scores about the identity line (the plain residuals, as mdad did before).")
    parser.add_argument("--split-trend", action="store_true", help="Experiment: the line fitted on the even runs, the scores of the odd ones.")
    parser.add_argument("--runs", type=int, default=None, help="Use only the first RUNS held-out runs of each calibration.")
    parser.add_argument("--new-top", type=float, default=0.0, help="As the runs were made (the best tenth as new models: 0.1).")
    parser.add_argument(
        "--order-reach",
        type=float,
        default=None,
        help="Experiment: mark the order probabilities of a model whose 90%% interval reaches the sources' best SHARE (mdad: 0, the best source).",
    )
    args = parser.parse_args()
    if args.order_reach is not None:
        trust.OFF_POPULATION_ORDER_REACH = args.order_reach
    models = pd.concat([pd.read_parquet(p.with_suffix(".models.parquet")) for p in args.tables], ignore_index=True)
    cal = pd.concat([pd.read_parquet(p.with_suffix(".cal.parquet")) for p in args.tables], ignore_index=True)
    models = rebuild(
        models,
        cal,
        bins=args.bins,
        min_per_bin=args.min_per_bin,
        runs=args.runs,
        new_top=args.new_top,
        belt=args.belt,
        split_trend=args.split_trend,
        trend=not args.no_trend,
    )
    print(f"\n{args.bins} bins at most, {args.min_per_bin} residuals each at least; bins used: {sorted(set(models['bins']))}\n")
    print(markdown(stratum_table(models)))
    exact = np.isclose(models["estimate"], models["truth"], rtol=0.0, atol=1e-9)
    print(f"\nWithout the {int(exact.sum())} models estimated exactly at their accuracy (any interval holding its estimate covers them)\n")
    print(markdown(stratum_table(models[~exact])))
    print("\nBy fifth (1: the weakest 20%, 5: the best 20%)\n")
    print(markdown(fifth_table(models)))
    print("\nThe off-population mark (90% intervals)\n")
    print(markdown(guard_table(models), index=False))
    summary = models.assign(
        width=100 * (models["high"] - models["low"]), cover=(models["low"] <= models["truth"]) & (models["truth"] <= models["high"])
    )
    per = summary.groupby(["method", "size"]).agg(width=("width", "mean"), covered=("cover", "mean"), allowed=("allowed", "mean"))
    print("\nMean 90% width (points); covered by the printed hull and by the set before its hull (%)\n")
    print(markdown(per.assign(covered=100 * per["covered"], allowed=100 * per["allowed"]).round(1)))
    pair_files = [p.with_suffix(".pairs.parquet") for p in args.tables]
    if all(f.exists() for f in pair_files):
        pair_tables(pd.concat([pd.read_parquet(f) for f in pair_files], ignore_index=True), models)


def pair_tables(pairs: pd.DataFrame, models: pd.DataFrame) -> None:
    """The order probabilities of the pairs of new models: the share of pairs marked, and the calibration of those
    left unmarked, with the interval's mark alone (before) and with the order mark (``order_marks``, now)."""
    pairs = pairs[pairs["method"].isin(models["method"].unique())]
    before, now = unmarked_pairs(pairs, models.drop(columns="order_marked")), unmarked_pairs(pairs, models)
    share = pd.DataFrame(
        {
            "before": 100 - 100 * before.groupby(["method", "size"]).size() / pairs.groupby(["method", "size"]).size(),
            "now": 100 - 100 * now.groupby(["method", "size"]).size() / pairs.groupby(["method", "size"]).size(),
        }
    ).fillna(100.0)
    print("\nPairs of new models whose order probability carries a mark (%): the interval's mark alone -> with the order mark\n")
    print(markdown(share.round(1)))
    for name, unmarked in (("the interval's mark alone", before), ("with the order mark", now)):
        table = calibration_table(unmarked, min_pairs=50)
        table["beyond"] = np.where(table["off"].abs() - 0.05 > 2 * table["se"], "*", "")
        print(
            f"\nUnmarked pairs, {name}: held - printed per probability bin, at least 50 pairs; "
            "se cluster-robust over (dataset, rep); * beyond 0.05 by more than 2 SE\n"
        )
        print(markdown(table.round(3).drop(columns="bin"), index=False) if len(table) else "none")


if __name__ == "__main__":
    main()
