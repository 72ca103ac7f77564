"""Each method's answer to one question of `plan`: exact for the random designs, simulated on held-out runs
for the others (docs/plan.md#choose-for-me). Every row also carries uniform random's exact answer at its
size and whether its own advantage is beyond the noise of its answer."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from mdad import methods as method_registry
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
from mdad.planning.simulated import SimulatedPlan, floored_se, refined, simulated_mdad_at_size, simulated_plan

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

    rows: list[PlanRow] = []
    sims: dict[str, SimulatedPlan] = {}
    for name in names:
        if has_exact_answer(name):
            found = baseline if as_baseline(name) else exact_smallest_size(matrix, design=name, start=baseline.smallest, **exact)
            items = found.smallest
            random_value = random_at(items, baseline.at_smallest)
            fewer = baseline.smallest is None or (items is not None and items < baseline.smallest)
            beats = items is not None and not as_baseline(name) and fewer and exact_beats(found.at_smallest, random_value, found.pairs)
            rows.append(
                PlanRow(name, True, items, found.at_smallest, found.at_smallest, found.at_smallest, 0.0, random_value, beats, (), found.pairs)
            )
            continue
        ladder = simulated_plan(options["matrix"], name, detect=detect, on_runs=progress(name), **simulated_kwargs(options))
        kwargs = {key: value for key, value in simulated_kwargs(options).items() if key not in ("threshold", "runs")}
        # between the rungs only where it can matter: a method whose bracket starts at or above uniform random's answer
        # needs more items than random whatever lies between; its answer keeps the rungs' bracket
        compete = ladder.bracket is not None and (baseline.smallest is None or ladder.bracket[0] < baseline.smallest)
        on_runs = progress(f"{name}, sizes between rungs")
        sim = refined(ladder, options["matrix"], detect=detect, on_runs=on_runs, **kwargs) if compete else ladder
        sims[name] = sim
        items = sim.smallest
        at = int(np.searchsorted(sim.sizes, items)) if items is not None else len(sim.sizes) - 1
        value, se = float(sim.agreement[at]), held_se(sim, int(sim.sizes[at]), options["seed"])
        random_value = random_at(int(sim.sizes[at]), math.nan)
        fewer = baseline.smallest is None or (items is not None and items < baseline.smallest)
        beats = items is not None and fewer and value - random_value > PLAN_NOISE_SE * se
        rows.append(
            PlanRow(
                name,
                False,
                items,
                value,
                value - PLAN_NOISE_SE * se,
                value + PLAN_NOISE_SE * se,
                se,
                random_value,
                beats,
                tuple(map(int, ladder.sizes)),
                sim.pairs,
                bracket=sim.bracket,
            )
        )
    return rows, sims


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


def size_rows(matrix, names, size, options, progress) -> list[PlanRow]:
    baseline = exact_mdad_at_size(matrix, size=size, design=BASELINE, threshold=options["threshold"], seed=options["seed"])
    rows = []
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
            rows.append(PlanRow(name, True, size, found.mdad, found.mdad, found.mdad, math.nan, baseline.mdad, beats, (), found.pairs, error))
            continue
        a = simulated_mdad_at_size(options["matrix"], name, size=size, on_runs=progress(name), **simulated_kwargs(options)).assessment
        upper_known = not math.isnan(a.mdad_high)
        beats = a.mdad_reached and upper_known and (not baseline.reached or a.mdad_high < baseline.mdad)
        pairs = a.runs * a.targets * (a.targets - 1) // 2
        error = 100.0 * a.metrics["error"]
        rows.append(PlanRow(name, False, size, a.mdad, a.mdad_low, a.mdad_high, math.nan, baseline.mdad, beats, (size,), pairs, error))
    return rows


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
    rows: list[PlanRow] = []
    sims: dict[str, SimulatedPlan] = {}
    for name in names:
        if has_exact_answer(name):
            value = (
                random_value
                if as_baseline(name)
                else exact_agreement_at_size(matrix, detect=detect, size=budget, design=name, seed=options["seed"], part=part)[2]
            )
            beats = not as_baseline(name) and exact_beats(value, random_value, pairs)
            rows.append(PlanRow(name, True, budget, value, value, value, 0.0, random_value, beats, (), pairs))
            continue
        sim = simulated_plan(options["matrix"], name, detect=detect, sizes=(budget,), on_runs=progress(name), **simulated_kwargs(options))
        sims[name] = sim
        value, se = float(sim.agreement[0]), held_se(sim, budget, options["seed"])
        beats = value - random_value > PLAN_NOISE_SE * se
        rows.append(
            PlanRow(name, False, budget, value, value - PLAN_NOISE_SE * se, value + PLAN_NOISE_SE * se, se, random_value, beats, (budget,), sim.pairs)
        )
    return rows, sims
