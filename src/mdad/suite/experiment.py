"""The paper's protocol on a suite average (``mdad run --suite``): held-out targets, the budget split by each
allocation, and how well the average of the targets' estimates ranks them.

Per run: ``targets`` of the models in every benchmark are held out (drawn from the seed and the run), the
allocation is computed and the items chosen from the other models (the sources), and the targets are estimated
with the suite micro-benchmark (mdad.suite.estimation). Per allocation, pooled over runs: the average's mean
absolute error and RMSE (points), Kendall tau, MDAD from the targets' pairs with its bootstrap interval (runs
resampled), and how often the average's intervals cover the targets' true averages, overall and in the top fifth
of the suite scores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_LEVEL, DEFAULT_TARGETS, DEFAULT_THRESHOLD, EXPERIMENT_RUNS
from mdad.errors import MdadError
from mdad.metrics.estimation import kendall_tau
from mdad.metrics.pairwise import agreement_curve, mdad_from_curve, pair_differences
from mdad.seeding import rng_for
from mdad.suite.allocation import ALLOCATIONS, check_allocation
from mdad.suite.micro import select_suite
from mdad.suite.suite import Suite

TOP_SHARE = 0.2  # the top fifth of the suite scores, where intervals are checked apart


def assessed(method: str) -> bool:
    """Whether a suite of ``method`` is assessed on held-out runs in each run: every method but uniform random items,
    whose intervals and optimal allocation are exact."""
    return method_registry.get(method).design != "uniform"


def held_out(suite: Suite, targets: np.ndarray) -> tuple[Suite, dict[str, ResponseMatrix]]:
    """The suite of every model but ``targets`` (indices of ``suite.models``, in every benchmark) and the targets'
    results per benchmark."""
    sources, results = {}, {}
    for b, (name, matrix) in enumerate(suite.benchmarks.items()):
        rows = suite.rows[targets, b]
        keep = np.ones(matrix.n_models, dtype=bool)
        keep[rows] = False
        sources[name] = matrix.take(models=keep)
        results[name] = matrix.take(models=rows)
    return Suite.of(sources, weights=suite.weights, baselines=suite.baselines), results


@dataclass(frozen=True, eq=False)
class SuiteRun:
    """``run_suite``'s answer: ``summary`` (one row per allocation), ``runs`` (one row per run and allocation),
    ``benchmarks`` (one row per allocation and benchmark: its median items, its estimates' mean absolute error in
    points and Kendall tau) and ``curves`` (the average's agreement per 0.5-point bin of true difference, per
    allocation: diff_low, pairs, agreement)."""

    summary: pd.DataFrame
    runs: pd.DataFrame
    benchmarks: pd.DataFrame
    curves: pd.DataFrame


def run_suite(
    suite: Suite,
    budget: int,
    *,
    method: str = "random",
    runs: int = EXPERIMENT_RUNS,
    targets: int = DEFAULT_TARGETS,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    threshold: float = DEFAULT_THRESHOLD,
    assess_runs: int = ASSESS_RUNS,
    allocations: tuple[str, ...] = ALLOCATIONS,
    on_run: Callable[[int], None] | None = None,
) -> SuiteRun:
    """The suite average of ``budget`` items chosen with ``method``, on held-out targets, for each of ``allocations``;
    ``on_run`` is called with each finished run's number. A method other than uniform random items (whose intervals
    and optimal allocation are exact) is assessed on ``assess_runs`` held-out runs of each run's sources per
    benchmark, as ``mdad select`` does: they calibrate its intervals and measure its optimal allocation.

    Examples
    --------
    >>> import mdad
    >>> from mdad.suite.experiment import run_suite
    >>> result = run_suite(mdad.Suite.load("gpqa,musr,math-hard"), 300, runs=5)
    >>> list(result.summary["allocation"])
    ['equal', 'proportional', 'optimal']
    """
    complete = np.flatnonzero(suite.complete)
    if not 2 <= targets <= len(complete) - 2:
        raise MdadError(f"The targets must number from 2 to {len(complete) - 2} (the models in every benchmark, less two sources), got {targets}.")
    for allocation in allocations:
        check_allocation(suite, budget, allocation, method=method, runs=assess_runs)
    scores = suite.scores()
    truth = scores["suite"]
    top = float(np.quantile(truth.dropna(), 1 - TOP_SHARE))
    keys = ("est", "true", "low", "high", "counts", *(f"est_{n}" for n in suite.names), *(f"true_{n}" for n in suite.names))
    found: dict[str, dict[str, list]] = {a: {key: [] for key in keys} for a in allocations}
    for run in range(runs):
        chosen_targets = np.sort(rng_for(seed, "suite", "targets", run).choice(complete, targets, replace=False))
        sources, results = held_out(suite, chosen_targets)
        names = suite.models[chosen_targets]
        for allocation in allocations:
            chosen = select_suite(
                sources,
                budget,
                method=method,
                allocation=allocation,
                runs=assess_runs if assessed(method) else 0,
                seed=int(rng_for(seed, "suite", "items", run).integers(2**31)),
            ).chosen
            frame = chosen.estimate(results, level=level).to_frame().set_index("model").loc[names]
            for key, column in (("est", "suite"), ("low", "suite_low"), ("high", "suite_high")):
                found[allocation][key].append(frame[column].to_numpy())
            found[allocation]["true"].append(truth.loc[names].to_numpy())
            found[allocation]["counts"].append([part.size for part in chosen.parts.values()])
            for name in suite.names:
                found[allocation][f"est_{name}"].append(frame[name].to_numpy())
                found[allocation][f"true_{name}"].append(scores[name].loc[names].to_numpy())
        if on_run is not None:
            on_run(run + 1)
    summary: list[dict] = []
    per_run: list[dict] = []
    per_benchmark: list[dict] = []
    curves: list[dict] = []
    for allocation, arrays in found.items():
        est, true, low, high = (np.array(arrays[k], dtype=np.float64) for k in ("est", "true", "low", "high"))
        error = 100 * np.abs(est - true)
        de, dt = pair_differences(est), pair_differences(true)
        curve = agreement_curve((np.sign(de) == np.sign(dt)) & (dt != 0), 100 * np.abs(dt))
        mdad = mdad_from_curve(curve, threshold=threshold, rng=rng_for(seed, "suite", "bootstrap", allocation), targets=targets)
        tau = kendall_tau(est, true)
        inside = (low <= true) & (true <= high)
        in_top = true >= top
        counts = np.array(arrays["counts"])
        summary.append(
            {
                "allocation": allocation,
                **{f"items_{name}": int(np.median(counts[:, b])) for b, name in enumerate(suite.names)},
                "error": float(error.mean()),
                "rmse": float(np.sqrt((error**2).mean())),
                "kendall_tau": tau.mean,
                "mdad": mdad.value,
                "mdad_low": mdad.low,
                "mdad_high": mdad.high,
                "coverage": float(inside.mean()),
                "coverage_top_fifth": float(inside[in_top].mean()) if in_top.any() else float("nan"),
                "top_fifth_targets": int(in_top.sum()),
            }
        )
        curves.extend(
            {"allocation": allocation, "diff_low": float(lo), "pairs": int(n), "agreement": float(rate)}
            for lo, n, rate in zip(curve.lower, curve.pairs, curve.rate, strict=True)
        )
        for b, name in enumerate(suite.names):
            est_b, true_b = (np.array(arrays[f"{k}_{name}"], dtype=np.float64) for k in ("est", "true"))
            per_benchmark.append(
                {
                    "allocation": allocation,
                    "benchmark": name,
                    "items": int(np.median(counts[:, b])),
                    "error": float(100 * np.abs(est_b - true_b).mean()),
                    "kendall_tau": kendall_tau(est_b, true_b).mean,
                }
            )
        for run in range(runs):
            per_run.append(
                {
                    "allocation": allocation,
                    "run": run,
                    "error": float(error[run].mean()),
                    "kendall_tau": float(tau.per_run[run]),
                    "coverage": float(inside[run].mean()),
                }
            )
    return SuiteRun(pd.DataFrame(summary), pd.DataFrame(per_run), pd.DataFrame(per_benchmark), pd.DataFrame(curves))
