"""Multidimensional 2PL fit: mdad.irt against py-irt (the tinyBenchmarks reference trainer).

Both fit D=10 to the same simulated 300 x 6,000 0/1 matrix with 10% of the cells held out
at random; the script prints each fit time (wall clock and process CPU: on a shared machine
CPU time is the fair measure), the ratio, and the mean held-out log-likelihood per cell of
each fit (higher is better). mdad is timed with 1 and 2 BLAS threads, py-irt with 1 torch thread by default.

py-irt pins old libraries, so it runs in its own environment through a subprocess: give
that environment's python with ``--pyirt-python`` or ``MDAD_PYIRT_PYTHON``. Its 2,000
epochs take about 50 CPU minutes at 300 x 6,000; ``--epochs N`` trains fewer and
extrapolates the time of 2,000 (full-batch SVI: every epoch costs the same), and
``--pyirt-result FILE`` keeps the fit in FILE and reuses it on the next call when it was made
on the same data and settings. Without a py-irt python the script reports mdad alone.

    python benchmarks/bench_irt.py --pyirt-python /path/to/venv/bin/python --pyirt-result pyirt.npz
    python benchmarks/bench_irt.py --smoke

mdad's fits with 1 and 2 BLAS threads are timed against each other, paired in this process; py-irt's
time is its own process's, so its ratio to mdad is not paired (run both on a quiet machine).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import suite

from mdad.data import simulate_with_truth
from mdad.irt import fit_irt

HERE = Path(__file__).resolve().parent
REFERENCE_EPOCHS = 2000  # what tinyBenchmarks trains py-irt for


def make_data(n_models: int, n_items: int, holdout: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(training matrix with held-out cells set to NaN, full 0/1 matrix, held-out mask)."""
    matrix, _ = simulate_with_truth(n_models=n_models, n_items=n_items, n_subtasks=6, dims=4, seed=seed, with_option_probs=False)
    scores = matrix.scores.astype(np.float64)
    held = np.random.default_rng([seed, 7]).random(scores.shape) < holdout
    train = np.where(held, np.nan, scores)
    return train, scores, held


def heldout_loglik(logits: np.ndarray, scores: np.ndarray, held: np.ndarray) -> float:
    """Mean Bernoulli log-likelihood of the held-out cells under the fitted logits."""
    z, y = logits[held], scores[held]
    return float(np.mean(y * z - np.logaddexp(0.0, z)))


def run_mdad(train: np.ndarray, dims: int, threads: int, seed: int):
    """The fit with ``threads`` BLAS threads."""
    return fit_irt(train, dims=dims, rng=np.random.default_rng(seed), threads=threads)


def run_pyirt(train: np.ndarray, python: str, result: Path | None, dims: int, epochs: int, threads: int, seed: int) -> dict:
    """py-irt's fitted logits, training time, epochs done and error, from the cache file when
    it was made on the same data and settings."""
    key = hashlib.sha256(np.ascontiguousarray(train).tobytes()).hexdigest()[:16] + f"-{dims}-{epochs}-{seed}"
    if result is not None and result.is_file():
        cached = np.load(result)
        if str(cached["key"]) == key:
            return {name: cached[name] for name in cached.files} | {"cached": True}
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "train.npz", Path(tmp) / "fit.npz"
        np.savez(data, responses=train)
        subprocess.run(
            [
                python,
                str(HERE / "pyirt_fit.py"),
                str(data),
                str(out),
                "--dims",
                str(dims),
                "--epochs",
                str(epochs),
                "--threads",
                str(threads),
                "--seed",
                str(seed),
            ],
            check=True,
        )
        fit = np.load(out)
        ability, diff, disc = fit["ability"], fit["diff"], fit["disc"]
        found = {
            "key": key,
            "logits": np.einsum("jd,ijd->ij", disc, ability[:, None, :] - diff[None, :, :]),
            "seconds": fit["seconds"],
            "cpu_seconds": fit["cpu_seconds"],
            "epochs": fit["epochs"],
            "error": fit["error"],
        }
    if result is not None:
        np.savez(result, **found)
    return found | {"cached": False}


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--models", type=int, default=300)
    parser.add_argument("--items", type=int, default=6000)
    parser.add_argument("--dims", type=int, default=10)
    parser.add_argument("--holdout", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1, help="paired repeats of mdad's fit with 1 and 2 BLAS threads")
    parser.add_argument("--epochs", type=int, default=REFERENCE_EPOCHS, help="py-irt epochs (the reference uses 2000)")
    parser.add_argument("--pyirt-python", default=os.environ.get("MDAD_PYIRT_PYTHON"))
    parser.add_argument("--pyirt-result", type=Path, default=None)
    parser.add_argument("--pyirt-threads", type=int, default=1)
    parser.add_argument("--pyirt-seed", type=int, default=42, help="the reference's seed is 42")
    args = parser.parse_args()
    if args.smoke:
        args.models, args.items, args.dims, args.pyirt_python = 40, 200, 3, None

    train, scores, held = make_data(args.models, args.items, args.holdout, args.seed)
    print(f"data: {args.models} models x {args.items} items, D={args.dims}, {held.sum()} held-out cells")
    fits = {}
    with suite.Session("bench_irt", args) as session:
        timing = suite.paired(
            lambda: fits.__setitem__(1, run_mdad(train, args.dims, 1, args.seed)),
            lambda: fits.__setitem__(2, run_mdad(train, args.dims, 2, args.seed)),
            args.repeats,
            warmup=args.smoke,
        )
        for threads, spent in ((1, timing.baseline), (2, timing.candidate)):
            fit = fits[threads]
            loglik = heldout_loglik(fit.logits(), scores, held)
            session.add(f"mdad.irt, {threads} BLAS threads", wall_s=spent.wall, cpu_s=spent.cpu, iterations=fit.iterations, heldout_loglik=loglik)
            print(
                f"mdad.irt ({threads} BLAS thread{'s' if threads > 1 else ''}): {spent.wall:.2f} s ({spent.cpu:.2f} s CPU), "
                f"{fit.iterations} L-BFGS iterations, held-out log-lik {loglik:.4f}"
            )
        session.results[-1] |= {"cpu_ratio": timing.cpu_ratio, "wall_ratio": timing.wall_ratio}
        print(f"2 threads against 1, paired: {timing.wall_ratio:.2f}x the wall time, {timing.cpu_ratio:.2f}x the CPU time")
        mdad_ll = heldout_loglik(fits[1].logits(), scores, held)

        if not args.pyirt_python:
            print("py-irt: skipped (give --pyirt-python or MDAD_PYIRT_PYTHON)")
            return
        found = run_pyirt(train, args.pyirt_python, args.pyirt_result, args.dims, args.epochs, args.pyirt_threads, args.pyirt_seed)
        seconds, cpu = float(found["seconds"]), float(found["cpu_seconds"])
        pyirt_ll = heldout_loglik(found["logits"], scores, held)
        stopped = f"; stopped by an error after {int(found['epochs'])} epochs: {found['error']}" if str(found["error"]) else ""
        print(
            f"py-irt ({int(found['epochs'])} of {args.epochs} epochs, seed {args.pyirt_seed}, {args.pyirt_threads} "
            f"thread{'s' if args.pyirt_threads > 1 else ''}{', cached' if found['cached'] else ''}): {seconds:.1f} s "
            f"({cpu:.1f} s CPU), held-out log-lik {pyirt_ll:.4f}{stopped}"
        )
        epochs_done = int(found["epochs"])
        if 0 < epochs_done < REFERENCE_EPOCHS:
            # SVI is full batch: every epoch costs the same, so the reference run's time scales.
            cpu, seconds = cpu / epochs_done * REFERENCE_EPOCHS, seconds / epochs_done * REFERENCE_EPOCHS
            print(f"py-irt at the reference's {REFERENCE_EPOCHS} epochs, extrapolated: {seconds:.0f} s ({cpu:.0f} s CPU)")
        session.add(
            "py-irt",
            wall_s=seconds,
            cpu_s=cpu,
            epochs=epochs_done,
            extrapolated=0 < epochs_done < REFERENCE_EPOCHS,
            heldout_loglik=pyirt_ll,
            cpu_ratio_to_mdad=cpu / timing.baseline.cpu,
        )
        print(
            f"speed-up, 1 thread each: {cpu / timing.baseline.cpu:.1f}x in CPU time, {seconds / timing.baseline.wall:.1f}x in wall time; "
            f"held-out log-lik mdad - py-irt ({epochs_done} epochs) = {mdad_ll - pyirt_ll:+.4f}"
        )


if __name__ == "__main__":
    main()
