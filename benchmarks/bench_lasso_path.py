"""Lasso's path followed only as far as the sizes need, against the whole path as it was (benchmarks/README.md).

    python benchmarks/bench_lasso_path.py speed [--per-run 1]
    python benchmarks/bench_lasso_path.py real [--data ../shared/data] [--splits 20] [--sources 300,50]

``speed``: in this process, one thread, process CPU seconds of one ``fit_path`` and its items for
size 100 (``select --size 100``), for sizes 10-200 and for ``mdad run``'s default sizes 10-1,000, on bench_select.py's
simulated 400 x 12,000 matrix and on its first 350 models (a held-out run's sources), the former
whole path then the path followed as far as the sizes need. With ``--per-run R`` also
bench_select.py's per-run estimate of the whole ``select`` (selection on all models, R held-out
runs, and what 20 runs on two quiet cores would take), former and now.

``real``: on real matrices (oll2-gpqa, oll2-musr, oll2-math-hard; the experiment's splits: 50
targets, 300 or 50 sources, the seen half of the items), per size 10-200 and split, whether the
chosen items differ between the former rule (the smallest penalty of the whole path keeping at most
k) and the first passage, and where they do, the targets' mean absolute error of the estimated
pool accuracy, paired: now - former.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.exact import snap
from mdad.methods import lasso
from mdad.methods.ridge import filled, item_means, pool_accuracy, regression_on

SIZES = (10, 25, 50, 100, 150, 200)
EVERY_SIZE = range(10, 201)
DATASETS = ("oll2-gpqa", "oll2-musr", "oll2-math-hard")


@dataclass(frozen=True, eq=False)
class FormerPath:
    """The path as it was: all PATH_PENALTIES penalties computed at once; size k from the smallest
    penalty of the whole path keeping at most k."""

    active: np.ndarray  # items x penalties, bool
    counts: np.ndarray  # penalties
    entry_order: np.ndarray  # pool positions, every item once

    def items(self, k: int) -> np.ndarray:
        within = np.flatnonzero(self.counts <= k)
        step = int(within.max()) if within.size else 0
        kept = np.flatnonzero(self.active[:, step])
        rest = self.entry_order[~np.isin(self.entry_order, kept)]
        return np.sort(np.concatenate([kept, rest[: k - len(kept)]]))


def former_fit_path(scores: np.ndarray) -> FormerPath:
    """``mdad.methods.lasso.fit_path`` as it was: one ``lasso_path`` call over the whole grid."""
    from sklearn.linear_model import lasso_path

    x = filled(scores, item_means(scores))
    y = pool_accuracy(scores)
    xc, yc = x - x.mean(axis=0), y - y.mean()
    n_items = x.shape[1]
    _, first_of = np.unique(x, axis=1, return_index=True)
    distinct = np.sort(first_of)
    correlation = np.abs(xc.T @ yc)
    top = float(correlation.max()) / len(y)
    active = np.zeros((n_items, lasso.PATH_PENALTIES), dtype=bool)
    if top > 0:
        _, coefs, _ = lasso_path(xc[:, distinct], yc, alphas=np.geomspace(top, top * lasso.PATH_EPS, lasso.PATH_PENALTIES))
        active[distinct] = coefs != 0
    counts = active.sum(axis=0)
    first = np.where(active.any(axis=1), active.argmax(axis=1), lasso.PATH_PENALTIES)
    repeated = np.ones(n_items, dtype=bool)
    repeated[distinct] = False
    norms = np.sqrt((xc * xc).sum(axis=0))
    strength = snap(correlation / np.where(norms > 0, norms, 1.0))
    entry = np.lexsort((np.arange(n_items), -strength, first, repeated))
    return FormerPath(active=active, counts=counts, entry_order=entry)


@contextmanager
def former():
    """A context in which the lasso method fits the former whole path."""
    with mock.patch.object(lasso, "fit_path", former_fit_path):
        yield


def cpu_of(fit, scores: np.ndarray, sizes) -> tuple[float, list[np.ndarray]]:
    start = time.process_time()
    path = fit(scores)
    chosen = [path.items(k) for k in sizes]
    return time.process_time() - start, chosen


def speed(per_run_runs: int) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_select import MODELS, SIZE, SUBTASKS, TEN_OPTIONS, per_run

    from mdad.data import simulate
    from mdad.defaults import ASSESS_RUNS, EXPERIMENT_SIZES

    matrix = simulate(seed=0, n_models=MODELS, n_items=12_000, n_subtasks=SUBTASKS, params=TEN_OPTIONS)
    print(f"load average {os.getloadavg()[0]:.1f}; one thread, CPU seconds of fit_path and its items")
    with threadpool_limits(1):
        for models in (MODELS, 350):
            scores = matrix.scores[:models]
            for sizes in ((SIZE,), SIZES, EXPERIMENT_SIZES):
                before, old = cpu_of(former_fit_path, scores, sizes)
                now, new = cpu_of(lasso.fit_path, scores, sizes)
                differ = sum(not np.array_equal(a, b) for a, b in zip(old, new, strict=True))
                label = f"{models} x 12,000, sizes {','.join(map(str, sizes))}"
                print(f"  {label:45s} former {before:5.2f} s, now {now:5.2f} s ({before / now:.1f}x); {differ} of {len(sizes)} sizes' items differ")
        for label in ("former", "now") if per_run_runs else ():
            with former() if label == "former" else nullcontext():
                chosen, run = per_run(matrix, "lasso", per_run_runs)
            quiet = chosen + ASSESS_RUNS * run / 2
            print(
                f"  select lasso, {label:6s}: select {chosen:5.1f} s, held-out run {run:5.1f} s; {ASSESS_RUNS} runs on 2 quiet cores: {quiet:4.0f} s"
            )


def real(data: str, n_splits: int, source_counts: tuple[int, ...]) -> None:
    from mdad.data.datasets import load_dataset
    from mdad.experiment.splits import make_splits

    os.environ["MDAD_DATA_DIR"] = data
    print(f"{n_splits} splits x every size {EVERY_SIZE.start}-{EVERY_SIZE.stop - 1}: cells (split, size) whose items differ, of those at the")
    print(f"sizes {', '.join(map(str, SIZES))}, and over the differing cells the paired change of the targets' mean absolute")
    print("error (points of accuracy, now - former: mean +- standard error, and the largest either way)")
    print("| dataset | sources | cells differing | at the sizes above | error change where they differ |")
    print("|---|---|---|---|---|")
    with threadpool_limits(1):
        for name in DATASETS:
            matrix = load_dataset(name)
            splits = make_splits(matrix, n_splits)
            for wanted in source_counts:
                n_sources = min(wanted, splits.source_pool.shape[1])
                changes, at_sizes = [], 0
                for r in range(n_splits):
                    seen = splits.seen[r]
                    sources = matrix.scores[np.ix_(splits.sources(n_sources)[r], seen)]
                    targets = matrix.scores[np.ix_(splits.targets[r], seen)]
                    truth = pool_accuracy(targets)
                    old, new = former_fit_path(sources), lasso.fit_path(sources)
                    for k in EVERY_SIZE:
                        a, b = old.items(k), new.items(k)
                        if np.array_equal(a, b):
                            continue
                        at_sizes += k in SIZES
                        errors = [np.abs(regression_on(sources, items).estimate(targets[:, items]) - truth).mean() for items in (a, b)]
                        changes.append(100 * (errors[1] - errors[0]))
                cells = n_splits * len(EVERY_SIZE)
                if len(changes) > 1:
                    c = np.array(changes)
                    change = f"{c.mean():+.3f} +- {c.std(ddof=1) / np.sqrt(len(c)):.3f} (from {c.min():+.2f} to {c.max():+.2f})"
                else:
                    change = "-" if not changes else f"{changes[0]:+.3f} (one cell)"
                row = f"| {name} ({len(seen)} seen) | {n_sources} | {len(changes)} of {cells} | {at_sizes} of {n_splits * len(SIZES)} | {change} |"
                print(row, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("speed", "real"))
    parser.add_argument("--per-run", type=int, default=0, metavar="R", help="speed: also bench_select.py's per-run estimate with R runs")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--sources", default="300,50", help="real: comma-separated numbers of source models")
    args = parser.parse_args()
    if args.what == "speed":
        speed(args.per_run)
    else:
        real(args.data, args.splits, tuple(int(n) for n in args.sources.split(",")))


if __name__ == "__main__":
    main()
