"""Time the GPQA grid (methods x sizes x 50 runs, selection + all metrics, seen and unseen) and
compare the metrics with a straightforward per-pair-loop implementation run in the same process.

    python benchmarks/bench_grid.py [--data-dir ../shared/data] [--methods a,b,c] [--threads 1]

Prints wall times and the speed-up ratio (goal: grid < 2 s for the random methods, < 20 s for
random,stratified-confidence,anchor-points,diversity; metrics >= 100x faster than the per-pair loops).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from naive_metrics import naive_bootstrap_interval, naive_kendall_tau_b, naive_pairs  # noqa: E402

from mdad.data import read_npz  # noqa: E402
from mdad.experiment.evaluate import cell_arrays, evaluate_cell  # noqa: E402
from mdad.experiment.grid import Experiment, ExperimentConfig  # noqa: E402


def loop_metrics(frame, threshold=0.8, rng=None):
    """The reference's way: a Python record per pair, dict-of-lists bins, resampling loops."""
    rng = rng or np.random.default_rng(0)
    arrays = cell_arrays(frame)
    out = {}
    for view in ("seen", "unseen"):
        est, truth = arrays["estimate"], arrays[view]
        records = []
        for r in range(len(est)):
            for agree, diff in naive_pairs(est[r], truth[r]):
                records.append({"run": r, "agree": agree, "diff": diff})
        bins = {}
        for rec in records:
            bins.setdefault(np.floor(rec["diff"] / 0.5 + 1e-9) * 0.5, []).append(rec["agree"])
        mdad = None
        for edge in sorted(bins):
            mean = np.mean(bins[edge])
            naive_bootstrap_interval(bins[edge], rng)
            if mdad is None and mean >= threshold:
                mdad = edge
        taus = [naive_kendall_tau_b(e, t) for e, t in zip(est, truth, strict=True)]
        out[view] = (mdad, float(np.nanmean(taus)), float(np.mean(np.abs(est - truth))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("MDAD_DATA_DIR", str(ROOT.parent / "shared" / "data")))
    parser.add_argument("--methods", default="random,random-stratified-equal,random-stratified-proportional")
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads (default: library default)")
    parser.add_argument("--baseline-cells", type=int, default=None, help="per-pair loop on this many cells only")
    args = parser.parse_args()
    matrix = read_npz(Path(args.data_dir) / "oll2-gpqa" / "responses.npz", source="oll2-gpqa")
    methods = tuple(args.methods.split(","))
    config = ExperimentConfig(methods=methods, sizes=(10, 25, 50, 100, 200), sources=(300,), runs=50, targets=50, seed=0)
    with threadpool_limits(limits=args.threads):
        t0 = time.perf_counter()
        frames = Experiment(matrix, config).run().frames
        t1 = time.perf_counter()
        summaries = {cell: evaluate_cell(cell, frame, robust=False)[0] for cell, frame in frames.items()}
        t2 = time.perf_counter()
        cells = list(frames)[: args.baseline_cells]
        loops = {cell: loop_metrics(frames[cell]) for cell in cells}
        t3 = time.perf_counter()
        for cell, frame in frames.items():
            evaluate_cell(cell, frame, robust=True)
        t_robust = time.perf_counter() - t3
    for cell in cells:
        for row in summaries[cell]:
            mdad, tau, err = loops[cell][row["view"]]
            assert (mdad is None and not row["mdad_reached"]) or mdad == row["mdad"], (cell, row["view"])
            assert abs(tau - row["kendall_tau"]) < 1e-9 and abs(err - row["error"]) < 1e-12
    vector_metrics = (t2 - t1) / len(frames)
    loop_per_cell = (t3 - t2) / len(cells)
    print(f"GPQA grid: {len(methods)} methods x 5 sizes x 50 runs = {len(frames)} cells, threads={args.threads or 'default'}")
    print(f"  selection + estimates : {t1 - t0:8.3f} s")
    print(f"  metrics (vectorised)  : {t2 - t1:8.3f} s  ({1000 * vector_metrics:.1f} ms per cell)")
    print(f"  whole grid            : {t2 - t0:8.3f} s")
    print(f"  metrics + robust MDAD : {t_robust:8.3f} s  (the logistic-fit MDAD with its bootstrap, all cells)")
    print(f"  metrics (per-pair loop, {len(cells)} cells): {t3 - t2:8.3f} s  ({1000 * loop_per_cell:.0f} ms per cell)")
    print(f"  ratio metrics loop / vectorised        : {loop_per_cell / vector_metrics:8.1f}x")
    print(f"  ratio grid with loop metrics / grid    : {((t1 - t0) + loop_per_cell * len(frames)) / (t2 - t0):8.1f}x")
    print("  same MDAD, Kendall tau and error from both implementations: yes")


if __name__ == "__main__":
    main()
