"""The paper grid's fifth round, part by part: FasterPAM's matrix layout, diversity's QR and DPP sampler.

    python benchmarks/bench_grid_fifth.py layout        # FasterPAM on the distances and on their transpose
    python benchmarks/bench_grid_fifth.py qr            # numpy.linalg.qr against orthonormal_columns
    python benchmarks/bench_grid_fifth.py sampler --before da801aa   # the DPP sampler of a commit against now
    python benchmarks/bench_grid_fifth.py one-pass      # FasterPAM's objective after 1 and 2 passes

One process, one thread, process CPU seconds (the machine may be shared: the ratios are the reliable
part). Each part also checks what it claims unchanged:

- layout: anchor-points' distances between 6,016 items (bench_paper_grid.py's simulated MMLU-Pro shape,
  seen half) for 300 source models; FasterPAM (SWAP_PASSES) from the same random start on the C-ordered
  matrix and on its transposed view (the same numbers: the matrix is symmetric), each size of the grid;
  the medoids and objective must be equal;
- qr: the thin QR of the 5,900 x 1,000 Vandermonde matrix of uniform points in 4 dimensions by
  numpy.linalg.qr and by ``orthonormal_columns`` (SciPy): CPU and whether Q and R are the same bits;
  and by Cholesky QR twice: CPU and how far its rows' squared norms are from Householder's;
- sampler: ``sample_projection_dpp`` of commit ``--before`` (its dpp.py, extracted with git) and of this
  tree on the same bases (5,900 points, k = 100-1,000) and seeds: CPU and whether the draws are the same;
  at k = 1,000 also this sampler with other numbers of directions multiplied at a time (``--chunks``);
- one-pass: FasterPAM's CPU with one pass and two on the layout part's distances; bench_anchor_passes.py's
  objective (20 random starts, every model a source) with FasterPAM capped at one pass and at two, against
  convergence.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

SIZES = (10, 25, 50, 100, 250, 500, 1000)


def cpu(task):
    start = time.process_time()
    out = task()
    return out, time.process_time() - start


def grid_distances(rng: np.random.Generator) -> np.ndarray:
    """anchor-points' distances for 300 of the 400 models and 6,016 of the 12,032 items of bench_paper_grid.py's
    simulated MMLU-Pro shape (a run's sources and seen half)."""
    from mdad.data import simulate
    from mdad.methods.anchor_points import item_distances

    matrix = simulate(seed=0, n_models=400, n_items=12_032, n_subtasks=14)
    gold = np.asarray(matrix.gold_prob(), dtype=np.float64)
    return item_distances(gold[np.ix_(rng.permutation(400)[:300], np.sort(rng.permutation(12_032)[:6016]))])


def layout(repeats: int) -> None:
    import kmedoids

    from mdad.methods.anchor_points import SWAP_PASSES

    rng = np.random.default_rng(0)
    distance = grid_distances(rng)
    print(f"FasterPAM ({SWAP_PASSES} passes), 300 sources x 6,016 items, CPU s per call (mean of {repeats}):")
    for k in SIZES:
        times = {"rows": 0.0, "transposed": 0.0}
        for _ in range(repeats):
            start = np.sort(rng.choice(len(distance), size=k, replace=False))
            rows, times_rows = cpu(lambda start=start: kmedoids.fasterpam(distance, start, max_iter=SWAP_PASSES, n_cpu=1))
            cols, times_cols = cpu(lambda start=start: kmedoids.fasterpam(distance.T, start, max_iter=SWAP_PASSES, n_cpu=1))
            assert np.array_equal(rows.medoids, cols.medoids) and rows.loss == cols.loss
            times["rows"] += times_rows / repeats
            times["transposed"] += times_cols / repeats
        ratio = times["rows"] / times["transposed"]
        print(f"  k = {k:4d}: C order {times['rows']:.3f}, transposed {times['transposed']:.3f} ({ratio:.2f}x); same medoids")


def qr(repeats: int) -> None:
    from mdad.methods.dpp import orthonormal_columns, vandermonde

    points = np.random.default_rng(0).uniform(-0.99, 0.99, size=(5900, 4))
    numpy_s, scipy_s = [], []
    for _ in range(repeats):
        (q, r), spent = cpu(lambda: np.linalg.qr(vandermonde(points, 1000)))
        numpy_s.append(spent)
        (q2, r2), spent = cpu(lambda: orthonormal_columns(vandermonde(points, 1000)))
        scipy_s.append(spent)
    same = np.array_equal(q, q2) and np.array_equal(r, r2)
    print(
        f"QR of the 5,900 x 1,000 Vandermonde matrix (with building it), median of {repeats}: numpy.linalg.qr "
        f"{np.median(numpy_s):.3f} s, orthonormal_columns {np.median(scipy_s):.3f} s; Q and R the same bits: {same}"
    )
    cholesky_s = []
    for _ in range(repeats):
        q3, spent = cpu(lambda: cholesky_qr2(vandermonde(points, 1000)))
        cholesky_s.append(spent)
    leverage = np.abs(np.einsum("ij,ij->i", q, q) - np.einsum("ij,ij->i", q3, q3)).max()
    print(f"Cholesky QR twice: {np.median(cholesky_s):.3f} s; rows' squared norms (K_jj) differ from Householder's by up to {leverage:.1e}")


def cholesky_qr2(columns: np.ndarray) -> np.ndarray:
    """Q of the Cholesky QR repeated once (CholeskyQR2): R from the Cholesky factor of the Gram matrix."""
    from scipy.linalg import cholesky, solve_triangular

    q = columns
    for _ in range(2):
        r = cholesky(q.T @ q, lower=False)
        q = solve_triangular(r, q.T, trans="T", lower=False).T
    return q


def former_dpp(ref: str):
    """The dpp module of commit ``ref``."""
    text = subprocess.run(["git", "-C", str(HERE.parent), "show", f"{ref}:src/mdad/methods/dpp.py"], capture_output=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="mdad-dpp-")) / "former_dpp.py"
    path.write_bytes(text)
    spec = importlib.util.spec_from_file_location("former_dpp", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sampler(ref: str, repeats: int, chunks: tuple[int, ...]) -> None:
    from mdad.methods import dpp

    former = former_dpp(ref)
    rng = np.random.default_rng(0)
    print(f"DPP sampler, 5,900 points, CPU s per draw (mean over {repeats} seeds each), {ref} / now:")
    for k in (1000, 500, 250, 100):
        basis = dpp.ope_basis(rng.uniform(-0.99, 0.99, size=(5900, 4)), k)
        before = now = 0.0
        differ = 0
        for seed in range(repeats):
            a, spent = cpu(lambda seed=seed, basis=basis: former.sample_projection_dpp(basis, np.random.default_rng(seed)))
            before += spent / repeats
            b, spent = cpu(lambda seed=seed, basis=basis: dpp.sample_projection_dpp(basis, np.random.default_rng(seed)))
            now += spent / repeats
            differ += not np.array_equal(a, b)
        print(f"  k = {k:4d}: {before:.4f} / {now:.4f} ({before / now:.2f}x); draws that differ: {differ} of {repeats}")
        if k == 1000 and chunks:
            spent = dict.fromkeys(chunks, 0.0)
            for seed in range(repeats):
                for chunk in chunks:  # alternating, in this process
                    with mock.patch.object(dpp, "CHUNK", chunk):
                        _, took = cpu(lambda seed=seed, basis=basis: dpp.sample_projection_dpp(basis, np.random.default_rng(seed)))
                    spent[chunk] += took / repeats
            print("    directions multiplied at a time (CHUNK): " + ", ".join(f"{c}: {t:.4f}" for c, t in spent.items()))


def one_pass(starts: int, data: Path) -> None:
    import bench_anchor_passes as passes

    from mdad.data import read_npz
    from mdad.methods import anchor_points

    golds = {"simulated 400 x 3,000": passes.simulated(3_000).gold_prob()}
    for name in passes.DATASETS:
        path = data / name / "responses.npz"
        if path.is_file():
            golds[name] = read_npz(path, source=name).gold_prob()
        else:
            print(f"  {name}: not found at {path}, skipped")
    import kmedoids

    rng = np.random.default_rng(0)
    distance = grid_distances(rng)
    print("FasterPAM on 300 sources x 6,016 items, CPU s per call, 1 pass / 2 passes (same random start):")
    for k in SIZES:
        start = np.sort(rng.choice(len(distance), size=k, replace=False))
        spent = [cpu(lambda passes=passes, start=start: kmedoids.fasterpam(distance.T, start, max_iter=passes, n_cpu=1))[1] for passes in (1, 2)]
        print(f"  k = {k:4d}: {spent[0]:.3f} / {spent[1]:.3f}")
    for capped in (1, 2):
        print(f"FasterPAM capped at {capped} pass(es):")
        with mock.patch.object(anchor_points, "SWAP_PASSES", capped):
            for name, gold in golds.items():
                passes.objective(name, np.asarray(gold, dtype=np.float64), starts, passes.SIZES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("layout", "qr", "sampler", "one-pass"))
    parser.add_argument("--before", default="da801aa", help="sampler: the commit whose sampler is compared")
    parser.add_argument("--chunks", default="64,128,256", help="sampler: CHUNK values timed at k = 1,000 ('' for none)")
    parser.add_argument("--repeats", type=int, default=3, help="calls per size (layout, qr, sampler)")
    parser.add_argument("--starts", type=int, default=20, help="one-pass: random starts per size")
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("MDAD_DATA_DIR", "../shared/data")), help="one-pass: the datasets' folder")
    args = parser.parse_args()
    threadpool_limits(1)
    if args.part == "layout":
        layout(args.repeats)
    elif args.part == "qr":
        qr(args.repeats)
    elif args.part == "sampler":
        sampler(args.before, args.repeats, tuple(int(c) for c in args.chunks.split(",") if c))
    else:
        one_pass(args.starts, args.data)


if __name__ == "__main__":
    main()
