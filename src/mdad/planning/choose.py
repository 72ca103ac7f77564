"""Every method side by side on the user's data, and one recommendation by a stated rule (docs/plan.md#choose-for-me).

Three questions, each answered per method the best way available (exact for the random designs,
a quick simulation on held-out runs for the others): the fewest items that order pairs D points
apart (``detect``), the MDAD of K items (``size``), or the probability that K items order pairs D
points apart (``budget`` with ``detect``). Uniform random is always answered too, exactly: it is
the baseline of the rule. A method is recommended only when its advantage over uniform random
exceeds the noise of its own answer; otherwise the answer is uniform random, which needs no
source models.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_THRESHOLD, PLAN_NOISE_SE, check_threshold
from mdad.errors import MdadError
from mdad.metrics.analytic import has_exact_answer
from mdad.planning.bins import bin_label, bin_lower
from mdad.planning.exact import check_pairs, exact_agreement_at_size, exact_mdad_at_size, exact_smallest_size, pairs_in_bin
from mdad.planning.simulated import floored_se, simulated_mdad_at_size, simulated_plan
from mdad.planning.sources import SourcesCurve
from mdad.planning.sources import sources_curve as sources_curve_of

BASELINE = "random"
NO_BETTER = "at this size no method is reliably better than random; use random: it needs no source models"
Progress = Callable[[str, float], None]  # (method, held-out runs finished) as a simulation advances


@dataclass(frozen=True)
class PlanRow:
    """One method's answer to the plan's question.

    Attributes
    ----------
    items : int or None
        ``detect``: the fewest items that reach the threshold (None: no size tried does);
        ``size``/``budget``: the size asked about.
    value : float
        ``detect``/``budget``: probability (share, when simulated) of ordering pairs of the bin
        correctly at ``items``; ``size``: the MDAD in points (NaN: not reached).
    low, high : float
        ``size``: the MDAD's interval (exact designs: the value itself; NaN high: not reached);
        otherwise value -/+ PLAN_NOISE_SE standard errors.
    stderr : float
        Monte Carlo standard error of ``value`` (0 for an exact answer, NaN for an MDAD): between
        runs, never below the binomial error of the pairs behind it.
    random_value : float
        Uniform random's exact answer at the same number of items, for the rule.
    beats_random : bool
        Whether the rule counts this method's advantage over uniform random as beyond the noise.
    ladder : tuple of int
        Sizes the simulation tried (empty for an exact answer).
    """

    method: str
    exact: bool
    items: int | None
    value: float
    low: float
    high: float
    stderr: float
    random_value: float
    beats_random: bool
    ladder: tuple[int, ...]
    pairs: int


@dataclass(frozen=True, eq=False)
class Plan:
    """Every method's answer to one question on one matrix, and the recommendation by :attr:`rule`."""

    question: str  # "detect", "size" or "budget"
    source: str
    detect: float | None
    size: int | None
    threshold: float
    runs: int
    rows: tuple[PlanRow, ...]
    recommended: str
    recommendation: str
    rule: str
    sources_curves: tuple[SourcesCurve, ...] = ()  # with ``sources_curve=True``: one per learned method
    not_answered: tuple[tuple[str, str], ...] = ()  # ``"all"``: (method, why) for each method the data cannot serve

    def row(self, method: str) -> PlanRow:
        """The answer of one method."""
        for row in self.rows:
            if row.method == method:
                return row
        raise MdadError(f"The plan holds no answer for {method!r}; it answered {', '.join(r.method for r in self.rows)}.")

    def to_frame(self) -> pd.DataFrame:
        """One row per method: how it was answered, its answer, uniform random's at the same size, the rule's verdict."""
        return pd.DataFrame(
            {
                "method": [r.method for r in self.rows],
                "answer": ["exact" if r.exact else "simulated" for r in self.rows],
                "items": pd.array([r.items for r in self.rows], dtype="Int64"),
                "value": [r.value for r in self.rows],
                "low": [r.low for r in self.rows],
                "high": [r.high for r in self.rows],
                "stderr": [r.stderr for r in self.rows],
                "random_value": [r.random_value for r in self.rows],
                "beats_random": [r.beats_random for r in self.rows],
                "sizes_tried": [",".join(map(str, r.ladder)) for r in self.rows],
            }
        )


def asks_all(methods: str | Sequence[str]) -> bool:
    """Whether ``methods`` asks for every default method (``"all"``) rather than naming them."""
    names = [n.strip() for n in methods.split(",")] if isinstance(methods, str) else [str(n).strip() for n in methods]
    return [n for n in names if n] == ["all"]


def unmet_scores(name: str, matrix: ResponseMatrix) -> str | None:
    """Why ``matrix`` cannot serve the method ``name``, by the scores the method declares it needs
    (``SelectionMethod.scores``); None when it can."""
    needed = method_registry.get(name).scores
    if needed == "binary" and not matrix.is_binary:
        return f"needs 0/1 correctness and {matrix.source} holds continuous scores"
    if needed == "option-probabilities" and not matrix.has_option_probs:
        return f"needs option probabilities and {matrix.source} holds none"
    return None


def _servable(matrix: ResponseMatrix, names: list[str], everything: bool) -> tuple[list[str], tuple[tuple[str, str], ...]]:
    """The methods the data can serve, and (method, why) for the others: with ``everything`` ("all") they
    are left out and named (the simulated ones too when cells are missing); a method the user named is
    refused with one sentence."""
    unmet = [(name, why) for name in names if (why := unmet_scores(name, matrix)) is not None]
    if everything and matrix.n_missing:  # named methods meet the refusal of plan_methods, which says what to do
        incomplete = (
            f"can only be simulated on complete results and {matrix.source} has cells that were not evaluated: "
            "--missing drop-items or drop-models answers it"
        )
        unmet += [(name, incomplete) for name in names if not has_exact_answer(name) and all(name != n for n, _ in unmet)]
    if unmet and not everything:
        name, why = unmet[0]
        raise MdadError(f"{name} {why}; leave it out of --method (--method all answers the methods these data can serve).")
    left_out = {name for name, _ in unmet}
    return [n for n in names if n not in left_out], tuple(unmet)


def method_names(methods: str | Sequence[str]) -> list[str]:
    """``"all"`` (the methods ``mdad run`` runs by default), a comma list, or a sequence of names; uniform random first."""
    names = [n.strip() for n in methods.split(",")] if isinstance(methods, str) else [str(n).strip() for n in methods]
    names = method_registry.defaults() if asks_all(methods) else [n for n in names if n]
    if not names:
        raise MdadError("Name at least one method, or 'all'.")
    for name in names:
        method_registry.get(name)  # an unknown name is one clear error
    unique = list(dict.fromkeys(names))
    return [BASELINE, *[n for n in unique if n != BASELINE]]


def plan_methods(
    matrix: ResponseMatrix,
    *,
    detect: float | None = None,
    size: int | None = None,
    budget: int | None = None,
    methods: str | Sequence[str] = "all",
    threshold: float = DEFAULT_THRESHOLD,
    runs: int = ASSESS_RUNS,
    seed: int = 0,
    workers: int = 1,
    on_runs: Progress | None = None,
    sources_curve: bool = False,
) -> Plan:
    """Answer one question for every method of ``methods`` and recommend one (see :class:`Plan`).

    ``detect`` alone: the fewest items per method; ``size``: each method's MDAD at that size;
    ``budget`` with ``detect``: each method's probability of ordering pairs ``detect`` points apart
    at ``budget`` items. ``on_runs(method, runs finished)`` reports the simulations' progress.
    ``sources_curve`` adds, for every method that learns from source models, its answer as a
    function of the number of source models (:func:`mdad.planning.sources.sources_curve`).
    """
    check_threshold(threshold)
    question = _question(detect, size, budget)
    if sources_curve and question == "budget":
        raise MdadError("--sources-curve answers --detect or --size, not --budget.")
    names, not_answered = _servable(matrix, method_names(methods), asks_all(methods))
    simulated = [n for n in names if not has_exact_answer(n)]
    if simulated and matrix.n_missing:
        raise MdadError(
            f"{matrix.source} has cells that were not evaluated; {', '.join(simulated)} can only be simulated on complete "
            "results: use --missing drop-items or drop-models, or only the random designs."
        )

    def progress(name: str) -> Callable[[float], None] | None:
        return None if on_runs is None else (lambda done: on_runs(name, done))

    options: dict[str, Any] = {"threshold": threshold, "runs": runs, "seed": seed, "workers": workers}
    if question == "detect":
        assert detect is not None
        rows = _detect_rows(matrix, names, detect, options, progress)
    elif question == "size":
        assert size is not None
        rows = _size_rows(matrix, names, size, options, progress)
    else:
        assert detect is not None and budget is not None
        rows = _budget_rows(matrix, names, detect, budget, options, progress)
    recommended, sentence, rule = _recommend(question, rows, detect, threshold)
    curves = tuple(
        sources_curve_of(
            matrix,
            name,
            detect=detect,
            size=size,
            on_runs=_by_sources(on_runs, name),
            **options,
        )
        for name in (simulated if sources_curve else [])
    )
    return Plan(
        question=question,
        source=matrix.source,
        detect=detect,
        size=size if size is not None else budget,
        threshold=threshold,
        runs=runs,
        rows=tuple(rows),
        recommended=recommended,
        recommendation=sentence,
        rule=rule,
        sources_curves=curves,
        not_answered=not_answered,
    )


def _by_sources(on_runs: Progress | None, name: str) -> Callable[[int, float], None] | None:
    """Progress of one method's sources curve, reported as "NAME with S sources"."""
    if on_runs is None:
        return None
    report = on_runs
    return lambda count, done: report(f"{name} with {count} sources", done)


def _question(detect: float | None, size: int | None, budget: int | None) -> str:
    if budget is not None:
        if detect is None or size is not None:
            raise MdadError("--budget K asks how likely K items order pairs --detect D points apart: give it with --detect, without --size.")
        return "budget"
    if (detect is None) == (size is None):
        raise MdadError("Give either --detect (points to tell apart) or --size (number of items), not both or neither.")
    return "detect" if detect is not None else "size"


def _simulated_kwargs(options: dict) -> dict:
    return {key: options[key] for key in ("threshold", "runs", "seed", "workers")}


def _detect_rows(matrix, names, detect, options, progress) -> list[PlanRow]:
    check_pairs(matrix)
    lower, part = pairs_in_bin(matrix, detect)  # once: every exact answer below reads these pairs
    exact = {"detect": detect, "threshold": options["threshold"], "seed": options["seed"], "part": part}
    baseline = exact_smallest_size(matrix, design=BASELINE, **exact)

    def random_at(items: int | None, fallback: float) -> float:
        """Uniform random's exact probability for the bin's pairs at ``items`` (``fallback`` without a size)."""
        return fallback if items is None else exact_agreement_at_size(matrix, detect=lower, size=items, seed=options["seed"], part=part)[2]

    rows = []
    for name in names:
        if has_exact_answer(name):
            found = baseline if _as_baseline(name) else exact_smallest_size(matrix, design=name, start=baseline.smallest, **exact)
            items = found.smallest
            random_value = random_at(items, baseline.at_smallest)
            fewer = baseline.smallest is None or (items is not None and items < baseline.smallest)
            beats = items is not None and not _as_baseline(name) and fewer and exact_beats(found.at_smallest, random_value, found.pairs)
            rows.append(
                PlanRow(name, True, items, found.at_smallest, found.at_smallest, found.at_smallest, 0.0, random_value, beats, (), found.pairs)
            )
            continue
        sim = simulated_plan(matrix, name, detect=detect, on_runs=progress(name), **_simulated_kwargs(options))
        items = sim.smallest
        at = int(np.searchsorted(sim.sizes, items)) if items is not None else len(sim.sizes) - 1
        value, se = float(sim.agreement[at]), floored_se(float(sim.agreement[at]), float(sim.stderr[at]), sim.pairs)
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
                tuple(map(int, sim.sizes)),
                sim.pairs,
            )
        )
    return rows


def _as_baseline(name: str) -> bool:
    """Whether the method ``name`` declares the baseline's exact design (uniform random): its answers are the baseline's."""
    design = method_registry.METHODS.get(name).exact_design()
    return design is not None and design == method_registry.METHODS.get(BASELINE).exact_design()


def exact_beats(value: float, random_value: float, pairs: int) -> bool:
    """Whether an exact design's share beats uniform random's: exact for the pairs at hand, but those
    pairs are a finite sample, so the advantage must exceed PLAN_NOISE_SE binomial standard errors
    of the share (docs/plan.md)."""
    return value - random_value > PLAN_NOISE_SE * floored_se(value, 0.0, pairs)


def _size_rows(matrix, names, size, options, progress) -> list[PlanRow]:
    baseline = exact_mdad_at_size(matrix, size=size, design=BASELINE, threshold=options["threshold"], seed=options["seed"])
    rows = []
    for name in names:
        if has_exact_answer(name):
            found = (
                baseline
                if _as_baseline(name)
                else exact_mdad_at_size(matrix, size=size, design=name, threshold=options["threshold"], seed=options["seed"])
            )
            smaller = not _as_baseline(name) and found.reached and (not baseline.reached or found.mdad < baseline.mdad)
            beats = smaller and _exact_beats_in_bin(matrix, found.mdad, size, name, options["seed"])
            rows.append(PlanRow(name, True, size, found.mdad, found.mdad, found.mdad, math.nan, baseline.mdad, beats, (), found.pairs))
            continue
        a = simulated_mdad_at_size(matrix, name, size=size, on_runs=progress(name), **_simulated_kwargs(options)).assessment
        upper_known = not math.isnan(a.mdad_high)
        beats = a.mdad_reached and upper_known and (not baseline.reached or a.mdad_high < baseline.mdad)
        pairs = a.runs * a.targets * (a.targets - 1) // 2
        rows.append(PlanRow(name, False, size, a.mdad, a.mdad_low, a.mdad_high, math.nan, baseline.mdad, beats, (size,), pairs))
    return rows


def _exact_beats_in_bin(matrix: ResponseMatrix, edge: float, size: int, design: str, seed: int) -> bool:
    """Whether ``design``'s smaller MDAD is beyond noise: in the bin where it crosses, its share of pairs
    ordered correctly must exceed uniform random's at the same size by the rule of :func:`exact_beats`."""
    _, part = pairs_in_bin(matrix, edge)
    _, pairs, value = exact_agreement_at_size(matrix, detect=edge, size=size, design=design, seed=seed, part=part)
    random_value = exact_agreement_at_size(matrix, detect=edge, size=size, design=BASELINE, seed=seed, part=part)[2]
    return exact_beats(value, random_value, pairs)


def _budget_rows(matrix, names, detect, budget, options, progress) -> list[PlanRow]:
    check_pairs(matrix)
    _, part = pairs_in_bin(matrix, detect)
    lower, pairs, random_value = exact_agreement_at_size(matrix, detect=detect, size=budget, design=BASELINE, seed=options["seed"], part=part)
    rows = []
    for name in names:
        if has_exact_answer(name):
            value = (
                random_value
                if _as_baseline(name)
                else exact_agreement_at_size(matrix, detect=detect, size=budget, design=name, seed=options["seed"], part=part)[2]
            )
            beats = not _as_baseline(name) and exact_beats(value, random_value, pairs)
            rows.append(PlanRow(name, True, budget, value, value, value, 0.0, random_value, beats, (), pairs))
            continue
        sim = simulated_plan(matrix, name, detect=detect, sizes=(budget,), on_runs=progress(name), **_simulated_kwargs(options))
        value, se = float(sim.agreement[0]), floored_se(float(sim.agreement[0]), float(sim.stderr[0]), sim.pairs)
        beats = value - random_value > PLAN_NOISE_SE * se
        rows.append(
            PlanRow(name, False, budget, value, value - PLAN_NOISE_SE * se, value + PLAN_NOISE_SE * se, se, random_value, beats, (budget,), sim.pairs)
        )
    return rows


def _points(value: float) -> str:
    """A difference in points as text: "1 point", "2.5 points"."""
    return f"{value:g} point" + ("" if value == 1 else "s")


def _recommend(question: str, rows: list[PlanRow], detect: float | None, threshold: float) -> tuple[str, str, str]:
    """(recommended method, the sentence, the rule) for the rows of one question."""
    noise = f"more than {PLAN_NOISE_SE:g} standard errors of its share (simulated: between runs; exact: binomial over its pairs)"
    baseline = rows[0]
    winners = [r for r in rows if r.beats_random]
    label = bin_label(bin_lower(detect)) if detect is not None else ""
    if question == "detect":
        rule = (
            f"the method needing the fewest items to order pairs {label} points apart with probability {threshold:g}, among those needing "
            f"fewer than uniform random whose probability at that size exceeds uniform random's (exact) at the same size by {noise}; "
            "ties go to the larger advantage; otherwise uniform random"
        )
        if winners:
            best = min(winners, key=lambda r: (r.items, -(r.value - r.random_value), r.method))
            random_items = "never reaches it" if baseline.items is None else f"needs {baseline.items}"
            return (
                best.method,
                (
                    f"Use {best.method}: {best.items} items order pairs {label} points apart correctly {best.value:.3f} of the time "
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
            "the method with the smallest MDAD whose interval's upper end lies below uniform random's exact MDAD at the same size "
            "(exact designs: a smaller MDAD whose share in its bin exceeds uniform random's there by "
            f"{PLAN_NOISE_SE:g} binomial standard errors over the bin's pairs); ties go to the smaller upper end; otherwise uniform random"
        )
        if winners:
            best = min(winners, key=lambda r: (r.value, r.high, r.method))
            random_text = "not reached" if math.isnan(best.random_value) else _points(best.random_value)
            interval = "" if best.exact else f" (interval {best.low:g} to {best.high:g})"
            return (
                best.method,
                (f"Use {best.method}: MDAD {_points(best.value)}{interval} with {best.items} items, against uniform random's {random_text}."),
                rule,
            )
        random_text = "not reached" if math.isnan(baseline.value) else _points(baseline.value)
        return BASELINE, f"Uniform random's MDAD with {baseline.items} items is {random_text}: {NO_BETTER}.", rule
    rule = (
        f"the method with the highest probability of ordering pairs {label} points apart at the budget, among those whose "
        f"probability exceeds uniform random's (exact) by {noise}; otherwise uniform random"
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
