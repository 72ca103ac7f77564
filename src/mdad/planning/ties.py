"""The tie rule, its one home (docs/plan.md#choose-for-me): a method is named only when, on the same held-out
pairs, it beats both the runner-up and uniform random by more than PLAN_NOISE_SE standard errors of the
paired difference; otherwise the methods it does not beat are tied within noise with it, and the simplest of
them is recommended (random designs before learned ones, then the order of the methods asked)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mdad.defaults import PLAN_NOISE_SE
from mdad.metrics.analytic import has_exact_answer
from mdad.planning.bins import bin_label, bin_lower
from mdad.planning.paired import paired_difference
from mdad.planning.result import BASELINE, PlanRow, items_text
from mdad.planning.rows import Progress, simulated_kwargs
from mdad.planning.simulated import SimulatedPlan, simulated_plan


def settle(
    question: str, rows: list[PlanRow], sims: dict[str, SimulatedPlan], names: list[str], detect: float, options: dict[str, Any], progress: Progress
) -> tuple[str, str, tuple[str, ...]] | None:
    """The rule on paired differences (``detect`` and ``budget``): the leading method (``detect``: the fewest
    items among those needing fewer than uniform random; ``budget``: the highest share) is named only when, at
    its size and on the same held-out pairs, its share beats the runner-up's and uniform random's by more than
    PLAN_NOISE_SE standard errors of the paired difference (two-way bootstrap); otherwise the methods it does
    not beat are tied with it and the simplest of them is recommended. None: nothing simulated to pair with."""
    random_items = rows[0].items
    if question == "detect":
        candidates = sorted(
            (r for r in rows if r.items is not None and r.method != BASELINE and (random_items is None or r.items < random_items)),
            key=lambda r: (r.items, -(r.value - r.random_value), names.index(r.method)),
        )
    else:
        candidates = sorted((r for r in rows if r.method != BASELINE), key=lambda r: (-r.value, names.index(r.method)))
    pairs = next(iter(sims.values())).in_bin if sims else None
    if not candidates or pairs is None:
        return None
    best = candidates[0]
    size = int(best.items)  # type: ignore[arg-type]
    weights = pairs.weights(options["seed"])

    def flags(name: str) -> np.ndarray:
        """Whether each pair was ordered correctly by ``name`` at ``size`` on the same runs (simulated if not yet)."""
        found = sims.get(name)
        if found is None or found.correct is None or size not in found.correct:
            on_runs = progress(f"{name} at {size} items")
            found = simulated_plan(options["matrix"], name, detect=detect, sizes=(size,), on_runs=on_runs, **simulated_kwargs(options))
        assert found.correct is not None
        return found.correct[size]

    mine = flags(best.method)
    tied, margins = [best.method], []
    for other in [BASELINE] + ([candidates[1].method] if len(candidates) > 1 else []):
        difference, se = paired_difference(mine, flags(other), weights)
        beyond = difference > PLAN_NOISE_SE * se
        margins.append(f"minus {other}'s: {difference:+.3f} ± {se:.3f} ({'beyond' if beyond else 'within'} noise)")
        if not beyond:
            tied.append(other)
    label = bin_label(bin_lower(detect))
    beats = f"its share of pairs ordered correctly {', '.join(margins)} (paired difference ± its standard error)"
    if len(tied) == 1:
        return (
            best.method,
            (
                f"Use {best.method}: {items_text(best)} order pairs {label} points apart correctly {best.value:.3f} of the time; "
                f"at that size, on the same held-out pairs, {beats}."
            ),
            (),
        )
    ordered = sorted(tied, key=lambda name: (not has_exact_answer(name), names.index(name)))
    leads = f"needs the fewest items, {items_text(best)}" if question == "detect" else f"has the highest share, {best.value:.3f}"
    sentence = (
        f"These methods are tied within noise: {', '.join(ordered)}; the simplest is {ordered[0]}. {best.method} {leads}, but at "
        f"{best.items} items, on the same held-out pairs, {beats}; beyond noise means by more than {PLAN_NOISE_SE:g} standard errors."
    )
    return ordered[0], sentence, tuple(ordered)
