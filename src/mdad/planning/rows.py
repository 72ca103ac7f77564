"""Each method's answer to one question of `plan`: exact for the random designs, simulated on held-out runs
for the others (docs/plan.md#choose-for-me). Every row also carries uniform random's exact answer at its
size and whether its own advantage is beyond the noise of its answer."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from mdad import methods as method_registry
from mdad.assessment import HeldOutRuns, held_out_runs_of, size_metrics
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import PLAN_NOISE_SE
from mdad.metrics.analytic import has_exact_answer
from mdad.planning.exact import (
    check_pairs,
    exact_agreement_at_size,
    exact_estimation_error,
    exact_mdad_at_size,
    exact_smallest_size,
    pairs_in_bin,
)
from mdad.planning.paired import bootstrap_se
from mdad.planning.result import BASELINE, PlanRow
from mdad.planning.simulated import SimulatedPlan, all_refined, floored_se, plan_ladder, simulated_plans

Progress = Callable[[str], Callable[[float], None] | None]  # a simulation's label -> its progress callback


def simulated_kwargs(options: dict) -> dict:
    return {key: options[key] for key in ("threshold", "runs", "seed", "workers", "targets_from", "scheduler")}


def detect_rows(matrix, names, detect, options, progress) -> tuple[list[PlanRow], dict[str, SimulatedPlan]]:
    check_pairs(matrix)
    lower, part = pairs_in_bin(matrix, detect)  # once: every exact answer below reads these pairs
    exact = {"detect": detect, "threshold": options["threshold"], "seed": options["seed"], "part": part}
    baseline = exact_smallest_size(matrix, design=BASELINE, **exact)

    def random_at(items: int | None, fallback: float) -> float:
        """Uniform random's exact probability for the bin's pairs at ``items`` (``fallback`` without a size)."""
        return fallback if items is None else exact_agreement_at_size(matrix, detect=lower, size=items, seed=options["seed"], part=part)[2]

    rows: dict[str, PlanRow] = {}
    for name in [n for n in names if has_exact_answer(n)]:
        found = baseline if as_baseline(name) else exact_smallest_size(matrix, design=name, start=baseline.smallest, **exact)
        items = found.smallest
        random_value = random_at(items, baseline.at_smallest)
        fewer = baseline.smallest is None or (items is not None and items < baseline.smallest)
        beats = items is not None and not as_baseline(name) and fewer and exact_beats(found.at_smallest, random_value, found.pairs)
        rows[name] = PlanRow(name, True, items, found.at_smallest, found.at_smallest, found.at_smallest, 0.0, random_value, beats, (), found.pairs)
    simulated = tuple(n for n in names if not has_exact_answer(n))
    if not simulated:
        return [rows[name] for name in names], {}
    label = simulated[0] if len(simulated) == 1 else f"{len(simulated)} methods"
    sizes = plan_ladder(options["matrix"].n_items, baseline.smallest)  # up to uniform random's answer: a method needing more is not a candidate
    ladders = simulated_plans(options["matrix"], simulated, detect=detect, sizes=sizes, on_runs=progress(label), **simulated_kwargs(options))
    kwargs = {key: value for key, value in simulated_kwargs(options).items() if key not in ("threshold", "runs")}
    contenders = {name: ladders[name] for name in contending(ladders, baseline.smallest)}
    label = next(iter(contenders)) if len(contenders) == 1 else f"{len(contenders)} methods"
    sims = {**ladders, **all_refined(contenders, options["matrix"], detect=detect, on_runs=progress(f"{label}, sizes between rungs"), **kwargs)}
    for name in simulated:
        sim = sims[name]
        items = sim.smallest
        at = int(np.searchsorted(sim.sizes, items)) if items is not None else len(sim.sizes) - 1
        value, se = float(sim.agreement[at]), held_se(sim, int(sim.sizes[at]), options["seed"])
        random_value = random_at(int(sim.sizes[at]), math.nan)
        fewer = baseline.smallest is None or (items is not None and items < baseline.smallest)
        beats = items is not None and fewer and value - random_value > PLAN_NOISE_SE * se
        rows[name] = PlanRow(
            name,
            False,
            items,
            value,
            value - PLAN_NOISE_SE * se,
            value + PLAN_NOISE_SE * se,
            se,
            random_value,
            beats,
            tuple(map(int, ladders[name].sizes)),
            sim.pairs,
            bracket=sim.bracket,
        )
    return [rows[name] for name in names], sims


def contending(ladders: dict[str, SimulatedPlan], random_items: int | None) -> list[str]:
    """The methods whose sizes between the rungs can matter, in order: a bracket (lo, hi] must start below uniform
    random's answer (otherwise the method needs more items than random whatever lies between), and below the
    second smallest answer any method can be sure of (the smallest rung reaching the threshold): a method whose
    answer must exceed two others' can be neither the leader nor the runner-up of the tie rule. The others keep
    the rungs' bracket."""
    sure = sorted(plan.smallest for plan in ladders.values() if plan.smallest is not None)
    second = sure[1] if len(sure) > 1 else None
    return [
        name
        for name, plan in ladders.items()
        if plan.bracket is not None and (random_items is None or plan.bracket[0] < random_items) and (second is None or plan.bracket[0] < second)
    ]


def held_se(sim: SimulatedPlan, size: int, seed: int) -> float:
    """The standard error of a simulated share at ``size`` that holds when runs share targets: the larger of
    the two-way bootstrap over runs and models (mdad.planning.paired) and the between-runs error, never below
    the binomial error of the pairs."""
    at = int(np.searchsorted(sim.sizes, size))
    se = floored_se(float(sim.agreement[at]), float(sim.stderr[at]), sim.pairs)
    if sim.in_bin is None or sim.correct is None:
        return se
    return max(se, bootstrap_se(sim.correct[size], sim.in_bin.weights(seed)))


def as_baseline(name: str) -> bool:
    """Whether the method ``name`` declares the baseline's exact design (uniform random): its answers are the baseline's."""
    design = method_registry.METHODS.get(name).exact_design()
    return design is not None and design == method_registry.METHODS.get(BASELINE).exact_design()


def exact_beats(value: float, random_value: float, pairs: int) -> bool:
    """Whether an exact design's share beats uniform random's: exact for the pairs at hand, but those
    pairs are a finite sample, so the advantage must exceed PLAN_NOISE_SE binomial standard errors
    of the share (docs/plan.md)."""
    return value - random_value > PLAN_NOISE_SE * floored_se(value, 0.0, pairs)


def size_rows(matrix, names, size, options, progress) -> tuple[list[PlanRow], dict[str, HeldOutRuns]]:
    """Each method's MDAD at ``size`` (exact, or from held-out runs as ``mdad.assess`` reports it), and the held-out
    runs of the simulated methods and of uniform random (simulated beside them, for the tie rule's paired
    differences: :func:`mdad.planning.ties.settle_size`)."""
    baseline = exact_mdad_at_size(matrix, size=size, design=BASELINE, threshold=options["threshold"], seed=options["seed"])
    simulated = tuple(n for n in names if not has_exact_answer(n))
    runs_of: dict[str, HeldOutRuns] = {}
    if simulated:
        label = simulated[0] if len(simulated) == 1 else f"{len(simulated)} methods"
        kwargs = {key: value for key, value in simulated_kwargs(options).items() if key != "threshold"}
        runs_of = held_out_runs_of(options["matrix"], (*simulated, BASELINE), (size,), on_runs=progress(label), **kwargs)
    rows: dict[str, PlanRow] = {}
    for name in names:
        if has_exact_answer(name):
            found = (
                baseline
                if as_baseline(name)
                else exact_mdad_at_size(matrix, size=size, design=name, threshold=options["threshold"], seed=options["seed"])
            )
            smaller = not as_baseline(name) and found.reached and (not baseline.reached or found.mdad < baseline.mdad)
            beats = smaller and _exact_beats_in_bin(matrix, found.mdad, size, name, options["seed"])
            error = exact_estimation_error(matrix, size) if name == BASELINE else math.nan
            rows[name] = PlanRow(name, True, size, found.mdad, found.mdad, found.mdad, math.nan, baseline.mdad, beats, (), found.pairs, error)
            continue
        found_runs = runs_of[name]
        m = size_metrics(found_runs, name, size, threshold=options["threshold"], seed=options["seed"])
        mdad, low, high = float(m["mdad"]), float(m["mdad_low"]), float(m["mdad_high"])
        beats = not math.isnan(mdad) and not math.isnan(high) and (not baseline.reached or high < baseline.mdad)
        runs, targets = found_runs.truths.shape
        rows[name] = PlanRow(
            name, False, size, mdad, low, high, math.nan, baseline.mdad, beats, (size,), runs * targets * (targets - 1) // 2, 100.0 * m["error"]
        )
    return [rows[name] for name in names], runs_of


def _exact_beats_in_bin(matrix: ResponseMatrix, edge: float, size: int, design: str, seed: int) -> bool:
    """Whether ``design``'s smaller MDAD is beyond noise: in the bin where it crosses, its share of pairs
    ordered correctly must exceed uniform random's at the same size by the rule of :func:`exact_beats`."""
    _, part = pairs_in_bin(matrix, edge)
    _, pairs, value = exact_agreement_at_size(matrix, detect=edge, size=size, design=design, seed=seed, part=part)
    random_value = exact_agreement_at_size(matrix, detect=edge, size=size, design=BASELINE, seed=seed, part=part)[2]
    return exact_beats(value, random_value, pairs)


def budget_rows(matrix, names, detect, budget, options, progress) -> tuple[list[PlanRow], dict[str, SimulatedPlan]]:
    check_pairs(matrix)
    _, part = pairs_in_bin(matrix, detect)
    lower, pairs, random_value = exact_agreement_at_size(matrix, detect=detect, size=budget, design=BASELINE, seed=options["seed"], part=part)
    rows: dict[str, PlanRow] = {}
    for name in [n for n in names if has_exact_answer(n)]:
        value = (
            random_value
            if as_baseline(name)
            else exact_agreement_at_size(matrix, detect=detect, size=budget, design=name, seed=options["seed"], part=part)[2]
        )
        beats = not as_baseline(name) and exact_beats(value, random_value, pairs)
        rows[name] = PlanRow(name, True, budget, value, value, value, 0.0, random_value, beats, (), pairs)
    simulated = tuple(n for n in names if not has_exact_answer(n))
    label = simulated[0] if len(simulated) == 1 else f"{len(simulated)} methods"
    sims = {}
    if simulated:
        sims = simulated_plans(options["matrix"], simulated, detect=detect, sizes=(budget,), on_runs=progress(label), **simulated_kwargs(options))
    for name, sim in sims.items():
        value, se = float(sim.agreement[0]), held_se(sim, budget, options["seed"])
        beats = value - random_value > PLAN_NOISE_SE * se
        low, high = value - PLAN_NOISE_SE * se, value + PLAN_NOISE_SE * se
        rows[name] = PlanRow(name, False, budget, value, low, high, se, random_value, beats, (budget,), sim.pairs)
    return [rows[name] for name in names], sims
