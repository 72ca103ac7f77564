"""The recommendation's sentence and its rule for each question of `plan`, and one answer for both populations
of new models (docs/plan.md#choose-for-me). Where simulated methods can be paired, the tie rule
(:mod:`mdad.planning.ties`) replaces the verdict given here."""

from __future__ import annotations

import math

from mdad.defaults import PLAN_NOISE_SE
from mdad.planning.bins import bin_label, bin_lower
from mdad.planning.result import BASELINE, Plan, PlanRow, items_text

NO_BETTER = "at this size no method is reliably better than random; use random: it needs no source models"


def recommend_both(like: Plan, stronger: Plan) -> tuple[str, str]:
    """One method that holds for new models like the sources and for stronger ones, or which to use when.
    A method holds for a population when it is recommended there or tied within noise with the recommendation."""
    when = f"For new models like the sources: {like.recommendation} For new models stronger than the sources: {stronger.recommendation}"
    if like.recommended == stronger.recommended:
        return like.recommended, f"{like.recommended} holds for new models like the sources and for stronger ones. {when}"
    holds = [name for name in (like.tied or (like.recommended,)) if name in (stronger.tied or (stronger.recommended,))]
    if holds:
        return holds[0], f"{when} If the new models may be either, use {holds[0]}: it holds for both."
    return (
        stronger.recommended,
        f"{when} No method holds for both: use {like.recommended} for new models like the sources and {stronger.recommended} for "
        "models stronger than every model you have results for (the usual case for new models).",
    )


def error_note(rows: list[PlanRow]) -> str:
    """``size``: a sentence when the method with the smallest MDAD estimates accuracies less closely than
    uniform random (a larger estimation error), else ""."""
    reached = [r for r in rows if not math.isnan(r.value)]
    if not reached:
        return ""
    smallest = min(reached, key=lambda r: (r.value, r.method != BASELINE))
    random_error = rows[0].error
    if smallest.method == BASELINE or not smallest.error > random_error:
        return ""
    return (
        f" Note: {smallest.method}, with the smallest MDAD, estimates accuracies less closely than uniform random "
        f"(estimation error {smallest.error:.2f} points against {random_error:.2f}): it orders models better than it measures them."
    )


def _points(value: float) -> str:
    """A difference in points as text: "1 point", "2.5 points"."""
    return f"{value:g} point" + ("" if value == 1 else "s")


def recommend(question: str, rows: list[PlanRow], detect: float | None, threshold: float) -> tuple[str, str, str]:
    """(recommended method, the sentence, the rule) for the rows of one question."""
    noise = f"more than {PLAN_NOISE_SE:g} standard errors of its share (simulated: between runs; exact: binomial over its pairs)"
    baseline = rows[0]
    winners = [r for r in rows if r.beats_random]
    label = bin_label(bin_lower(detect)) if detect is not None else ""
    if question == "detect":
        rule = (
            f"the method needing the fewest items to order pairs {label} points apart with probability {threshold:g}, among those needing "
            "fewer than uniform random, is named when at its size, on the same held-out pairs, its share of pairs ordered correctly beats "
            f"uniform random's and the runner-up's by more than {PLAN_NOISE_SE:g} standard errors of the paired difference (bootstrap over "
            "runs and models); otherwise the methods it does not beat are tied within noise and the simplest is recommended (random "
            "designs before learned ones); exact designs alone are judged against uniform random's exact share by "
            f"{noise}; otherwise uniform random"
        )
        if winners:
            best = min(winners, key=lambda r: (r.items, -(r.value - r.random_value), r.method))
            random_items = "never reaches it" if baseline.items is None else f"needs {baseline.items}"
            return (
                best.method,
                (
                    f"Use {best.method}: {items_text(best)} order pairs {label} points apart correctly {best.value:.3f} of the time "
                    f"(uniform random at {best.items} items: {best.random_value:.3f}; uniform random {random_items})."
                ),
                rule,
            )
        if baseline.items is None:
            return (
                BASELINE,
                (
                    f"No method orders pairs {label} points apart correctly with probability {threshold:g} at any size tried on these "
                    f"data; {NO_BETTER}, but it needs more items than the benchmark holds (or a lower --threshold)."
                ),
                rule,
            )
        return BASELINE, f"{baseline.items} items of uniform random order pairs {label} points apart: {NO_BETTER}.", rule
    if question == "size":
        rule = (
            f"the method with the smallest MDAD below uniform random's is named when, in the bin where its MDAD lies and on the same "
            f"held-out pairs, its share of pairs ordered correctly at this size beats uniform random's and the runner-up's by more than "
            f"{PLAN_NOISE_SE:g} standard errors of the paired difference (bootstrap over runs and models); otherwise the methods it does not "
            "beat are tied within noise and the simplest is recommended (random designs before learned ones); exact designs alone: a "
            f"smaller MDAD whose share in its bin exceeds uniform random's there by {PLAN_NOISE_SE:g} binomial standard errors over the "
            "bin's pairs; otherwise uniform random"
        )
        note = error_note(rows)
        if winners:
            best = min(winners, key=lambda r: (r.value, r.high, r.method))
            random_text = "not reached" if math.isnan(best.random_value) else _points(best.random_value)
            interval = "" if best.exact else f" (interval {best.low:g} to {best.high:g})"
            return (
                best.method,
                (f"Use {best.method}: MDAD {_points(best.value)}{interval} with {best.items} items, against uniform random's {random_text}.{note}"),
                rule,
            )
        random_text = "not reached" if math.isnan(baseline.value) else _points(baseline.value)
        return BASELINE, f"Uniform random's MDAD with {baseline.items} items is {random_text}: {NO_BETTER}.{note}", rule
    rule = (
        f"the method with the highest probability of ordering pairs {label} points apart at the budget is named when, on the same "
        f"held-out pairs, its share beats uniform random's and the runner-up's by more than {PLAN_NOISE_SE:g} standard errors of the "
        "paired difference (bootstrap over runs and models); otherwise the methods it does not beat are tied within noise and the "
        f"simplest is recommended (random designs before learned ones); exact designs alone are judged against uniform random's "
        f"exact share by {noise}; otherwise uniform random"
    )
    if winners:
        best = min(winners, key=lambda r: (-r.value, r.method))
        return (
            best.method,
            (
                f"Use {best.method}: {best.items} items order pairs {label} points apart correctly {best.value:.3f} of the time, "
                f"against {best.random_value:.3f} for uniform random."
            ),
            rule,
        )
    return (
        BASELINE,
        (f"Uniform random's {baseline.items} items order pairs {label} points apart correctly {baseline.value:.3f} of the time: {NO_BETTER}."),
        rule,
    )
