"""Monte Carlo reference for the analytic curves: many draws of the real selection methods, vectorised."""

from __future__ import annotations

import numpy as np

from mdad import methods
from mdad.methods import SourceView
from mdad.metrics.pairwise import bin_of


def draw_indicators(matrix, design: str, k: int, runs: int, seed: int) -> np.ndarray:
    """runs x items 0/1: the items each run's micro-benchmark holds, drawn by the design's own select()."""
    view = SourceView.from_arrays(matrix.scores[:2], subtasks=matrix.subtasks)
    method = methods.get(design)
    rng = np.random.default_rng(seed)
    chosen = np.zeros((runs, matrix.n_items), dtype=np.float64)
    for r in range(runs):
        chosen[r, method.select(view, k, rng).items] = 1.0
    return chosen


def simulated_curve(matrix, design: str, k: int, runs: int, seed: int, first, second, bin_width: float = 0.5):
    """Per-bin agreement of the simulated micro-benchmarks over the pairs (first, second).

    Returns (bins, mean rate over runs, standard error over runs, pairs per bin); the truth is
    each pair's accuracy on all items (the full pool), ties disagree.
    """
    scores = matrix.scores.astype(np.float64)
    truth = scores.sum(axis=1)
    dt = truth[first] - truth[second]
    bins = bin_of(100.0 * dt / matrix.n_items, bin_width)
    n_bins = int(bins.max()) + 1
    pairs = np.bincount(bins, minlength=n_bins)
    rates = np.zeros((runs, n_bins))
    chunk = max(1, 2_000_000 // max(len(first), 1))
    for start in range(0, runs, chunk):
        counts = draw_indicators(matrix, design, k, min(chunk, runs - start), seed + start) @ scores.T
        de = counts[:, first] - counts[:, second]
        agree = (np.sign(de) == np.sign(dt)[None, :]) & (de != 0)
        flat = (np.arange(len(agree))[:, None] * n_bins + bins[None, :]).ravel()
        got = np.bincount(flat, weights=agree.ravel(), minlength=len(agree) * n_bins).reshape(len(agree), n_bins)
        rates[start : start + len(agree)] = got / np.maximum(pairs, 1)
    keep = pairs > 0
    mean = rates.mean(axis=0)
    se = rates.std(axis=0, ddof=1) / np.sqrt(runs)
    return np.flatnonzero(keep) * bin_width, mean[keep], se[keep], pairs[keep]


def simulated_pairs(rng, n: int, N: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of models of a population with near-duplicates: a third differ on 1-10 items, split anyhow;
    the rest on 40-120 items, split close to half (as on leaderboards). Returns (M+, M-)."""
    close = rng.random(n) < 1 / 3
    m = np.where(close, rng.integers(1, 11, n), rng.integers(40, 121, n))
    share = np.where(close, rng.uniform(size=n), rng.beta(15, 15, size=n))
    plus = rng.binomial(m, share)
    return plus, m - plus
