"""Peak memory and time of `mdad plan --data` and `mdad compare --csv` as the number of models grows (pairs grow with its square).

    python benchmarks/bench_plan_memory.py [--models 1000,2500,10000] [--items 30000] [--size 100] [--folder /tmp/mdad-bench]

For each number of models, a 0/1 matrix is simulated (a one-dimensional logistic model: ability
minus difficulty, seeded) and saved as an npz; then `mdad plan --data FILE --size 100` and
`mdad plan --data FILE --detect 2` run in their own process (``--commands`` picks them), and the script prints each one's peak
resident memory (from the operating system's accounting of that child) and wall time, next to
the size of the matrix itself (models x items x 4 bytes, as mdad holds it) and the number of pairs.
Memory that does not grow with the number of pairs is the goal: pairs are processed in blocks
(`mdad.metrics.analytic.iter_pair_stats`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def simulate_file(path: Path, n_models: int, n_items: int, seed: int = 0) -> None:
    """A 0/1 matrix saved as uint8 (mdad reads any numeric dtype), built in blocks of models."""
    if path.is_file():
        return
    rng = np.random.default_rng(seed)
    ability = np.sort(rng.normal(0, 1, n_models))
    difficulty = rng.normal(0, 1.5, n_items)
    scores = np.empty((n_models, n_items), dtype=np.uint8)
    for start in range(0, n_models, 500):
        stop = min(n_models, start + 500)
        p = 1 / (1 + np.exp(-(ability[start:stop, None] - difficulty[None, :])))
        scores[start:stop] = rng.random(p.shape) < p
    np.savez(
        path, scores=scores, models=np.array([f"model-{i:05d}" for i in range(n_models)]), items=np.array([f"item-{j:05d}" for j in range(n_items)])
    )


def measure(args: list[str]) -> tuple[float, float, str]:
    """(peak resident memory in GB, wall seconds, first line of output) of one command in its own process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mdad.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200"}
    )
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own accounting (ru_maxrss in kB on Linux)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"mdad {' '.join(args)} failed:\n{out}")
    lines = [line for line in out.splitlines() if line.strip()]
    return usage.ru_maxrss / 1e6, elapsed, lines[0] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="1000,2500,10000")
    parser.add_argument("--items", type=int, default=30_000)
    parser.add_argument("--folder", default="/tmp/mdad-bench")
    parser.add_argument(
        "--commands",
        default="size,detect",
        help="size (plan --size SIZE), detect (plan --detect 2), compare (compare --size SIZE --csv FILE), comma-separated",
    )
    parser.add_argument("--size", default="100", help="the size asked by plan --size (its time grows with it)")
    args = parser.parse_args()
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    print("| models x items | pairs | matrix (float32) | command | peak memory | time |")
    print("|---|---|---|---|---|---|")
    for n_models in (int(n) for n in args.models.split(",")):
        path = folder / f"sim-{n_models}x{args.items}.npz"
        simulate_file(path, n_models, args.items)
        pairs = n_models * (n_models - 1) // 2
        matrix_gb = n_models * args.items * 4 / 1e9
        csv = folder / f"pairs-{n_models}x{args.items}.csv"
        chosen = {
            "size": ["plan", "--size", args.size],
            "detect": ["plan", "--detect", "2"],
            "compare": ["compare", "--size", args.size, "--csv", str(csv), "--top", "5"],
        }
        for command in (chosen[c] for c in args.commands.split(",")):
            peak, seconds, first = measure([command[0], "--data", str(path), *command[1:]])
            csv.unlink(missing_ok=True)
            print(
                f"| {n_models:,} x {args.items:,} | {pairs:,} | {matrix_gb:.2f} GB | {' '.join(command)} | {peak:.2f} GB | {seconds:.0f} s |",
                flush=True,
            )
            print(f"  {first[:160]}", file=sys.stderr)


if __name__ == "__main__":
    main()
