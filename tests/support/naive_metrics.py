"""Straightforward per-pair loops of the metrics: the independent reference for tests and benchmarks."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np


def naive_pairs(estimates_run, truth_run):
    """(agree, |true diff| in points) for each pair i < j of one run, by explicit loops."""
    out = []
    n = len(estimates_run)
    for i in range(n):
        for j in range(i + 1, n):
            de = estimates_run[i] - estimates_run[j]
            dt = truth_run[i] - truth_run[j]
            agree = de != 0 and (de > 0) == (dt > 0) and dt != 0
            out.append((agree, abs(dt) * 100))
    return out


def naive_curve(estimates, truth, bin_width=0.5):
    """Agreement rate per 0.5-point bin: dict lower edge -> (pairs, agreed)."""
    bins = defaultdict(lambda: [0, 0])
    for run in range(len(estimates)):
        for agree, diff in naive_pairs(estimates[run], truth[run]):
            edge = math.floor(diff / bin_width + 1e-9) * bin_width
            bins[edge][0] += 1
            bins[edge][1] += int(agree)
    return dict(sorted(bins.items()))


def naive_mdad(estimates, truth, threshold=0.8, bin_width=0.5):
    """The first bin (ascending) whose agreement rate reaches the threshold, or None."""
    for edge, (pairs, agreed) in naive_curve(estimates, truth, bin_width).items():
        if agreed / pairs >= threshold:
            return edge
    return None


def naive_kendall_tau_b(x, y):
    """Kendall's tau-b by counting concordant, discordant and tied pairs."""
    n = len(x)
    conc = disc = tie_x = tie_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tie_x += 1
            elif dy == 0:
                tie_y += 1
            elif dx == dy:
                conc += 1
            else:
                disc += 1
    denom = math.sqrt((conc + disc + tie_x) * (conc + disc + tie_y))
    return (conc - disc) / denom if denom else float("nan")


def naive_bootstrap_interval(agreements, rng, n_boot=1000, confidence=0.95):
    """Percentile interval of a bin's agreement rate by resampling its pairs one by one."""
    agreements = np.asarray(agreements, float)
    means = [rng.choice(agreements, size=len(agreements), replace=True).mean() for _ in range(n_boot)]
    alpha = (1 - confidence) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))
