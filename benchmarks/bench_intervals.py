"""Coverage of mdad's intervals and calibration of its order probabilities, on models not used to calibrate.

For each dataset and repetition the models are split at random: 30% are the *new* models
(never seen), the rest play the user's data. As ``mdad select`` does, the rest (a) run
``--cal-runs`` held-out assessment runs (targets drawn from the rest, every other one a
source; the whole item pool) that give each method and size its calibration, and (b) choose
the final micro-benchmark using all of them as sources. The new models' intervals and the
orders of every pair of new models are then compared with their full-benchmark accuracy.
Random designs use the exact finite-population answers (no calibration); the others the
split-conformal residuals and the logistic order fit of (a).

    python benchmarks/bench_intervals.py                      # every method, the six shared leaderboards and the simulated one
    python benchmarks/bench_intervals.py --datasets simulated --methods random,anchor-points --reps 3

Prints markdown tables (coverage at 90% and 95% overall and by the new model's fifth of the
leaderboard by true accuracy, with the estimates outside their own interval; mean width;
order-probability calibration; per dataset, the share of new models covered or marked by the off-population marks,
overall and in the top fifth, and the share marked) and, with --csv X.csv, writes the per-repetition rows as CSV,
the pairs to X.pairs.parquet, every new model's estimate, 90% interval and accuracy to
X.models.parquet and every calibration target's estimate and accuracy to X.cal.parquet (from which
the calibrated intervals can be rebuilt with another construction, without selecting again). The
record keeps every cell's coverage. ``--smoke``: the simulated matrix, two methods, one repetition.

``--columns`` gives the interval columns of the side-by-side table (bench_baselines_table.py) instead: per
dataset, targets ("random": as many new models as ``mdad run`` has targets, drawn at random; "top": that many of
the strongest, as ``run --targets-from top``), method and size (default 10, 25, 50, 100 and 250), the 90%
interval's coverage of the new models overall and of those in the top fifth of the leaderboard, ± cluster-robust
SE over repetitions, and the share covered or marked and marked; one record result per cell, keyed by dataset,
targets, size and method as the table's are (methods that need 0/1 scores are left out on continuous scores):

    python benchmarks/bench_intervals.py --columns --reps 6 --cal-runs 10
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import suite

from mdad import methods as method_registry
from mdad.data import ResponseMatrix, read_npz, simulate
from mdad.experiment.grid import default_targets
from mdad.intervals import ConformalCalibration, OrderCalibration
from mdad.intervals.order import PairPrior
from mdad.intervals.posterior import UNIFORM_WEIGHT, AccuracyPrior
from mdad.intervals.random_designs import exact_bounds, exact_pair_probabilities
from mdad.methods.base import SourceView
from mdad.micro.trust import (
    OFF_POPULATION_CEILING_MARK,
    OFF_POPULATION_FIT_MARK,
    OFF_POPULATION_MARK,
    OFF_POPULATION_PILED_MARK,
    OFF_POPULATION_REACH_MARK,
    design_of,
    off_population_marks,
    order_marks,
)
from mdad.seeding import rng_for

DATA = Path(os.environ.get("MDAD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
DATASETS = ("oll2-gpqa", "oll2-musr", "oll2-math-hard", "mmlu-pro-tiger", "alpacaeval2", "gsm8k-zeroeval", "simulated")
LEVELS = (0.9, 0.95)
NEW_SHARE = 0.3
P_BINS = np.array([0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0 + 1e-9])


def load(name: str) -> ResponseMatrix:
    if name == "simulated":
        return simulate(seed=0)
    matrix = read_npz(DATA / name / "responses.npz", source=name)
    complete = ~np.isnan(matrix.scores).any(axis=0)
    return matrix.take(items=np.flatnonzero(complete)) if not complete.all() else matrix


def run_block(
    matrix: ResponseMatrix, methods: list[str], sizes: list[int], sources: list[np.ndarray], targets: list[np.ndarray], seed: tuple
) -> dict:
    """Per (method, size): the micro-benchmark and the targets' estimates of every run (as mdad's grid does).

    An adaptive method asks each target its own items (``SelectionMethod.outcomes``, as the grid and
    the assessment run it; its micro-benchmark, the whole pool plus the rule, is None here): reading
    the targets' answers on the whole pool would hand it every answer and make its estimates exact.
    """
    gold = matrix.gold_prob()
    out = {(m, k): [] for m in methods for k in sizes}
    adaptive_raw = {(m, k): [] for m in methods for k in sizes}
    for run, (src, tgt) in enumerate(zip(sources, targets, strict=True)):
        view = SourceView.from_arrays(matrix.scores[src], gold[src], matrix.subtask_codes, matrix.has_option_probs)
        prepared = {}
        for name in methods:
            method = method_registry.get(name)
            key = method.preparation or f"method:{name}"
            if key not in prepared:
                prepared[key] = method.prepare(view, rng_for(0, "bench-intervals", *seed, key, run))

            def rng_of(k, name=name, run=run):
                return rng_for(0, "bench-intervals", *seed, name, k, run)

            if method.adaptive:
                outcomes = method.outcomes(view, sizes, scores=matrix.scores[tgt], gold_prob=gold[tgt], rng_of=rng_of, prepared=prepared[key])
                for k in sizes:
                    asked = outcomes[k].items  # targets x k pool positions, in the order asked
                    raw = np.take_along_axis(matrix.scores[tgt], asked, axis=1).mean(axis=1)  # share right of the items asked
                    out[(name, k)].append((None, outcomes[k].estimates))
                    adaptive_raw[(name, k)].append(raw)
                continue
            for k in sizes:
                micro = method.select(view, k, rng_of(k), prepared[key])
                out[(name, k)].append((micro, micro.estimate(matrix.scores[np.ix_(tgt, micro.items)], gold[np.ix_(tgt, micro.items)])))
    return out, adaptive_raw


def strata_of(matrix: ResponseMatrix, method: str, items: np.ndarray):
    if design_of(method) == "uniform":
        return np.array([matrix.n_items]), np.array([len(items)]), np.zeros(len(items), np.int64)
    codes = matrix.subtask_codes
    return (np.bincount(codes, minlength=len(matrix.subtask_names)), np.bincount(codes[items], minlength=len(matrix.subtask_names)), codes[items])


def split_models(
    matrix: ResponseMatrix, name: str, rep: int, new_top: float = 0.0, n_new: int | None = None
) -> tuple[np.random.Generator, np.ndarray, np.ndarray]:
    """The repetition's new models and the rest (the user's models), and the generator that draws the calibration runs next.

    ``n_new``: how many new models (default: ``NEW_SHARE`` of them, or with ``new_top`` that share of the best)."""
    rng = rng_for(0, "bench-intervals", name, rep)
    order = rng.permutation(matrix.n_models)
    count = max(3, round(NEW_SHARE * matrix.n_models))
    if new_top:  # off-population: the best models by full-benchmark accuracy are the new ones
        order = np.argsort(-matrix.scores.astype(np.float64).mean(axis=1), kind="stable")
        count = max(3, round(new_top * matrix.n_models))
    count = count if n_new is None else n_new
    return rng, np.sort(order[:count]), order[count:]


def one_repetition(
    matrix: ResponseMatrix,
    name: str,
    rep: int,
    methods,
    sizes,
    cal_runs: int,
    new_top: float = 0.0,
    uniform_weight: float = UNIFORM_WEIGHT,
    n_new: int | None = None,
):
    rng, new, rest = split_models(matrix, name, rep, new_top, n_new)
    n_new = len(new)
    n_cal_targets = min(50, len(rest) // 2)
    cal_targets, cal_sources = [], []
    for _ in range(cal_runs):
        shuffled = rng.permutation(rest)
        cal_targets.append(np.sort(shuffled[:n_cal_targets]))
        cal_sources.append(shuffled[n_cal_targets:])
    truth = matrix.scores.astype(np.float64).mean(axis=1)
    fifth = accuracy_fifths(truth)
    calibration, cal_raw = run_block(matrix, methods, sizes, cal_sources, cal_targets, (name, rep, "cal"))
    final, final_raw = run_block(matrix, methods, sizes, [rest], [new], (name, rep, "final"))
    binary = bool(np.isin(matrix.scores, (0.0, 1.0)).all())  # continuous scores: no priors, as select stores none
    prior = PairPrior.from_scores(matrix.scores[rest]) if binary else None  # as select does: from the models the user has
    accuracy_prior = AccuracyPrior.from_scores(matrix.scores[rest], uniform_weight=uniform_weight) if uniform_weight >= 0 and binary else None
    source_scores = np.sort(matrix.scores[rest].mean(axis=1))  # what select stores for the off-population marks
    i, j = np.triu_indices(n_new, k=1)
    rows, pairs, per_model, cal_rows = [], [], [], []
    for (method, k), [(micro, est)] in final.items():
        exact = design_of(method) is not None
        if not exact:
            cal_est = np.array([e for _, e in calibration[(method, k)]])
            cal_truth = truth[np.array(cal_targets)]
            conformal = ConformalCalibration.fit(cal_est, cal_truth)
            order_fit = OrderCalibration.fit(cal_est, cal_truth)
            gap_only = OrderCalibration.fit(cal_est, cal_truth, by_level=False)  # what older mdad stored
            runs = np.repeat(np.arange(cal_runs), cal_est.shape[1])
            cal_rows.append(
                pd.DataFrame(
                    {"dataset": name, "method": method, "size": k, "rep": rep, "run": runs, "estimate": cal_est.ravel(), "truth": cal_truth.ravel()}
                )
            )
        scores = matrix.scores[np.ix_(new, micro.items)] if micro is not None else None
        source_raw_line = np.quantile(matrix.scores[np.ix_(rest, micro.items)].mean(axis=1), 0.9) if micro is not None else np.nan
        if micro is None:  # an adaptive test: share right of the items asked, against the calibration targets' 90th percentile
            raw, source_raw_line = final_raw[(method, k)][0], np.quantile(np.concatenate(cal_raw[(method, k)]), 0.9)
        else:
            raw = scores.mean(axis=1)
        row = {"dataset": name, "method": method, "size": k, "rep": rep, "new_models": n_new}
        own = {"dataset": name, "method": f"{method} (own interval)", "size": k, "rep": rep, "new_models": n_new}
        for level in LEVELS:
            low, high = (
                exact_bounds(*strata_of(matrix, method, micro.items), scores, level=level, prior=accuracy_prior)[:2]
                if exact
                else conformal.bounds(est, level=level)
            )
            _score(row, level, low, high, truth[new])
            if level == LEVELS[0]:
                marks = (
                    np.full(n_new, "", dtype=object)
                    if exact
                    else off_population_marks(np.clip(est, 0.0, 1.0), source_scores, conformal, method=method)
                )
                kinds = {
                    OFF_POPULATION_MARK: "estimated",
                    OFF_POPULATION_REACH_MARK: "reach",
                    OFF_POPULATION_CEILING_MARK: "ceiling",
                    OFF_POPULATION_FIT_MARK: "fitted",
                }
                mark_kind = np.array([kinds.get(m, "piled" if m == OFF_POPULATION_PILED_MARK else "") for m in marks], dtype=object)
                pair_marked = (
                    np.zeros(n_new, dtype=bool) if exact else order_marks(np.clip(est, 0.0, 1.0), source_scores, conformal, method=method) != ""
                )
                per_model.append(
                    pd.DataFrame(
                        {
                            "dataset": name,
                            "method": method,
                            "size": k,
                            "rep": rep,
                            "model": new,
                            "truth": truth[new],
                            "fifth": fifth[new],
                            "estimate": np.clip(est, 0.0, 1.0),
                            "unclipped": est,  # what the interval is built around (an AIPW estimate can pass 0 or 1)
                            "low": low,
                            "high": high,
                            # the design-free check of the off-population guard: the model's raw accuracy on the
                            # chosen items against the sources' 90th percentile of theirs (NaN: adaptive test)
                            "mark": mark_kind,  # the mark estimate prints: "", "estimated", "reach", "ceiling", "fitted" or "piled"
                            "order_marked": pair_marked,  # the mark the model's order probabilities carry (mdad.micro.trust.order_marks)
                            "raw": raw,
                            "raw_line": source_raw_line,
                        }
                    )
                )
            # an estimator's own interval (AIPW's t interval, docs/adaptive.md#aipw), beside the conformal one
            interval = micro.own_intervals(scores, matrix.models[new], level=level) if micro is not None else None
            if interval is not None:
                _score(own, level, interval.low, interval.high, truth[new])
        rows += [row, own] if any(key.startswith("cover") for key in own) else [row]
        gap = est[i] - est[j]
        keep = gap != 0
        first, second = np.where(gap > 0, i, j)[keep], np.where(gap > 0, j, i)[keep]
        if exact:
            p = exact_pair_probabilities(*strata_of(matrix, method, micro.items), scores, first, second, prior=prior)
            p_gap = np.full(len(p), np.nan)
        else:
            p = order_fit.probability(est[first], est[second])
            p_gap = gap_only.probability(est[first], est[second])
        held = truth[new][first] > truth[new][second]
        pairs.append(
            pd.DataFrame(
                {
                    "dataset": name,
                    "method": method,
                    "size": k,
                    "rep": rep,
                    "p": p,
                    "held": held,
                    "p_gap_only": p_gap,
                    "first": new[first],
                    "second": new[second],
                    "level": np.minimum(est[first], est[second]),
                }
            )
        )
    return rows, pairs, per_model, cal_rows


def accuracy_fifths(truth: np.ndarray) -> np.ndarray:
    """Each model's fifth of the leaderboard by full-benchmark accuracy (0: the weakest 20%, 4: the best 20%)."""
    rank = np.argsort(np.argsort(truth, kind="stable"), kind="stable")
    return np.minimum(5 * rank // len(truth), 4)


STRATA = {0: "bottom 20%", 1: "middle 60%", 2: "middle 60%", 3: "middle 60%", 4: "top 20%"}


def _cluster_share(part: pd.DataFrame, column: str) -> tuple[float, float]:
    """Share of rows where ``column`` holds and its cluster-robust SE over (dataset, repetition)."""
    clusters = part.groupby(["dataset", "rep"])[column].agg(["sum", "size"])
    share = clusters["sum"].sum() / clusters["size"].sum()
    m = len(clusters)
    se = np.sqrt(m / max(m - 1, 1) * ((clusters["sum"] - share * clusters["size"]) ** 2).sum()) / clusters["size"].sum()
    return float(share), float(se)


def guard_table(models: pd.DataFrame) -> pd.DataFrame:
    """Per method and size, the off-population mark of ``estimate`` at work on the new models (90% intervals, %, ±
    cluster-robust SE over (dataset, repetition)): covered, marked (by either rule), covered or marked (the promise:
    at least 85% when the new models are better than every source), the coverage of the unmarked and of the marked
    ones, and the mean estimate - truth (points). In a random split "marked" is the false-alarm rate on ordinary new models."""
    models = models.assign(
        cover=(models["low"] <= models["truth"] + 1e-12) & (models["truth"] <= models["high"] + 1e-12),
        marked=models["mark"] != "",
        bias=100 * (models["estimate"] - models["truth"]),
    )
    models["either"] = models["cover"] | models["marked"]
    rows = []
    for (method, size), part in models.groupby(["method", "size"]):
        row = {"method": method, "size": size}
        for column, name in (("cover", "covered"), ("marked", "marked"), ("either", "covered or marked")):
            share, se = _cluster_share(part, column)
            row[name] = f"{100 * share:.1f}±{100 * se:.1f}"
        unmarked = part[~part["marked"]]
        row["unmarked covered"] = f"{100 * unmarked['cover'].mean():.1f}" if len(unmarked) else ""
        row["marked covered"] = f"{100 * part.loc[part['marked'], 'cover'].mean():.1f}" if part["marked"].any() else ""
        row["bias"] = round(part["bias"].mean(), 1)
        row["new models"] = len(part)
        rows.append(row)
    return pd.DataFrame(rows)


def promise_table(models: pd.DataFrame, datasets: list[str]) -> pd.DataFrame:
    """Per method and size, per dataset and over all: the share of new models whose 90% interval covers them or is
    marked (%, ± cluster-robust SE over repetitions), over every new model and over those in the top fifth of the
    leaderboard by true accuracy ("top fifth"), and the share marked (the false-alarm rate in a random split)."""
    models = models.assign(
        either=((models["low"] <= models["truth"] + 1e-12) & (models["truth"] <= models["high"] + 1e-12)) | (models["mark"] != ""),
        marked=models["mark"] != "",
    )
    rows = []
    for (method, size), part in models.groupby(["method", "size"]):
        row: dict = {"method": method, "size": size}
        for name in [*[d for d in datasets if d in set(part["dataset"])], "all"]:
            cell = part if name == "all" else part[part["dataset"] == name]
            top = cell[cell["fifth"] == 4]
            either, se = _cluster_share(cell, "either")
            text = f"{100 * either:.0f}±{100 * se:.0f}"
            if len(top) and len(top) < len(cell):
                top_share, top_se = _cluster_share(top, "either")
                text += f" (top {100 * top_share:.0f}±{100 * top_se:.0f})"
            marked, _ = _cluster_share(cell, "marked")
            row[name] = f"{text}; {100 * marked:.0f} marked"
        rows.append(row)
    return pd.DataFrame(rows)


def unmarked_pairs(pairs: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """The pairs neither of whose models' order probabilities carry the off-population mark (``order_marked``; runs of
    an older script: the interval's mark)."""
    key = ["dataset", "method", "size", "rep"]
    marked_models = models["order_marked"].astype(bool) if "order_marked" in models else models["mark"] != ""
    marked = models.loc[marked_models, [*key, "model"]].assign(marked=True)
    out = pairs
    for side in ("first", "second"):
        out = out.merge(marked.rename(columns={"model": side, "marked": f"{side}_marked"}), on=[*key, side], how="left")
    return out[out["first_marked"].isna() & out["second_marked"].isna()].drop(columns=["first_marked", "second_marked"])


def stratum_table(models: pd.DataFrame) -> pd.DataFrame:
    """Per method and size: 90% coverage (%) of the new models in the bottom 20%, middle 60% and top 20% of the
    leaderboard by true accuracy, pooled over datasets, ± cluster-robust SE over (dataset, repetition);
    and how many printed estimates lie outside their own interval."""
    models = models.assign(
        stratum=models["fifth"].map(STRATA),
        cover=(models["low"] <= models["truth"] + 1e-12) & (models["truth"] <= models["high"] + 1e-12),
        outside=(models["estimate"] < models["low"] - 1e-12) | (models["estimate"] > models["high"] + 1e-12),
    )
    cells = {}
    for (method, size, stratum), part in models.groupby(["method", "size", "stratum"]):
        clusters = part.groupby(["dataset", "rep"])["cover"].agg(["sum", "size"])
        share = clusters["sum"].sum() / clusters["size"].sum()
        m = len(clusters)
        se = np.sqrt(m / max(m - 1, 1) * ((clusters["sum"] - share * clusters["size"]) ** 2).sum()) / clusters["size"].sum()
        cells[(method, size, stratum)] = f"{100 * share:.1f}±{100 * se:.1f}"
    table = pd.Series(cells).unstack()
    table["outside own interval"] = models.groupby(["method", "size"])["outside"].sum()
    table["new models"] = models.groupby(["method", "size"]).size()
    table.index.names = ["method", "size"]
    return table


def _score(row: dict, level: float, low: np.ndarray, high: np.ndarray, truth: np.ndarray) -> None:
    row[f"cover{round(100 * level)}"] = float(np.mean((low <= truth + 1e-12) & (truth <= high + 1e-12)))
    row[f"width{round(100 * level)}"] = float(np.mean(high - low))


def markdown(frame: pd.DataFrame, index: bool = True) -> str:
    """A markdown table of a frame (no extra dependency)."""
    frame = frame.reset_index() if index else frame
    head = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def calibration_table(pairs: pd.DataFrame, min_pairs: int = 100) -> pd.DataFrame:
    """Per method: in each probability bin (pooled over datasets and sizes) the mean probability, the share held
    and the standard error of their difference.

    The pairs of one repetition share one split of the models and one micro-benchmark per size, so
    they are not independent: the standard error treats each (dataset, repetition) as one cluster
    (the usual cluster-robust error of a ratio of sums).
    """
    pairs = pairs.assign(bin=np.digitize(pairs["p"], P_BINS) - 1, gap=pairs["held"] - pairs["p"])
    clusters = pairs.groupby(["method", "bin", "dataset", "rep"]).agg(n=("held", "size"), d=("gap", "sum")).reset_index()
    table = pairs.groupby(["method", "bin"]).agg(pairs=("held", "size"), p=("p", "mean"), held=("held", "mean"))
    table["off"] = table["held"] - table["p"]
    clusters = clusters.join(table["off"], on=["method", "bin"])
    clusters["r2"] = (clusters["d"] - clusters["off"] * clusters["n"]) ** 2
    spread = clusters.groupby(["method", "bin"]).agg(c=("n", "size"), r2=("r2", "sum"))
    c = spread["c"].clip(lower=2)
    table["se"] = np.sqrt(c / (c - 1) * spread["r2"]) / table["pairs"]
    return table[table["pairs"] >= min_pairs].reset_index()


def coverage_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method, size and dataset: mean coverage at each level and its Monte Carlo standard error.

    A cell's new models share one micro-benchmark per repetition, so the error is taken between
    repetitions (standard deviation of the per-repetition coverage over the square root of their
    number), floored at the binomial error the cell would have at exactly nominal coverage with
    independent models (which the between-repetition error can fall below by chance when few
    repetitions agree, e.g. all at 100%).
    """
    groups = frame.groupby(["method", "size", "dataset"])
    out = groups[["cover90", "cover95", "width90", "width95"]].mean()
    out["reps"] = groups.size()
    models = groups["new_models"].sum()
    for level in LEVELS:
        col = f"cover{round(100 * level)}"
        between = groups[col].std(ddof=1).fillna(0) / np.sqrt(out["reps"])
        out[f"se{round(100 * level)}"] = np.maximum(between, np.sqrt(level * (1 - level) / models))
    return out


BANDS = {90: (0.87, 0.94), 95: (0.92, 0.98)}


def outside_band(summary: pd.DataFrame) -> pd.DataFrame:
    """Cells whose coverage lies outside the target band by more than 2 standard errors (z = distance / SE)."""
    rows = []
    for (method, size, dataset), r in summary.iterrows():
        for level, (low, high) in BANDS.items():
            cover, se = r[f"cover{level}"], r[f"se{level}"]
            distance = low - cover if cover < low else cover - high if cover > high else 0.0
            if distance > 2 * se:
                rows.append(
                    {
                        "dataset": dataset,
                        "method": method,
                        "size": size,
                        "level": level,
                        "reps": int(r["reps"]),
                        "coverage": round(100 * cover, 1),
                        "se": round(100 * se, 1),
                        "side": "below" if cover < low else "above",
                        "z": round(distance / se, 1),
                    }
                )
    return pd.DataFrame(rows)


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--methods", default=",".join(method_registry.available()))
    parser.add_argument("--sizes", default=None, help="default: 10,25,50,100; with --columns 10,25,50,100,250")
    parser.add_argument("--reps", type=int, default=6)
    parser.add_argument("--first-rep", type=int, default=0, help="Index of the first repetition (to split repetitions over several processes).")
    parser.add_argument("--cal-runs", type=int, default=10)
    parser.add_argument(
        "--new-top",
        type=float,
        default=0.0,
        help="Share of the models, the best by full-benchmark accuracy, that are the new ones (off-population check; default: a random 30%%).",
    )
    parser.add_argument(
        "--population",
        action="store_true",
        help="Random designs: the empirical-Bayes interval of estimate --population instead of "
        "the mid-p one (from the model's own answers alone) that estimate prints by default.",
    )
    parser.add_argument(
        "--uniform-weight", type=float, default=UNIFORM_WEIGHT, help="With --population: weight of the uniform component of the accuracy prior."
    )
    parser.add_argument("--csv", type=Path, default=None, help="Keep the per-repetition rows here (the pairs, models and calibrations beside it).")
    parser.add_argument("--tables", type=Path, nargs="*", default=None, help="Only print the tables of earlier --csv files (several runs combined).")
    parser.add_argument(
        "--columns", action="store_true", help="the side-by-side table's interval columns: random and top targets, per dataset, method and size"
    )
    args = parser.parse_args()
    args.sizes = args.sizes or ("10,25,50,100,250" if args.columns else "10,25,50,100")
    if args.smoke:
        args.datasets, args.methods, args.sizes, args.reps, args.cal_runs = "simulated", "random,stratified-confidence", "10", 1, 2
    if args.columns:
        options = (("--new-top", args.new_top), ("--population", args.population), ("--csv", args.csv), ("--tables", args.tables))
        given = [flag for flag, value in options if value]
        if given:
            parser.error(f"--columns draws its own new models (random and top) and keeps no files: {', '.join(given)} cannot go with it")
        columns(args)
        return
    if args.tables:
        frame = pd.concat([pd.read_csv(p) for p in args.tables], ignore_index=True)
        pair_frame = pd.concat([pd.read_parquet(p.with_suffix(".pairs.parquet")) for p in args.tables], ignore_index=True)
        found = [p.with_suffix(".models.parquet") for p in args.tables if p.with_suffix(".models.parquet").exists()]
        models = pd.concat([pd.read_parquet(p) for p in found], ignore_index=True) if found else None
        print_tables(frame, pair_frame, [d for d in DATASETS if d in set(frame["dataset"])], models)
        return
    methods, sizes = args.methods.split(","), [int(s) for s in args.sizes.split(",")]
    with suite.Session("bench_intervals", args) as session:
        frame, pair_frame, model_frame = repetitions(args, methods, sizes)
        print_tables(frame, pair_frame, args.datasets.split(","), model_frame)
        summary = coverage_summary(frame).reset_index()
        for row in summary.to_dict("records"):
            session.add(f"coverage {row['method']} {row['dataset']} {row['size']}", **row)


def repetitions(args, methods: list[str], sizes: list[int]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Every repetition of every dataset: the per-repetition rows, the pairs and the new models."""
    rows, pairs, models, cal = [], [], [], []
    for name in args.datasets.split(","):
        matrix = load(name)
        start = time.perf_counter()
        for rep in range(args.first_rep, args.first_rep + args.reps):
            r, p, m, c = one_repetition(
                matrix, name, rep, methods, sizes, args.cal_runs, args.new_top, args.uniform_weight if args.population else -1.0
            )
            rows += r
            pairs += p
            models += m
            cal += c
            print(f"{name}: repetition {rep} done after {time.perf_counter() - start:.0f} s", flush=True)
            if args.csv is not None:  # after every repetition, so that an interrupted run keeps what it finished
                pd.DataFrame(rows).to_csv(args.csv, index=False)
                pd.concat(pairs, ignore_index=True).to_parquet(args.csv.with_suffix(".pairs.parquet"))
                pd.concat(models, ignore_index=True).to_parquet(args.csv.with_suffix(".models.parquet"))
                if cal:  # the calibration targets' estimates and accuracies, from which intervals can be rebuilt
                    pd.concat(cal, ignore_index=True).to_parquet(args.csv.with_suffix(".cal.parquet"))
        print(
            f"{name}: {matrix.n_models} models x {matrix.n_items} items, {args.reps} repetitions in {time.perf_counter() - start:.0f} s", flush=True
        )
    return pd.DataFrame(rows), pd.concat(pairs, ignore_index=True), pd.concat(models, ignore_index=True)


TARGETS = ("random", "top")


def columns(args) -> None:
    """The side-by-side table's interval columns (``--columns``): every dataset, both kinds of targets, every method
    the data take and every size its pool holds; printed and recorded one result per cell."""
    sizes = [int(k) for k in args.sizes.split(",")]
    with suite.Session("bench_intervals", args) as session:
        frames = []
        for name in args.datasets.split(","):
            matrix = load(name)
            methods = accepted(matrix, args.methods.split(","))
            fits = [k for k in sizes if k < matrix.n_items]
            n_new = default_targets(matrix.n_models)
            for targets in TARGETS:
                start = time.perf_counter()
                for rep in range(args.first_rep, args.first_rep + args.reps):
                    new_top = n_new / matrix.n_models if targets == "top" else 0.0
                    per_model = one_repetition(matrix, name, rep, methods, fits, args.cal_runs, new_top, -1.0, n_new=n_new)[2]
                    frames += [part.assign(targets=targets) for part in per_model]
                print(f"{name}, {targets} targets: {args.reps} repetitions in {time.perf_counter() - start:.0f} s", flush=True)
        table = coverage_columns(pd.concat(frames, ignore_index=True))
        print("\n90% interval coverage (%) of the new models, overall and in the top fifth, ± cluster-robust SE over repetitions\n")
        shown = table.assign(
            covered=[f"{100 * c:.0f}±{100 * e:.0f}" for c, e in zip(table["cover90"], table["cover90_se"], strict=True)],
            top_fifth=[
                "" if np.isnan(c) else f"{100 * c:.0f}±{100 * e:.0f}" for c, e in zip(table["cover90_top"], table["cover90_top_se"], strict=True)
            ],
            covered_or_marked=(100 * table["covered_or_marked"]).round(0),
            marked=(100 * table["marked"]).round(0),
        )
        kept = ["dataset", "targets", "method", "size", "covered", "top_fifth", "covered_or_marked", "marked", "new_models"]
        print(markdown(shown[kept], index=False))
        for row in table.to_dict("records"):
            session.add(f"{row['dataset']} {row['targets']} {row['size']} {row['method']}", **row)


def accepted(matrix: ResponseMatrix, methods: list[str]) -> list[str]:
    """The methods that take this data: those that need 0/1 scores are left out on continuous ones."""
    binary = bool(np.isin(matrix.scores[~np.isnan(matrix.scores)], (0.0, 1.0)).all())
    return [m for m in methods if binary or method_registry.get(m).scores != "binary"]


def coverage_columns(models: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, targets, method and size: the 90% interval's coverage of the new models (``cover90``) and of those
    in the top fifth of the leaderboard by true accuracy (``cover90_top``, NaN when none is), each with its
    cluster-robust SE over repetitions (``_se``); the share covered or marked and the share marked; how many new
    models and repetitions."""
    models = models.assign(
        cover=(models["low"] <= models["truth"] + 1e-12) & (models["truth"] <= models["high"] + 1e-12), marked=models["mark"] != ""
    )
    models["either"] = models["cover"] | models["marked"]
    rows = []
    for (dataset, targets, method, size), part in models.groupby(["dataset", "targets", "method", "size"], sort=False):
        top = part[part["fifth"] == 4]
        cover, se = _cluster_share(part, "cover")
        cover_top, se_top = _cluster_share(top, "cover") if len(top) else (np.nan, np.nan)
        rows.append(
            {
                "dataset": dataset,
                "targets": targets,
                "method": method,
                "size": int(size),
                "cover90": cover,
                "cover90_se": se,
                "cover90_top": cover_top,
                "cover90_top_se": se_top,
                "covered_or_marked": _cluster_share(part, "either")[0],
                "marked": _cluster_share(part, "marked")[0],
                "new_models": int(part.groupby("rep").size().iloc[0]),
                "reps": int(part["rep"].nunique()),
            }
        )
    return pd.DataFrame(rows)


def print_tables(frame: pd.DataFrame, pair_frame: pd.DataFrame, datasets: list[str], models: pd.DataFrame | None = None) -> None:
    if models is not None and len(models):
        print("\n90% coverage (%) by the new model's fifth of the leaderboard by true accuracy, ± cluster-robust SE\n")
        print(markdown(stratum_table(models)))
        if "mark" in models:
            print("\nThe off-population mark on the new models (90% intervals, %, ± cluster-robust SE; bias: estimate - truth, points)\n")
            print(markdown(guard_table(models), index=False))
            print(
                "\nCovered or marked (90% intervals, %, ± cluster-robust SE over repetitions) per dataset; (top: the new models in the "
                "top fifth by true accuracy); marked: % of new models marked\n"
            )
            print(markdown(promise_table(models, datasets), index=False))
            if {"first", "second"} <= set(pair_frame.columns):
                unmarked = unmarked_pairs(pair_frame, models)
                table = calibration_table(unmarked, min_pairs=50)
                print("\nOrder probabilities of the pairs of new models neither of which is marked (bins of at least 50 pairs; se cluster-robust)\n")
                print(markdown(table.round(3).drop(columns="bin"), index=False) if len(table) else "none")
    summary = coverage_summary(frame)
    marks = lambda r, level: "**" if _z(r, level) > 3 else "*" if _z(r, level) > 2 else ""  # noqa: E731
    cells = summary.apply(
        lambda r: (
            f"{100 * r.cover90:.1f}±{100 * r.se90:.1f}{marks(r, 90)} / {100 * r.cover95:.1f}±{100 * r.se95:.1f}{marks(r, 95)} ({100 * r.width90:.0f})"
        ),
        axis=1,
    )
    print(
        "\nCoverage of nominal 90% / 95% intervals on new models, % ± Monte Carlo standard error "
        "(mean 90% width, points); * outside the band (87-94 / 92-98) by more than 2 SE, ** by more than 3\n"
    )
    print(markdown(cells.unstack("dataset").reindex(columns=datasets)))
    reps = summary["reps"].unstack("dataset").reindex(columns=datasets)
    print(
        "\nRepetitions per cell (min-max over methods and sizes):", {d: f"{int(reps[d].min())}-{int(reps[d].max())}" for d in datasets if d in reps}
    )
    flagged = outside_band(summary)
    print("\nCells outside the band by more than 2 standard errors\n")
    print(markdown(flagged, index=False) if len(flagged) else "none")
    width = frame.groupby(["method", "size"])["width90"].mean().unstack("size") * 100
    overall = frame.groupby("method")[["cover90", "cover95"]].mean() * 100
    print("\nPer method: coverage over every dataset and size (%), mean 90% width by size (points)\n")
    print(markdown(pd.concat([overall.round(1), width.round(1)], axis=1)))
    table = calibration_table(pair_frame)
    print("\nOrder probabilities: pairs of new models per probability bin (all datasets and sizes); se: cluster-robust over (dataset, repetition)\n")
    print(
        markdown(
            table.assign(p=table["p"].round(3), held=table["held"].round(3), off=table["off"].round(3), se=table["se"].round(3)).drop(columns="bin"),
            index=False,
        )
    )
    worst = table.groupby("method")["off"].apply(lambda s: s.abs().max())
    print("\nLargest |share held - probability| per method:", worst.round(3).to_dict())
    per_dataset = per_dataset_calibration(pair_frame)
    print(
        "\nLargest share held - probability per method and dataset (bins of at least 200 pairs), ± cluster-robust SE; "
        "* beyond ±0.05 by more than 2 SE\n"
    )
    print(markdown(worst_cells(per_dataset, datasets)))
    beyond = per_dataset[per_dataset["excess"] > 2]
    print("\nBins beyond ±0.05 by more than 2 SE\n")
    print(markdown(beyond[["method", "dataset", "bin", "pairs", "p", "held", "off", "se"]].round(3), index=False) if len(beyond) else "none")
    if "p_gap_only" in pair_frame and pair_frame["p_gap_only"].notna().any():
        learned = pair_frame[pair_frame["p_gap_only"].notna()]
        earlier = per_dataset_calibration(learned.assign(p=learned["p_gap_only"]))
        print(
            "\nThe same pairs with the earlier order fit on the estimated gap alone (not scaled by the residual "
            "spread): largest share held - probability per method and dataset, ± cluster-robust SE; * beyond ±0.05 "
            "by more than 2 SE\n"
        )
        print(markdown(worst_cells(earlier, datasets)))
        print("\nMean |share held - probability| over the bins of at least 200 pairs, scaled fit / gap alone\n")
        both = per_dataset[per_dataset["method"].isin(earlier["method"])].groupby(["method", "dataset"])["off"]
        mean_abs = pd.concat(
            [
                both.apply(lambda x: x.abs().mean()).rename("scaled"),
                earlier.groupby(["method", "dataset"])["off"].apply(lambda x: x.abs().mean()).rename("gap"),
            ],
            axis=1,
        )
        cells = mean_abs.apply(lambda r: f"{r.scaled:.3f} / {r.gap:.3f}", axis=1)
        print(markdown(cells.unstack("dataset").reindex(columns=[d for d in datasets if d in set(earlier["dataset"])])))


def per_dataset_calibration(pair_frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`calibration_table` per dataset (bins of at least 200 pairs), with each bin's distance beyond ±0.05 in SE."""
    table = pd.concat(
        [calibration_table(part, min_pairs=200).assign(dataset=name) for name, part in pair_frame.groupby("dataset")], ignore_index=True
    )
    table["excess"] = (table["off"].abs() - 0.05).clip(lower=0) / table["se"]
    return table


def worst_cells(per_dataset: pd.DataFrame, datasets: list[str]) -> pd.DataFrame:
    """Method x dataset: the bin farthest from calibration, as 'off ± se', * when beyond ±0.05 by more than 2 SE."""
    idx = per_dataset.groupby(["method", "dataset"])["off"].apply(lambda s: s.abs().idxmax())
    worst = per_dataset.loc[idx.values].set_index(["method", "dataset"])
    cells = worst.apply(lambda r: f"{r.off:+.3f}±{r.se:.3f}" + ("*" if r.excess > 2 else ""), axis=1)
    return cells.unstack("dataset").reindex(columns=[d for d in datasets if d in set(per_dataset["dataset"])])


def _z(row: pd.Series, level: int) -> float:
    low, high = BANDS[level]
    cover = row[f"cover{level}"]
    return max(low - cover, cover - high, 0.0) / row[f"se{level}"]


if __name__ == "__main__":
    main()
