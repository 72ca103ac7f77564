"""The sentences that say how far a micro-benchmark's numbers go: its assessment, models beyond its sources, the code that made it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.assessment import Assessment
from mdad.defaults import MIN_CROSSING_PAIRS
from mdad.metrics.base import METRICS
from mdad.metrics.pairwise import AgreementCurve, count_pairs, estimability_note
from mdad.micro.harness import HarnessCommands
from mdad.results_version import RESULTS_VERSION, written_under
from mdad.wording import plural, points


@dataclass(frozen=True)
class Note:
    """One line of a report: its ``text``, whether it is a ``warning``, and whether it is a ``command``
    (to be kept on one line, so it can be copied)."""

    text: str
    warning: bool = False
    command: bool = False


def command_notes(found: HarnessCommands, lead: str) -> list[Note]:
    """``lead``, then each harness command on a line of its own (to be copied whole), then what to fill in."""
    return [Note(lead), *(Note(f"  {command}", command=True) for command in found.commands), *(Note(text) for text in found.notes)]


def _tau(tau: float) -> str:
    """Kendall tau, or why there is none: in every run the estimates or the accuracies all tie."""
    return "no Kendall tau (every run's estimates or accuracies tie)" if tau != tau else f"Kendall tau {tau:.2f}"


def describe_assessment(a: Assessment) -> str:
    """How far estimates are off, and which differences the micro-benchmark orders reliably."""
    note = estimability_note(a.targets, a.runs)
    head = (
        f"On {a.runs} held-out splits ({a.targets} target models, {a.sources} source models, same method and "
        f"size): estimates are off by {100 * a.error:.1f} points on average" + ("" if note else f", {_tau(a.kendall_tau)}")
    )
    head += "".join(
        f", {metric.label} {metric.shown(a.metrics[metric.key]):g}{f' {metric.unit}' if metric.unit else ''}"
        for metric in METRICS
        if metric.key in a.metrics and metric.key not in ("error", "kendall_tau") and a.metrics[metric.key] == a.metrics[metric.key]  # NaN: none
    )
    share = f"{100 * a.threshold:.0f}%"
    if note:
        return f"{head}; MDAD and Kendall tau {note}."
    first, robust = a.first_crossing, a.robust
    if not first.reached:
        return f"{head}; {first.phrase(robust)}: no bin of differences is ordered correctly {share} of the time."
    text = f"{head}; {first.phrase(robust)}: models closer than that are ordered correctly less than {share} of the time."
    warning = first.warning(robust)
    if warning and robust.reached:
        text += f" * {warning[0].upper()}{warning[1:]} Read the robust MDAD, {points(robust.value)}."
    elif warning:
        text += f" * {warning[0].upper()}{warning[1:]}"
    return text


def describe_exact(curve: AgreementCurve, size: int, threshold: float, n_models: int) -> str | None:
    """Uniform random's MDAD over every pair of the data's models, exactly: the number the held-out runs
    estimate, without their noise (a few runs leave the bins of large differences nearly empty). None
    when the data hold fewer than MIN_CROSSING_PAIRS pairs in all: too few models for any MDAD; a
    crossing bin that holds fewer says so beside the number (docs/protocol.md#when-mdad-is-noise)."""
    total = int(curve.pairs.sum())
    if total < MIN_CROSSING_PAIRS:
        return None
    share = f"{100 * threshold:.0f}%"
    head = f"Exactly, over all {total:,} pairs of the {n_models} models (no held-out runs, so none of their noise), "
    mdad = curve.crossing(threshold)
    if mdad != mdad:  # NaN: not reached
        return f"{head}no difference between two of these models is ordered correctly {share} of the time by {plural(size, 'random item')}."
    order = f"{plural(size, 'random item')} order{'s' if size == 1 else ''}"
    text = f"{head}{order} models {points(mdad)} apart correctly {share} of the time: MDAD {points(mdad)}"
    in_bin = curve.pairs_at(mdad)
    if in_bin < MIN_CROSSING_PAIRS:
        text += (
            f", but its {mdad:g}-point bin holds {count_pairs(in_bin)} (fewer than {MIN_CROSSING_PAIRS}): few of these models are "
            "that far apart, so read it as approximate"
        )
    return f"{text} (mdad plan --size {size} shows the curve and the other random designs)."


BEYOND_SOURCES_COVERAGE = "41-98% (67% pooled; 77% with --clopper-pearson)"  # benchmarks/bench_beyond_sources.py
BEYOND_SOURCES = {
    "exact": (
        "The exact intervals do not rest on the source models, but a model estimated above all of them is "
        "often one whose items happened to favour it: on four real leaderboards the 90% intervals of uniform "
        f"random covered {BEYOND_SOURCES_COVERAGE} of such models, while models truly better than every source "
        "were covered 89-97%; the order probabilities rest on the source models' pairs and were overconfident "
        "for models better than all of them (benchmarks/results/intervals.md)."
    ),
    "population": (
        "The --population intervals covered such models less often than their level and the order "
        "probabilities, resting on the source models' pairs, were overconfident for them "
        "(benchmarks/results/intervals.md); without --population the intervals do not rest on the source models."
    ),
    "calibrated": (
        "Intervals and order probabilities were calibrated on models like the sources; with the best tenth of "
        "real leaderboards held out as new models the learned methods' 90% intervals covered as little as 37% "
        "of them, and such a model need not be estimated high (adaptive-1d and gp-IRT placed them about 7 points "
        "low at 10 items); with the marks '!' 89-100% of them were covered or marked, so an interval without the mark "
        "may still fail for it (docs/intervals.md); for a model that may be better than every source, use a random design."
    ),
    "none": "Estimates of models better than every source are extrapolations of what the sources showed.",
}


def beyond_sources_note(best_source_accuracy: float | None, estimates: np.ndarray, kind: str) -> str | None:
    """A sentence when some models are estimated above every model the micro-benchmark was chosen from.

    What the intervals and order probabilities promise was measured on models like the sources;
    ``best_source_accuracy``: the best of them (None: not stored); ``kind``:
    :attr:`EstimateIntervals.kind`, which answer was printed."""
    best = best_source_accuracy
    if best is None:
        return None
    above = int(np.sum(estimates > best))
    if not above:
        return None
    return (
        f"{above} of the {len(estimates)} models are estimated above every model the micro-benchmark was chosen "
        f"from (the best scored {100 * best:.1f}%). {BEYOND_SOURCES[kind]}"
    )


def version_note(version: int | None) -> str | None:
    """A sentence when a micro-benchmark was written under another results version than this code's (None: the same)."""
    if version == RESULTS_VERSION:
        return None
    return (
        f"This micro-benchmark was written {written_under(version)}, and this mdad computes results version {RESULTS_VERSION}: its items, "
        "fitted estimator and assessment are used as that code made them, and selecting again may choose other items "
        "or estimate differently (the changelog says what changed)."
    )
