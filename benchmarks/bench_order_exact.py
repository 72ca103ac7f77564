"""Speed of the exact order probability of the random designs against the grid it replaced, in one process.

Workload like ``mdad estimate`` / ``compare`` on a random micro-benchmark: k items drawn
uniformly, the models ranked by their estimate, and P(order holds) for every neighbouring pair
(``exact_order_probability`` groups the pairs by discordant count d, one posterior per group).
Pools: GPQA (N = 448, the prior from every pair of its models, 100 models estimated) and
MMLU-Pro (N = 12,032; missing answers counted wrong; 31 models). For each size k the two
evaluations are timed on the same groups (CPU time of this process, robust on a shared machine), and the largest difference between them is printed.
The grid (earlier versions): at most 64 cells of m, each at its posterior-weighted centre, and
an even grid of 200 values of M+.

    python benchmarks/bench_order_exact.py
    python benchmarks/bench_order_exact.py --sizes 10,100 --datasets oll2-gpqa
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy.special import gammaln

from mdad.data import read_npz
from mdad.intervals.order import PairPrior, order_posterior

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
M_POINTS, J_POINTS = 64, 200


def log_comb(n, r) -> np.ndarray:
    """log C(n, r), -inf where r < 0 or r > n."""
    n, r = np.broadcast_arrays(np.asarray(n, dtype=np.float64), np.asarray(r, dtype=np.float64))
    ok = (r >= 0) & (r <= n)
    safe_r = np.where(ok, r, 0.0)
    value = gammaln(n + 1) - gammaln(safe_r + 1) - gammaln(np.where(ok, n - r, 0.0) + 1)
    return np.where(ok, value, -np.inf)


def grid_order_posterior(prior: PairPrior, N: int, k: int, d: int, first: np.ndarray) -> np.ndarray:
    """The earlier evaluation: the posterior summed over cells of m and a grid of M+ (for comparison only)."""
    m = np.arange(d, N - (k - d) + 1)
    if d == 0:
        m = m[m >= 1]
    if not len(m):
        return np.zeros(len(first))
    log_like = log_comb(m, np.full_like(m, d)) + log_comb(N - m, np.full_like(m, k - d))
    weights = prior.m_weights(N)[m] * np.exp(log_like - log_like.max())
    support = np.flatnonzero(weights > weights.max() * 1e-12)
    w, values = weights[support[0] : support[-1] + 1], np.arange(support[0], support[-1] + 1) + int(m[0])
    if len(w) > M_POINTS:
        cell = np.minimum(np.arange(len(w)) * M_POINTS // len(w), M_POINTS - 1)
        total = np.bincount(cell, weights=w, minlength=M_POINTS)
        centre = np.bincount(cell, weights=w * values, minlength=M_POINTS)
        here = total > 0
        values, w = np.rint(centre[here] / total[here]).astype(np.int64), total[here]
    width = min(int(values.max()) + 1, J_POINTS)
    j = np.rint(np.linspace(0.0, 1.0, width)[None, :] * values[:, None]).astype(np.int64)
    j = np.where(values[:, None] < J_POINTS, np.arange(width)[None, :], j)
    valid = j <= values[:, None]
    valid[:, 1:] &= j[:, 1:] != j[:, :-1]
    j = np.minimum(j, values[:, None])
    q = prior.share_weights(values, j, valid)
    mm, jj, K = values[:, None, None], j[:, :, None], first[None, None, :]
    like = np.exp(log_comb(jj, K) + log_comb(mm - jj, d - K) - log_comb(mm, np.array(d)))
    joint = (w[:, None] * q)[:, :, None] * like
    total = joint.sum(axis=(0, 1))
    held = (joint * (2 * j > values[:, None])[:, :, None]).sum(axis=(0, 1))
    return np.where(total > 0, held / np.where(total > 0, total, 1.0), 0.0)


def load(name: str, models: int, rng: np.random.Generator) -> tuple[np.ndarray, PairPrior]:
    """0/1 scores (missing answers wrong) of the dataset's models and the pair prior of all of them."""
    scores = np.nan_to_num(read_npz(DATA / name / "responses.npz").scores, nan=0.0)
    prior = PairPrior.from_scores(scores)
    pick = rng.choice(len(scores), size=min(models, len(scores)), replace=False)
    return scores[pick], prior


def groups(scores: np.ndarray, k: int, rng: np.random.Generator) -> dict[int, np.ndarray]:
    """The neighbouring pairs' K+ per discordant count d on k items drawn uniformly."""
    chosen = scores[:, rng.choice(scores.shape[1], size=k, replace=False)]
    order = np.argsort(-chosen.mean(axis=1), kind="stable")
    a, b = chosen[order[:-1]], chosen[order[1:]]
    plus, minus = ((a == 1) & (b == 0)).sum(axis=1), ((a == 0) & (b == 1)).sum(axis=1)
    out: dict[int, list[int]] = {}
    for p, q in zip(plus, minus, strict=True):
        out.setdefault(int(p + q), []).append(int(p))
    return {d: np.unique(K) for d, K in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="oll2-gpqa,mmlu-pro-tiger")
    parser.add_argument("--sizes", default="10,30,100,300,1000")
    parser.add_argument("--models", type=int, default=100)
    args = parser.parse_args()
    print("| dataset | N | k | pairs | groups (d) | median d | grid s | exact s | ratio | largest difference |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets.split(","):
        rng = np.random.default_rng(0)
        scores, prior = load(name, args.models, rng)
        N = scores.shape[1]
        for k in (int(s) for s in args.sizes.split(",")):
            if k >= N:
                continue
            work = groups(scores, k, rng)
            timed = {}
            for label, fn in (("grid", grid_order_posterior), ("exact", order_posterior)):
                start = time.process_time()
                timed[label] = ([fn(prior, N, k, d, K) for d, K in work.items()], time.process_time() - start)
            diff = max(float(np.abs(g - e).max()) for g, e in zip(timed["grid"][0], timed["exact"][0], strict=True))
            ds = np.repeat(list(work), [len(K) for K in work.values()])
            g, e = timed["grid"][1], timed["exact"][1]
            print(
                f"| {name} | {N} | {k} | {len(scores) - 1} | {len(work)} | {int(np.median(ds))} | {g:.3f} | {e:.3f} | {e / g:.0f} | {diff:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
