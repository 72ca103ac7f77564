"""Coverage of mdad's MDAD intervals where the truth is known: uniform random on the built-in matrices.

One repetition is one `mdad run` of the uniform random design: ``--runs`` runs, each with its
own draw of ``--targets`` target models and seen half (mdad.experiment.splits), each drawing
k items at random from its seen half. Its first-crossing and robust MDAD on the seen items
come with their 95% bootstrap intervals (mdad.metrics.pairwise, mdad.metrics.robust). The
truth is the exact MDAD of the same runs' targets and seen halves (mdad.metrics.analytic: the
expected agreement of every pair, no simulation). Every repetition has its own seed.

Printed (markdown): per dataset and size, how often each 95% interval holds the exact MDAD
(run bootstrap, as mdad computes it, and the pair bootstrap it replaced), how often the
first crossing is marked, and, by pairs in the crossing bin, how far the first crossing
lies from the exact one: the measurement behind MIN_CROSSING_PAIRS (mdad.defaults).

    python benchmarks/bench_mdad_coverage.py --datasets gpqa --reps 50
    python benchmarks/bench_mdad_coverage.py --datasets gpqa,musr,math-hard --sizes 10,50,200 --reps 20
    python benchmarks/bench_mdad_coverage.py --datasets gpqa --targets 6,10,16 --sizes 25 --reps 20
    python benchmarks/bench_mdad_coverage.py --smoke
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import suite

from mdad.data.datasets import load_dataset
from mdad.defaults import DEFAULT_THRESHOLD, MIN_CROSSING_PAIRS
from mdad.experiment.splits import make_splits
from mdad.metrics import analytic
from mdad.metrics.exact import agreement
from mdad.metrics.pairwise import (
    AgreementCurve,
    Mdad,
    agreement_curve,
    agreement_from_differences,
    crossing_interval,
    first_crossing,
    mdad_from_curve,
    pair_differences,
)
from mdad.metrics.robust import fit_grid, logistic_crossings, monotone_fit, robust_mdad
from mdad.seeding import rng_for


def one_repetition(matrix, sizes, rep: int, runs: int, targets: int, threshold: float, windows: tuple[float, ...] = ()) -> list[dict]:
    """Rows (one per size) of one simulated `mdad run` of uniform random and its exact MDAD."""
    splits = make_splits(matrix, runs, targets, seed=1000 + rep)
    scores = matrix.scores
    stats = analytic.concatenate([analytic.pair_stats(matrix, models=splits.targets[r], items=splits.seen[r]) for r in range(runs)])
    truth = np.stack([scores[np.ix_(splits.targets[r], splits.seen[r])].mean(axis=1) for r in range(runs)])
    dt = pair_differences(truth)
    rows = []
    for k in sizes:
        rng = rng_for(rep, "coverage-items", k)
        est = np.stack([scores[np.ix_(splits.targets[r], rng.choice(splits.seen[r], k, replace=False))].mean(axis=1) for r in range(runs)])
        curve = agreement_curve(agreement_from_differences(pair_differences(est), dt), dt * 100.0)
        pos, neg = analytic.sign_probabilities(stats, k, "random")
        exact = analytic.expected_curve(agreement(pos, neg, stats.diff_points), stats.diff_points).crossing(threshold)
        first = mdad_from_curve(curve, threshold=threshold, rng=rng_for(rep, "boot", k), targets=targets)
        percentile = mdad_from_curve(curve, threshold=threshold, rng=rng_for(rep, "boot", k), band=False)
        pooled = AgreementCurve(curve.lower, curve.pairs, curve.agreed, curve.bin_width)  # one bootstrap unit: pairs
        by_pairs = mdad_from_curve(pooled, threshold=threshold, rng=rng_for(rep, "boot", k))
        robust = robust_mdad(curve, threshold=threshold, rng=rng_for(rep, "robust", k))
        one_fit = one_logistic_fit(curve, threshold, rng_for(rep, "robust", k))
        other_windows = {w: windowed(curve, threshold, rng_for(rep, "robust", k), w) for w in windows}
        rows.append(
            {
                "size": k,
                "rep": rep,
                "exact": exact,
                "first": first.value,
                "robust": robust.value,
                "first_covers": covers(first, exact),
                "pairs_covers": covers(by_pairs, exact),
                "percentile_covers": covers(percentile, exact),
                "robust_covers": covers(robust, exact),
                "one_fit": one_fit.value,
                "one_fit_covers": covers(one_fit, exact),
                "first_width": width(first),
                "robust_width": width(robust),
                "crossing_pairs": first.pairs,
                "marked": bool(first.warning(robust)),
                "falls_back": first.falls_back,
                **{f"window {w:g} covers": covers(m, exact) for w, m in other_windows.items()},
            }
        )
    return rows


def one_logistic_fit(curve: AgreementCurve, threshold: float, rng) -> Mdad:
    """The robust MDAD mdad computed before: one logistic fit of every bin, bin 0 included (no window)."""
    grid = fit_grid(curve, "logistic")
    agreed, pairs = curve.resample(rng, 1000)
    low, high = crossing_interval(first_crossing(monotone_fit(curve, "logistic", agreed, pairs), grid, threshold))
    return Mdad(float(first_crossing(monotone_fit(curve, "logistic"), grid, threshold)[0]), low, high, threshold)


def windowed(curve: AgreementCurve, threshold: float, rng, window: float) -> Mdad:
    """The two-step robust MDAD with another window (0: bin 0 left out, no second step)."""
    agreed, pairs = curve.resample(rng, 1000)
    low, high = crossing_interval(logistic_crossings(curve, agreed, pairs, threshold, window))
    return Mdad(float(logistic_crossings(curve, threshold=threshold, window=window)[0]), low, high, threshold)


def covers(mdad, truth: float) -> bool:
    """Whether the interval holds the truth (NaN ends: not reached, i.e. unbounded above)."""
    if np.isnan(truth):
        return np.isnan(mdad.high) or np.isnan(mdad.value)
    low = mdad.low if not np.isnan(mdad.low) else np.inf
    high = mdad.high if not np.isnan(mdad.high) else np.inf
    return bool(low - 1e-9 <= truth <= high + 1e-9)


def width(mdad) -> float:
    return float(mdad.high - mdad.low) if not (np.isnan(mdad.low) or np.isnan(mdad.high)) else np.nan


def markdown(frame: pd.DataFrame) -> str:
    """A markdown table of ``frame`` (numbers as %g)."""

    def cell(value) -> str:
        return f"{value:g}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--datasets", default="gpqa,musr,math-hard")
    parser.add_argument("--sizes", default="10,25,50,100,200")
    parser.add_argument("--targets", default="50", help="Target models per run (several: a row each).")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    parser.add_argument("--csv", default=None, help="CSV of every repetition.")
    parser.add_argument("--windows", default="", help="Coverage of the robust MDAD with other windows too, e.g. 0,0.5 (0: no second step).")
    args = parser.parse_args()
    if args.smoke:
        args.datasets, args.sizes, args.runs, args.reps = "gpqa", "25", 5, 2
    with suite.Session("bench_mdad_coverage", args) as session:
        measure(args, session)


def measure(args, session: suite.Session) -> None:
    """Every repetition, the printed tables, and each cell's coverage in the record."""
    sizes = [int(s) for s in args.sizes.split(",")]
    windows = tuple(float(w) for w in args.windows.split(",") if w)
    rows = []
    for name in args.datasets.split(","):
        matrix = load_dataset(name)
        for n_targets in (int(t) for t in args.targets.split(",")):
            start = time.perf_counter()
            for rep in range(args.reps):
                for row in one_repetition(matrix, sizes, rep, args.runs, n_targets, args.threshold, windows):
                    rows.append({"dataset": name, "targets": n_targets, **row})
            print(f"# {name}, {n_targets} targets: {args.reps} repetitions in {time.perf_counter() - start:.0f} s", flush=True)
    frame = pd.DataFrame(rows)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    share = {
        "first_covers": "first crossing covers (runs)",
        "pairs_covers": "first crossing covers (pairs)",
        "percentile_covers": "first crossing covers (runs, percentile)",
        "robust_covers": "robust covers (runs)",
        "one_fit_covers": "one logistic fit covers (runs)",
        "marked": "marked",
        **{f"window {w:g} covers": f"robust covers (window {w:g})" for w in windows},
    }
    table = frame.groupby(["dataset", "targets", "size"]).agg(
        reps=("rep", "count"),
        exact=("exact", "median"),
        first=("first", "median"),
        robust=("robust", "median"),
        one_fit=("one_fit", "median"),
        **{label: (col, "mean") for col, label in share.items()},
        first_width=("first_width", "median"),
        robust_width=("robust_width", "median"),
    )
    for (name, targets, size), row in table.iterrows():
        session.add(f"{name}, {targets} targets, {size} items", **{key: float(value) for key, value in row.items()})
    for label in share.values():
        table[label] = (100 * table[label]).round(0).astype(int).astype(str) + "%"
    print(f"\nCoverage of the 95% MDAD intervals ({args.runs} runs per repetition; medians in points)\n")
    print(markdown(table.reset_index()))
    se = frame.groupby(["dataset", "targets", "size"])[["first_covers", "robust_covers"]].agg(
        lambda c: 100 * np.sqrt(c.mean() * (1 - c.mean()) / len(c))
    )
    print("\nStandard errors of the coverages above (binomial, percentage points)\n")
    print(markdown(se.round(1).rename(columns={"first_covers": "first crossing se", "robust_covers": "robust se"}).reset_index()))
    for name in ("first", "robust", "one_fit"):
        frame[f"{name}_error"] = (frame[name] - frame["exact"]).abs()
    errors = frame.groupby(["dataset", "size"])[["first_error", "robust_error", "one_fit_error"]].mean().round(2)
    print("\nMean |MDAD - exact MDAD| (points; repetitions where both are reached)\n")
    print(markdown(errors.reset_index()))
    frame["error"] = (frame["first"] - frame["exact"]).abs()
    frame["crossing bin pairs"] = pd.cut(frame["crossing_pairs"], [0, 25, 50, 100, 200, 400, 10**9], right=False)
    errors = frame.groupby("crossing bin pairs", observed=True).agg(
        cases=("error", "size"),
        median_error=("error", "median"),
        beyond_1_point=("error", lambda e: f"{100 * (e > 1).mean():.0f}%"),
        beyond_2_points=("error", lambda e: f"{100 * (e > 2).mean():.0f}%"),
    )
    print(f"\n|first crossing - exact MDAD| (points) by pairs in the crossing bin (marked below {MIN_CROSSING_PAIRS})\n")
    print(markdown(errors.reset_index()))


if __name__ == "__main__":
    main()
