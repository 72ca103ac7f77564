"""How often the uniform random design's exact intervals cover the models `estimate` names as
"estimated above every source model", and the models truly better than every source.

Per repetition: a random tenth of the models are the new ones (the rest the sources), k items drawn
uniformly; the new models estimated above the best source are the ones the sentence is printed for.
Second case: the best tenth by full-benchmark accuracy are the new ones (truly better than every
source). Coverage of the 90% mid-p and Clopper-Pearson intervals (mdad.intervals.count_interval),
pooled over repetitions, with the standard error of a ratio between repetitions (models of one
repetition share its items, so they are not independent).

    python benchmarks/bench_beyond_sources.py
    python benchmarks/bench_beyond_sources.py --datasets gpqa --reps 50
    python benchmarks/bench_beyond_sources.py --smoke

The pooled mid-p coverages are the range mdad prints beside the sentence (mdad.micro.notes).
"""

from __future__ import annotations

import numpy as np
import suite

import mdad
from mdad.intervals.finite import count_interval
from mdad.seeding import rng_for

DATASETS = ("gpqa", "musr", "math-hard", "mmlu-pro-tiger", "gsm8k-zeroeval")
SIZES = (10, 50, 100)


def ratio(covered: np.ndarray, counted: np.ndarray) -> tuple[float, float, int]:
    """Pooled share covered, its standard error between repetitions, and the number of models."""
    n = counted.sum()
    if n == 0:
        return float("nan"), float("nan"), 0
    p = covered.sum() / n
    reps = len(counted)
    se = np.sqrt(((covered - p * counted) ** 2).sum() * reps / max(reps - 1, 1)) / n
    return float(p), float(se), int(n)


def cell(share: tuple[float, float, int]) -> str:
    """A pooled share with its standard error, in percent ('n/a' without models)."""
    return "n/a" if share[2] == 0 else f"{100 * share[0]:.1f} ± {100 * share[1]:.1f}"


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--level", type=float, default=0.9)
    args = parser.parse_args()
    if args.smoke:
        args.datasets, args.reps = "gpqa", 5
    with suite.Session("bench_beyond_sources", args) as session:
        measure(args, session)


def measure(args, session: suite.Session) -> None:
    """Every dataset and size: the table, the pooled coverages, and both in the record."""
    rows = {}
    for name in args.datasets.split(","):
        matrix = mdad.load(name)
        scores = np.asarray(matrix.scores, dtype=np.float64)
        if not np.isin(scores, (0.0, 1.0)).all():
            continue
        counts = scores.sum(axis=1).round().astype(np.int64)
        n_models, N = scores.shape
        n_new = max(n_models // 10, 1)
        best_tenth = np.argsort(-counts, kind="stable")[:n_new]
        for k in SIZES:
            tallies = {key: np.zeros((2, args.reps)) for key in ("named mid-p", "named C-P", "better mid-p", "better C-P")}
            for rep in range(args.reps):
                rng = rng_for(20261203, name, k, rep)
                items = rng.choice(N, size=k, replace=False)
                x = scores[:, items].sum(axis=1).round().astype(np.int64)
                for case, new in (("named", rng.permutation(n_models)[:n_new]), ("better", best_tenth)):
                    sources = np.setdiff1d(np.arange(n_models), new)
                    chosen = new[x[new] / k > counts[sources].max() / N] if case == "named" else new
                    for mid_p, label in ((True, "mid-p"), (False, "C-P")):
                        low, high = count_interval(N, k, x[chosen], level=args.level, mid_p=mid_p)
                        hit = (low <= counts[chosen]) & (counts[chosen] <= high)
                        tallies[f"{case} {label}"][:, rep] = hit.sum(), len(chosen)
            rows[(name, k)] = {key: ratio(*value) for key, value in tallies.items()}
            print(f"{name} k={k} done", flush=True)
    print(f"\nCoverage of the 90% exact intervals of uniform random (%, ± SE between {args.reps} repetitions; models counted)\n")
    print("| dataset | k | named above every source: mid-p | C-P | models | best tenth as new: mid-p | C-P |")
    print("|---|---|---|---|---|---|---|")
    for (name, k), r in rows.items():
        cells = [cell(r["named mid-p"]), cell(r["named C-P"]), str(r["named mid-p"][2]), cell(r["better mid-p"]), cell(r["better C-P"])]
        print(f"| {name} | {k} | " + " | ".join(cells) + " |")
        fields = {f"{key} {part}": value for key, share in r.items() for part, value in zip(("coverage", "se", "models"), share, strict=True)}
        session.add(f"{name} k={k}", **fields)
    for key in ("named mid-p", "named C-P", "better mid-p", "better C-P"):
        covered = np.concatenate([[r[key][0] * r[key][2]] for r in rows.values()])
        total = sum(r[key][2] for r in rows.values())
        print(f"pooled {key}: {100 * covered.sum() / max(total, 1):.1f}% of {total}")
        session.add(f"pooled {key}", coverage=covered.sum() / max(total, 1), models=total)


if __name__ == "__main__":
    main()
