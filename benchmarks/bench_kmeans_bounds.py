"""mdad's exact k-means against an earlier commit's, paired on tinyBenchmarks' embeddings: CPU time and identical results.

    python benchmarks/bench_kmeans_bounds.py --before main~1 [--repeats 2] [--cache DIR]

The embeddings are the grid's: the 10-D 2PL fit (``fit_irt``, as tinyBenchmarks does) of the first
300 models of ``simulate(seed=0, n_models=400, ...)`` on a seeded half of the items, for the
MMLU-Pro shape (12,032 items, 14 subtasks: 6,016 seen) and the BBH shape (5,761, 27: 2,880 seen);
``--cache`` keeps them between runs. For each, the k-means of every size of the grid (10 to 1,000
clusters, tinyBenchmarks' number of starts, the generator seeded with the size) is computed by both modules in one
one-thread process, alternating which goes first, ``--repeats`` times: process CPU seconds per
phase (k-means++ seeding, Lloyd) and in all, and the ratio. ``--tuned-allocator`` first sets glibc's
thresholds as ``mdad``'s command line does (mdad.cli.allocator), which spares most page faults of
fresh arrays whatever the code: the library's users get the figures without it, the command's with it. Every result (labels, centres,
distances, inertia) must be identical to the bit, or the script stops.

    python benchmarks/bench_kmeans_bounds.py --yinyang [--cache DIR]

Yinyang's group bounds (Ding et al. 2015) tried as Lloyd's pruning, not kept: the same seeded
centres refined by mdad's Lloyd (Hamerly's bounds) and by Yinyang's (centre c in group c mod the
number of groups, about GROUP_SIZE centres each; a point whose exact distance to its own centre is
not below every group's bound is checked against every centre and all its bounds made exact), at
10 and 25 centres per group: one-thread CPU seconds of the 5 starts and the mean number of points
checked per pass, the results identical to the bit; and the median over the points of the distance to
the second-nearest centre over the distance to the nearest, after the first start's Lloyd (how alike
the distances to several centres are, which decides how much any bound can prune).

    python benchmarks/bench_kmeans_bounds.py --steps [--cache DIR]

What one k-means++ step costs, by operation (microseconds, one thread, the MMLU-Pro shape's embedding,
the closest distances after 250 centres): the exact product with the 3 candidates, the minimum with
the closest distances, the candidates' sums, the cumulative sum the draw searches, and the gather and
comparison a pruned step would need at least (each point's centre's distance to the candidates,
against 4 times its closest distance: the triangle inequality's test); and the closest distances'
total after 10, 250 and 1,000 centres (log2: the sums are exact integers only below 2**53).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import mdad.methods.kmeans as now
import mdad.methods.tinybenchmarks as tiny
from mdad.cli import allocator
from mdad.data import simulate
from mdad.irt import fit_irt

ROOT = Path(__file__).resolve().parent.parent
SHAPES = {"mmlu-pro": (12032, 14), "bbh": (5761, 27)}
SIZES = (10, 25, 50, 100, 250, 500, 1000)
SOURCES, MODELS = 300, 400


def module_at(ref: str, folder: Path):
    """mdad.methods.kmeans as it was at commit ``ref``, imported under another name."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:src/mdad/methods/kmeans.py"], capture_output=True, text=True, check=True)
    path = folder / "kmeans_before.py"
    path.write_text(source.stdout)
    spec = importlib.util.spec_from_file_location("kmeans_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kmeans_before"] = module
    spec.loader.exec_module(module)
    return module


def embedding(shape: str, cache: Path) -> np.ndarray:
    """The IRT item embedding of the shape's seen half, fitted on the first SOURCES models."""
    path = cache / f"embedding-{shape}.npy"
    if not path.is_file():
        items, subtasks = SHAPES[shape]
        scores = np.asarray(simulate(seed=0, n_models=MODELS, n_items=items, n_subtasks=subtasks).scores)
        seen = np.sort(np.random.default_rng(0).permutation(items)[: items // 2])
        fit = fit_irt(scores[np.ix_(np.arange(SOURCES), seen)], dims=tiny.DIMS, rng=np.random.default_rng(1))
        np.save(path, fit.embedding)
    return np.load(path)


def timed(module, points: np.ndarray) -> tuple[dict[str, float], list]:
    """CPU seconds per phase of every size's k-means, and the results."""
    cpu = {"_plus_plus": 0.0, "_lloyd": 0.0}
    originals = {name: getattr(module, name) for name in cpu}

    def clocked(name):
        def run(*args, **kwargs):
            start = time.process_time()
            try:
                return originals[name](*args, **kwargs)
            finally:
                cpu[name] += time.process_time() - start

        return run

    for name in cpu:
        setattr(module, name, clocked(name))
    try:
        start = time.process_time()
        results = [module.kmeans(points, k, np.random.default_rng([0, k]), n_init=tiny.KMEANS_STARTS) for k in SIZES]
        total = time.process_time() - start
    finally:
        for name, function in originals.items():
            setattr(module, name, function)
    return {"seeding": cpu["_plus_plus"], "lloyd": cpu["_lloyd"], "all": total}, results


def same(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("labels", "centres", "distance")) and a.inertia == b.inertia


def yinyang_lloyd(grid, centres: np.ndarray, max_iter: int, tol: float, size: int, checked: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """mdad's Lloyd with Yinyang's group bounds (``size`` centres per group) in place of Hamerly's."""
    k, margin = len(centres), now.BOUND_MARGIN
    groups = -(-k // size)

    def full_pass(rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x1 = grid.x1 if rows is None else grid.x1[rows]
        norms = grid.norms if rows is None else grid.norms[rows]
        n = len(x1)
        labels, best, lower = np.empty(n, dtype=np.int64), np.empty(n), np.empty((n, groups))
        # centre c = j * groups + g is column g of slice j, zero columns past k (set to inf below)
        by_feature = np.zeros((size * groups, x1.shape[1]))
        by_feature[:k] = np.hstack([-2.0 * centres, np.einsum("ij,ij->i", centres, centres)[:, None]])
        by_feature = np.ascontiguousarray(by_feature.reshape(size, groups, -1).transpose(0, 2, 1))
        rows_per_block = max(1, now.BLOCK_CELLS // k)
        buffer = np.empty((size, rows_per_block, groups))
        for start in range(0, n, rows_per_block):
            block = slice(start, start + rows_per_block)
            dist = np.matmul(x1[block], by_feature, out=buffer[:, : len(x1[block])])  # exact
            dist[-1, :, k - (size - 1) * groups :] = np.inf
            at = np.arange(dist.shape[1])
            minima = dist.min(axis=0)  # every group's nearest
            nearest = minima.min(axis=1)
            hits = minima == nearest[:, None]
            group = np.argmax(hits, axis=1)
            inside = dist[:, at, group]
            slot = np.argmax(inside == nearest, axis=0)  # the lowest index in the nearest group
            here = slot * groups + group
            inside[slot, at] = np.inf
            minima[at, group] = inside.min(axis=0)
            for i in np.flatnonzero(hits.sum(axis=1) > 1):  # equals in two groups: the lowest index of all
                here[i] = np.argmin(dist[:, i, :].ravel())
                column = dist[:, i, here[i] % groups].copy()
                column[here[i] // groups] = np.inf
                minima[i, here[i] % groups] = column.min()
            labels[block], best[block] = here, nearest + norms[block]
            np.add(minima, norms[block, None], out=lower[block])
        return labels, best, np.sqrt(lower) * (1.0 - margin)

    labels, distance, lower = full_pass()
    for _ in range(max_iter):
        means, counts = grid.means(labels, k)
        empty = np.flatnonzero(counts == 0)
        if empty.size:
            means[empty] = grid.x[np.argsort(-distance, kind="stable")[: empty.size]]
        shift = float(np.sum((means - centres) ** 2))
        moved = np.zeros(size * groups)
        moved[:k] = np.sqrt(np.einsum("ij,ij->i", means - centres, means - centres))
        lower = lower * (1.0 - margin) - moved.reshape(size, groups).max(axis=0) * (1.0 + margin)
        centres[:] = means
        new_labels, distance = labels.copy(), grid.own(centres, labels)
        check = np.flatnonzero(np.sqrt(distance) * (1.0 + margin) >= lower.min(axis=1))
        checked.append(check.size)
        if check.size:
            new_labels[check], distance[check], lower[check] = full_pass(check)
        settled = np.array_equal(new_labels, labels)
        labels = new_labels
        if settled or shift <= tol:
            break
    return labels, distance


def yinyang(cache: Path) -> None:
    """Lloyd's CPU and points checked per pass: Hamerly's bounds (mdad's) against Yinyang's."""
    print(
        f"{'shape':9s} {'k':>5s} {'Hamerly':>16s} "
        + " ".join(f"{f'Yinyang/{size}':>16s}" for size in (10, 25))
        + " 2nd/1st   (CPU s of 5 starts, points checked per pass; median second-nearest / nearest distance)"
    )
    for shape in SHAPES:
        grid = now._Grid(embedding(shape, cache))
        tol = now.TOL * float(np.mean(np.var(grid.x, axis=0)))
        for k in SIZES[2:]:
            starts = [now._plus_plus(grid, k, np.random.default_rng([s, k]), now.TRIALS) for s in range(tiny.KMEANS_STARTS)]
            row, reference = [], None
            for size in (None, 10, 25):
                checked: list[int] = []
                nearest = grid.nearest

                def counted(centres, rows=None, *, second=False, checked=checked, nearest=nearest):
                    if rows is not None:
                        checked.append(len(rows))
                    return nearest(centres, rows, second=second)

                grid.nearest = counted
                start = time.process_time()
                found = [
                    now._lloyd(grid, c.copy(), now.MAX_ITER, tol) if size is None else yinyang_lloyd(grid, c.copy(), now.MAX_ITER, tol, size, checked)
                    for c in starts
                ]
                cpu = time.process_time() - start
                del grid.nearest
                reference = reference or found
                if not all(np.array_equal(a, b) for x, y in zip(found, reference, strict=True) for a, b in zip(x, y, strict=True)):
                    raise SystemExit(f"{shape}, k = {k}: Yinyang/{size} gives other clusters")
                row.append(f"{cpu:7.3f} {np.mean(checked) if checked else 0:8.0f}")
            final = starts[0].copy()
            now._lloyd(grid, final, now.MAX_ITER, tol)
            _, first, second = grid.nearest(final, second=True)
            ratio = float(np.median(np.sqrt(second / np.maximum(first, 1.0))))
            print(f"{shape:9s} {k:5d} " + " ".join(f"{cell:>16s}" for cell in row) + f" {ratio:7.2f}", flush=True)
    print("every result identical to the bit (labels, distances)")


def steps(cache: Path, repeats: int = 3000) -> None:
    """Microseconds per operation of one k-means++ step at 250 centres (module docstring)."""
    grid = now._Grid(embedding("mmlu-pro", cache))
    rng = np.random.default_rng(0)
    centres = now._plus_plus(grid, 250, rng, now.TRIALS)
    chosen = np.flatnonzero((grid.x[:, None, :] == centres[None, :, :]).all(axis=2).any(axis=1))[:250]
    to_chosen = grid.to_points(chosen)
    labels, closest = np.argmin(to_chosen, axis=0), to_chosen.min(axis=0)
    candidates = rng.integers(len(grid.x), size=now.TRIALS)
    rows = grid.to_points(candidates)
    to_centres = grid.x1_norms[candidates] @ grid.by_feature[:, chosen]  # candidates x centres
    operations = {
        "product with the candidates": lambda: grid.to_points(candidates),
        "minimum with the closest": lambda: np.minimum(rows, closest, out=rows),
        "the candidates' sums": lambda: rows.sum(axis=1),
        "cumulative sum": lambda: np.cumsum(closest),
        "pruning test (gather, compare)": lambda: np.take(to_centres, labels, axis=1) < 4.0 * closest,
    }
    for name, operation in operations.items():
        start = time.process_time()
        for _ in range(repeats):
            operation()
        print(f"{name:32s} {1e6 * (time.process_time() - start) / repeats:6.1f} us", flush=True)
    for k in (10, 250, 1000):  # the cumulative sum is exact only while its total is below 2**53
        seeded = now._plus_plus(grid, k, np.random.default_rng([0, k]), now.TRIALS)
        total = np.sum(grid.nearest(seeded)[1])
        print(f"log2 of the closest distances' total after {k} centres: {np.log2(total):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="the earlier commit (any git ref)")
    parser.add_argument("--yinyang", action="store_true", help="Lloyd with Hamerly's bounds against Yinyang's instead")
    parser.add_argument("--steps", action="store_true", help="what one k-means++ step costs, by operation")
    parser.add_argument("--repeats", type=int, default=2, help="pairs per shape, alternating which goes first")
    parser.add_argument("--tuned-allocator", action="store_true", help="glibc's thresholds as the command line sets them (mdad.cli.allocator)")
    parser.add_argument("--cache", help="where the embeddings are kept (default: a new temporary folder)")
    args = parser.parse_args()
    if args.tuned_allocator and not allocator.tune():
        parser.error("the allocator's thresholds can only be set with glibc")
    cache = Path(args.cache or tempfile.mkdtemp(prefix="mdad-kmeans-bounds-"))
    cache.mkdir(parents=True, exist_ok=True)
    if args.yinyang or args.steps:
        with threadpool_limits(1):
            (yinyang if args.yinyang else steps)(cache)
        return
    if not args.before:
        parser.error("--before is needed (or --yinyang)")
    before = module_at(args.before, cache)
    print(f"{'shape':9s} {'phase':8s} {'before':>8s} {'now':>8s} {'now/before':>10s}   (CPU s, 7 sizes x 5 starts, mean of {args.repeats})")
    with threadpool_limits(1):
        for shape in SHAPES:
            points = embedding(shape, cache)
            cpu = {"before": {}, "now": {}}
            for repeat in range(args.repeats):
                order = [("before", before), ("now", now)][:: 1 if repeat % 2 == 0 else -1]
                found = {}
                for label, module in order:
                    phases, found[label] = timed(module, points)
                    for phase, seconds in phases.items():
                        cpu[label][phase] = cpu[label].get(phase, 0.0) + seconds / args.repeats
                bad = [k for k, a, b in zip(SIZES, found["before"], found["now"], strict=True) if not same(a, b)]
                if bad:
                    raise SystemExit(f"{shape}: other clusters at k = {bad}")
            for phase in ("seeding", "lloyd", "all"):
                b, n = cpu["before"][phase], cpu["now"][phase]
                print(f"{shape:9s} {phase:8s} {b:8.3f} {n:8.3f} {n / b:10.3f}", flush=True)
    print("every result identical to the bit (labels, centres, distances, inertia)")


if __name__ == "__main__":
    main()
