"""The IRT fit now (start from the Gram matrix's eigenvectors, covariance updates on packed
symmetric matrices with two products fewer, logits computed block by block) against a former mdad:
CPU time, and the log-likelihood of the training cells and of held-out cells.

    python benchmarks/bench_irt_speed.py --former-src FORMER/src [--seeds 3] [--real DATA_DIR]

``FORMER/src`` is the ``src`` folder of another mdad checkout (e.g. ``git archive <commit> src | tar
-x -C FORMER``). Each matrix is fitted by each version in a fresh one-thread process (process CPU
time of the fit alone: the machine may be shared), the two alternating, with 10% of its cells held
out at random: simulated 300 x 6,000 (``bench_irt.py``'s matrix, one per seed), simulated
350 x 12,000 of MMLU-Pro's shape (what one held-out run of ``mdad select`` fits), and with
``--real DIR`` the real 0/1 matrices of GPQA, MuSR and MATH-hard. Log-likelihoods are the mean per
cell under the fitted probabilities, computed here in float64 (higher is better).

``--estimates`` adds, on the real matrices, the estimation error of the IRT methods by each
version: ``mdad.assess`` at ``--size`` items, ``--runs`` held-out runs (mean absolute error of the
targets' estimates, points), and the difference now - former paired over the runs with its
standard error (the same splits and targets; the anchors differ). ``--yardstick`` adds the same
difference for this version with the signs of the start's singular vectors flipped: another start
of the same quality, so its difference shows how far another start alone moves the error.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REAL = ("oll2-gpqa", "oll2-musr", "oll2-math-hard")
ESTIMATE_METHODS = ("tinybenchmarks", "tinybenchmarks-gpirt", "aipw")


def matrices(seeds: int, real: Path | None) -> list[tuple[str, dict]]:
    out = [(f"simulated 300 x 6,000, seed {seed}", {"kind": "bench_irt", "seed": seed}) for seed in range(seeds)]
    out.append(("simulated 350 x 12,000 (MMLU-Pro's shape)", {"kind": "mmlu-pro"}))
    for name in REAL if real else ():
        if (real / name / "responses.npz").is_file():
            out.append((name, {"kind": "real", "path": str(real / name / "responses.npz")}))
    return out


def load(spec: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(training matrix with held-out cells NaN, full 0/1 matrix, held-out mask)."""
    if spec["kind"] == "bench_irt":
        sys.path.insert(0, str(HERE))
        from bench_irt import make_data

        return make_data(300, 6000, 0.1, spec["seed"])
    if spec["kind"] == "mmlu-pro":
        from mdad.data import simulate
        from mdad.data.simulate import SimulationParams

        scores = simulate(seed=0, n_models=400, n_items=12000, n_subtasks=14, params=SimulationParams(floors=(0.1,))).scores[:350]
    else:
        scores = np.load(spec["path"])["scores"]
    scores = scores.astype(np.float64)
    held = np.random.default_rng([0, 7]).random(scores.shape) < 0.1
    return np.where(held, np.nan, scores), scores, held


def loglik(logits: np.ndarray, scores: np.ndarray, cells: np.ndarray) -> float:
    z, y = logits[cells], scores[cells]
    return float(np.mean(y * z - np.logaddexp(0.0, z)))


def child(spec: dict) -> None:
    from threadpoolctl import threadpool_limits

    from mdad.irt import fit_irt

    threadpool_limits(1)
    if spec["kind"] == "assess":
        from mdad.assessment import assess
        from mdad.data.npz import read_npz

        matrix = read_npz(spec["path"])
        if spec.get("flipped"):  # the yardstick: the same fit from another, equally good start
            from mdad.irt import model

            top = model._top_singular
            model._top_singular = lambda matrix, count: tuple(part * sign for part, sign in zip(top(matrix, count), (-1, 1, -1), strict=True))
        found = assess(matrix, spec["method"], spec["size"], runs=spec["runs"])
        print(json.dumps({"errors": (np.abs(found.estimates - found.truths).mean(axis=1) * 100).tolist()}))
        return
    train, scores, held = load(spec)
    start = time.process_time()
    fit = fit_irt(train, dims=10, rng=np.random.default_rng(0))
    cpu = time.process_time() - start
    logits = fit.logits()
    print(
        json.dumps({"cpu": cpu, "train": loglik(logits, scores, ~held & ~np.isnan(scores)), "held": loglik(logits, scores, held & ~np.isnan(scores))})
    )


def run(src: Path, spec: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--former-src", type=Path, required="--child" not in sys.argv)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--real", type=Path, default=None, help="folder of the real datasets (oll2-gpqa, ...)")
    parser.add_argument("--estimates", action="store_true", help="also the IRT methods' estimation error on the real matrices")
    parser.add_argument("--size", type=int, default=50)
    parser.add_argument("--yardstick", action="store_true", help="--estimates also from the start's signs flipped (another equally good start)")
    parser.add_argument("--methods", default=",".join(ESTIMATE_METHODS), help="methods of --estimates")
    parser.add_argument("--runs", type=int, default=20, help="held-out runs of each assessment (--estimates)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    now = HERE.parent / "src"
    print(f"{'matrix':44s} {'CPU former':>10s} {'now':>7s} {'train log-lik former':>21s} {'now':>9s} {'held-out former':>16s} {'now':>9s}")
    for label, spec in matrices(args.seeds, args.real):
        before, after = run(args.former_src, spec), run(now, spec)
        print(
            f"{label:44s} {before['cpu']:9.2f}s {after['cpu']:6.2f}s {before['train']:21.5f} {after['train']:9.5f} "
            f"{before['held']:16.5f} {after['held']:9.5f}",
            flush=True,
        )
    if not args.estimates:
        return
    print(f"\n{'matrix':16s} {'method':22s} {'error former':>12s} {'now':>7s} {'now - former (paired over runs)':>32s}")
    for label, spec in matrices(0, args.real):
        if spec["kind"] != "real":
            continue
        for method in args.methods.split(","):
            task = {"kind": "assess", "path": spec["path"], "method": method, "size": args.size, "runs": args.runs}
            before, after = np.array(run(args.former_src, task)["errors"]), np.array(run(now, task)["errors"])
            diff = after - before
            se = diff.std(ddof=1) / np.sqrt(len(diff))
            if args.yardstick:
                other = np.array(run(now, task | {"flipped": True})["errors"]) - before
                yardstick = f"   start's signs flipped - former: {other.mean():+.3f} +- {other.std(ddof=1) / np.sqrt(len(other)):.3f}"
            else:
                yardstick = ""
            print(
                f"{label:16s} {method:22s} {before.mean():12.3f} {after.mean():7.3f} {diff.mean():+21.3f} +- {se:.3f}{yardstick}",
                flush=True,
            )


if __name__ == "__main__":
    main()
