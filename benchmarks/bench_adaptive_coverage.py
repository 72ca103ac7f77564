"""How far an unfinished adaptive test's intervals and order probabilities hold, by the number of items answered.

Per dataset and repetition: a random tenth of the models are the new ones, the rest the sources;
`adaptive-1d` of SIZE items is selected and assessed on the sources (as `mdad select` does), and
each new model takes its test one item at a time, as `mdad estimate` names them. After 1, 2, 4, 8,
... answered items (every new model has answered as many) this prints:

- the coverage of the 90% intervals `estimate` prints (calibrated at the largest calibrated length
  not above the items answered: docs/intervals.md#unfinished-adaptive-tests), beside that of the
  full test's calibration applied to the unfinished tests (what `estimate` printed before), and
  the mean width;
- over every pair of new models whose estimates differ, the mean printed P(order holds) beside the
  share of orders that held, and the pairs printed at 0.8 or more (a "reliable" verdict) with the
  share of them that held, for both calibrations.

    python benchmarks/bench_adaptive_coverage.py
    python benchmarks/bench_adaptive_coverage.py --datasets gpqa --size 16 --reps 2
    python benchmarks/bench_adaptive_coverage.py --smoke     # gpqa, 4 items, 2 held-out runs
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import suite

import mdad
from mdad.seeding import rng_for

DATASETS = ("gpqa", "musr", "math-hard")
LEVEL = 0.9
RELIABLE = 0.8


def take_test(chosen: mdad.SelectedMicroBenchmark, new: mdad.ResponseMatrix, lengths: list[int]):
    """Yield (length, the new models' answers so far) after each of ``lengths`` items answered."""
    answers = np.full(new.scores.shape, np.nan, dtype=np.float32)
    column = {item: j for j, item in enumerate(new.items)}
    for step in range(1, max(lengths) + 1):
        asked = chosen.details(replace(new, scores=answers))["next_item"].to_numpy()
        for i, item in enumerate(asked):
            if item:
                answers[i, column[item]] = new.scores[i, column[item]]
        if step in lengths:
            yield step, replace(new, scores=answers.copy())


def measure(name: str, size: int, rep: int, runs: int) -> list[dict]:
    matrix = mdad.load(name)
    rng = rng_for(rep, "bench-adaptive-coverage", name)
    new_rows = np.sort(rng.choice(matrix.n_models, max(20, matrix.n_models // 10), replace=False))
    sources = matrix.take(models=np.setdiff1d(np.arange(matrix.n_models), new_rows))
    new = matrix.take(models=new_rows)
    chosen = mdad.select(sources, "adaptive-1d", size, seed=rep)
    assessment = mdad.assess(sources, "adaptive-1d", size, runs=runs, seed=rep)
    chosen = chosen.with_assessment(assessment)
    truths = new.accuracy()
    i, j = np.triu_indices(new.n_models, k=1)
    rows = []
    lengths = sorted({*(2**p for p in range(size.bit_length()) if 2**p < size), size})
    for length, partial in take_test(chosen, new, lengths):
        now = chosen.intervals(partial, level=LEVEL)
        est = now.estimate
        old_low, old_high = assessment.interval_calibration.bounds(est, level=LEVEL)
        pairs = [(str(new.models[a]), str(new.models[b])) for a, b in zip(i, j, strict=True)]
        compared = chosen.comparisons(partial, pairs)
        p_new = np.array([c.order_probability for c in compared])
        lead = np.where(est[i] >= est[j], i, j)
        trail = np.where(est[i] >= est[j], j, i)
        differ = est[i] != est[j]
        held = truths[lead] > truths[trail]
        p_old = assessment.order_calibration.probability(est[lead], est[trail])
        row = {"dataset": name, "rep": rep, "answered": length}
        row["cover_new"] = float(np.mean((now.low <= truths) & (truths <= now.high)))
        row["cover_old"] = float(np.mean((old_low <= truths) & (truths <= old_high)))
        row["width_new"] = float(np.mean(now.high - now.low) * 100)
        row["width_old"] = float(np.mean(old_high - old_low) * 100)
        for label, p in (("new", p_new), ("old", p_old)):
            keep = differ & np.isfinite(p)
            sure = keep & (p >= RELIABLE)
            row[f"p_{label}"] = float(np.mean(p[keep])) if keep.any() else float("nan")
            row[f"sure_{label}"] = int(sure.sum())
            row[f"sure_held_{label}"] = float(np.mean(held[sure])) if sure.any() else float("nan")
        row["held"] = float(np.mean(held[differ])) if differ.any() else float("nan")
        row["pairs"] = int(differ.sum())
        rows.append(row)
    return rows


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--runs", type=int, default=20, help="held-out runs of the assessment")
    args = parser.parse_args()
    if args.smoke:
        args.datasets, args.size, args.reps, args.runs = "gpqa", 4, 1, 2
    with suite.Session("bench_adaptive_coverage", args) as session:
        rows = [row for name in args.datasets.split(",") for rep in range(args.reps) for row in measure(name, args.size, rep, args.runs)]
        for r in rows:
            session.add(f"{r['dataset']} rep {r['rep']} after {r['answered']}", **{k: v for k, v in r.items() if k not in ("dataset", "rep")})
    print(f"adaptive-1d, {args.size} items; new models: a random tenth; {int(100 * LEVEL)}% intervals; 'sure': P(order holds) >= {RELIABLE}")
    print(
        "| dataset | answered | coverage: by length / full-test calibration | width (points) | pairs | "
        "mean P by length / full / held | sure pairs by length: n, held | sure pairs, full-test calibration: n, held |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['answered']} | {r['cover_new']:.0%} / {r['cover_old']:.0%} | {r['width_new']:.0f} / {r['width_old']:.0f} | "
            f"{r['pairs']} | {r['p_new']:.2f} / {r['p_old']:.2f} / {r['held']:.2f} | {r['sure_new']}, {r['sure_held_new']:.2f} | "
            f"{r['sure_old']}, {r['sure_held_old']:.2f} |"
        )


if __name__ == "__main__":
    main()
