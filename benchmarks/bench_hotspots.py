"""The per-run hot spots of the paper's grid on the MMLU-Pro shape, each against a baseline in this process.

    python benchmarks/bench_hotspots.py [--items 12032] [--sources 300] [--only anchor-points]
    python benchmarks/bench_hotspots.py --npz ../shared/data/mmlu-pro-tiger/responses.npz --only anchor-points

On one run's view of a simulated 400 x 12,032 matrix (14 subtasks; 300 source models on the
~6,000 seen items), with one BLAS/OpenMP thread, process CPU time:

- diversity: the DPP sampler at k = 10..1,000 (blocked updates, exact by rejection) against the
  former one (one matrix-vector product with the basis per step) and against k bare such
  products (that design's floor), and the QR of the basis;
- anchor-points: FasterPAM per size from a random start in FasterPAM's own swap order (used)
  against the former way (kmedoids' randomised swap order), with the k-medoids objective;
- tinyBenchmarks: the IRT fit with its element-wise work in cache-sized blocks (used) against
  whole arrays, and mdad's exact k-means (used: the same anchors on every machine) against
  scikit-learn's KMeans at k = 100 and 1,000, 5 starts: time and inertia;
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
from mdad.methods.kmeans import kmeans  # noqa: E402


def cpu(fn):
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def former_sampler(basis: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The chain-rule sampler as it was: every step updates all n conditional variances with one
    matrix-vector product (the baseline of the blocked sampler in mdad.methods.dpp)."""
    n, rank = basis.shape
    residual = np.einsum("ij,ij->i", basis, basis)
    chosen = np.empty(rank, dtype=np.int64)
    directions = np.zeros((rank, rank))
    projection, cumulative = np.empty(n), np.empty(n)
    for step in range(rank):
        np.cumsum(residual, out=cumulative)
        j = min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")), n - 1)
        chosen[step] = j
        v = basis[j].copy()
        for _ in range(2):
            v -= directions[:step].T @ (directions[:step] @ v)
        v /= np.linalg.norm(v)
        directions[step] = v
        np.dot(basis, v, out=projection)
        np.square(projection, out=projection)
        residual -= projection
        np.maximum(residual, 0.0, out=residual)
        residual[chosen[: step + 1]] = 0.0
    return chosen


def diversity(view: SourceView, repeats: int = 3) -> None:
    points = diversity_features(view.gold_prob).trimmed_points
    print(f"\ndiversity: DPP on {len(points)} trimmed items (CPU s, {repeats} samples each)")
    print(f"{'k':>6s} {'basis QR':>9s} {'former sampler':>15s} {'k products':>11s} {'ratio':>6s} {'sampler':>8s} {'speed-up':>9s}")
    for k in (10, 100, 300, 1000):
        basis, t_basis = cpu(lambda k=k: ope_basis(points, k))
        _, t_former = cpu(lambda basis=basis: [former_sampler(basis, np.random.default_rng(s)) for s in range(repeats)])
        _, t_sample = cpu(lambda basis=basis: [sample_projection_dpp(basis, np.random.default_rng(s)) for s in range(repeats)])
        v = np.full(basis.shape[1], basis.shape[1] ** -0.5)
        _, t_floor = cpu(lambda basis=basis, v=v: [basis @ v for _ in range(basis.shape[1] * repeats)])
        print(
            f"{k:6d} {t_basis:9.3f} {t_former / repeats:15.3f} {t_floor / repeats:11.3f} {t_former / t_floor:6.2f} "
            f"{t_sample / repeats:8.3f} {t_former / t_sample:8.1f}x"
        )


def objective(distance: np.ndarray, medoids: np.ndarray) -> float:
    """The k-medoids objective: every item's distance to its nearest medoid, summed (float64)."""
    return float(distance[np.asarray(medoids)].astype(np.float64).min(axis=0).sum())


def anchor_points(view: SourceView, repeats: int = 3) -> None:
    """FasterPAM per size from a random start in FasterPAM's own swap order (as the method does)
    against the former way (kmedoids' randomised swap order, ``random_state`` given), ``repeats``
    seeds each; CPU time and the k-medoids objective of each."""
    import warnings

    import kmedoids

    distance, t_prep = cpu(lambda: AnchorPoints().prepare(view, np.random.default_rng(0)))
    n = len(distance)
    sizes = [k for k in (10, 25, 50, 100, 250, 500, 1000) if k < n]
    print(
        f"\nanchor-points: distances {n} x {n} ({distance.dtype}, {distance.nbytes / 1e6:.0f} MB) in {t_prep:.2f} s; "
        f"FasterPAM per size, {repeats} seeds: CPU s summed, objective mean; relative difference of the "
        f"own order's objective from the former way's: mean, min, max"
    )
    ways = ("former", "own order")
    times = {w: dict.fromkeys(sizes, 0.0) for w in ways}
    objectives = {w: {k: [] for k in sizes} for w in ways}
    for seed in range(repeats):
        rng = np.random.default_rng([seed, 99])
        for k in sizes:
            fits = {
                "former": lambda k=k, rng=rng: kmedoids.fasterpam(distance, k, init="random", random_state=int(rng.integers(2**31)), n_cpu=1).medoids,
                "own order": lambda k=k, rng=rng: kmedoids.fasterpam(distance, np.sort(rng.choice(n, k, replace=False)), n_cpu=1).medoids,
            }
            for way, fit in fits.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    medoids, t = cpu(fit)
                times[way][k] += t
                objectives[way][k].append(objective(distance, medoids))
    print(
        f"{'k':>6s} {'former':>8s} {'objective':>10s} {'own order':>10s} {'objective':>10s} "
        f"{'speed-up':>9s} {'rel. diff mean':>15s} {'min':>9s} {'max':>9s}"
    )
    for k in sizes:
        rel = (np.array(objectives["own order"][k]) - objectives["former"][k]) / np.array(objectives["former"][k])
        cells = " ".join(f"{times[w][k]:{8 if w != 'own order' else 10}.2f} {np.mean(objectives[w][k]):10.2f}" for w in ways)
        print(f"{k:6d} {cells} {times['former'][k] / times['own order'][k]:8.1f}x {rel.mean():15.2e} {rel.min():9.2e} {rel.max():9.2e}")
    total = {w: sum(times[w].values()) for w in ways}
    print(
        f" all sizes: former {total['former']:.2f} s, FasterPAM's own order {total['own order']:.2f} s: {total['former'] / total['own order']:.1f}x"
    )


def tinybenchmarks(view: SourceView) -> None:
    from sklearn.cluster import KMeans

    import mdad.irt.model as irt_model
    from mdad.irt import fit_irt

    fit, t_fit = cpu(lambda: fit_irt(view.scores, dims=10, rng=np.random.default_rng(0)))
    print(f"\ntinyBenchmarks: IRT fit (D=10) on {view.scores.shape[0]} x {view.scores.shape[1]}: {t_fit:.2f} CPU s")
    timing, fits = {}, {}
    for name, cells in (("whole arrays", 10**12), ("blocks", irt_model.BLOCK_CELLS)):
        irt_model.BLOCK_CELLS = cells
        fits[name], timing[name] = cpu(lambda: fit_irt(view.scores, dims=10, rng=np.random.default_rng(0)))
    same = all(np.array_equal(getattr(fits["blocks"], f), getattr(fits["whole arrays"], f)) for f in ("theta", "a", "b"))
    print(
        f"IRT fit with the element-wise work on whole arrays {timing['whole arrays']:.2f} s, in cache-sized blocks "
        f"(used) {timing['blocks']:.2f} s: {timing['whole arrays'] / timing['blocks']:.2f}x; identical fit: {same}"
    )
    for k in (100, 1000):
        ours, t_ours = cpu(lambda k=k: kmeans(fit.embedding, k, np.random.default_rng(3), n_init=5))
        theirs, t_theirs = cpu(lambda k=k: KMeans(n_clusters=k, n_init=5, random_state=3).fit(fit.embedding))
        inertia = float(((fit.embedding - ours.centres[ours.labels]) ** 2).sum())
        print(
            f"k-means k={k}, 5 starts: mdad's exact k-means {t_ours:.2f} s (inertia {inertia:.2f}), scikit-learn "
            f"{t_theirs:.2f} s (inertia {theirs.inertia_:.2f}): time {t_ours / t_theirs:.2f}x, inertia "
            f"{inertia / theirs.inertia_ - 1:+.2%}"
        )


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
    print(
        f"\nloading {size / 1e6:.0f} MB of option probabilities: peak traced {now / 1e6:.0f} MB ({now / size:.1f}x); "
        f"former way {before / 1e6:.0f} MB ({before / size:.1f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=12032)
    parser.add_argument("--sources", type=int, default=300)
    parser.add_argument("--npz", help="a real matrix instead of the simulated one (then --items is ignored)")
    parser.add_argument("--repeats", type=int, default=3, help="seeds of the anchor-points comparison")
    parser.add_argument("--only", help="comma-separated parts: diversity,anchor-points,tinybenchmarks,loading")
    args = parser.parse_args()
    matrix = read_npz(args.npz) if args.npz else simulate(seed=0, n_models=400, n_items=args.items, n_subtasks=14)
    targets = min(50, len(matrix.models) // 3)
    args.sources = min(args.sources, len(matrix.models) - targets)
    splits = make_splits(matrix, 1, targets, 0)
    src, pool = splits.sources(args.sources)[0], splits.seen[0]
    pool = pool[~np.isnan(matrix.scores[:, pool]).any(axis=0)]  # real data: items every model answered
    gold = matrix.gold_prob()
    view = SourceView.from_arrays(matrix.scores[np.ix_(src, pool)], gold[np.ix_(src, pool)], matrix.subtask_codes[pool], matrix.has_option_probs)
    what = args.npz or f"simulated 400 x {args.items}"
    print(f"{what}; one run: {args.sources} sources x {view.n_items} seen items; load average {os.getloadavg()[0]:.1f} (machine shared: CPU times)")
    parts = {
        "diversity": lambda: diversity(view),
        "anchor-points": lambda: anchor_points(view, args.repeats),
        "tinybenchmarks": lambda: tinybenchmarks(view),
        "loading": lambda: loading(matrix),
    }
    for name in args.only.split(",") if args.only else parts:
        parts[name]()


if __name__ == "__main__":
    main()
