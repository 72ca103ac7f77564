"""The per-run hot spots of the paper's grid on the MMLU-Pro shape, each against a baseline in this process.

    python benchmarks/bench_hotspots.py [--items 12032] [--sources 300]

On one run's view of a simulated 400 x 12,032 matrix (14 subtasks; 300 source models on the
~6,000 seen items), with one BLAS/OpenMP thread, process CPU time:

- diversity: the DPP sampler at k = 10..1,000 against k bare matrix-vector products with its
  basis (the floor of a chain-rule sampler: one product per step), and the QR of the basis;
- anchor-points: FasterPAM per size from a random start (what the method does) against a warm
  start from the previous size's medoids, with the k-medoids objective of both;
- tinyBenchmarks: the IRT fit, and k-means at k = 1,000 with Lloyd (used) and Elkan, 5 starts;
- loading: peak traced memory of reading the option probabilities as mdad does against the
  former way (a copy and a copy of the non-missing values to check them).

On a machine shared with other jobs, CPU times are the measure (wall times are not printed).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import tracemalloc
from pathlib import Path

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

import numpy as np  # noqa: E402

from mdad.data import read_npz, simulate, write_npz  # noqa: E402
from mdad.experiment.splits import make_splits  # noqa: E402
from mdad.methods.anchor_points import AnchorPoints  # noqa: E402
from mdad.methods.base import SourceView  # noqa: E402
from mdad.methods.diversity import diversity_features  # noqa: E402
from mdad.methods.dpp import ope_basis, sample_projection_dpp  # noqa: E402


def cpu(fn):
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def diversity(view: SourceView) -> None:
    points = diversity_features(view.gold_prob).trimmed_points
    print(f"\ndiversity: DPP on {len(points)} trimmed items (CPU s)")
    print(f"{'k':>6s} {'basis QR':>9s} {'sampler':>9s} {'k products':>11s} {'ratio':>6s}")
    for k in (10, 100, 300, 1000):
        basis, t_basis = cpu(lambda: ope_basis(points, k))
        _, t_sample = cpu(lambda: sample_projection_dpp(basis, np.random.default_rng(0)))
        v = np.full(basis.shape[1], basis.shape[1] ** -0.5)
        _, t_floor = cpu(lambda: [basis @ v for _ in range(basis.shape[1])])
        print(f"{k:6d} {t_basis:9.3f} {t_sample:9.3f} {t_floor:11.3f} {t_sample / t_floor:6.2f}")


def anchor_points(view: SourceView) -> None:
    import kmedoids

    distance, t_prep = cpu(lambda: AnchorPoints().prepare(view, np.random.default_rng(0)))
    n = len(distance)
    print(f"\nanchor-points: distances {n} x {n} ({distance.dtype}, {distance.nbytes / 1e6:.0f} MB) "
          f"in {t_prep:.2f} s; FasterPAM per size (CPU s, objective)")
    print(f"{'k':>6s} {'random start':>13s} {'objective':>10s} {'warm start':>11s} {'objective':>10s} {'speed-up':>9s}")
    rng = np.random.default_rng(5)
    previous = None
    for k in (10, 25, 50, 100, 250, 500, 1000):
        cold, t_cold = cpu(lambda: kmedoids.fasterpam(distance, k, init="random",
                                                      random_state=int(rng.integers(2**31)), n_cpu=1))
        if previous is None:
            print(f"{k:6d} {t_cold:13.2f} {cold.loss:10.2f}")
            previous = cold.medoids
            continue
        start = np.concatenate([previous, rng.choice(np.setdiff1d(np.arange(n), previous), k - len(previous), replace=False)])
        warm, t_warm = cpu(lambda: kmedoids.fasterpam(distance, start, n_cpu=1))
        print(f"{k:6d} {t_cold:13.2f} {cold.loss:10.2f} {t_warm:11.2f} {warm.loss:10.2f} {t_cold / t_warm:8.1f}x")
        previous = warm.medoids


def tinybenchmarks(view: SourceView) -> None:
    from sklearn.cluster import KMeans

    from mdad.irt import fit_irt

    fit, t_fit = cpu(lambda: fit_irt(view.scores, dims=10, rng=np.random.default_rng(0)))
    print(f"\ntinyBenchmarks: IRT fit (D=10) on {view.scores.shape[0]} x {view.scores.shape[1]}: {t_fit:.2f} CPU s")
    for k in (100, 1000):
        results = {}
        for algorithm in ("lloyd", "elkan"):
            km, t = cpu(lambda: KMeans(n_clusters=k, n_init=5, random_state=3, algorithm=algorithm).fit(fit.embedding))
            results[algorithm] = (t, km.inertia_)
        (tl, il), (te, ie) = results["lloyd"], results["elkan"]
        print(f"k-means k={k}, 5 starts: lloyd {tl:.2f} s (inertia {il:.2f}), elkan {te:.2f} s (inertia {ie:.2f}): "
              f"elkan/lloyd {te / tl:.2f}")


def loading(matrix) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.npz"
        write_npz(matrix, path)
        size = matrix.option_probs.nbytes
        tracemalloc.start()
        read_npz(path)
        now = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        with np.load(path) as z:  # the former way: a fresh array, then a copy, then the non-NaN values
            probs = z["option_probs"]
        copied = np.asarray(probs, dtype=np.float32).copy()
        finite = copied[~np.isnan(copied)]
        before = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del probs, copied, finite
    print(f"\nloading {size / 1e6:.0f} MB of option probabilities: peak traced {now / 1e6:.0f} MB ({now / size:.1f}x); "
          f"former way {before / 1e6:.0f} MB ({before / size:.1f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=12032)
    parser.add_argument("--sources", type=int, default=300)
    args = parser.parse_args()
    matrix = simulate(seed=0, n_models=400, n_items=args.items, n_subtasks=14)
    splits = make_splits(matrix, 1, 50, 0)
    src, pool = splits.sources(args.sources)[0], splits.seen[0]
    gold = matrix.gold_prob()
    view = SourceView.from_arrays(matrix.scores[np.ix_(src, pool)], gold[np.ix_(src, pool)],
                                  matrix.subtask_codes[pool], matrix.has_option_probs)
    print(f"simulated 400 x {args.items}; one run: {args.sources} sources x {view.n_items} seen items; "
          f"load average {os.getloadavg()[0]:.1f} (machine shared: CPU times)")
    diversity(view)
    anchor_points(view)
    tinybenchmarks(view)
    loading(matrix)


if __name__ == "__main__":
    main()
