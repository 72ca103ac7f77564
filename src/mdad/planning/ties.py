"""The tie rule, its one home (docs/plan.md#choose-for-me): a method is named only when, on the same held-out
pairs (for ``--size``: the pairs of the bin where its MDAD lies), it beats both the runner-up and uniform random
by more than PLAN_NOISE_SE standard errors of the paired difference; otherwise the methods it does not beat are
tied within noise with it, and the simplest of them is recommended (``simplicity``: random designs, then the
methods whose estimate is the chosen items' mean, then those whose estimate is fitted to the sources; among equals,
the leading method)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mdad import methods as method_registry
from mdad.assessment import HeldOutRuns, held_out_runs_of
from mdad.defaults import PLAN_NOISE_SE
from mdad.errors import MdadError
from mdad.metrics.analytic import has_exact_answer
from mdad.planning.bins import bin_label, bin_lower
from mdad.planning.paired import paired_difference
from mdad.planning.result import BASELINE, PlanRow, items_text
from mdad.planning.rows import Progress, simulated_kwargs
from mdad.planning.simulated import SimulatedPlan, shares_of, simulated_plans


def settle(
    question: str, rows: list[PlanRow], sims: dict[str, SimulatedPlan], names: list[str], detect: float, options: dict[str, Any], progress: Progress
) -> tuple[str, str, tuple[str, ...], tuple[str, ...]] | None:
    """The rule on paired differences (``detect`` and ``budget``): the leading method (``detect``: the fewest
    items among those needing fewer than uniform random; ``budget``: the highest share) is named only when, at
    its size and on the same held-out pairs, its share beats the runner-up's and uniform random's by more than
    PLAN_NOISE_SE standard errors of the paired difference (two-way bootstrap); otherwise the methods it does
    not beat are tied with it and the simplest of them is recommended. Returns (recommended, sentence, tied set,
    the methods judged: the leader, uniform random, the runner-up); None: nothing simulated to pair with."""
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

    compared = [best.method, BASELINE] + ([candidates[1].method] if len(candidates) > 1 else [])
    missing = tuple(n for n in compared if (found := sims.get(n)) is None or found.correct is None or size not in found.correct)
    if missing:  # simulated at the leader's size on the same runs, together
        on_runs = progress(f"{', '.join(missing)} at {size} items")
        sims = {**sims, **simulated_plans(options["matrix"], missing, detect=detect, sizes=(size,), on_runs=on_runs, **simulated_kwargs(options))}

    def flags(name: str) -> np.ndarray:
        """Whether each pair was ordered correctly by ``name`` at ``size`` on the same runs."""
        correct = sims[name].correct
        assert correct is not None
        return correct[size]

    tied, beats = verdict(best.method, [BASELINE] + ([candidates[1].method] if len(candidates) > 1 else []), flags, weights)
    label = bin_label(bin_lower(detect))
    if len(tied) == 1:
        return (
            best.method,
            (
                f"Use {best.method}: {items_text(best)} order pairs {label} points apart correctly {best.value:.3f} of the time; "
                f"at that size, on the same held-out pairs, {beats}."
            ),
            (),
            tuple(compared),
        )
    ordered = simplest_first(tied, names, best.method)
    leads = f"needs the fewest items, {items_text(best)}" if question == "detect" else f"has the highest share, {best.value:.3f}"
    sentence = (
        f"These methods are tied within noise: {', '.join(ordered)}; the simplest is {ordered[0]}. {best.method} {leads}, but at "
        f"{best.items} items, on the same held-out pairs, {beats}; beyond noise means by more than {PLAN_NOISE_SE:g} standard errors."
    )
    return ordered[0], sentence, tuple(ordered), tuple(compared)


def verdict(best: str, others: list[str], flags: Callable[[str], np.ndarray], weights: np.ndarray) -> tuple[list[str], str]:
    """The rule itself: ``best`` and each of ``others`` judged on the same pairs (``flags(name)``: whether each
    pair was ordered correctly); the methods ``best`` does not beat by more than PLAN_NOISE_SE standard errors of
    the paired difference are tied with it. Returns (``best`` and the methods tied with it, the margins as text)."""
    mine = flags(best)
    tied, margins = [best], []
    for other in others:
        difference, se = paired_difference(mine, flags(other), weights)
        beyond = difference > PLAN_NOISE_SE * se
        margins.append(f"minus {other}'s: {difference:+.3f} ± {se:.3f} ({'beyond' if beyond else 'within'} noise)")
        if not beyond:
            tied.append(other)
    return tied, f"its share of pairs ordered correctly {', '.join(margins)} (paired difference ± its standard error)"


def simplicity(name: str) -> int:
    """How much a method rests on the source models, from what it declares: 0 for a random design (no source model),
    1 when the sources only choose the items and the estimate is the items' (weighted) mean, 2 when the estimate
    itself is fitted to the sources (an IRT ability or a regression: ``ability_estimate``, ``fitted_estimate``),
    which needs the most source models to hold."""
    if has_exact_answer(name):
        return 0
    method = method_registry.get(name)
    return 2 if method.ability_estimate or method.fitted_estimate else 1


def simplest_first(tied: list[str], names: list[str], leader: str) -> list[str]:
    """Tied methods, simplest first (``simplicity``); among equally simple ones the leading method (its point estimate
    is the best, its lead only within noise), then the order of the methods asked."""
    return sorted(tied, key=lambda name: (simplicity(name), name != leader, names.index(name)))


def settle_size(
    rows: list[PlanRow], runs_of: dict[str, HeldOutRuns], names: list[str], size: int, options: dict[str, Any], progress: Progress
) -> tuple[str, str, tuple[str, ...], tuple[str, ...]] | None:
    """The tie rule for ``size``: the method with the smallest MDAD at ``size`` (below uniform random's) is named
    only when, in the bin where its MDAD lies and on the same held-out pairs, its share of pairs ordered correctly
    at ``size`` beats uniform random's and the runner-up's (the next smallest MDAD) by more than PLAN_NOISE_SE
    standard errors of the paired difference; otherwise the simplest of the tied methods is recommended. None:
    nothing simulated to pair with, or no method with an MDAD below uniform random's."""
    random_mdad = rows[0].value
    reached = [r for r in rows if r.method != BASELINE and not math.isnan(r.value) and (math.isnan(random_mdad) or r.value < random_mdad)]
    candidates = sorted(reached, key=lambda r: (r.value, r.high, names.index(r.method)))
    if not candidates or not runs_of:
        return None
    best = candidates[0]
    lower = bin_lower(best.value)
    compared = [best.method, BASELINE] + ([candidates[1].method] if len(candidates) > 1 else [])
    missing = tuple(n for n in compared if n not in runs_of)
    if missing:  # an exact design among them: simulated at that size on the same runs
        kwargs = {key: value for key, value in simulated_kwargs(options).items() if key != "threshold"}
        runs_of = {
            **runs_of,
            **held_out_runs_of(options["matrix"], missing, (size,), on_runs=progress(f"{', '.join(missing)} at {size} items"), **kwargs),
        }
    try:
        shares = {n: shares_of(n, runs_of[n], options["matrix"].source, lower, np.array([size]), options["threshold"]) for n in compared}
    except MdadError:  # no held-out pair in that bin: nothing to pair
        return None
    pairs = shares[best.method].in_bin
    if pairs is None:
        return None

    def flags(name: str) -> np.ndarray:
        correct = shares[name].correct
        assert correct is not None
        return correct[size]

    tied, beats = verdict(best.method, compared[1:], flags, pairs.weights(options["seed"]))
    label = bin_label(lower)
    high = "not reached" if math.isnan(best.high) else f"{best.high:g}"
    interval = f" (interval {best.low:g} to {high})" if not best.exact else ""
    random_text = "not reached" if math.isnan(random_mdad) else f"{random_mdad:g} points"
    if len(tied) == 1:
        return (
            best.method,
            (
                f"Use {best.method}: MDAD {best.value:g} points{interval} with {size} items, against uniform random's {random_text}; "
                f"for pairs {label} points apart, on the same held-out pairs, {beats}."
            ),
            (),
            tuple(compared),
        )
    ordered = simplest_first(tied, names, best.method)
    sentence = (
        f"These methods are tied within noise: {', '.join(ordered)}; the simplest is {ordered[0]}. {best.method} has the smallest MDAD, "
        f"{best.value:g} points{interval} with {size} items (uniform random: {random_text}), but for pairs {label} points apart, on the "
        f"same held-out pairs, {beats}; beyond noise means by more than {PLAN_NOISE_SE:g} standard errors."
    )
    return ordered[0], sentence, tuple(ordered), tuple(compared)
