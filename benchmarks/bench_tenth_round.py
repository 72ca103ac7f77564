"""The tenth round's parts against their former versions (a git ref's source), alternating in one process, one thread.

    python benchmarks/bench_tenth_round.py --before 1a0009b [--repeats 4]

- IRT fit: tinyBenchmarks' 10-D fit (its default schedule) of simulated 0/1 answers of MMLU-Pro's shape, on the
  paper grid's pool (6,016 items) at 300, 150 and 50 source models: the former ``mdad.irt.model`` (read from
  ``--before``) against this one. Now the likelihood sums each block's losses and computes its rows of the theta
  gradient while the block is in the cache, takes log(1 + e) rather than log1p(e), gets the b gradient from the
  a gradient's product, and writes every evaluation into the same working arrays.
- diversity: the orthonormal basis of 6,016 x 1,000 graded monomials of 4 PCA-like coordinates (the grid's
  largest size), the former Householder Q (geqrf, orgqr, a copy to row order) against A R^-1 (geqrf, one trsm).
- allocator: the heavy methods' cells of one run at two source counts, in a fresh process per measurement, under
  the former thresholds (arrays from 8 MB mapped, 64 MB of free heap kept) and the new ones (64 MB, 256 MB):
  user and system CPU seconds and minor page faults.

CPU seconds are medians over the repeats, each pair alternating which goes first; the fits' probabilities and
the bases are compared with the former ones.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_ninth_round import paired  # noqa: E402  (former and now alternating, median CPU s)

FORMER_THRESHOLDS = (8 * 2**20, 64 * 2**20)  # the allocator's (mmap, trim) thresholds before this round


def former_module(ref: str, path: str, name: str):
    """The module at ``path`` (relative to the repository) as it was at git ref ``ref``."""
    source = subprocess.run(["git", "show", f"{ref}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    file = Path(tempfile.mkdtemp(prefix="mdad-former-")) / f"{name}.py"
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def irt_rows(ref: str, repeats: int) -> None:
    from mdad.data import simulate
    from mdad.irt import model as now_model

    former = former_module(ref, "src/mdad/irt/model.py", "former_irt_model")
    matrix = simulate(seed=0, n_models=400, n_items=12032, n_subtasks=14)
    rng = np.random.default_rng(1)
    pool = np.sort(rng.choice(matrix.n_items, 6016, replace=False))
    for sources in (300, 150, 50):
        rows = np.sort(rng.choice(matrix.n_models, sources, replace=False))
        answers = matrix.scores[np.ix_(rows, pool)].astype(np.float64)
        fits = {}

        def fit(module, key, answers=answers, fits=fits):
            fits[key] = module.fit_irt(answers, dims=10, rng=np.random.default_rng(0))

        before, after = paired(lambda: fit(former, "former"), lambda: fit(now_model, "now"), repeats)
        p_before, p_after = (1.0 / (1.0 + np.exp(-fits[key].logits())) for key in ("former", "now"))
        gap = float(np.max(np.abs(p_before - p_after)))
        objective = abs(fits["now"].objective - fits["former"].objective) / abs(fits["former"].objective)
        label = f"IRT fit, {sources} x 6,016"
        print(
            f"{label:<40}{before:>9.3f}{after:>9.3f}{before / after:>7.2f}x  probabilities max |diff| {gap:.1e}, objective {objective:.1e} relative"
        )


def basis_row(ref: str, repeats: int) -> None:
    from mdad.methods import dpp as now_dpp

    former = former_module(ref, "src/mdad/methods/dpp.py", "former_dpp")
    rng = np.random.default_rng(2)
    points = np.clip(rng.normal(size=(6016, 4)) / 3.0, -0.99, 0.99)
    before, after = paired(
        lambda: former.orthonormal_columns(now_dpp.vandermonde(points, 1000)),
        lambda: now_dpp.orthonormal_columns(now_dpp.vandermonde(points, 1000)),
        repeats,
    )
    q_before, _ = former.orthonormal_columns(now_dpp.vandermonde(points, 1000))
    q_after, _ = now_dpp.orthonormal_columns(now_dpp.vandermonde(points, 1000))
    orthogonality = float(np.max(np.abs(q_after.T @ q_after - np.eye(1000))))
    kernel = float(np.max(np.abs(np.einsum("ij,ij->i", q_after, q_after) - np.einsum("ij,ij->i", q_before, q_before))))
    label = "diversity: basis of 6,016 x 1,000"
    print(f"{label:<40}{before:>9.3f}{after:>9.3f}{before / after:>7.2f}x  |Q'Q - I| {orthogonality:.1e}, kernel diagonal max |diff| {kernel:.1e}")


CELLS = """
import json, resource, sys
from mdad.cli import allocator
allocator.MMAP_THRESHOLD, allocator.TRIM_THRESHOLD = int(sys.argv[2]), int(sys.argv[3])
allocator.tune()
from mdad.data import simulate
from mdad.experiment.grid import Experiment, ExperimentConfig
matrix = simulate(seed=0, n_models=400, n_items=12032, n_subtasks=14)
config = ExperimentConfig(methods=(sys.argv[1],), sizes=(100, 1000), sources=(200, 300), runs=1, targets=50, seed=0)
Experiment(matrix, ExperimentConfig(methods=(sys.argv[1],), sizes=(10,), sources=(10,), runs=1, targets=50, seed=0)).run()  # imports
start = resource.getrusage(resource.RUSAGE_SELF)
Experiment(matrix, config).run()
end = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"user": end.ru_utime - start.ru_utime, "sys": end.ru_stime - start.ru_stime, "faults": end.ru_minflt - start.ru_minflt}))
"""


def allocator_rows(repeats: int) -> None:
    from mdad.cli import allocator

    env = {**os.environ, **{v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}}
    settings = {"former": FORMER_THRESHOLDS, "now": (allocator.MMAP_THRESHOLD, allocator.TRIM_THRESHOLD)}
    for method in ("anchor-points", "diversity", "tinybenchmarks"):
        spent: dict[str, list[dict]] = {"former": [], "now": []}
        for repeat in range(repeats):
            for name in ("former", "now") if repeat % 2 == 0 else ("now", "former"):
                mmap, trim = settings[name]
                out = subprocess.run([sys.executable, "-c", CELLS, method, str(mmap), str(trim)], env=env, capture_output=True, text=True, check=True)
                spent[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
        row = []
        for name in ("former", "now"):
            median = {key: float(np.median([s[key] for s in spent[name]])) for key in ("user", "sys", "faults")}
            row.append(f"{name}: user {median['user']:.2f} s, system {median['sys']:.2f} s, {median['faults']:,.0f} faults")
        print(f"{f'allocator, {method} cells':<40}" + "; ".join(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the git ref of the former version (the commit before this round)")
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--parts", default="irt,basis,allocator", help="comma-separated: irt, basis, allocator")
    args = parser.parse_args()
    parts = args.parts.split(",")
    print(f"{'part':<40}{'former s':>9}{'now s':>9}{'ratio':>8}")
    with threadpool_limits(limits=1):
        if "irt" in parts:
            irt_rows(args.before, args.repeats)
        if "basis" in parts:
            basis_row(args.before, args.repeats)
    if "allocator" in parts:
        allocator_rows(args.repeats)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"(this process: {usage.ru_utime + usage.ru_stime:.0f} CPU s)")


if __name__ == "__main__":
    main()
