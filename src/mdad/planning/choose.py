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
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_THRESHOLD, PLAN_NOISE_SE, check_threshold
from mdad.errors import MdadError
from mdad.experiment.grid import default_targets
from mdad.experiment.splits import make_splits
from mdad.metrics.analytic import has_exact_answer
from mdad.planning.bins import bin_label, bin_lower
from mdad.planning.exact import (
    check_pairs,
    exact_agreement_at_size,
    exact_estimation_error,
    exact_mdad_at_size,
    exact_smallest_size,
    pairs_in_bin,
)
from mdad.planning.paired import bootstrap_se, paired_difference
from mdad.planning.simulated import SimulatedPlan, floored_se, refined, simulated_mdad_at_size, simulated_plan
from mdad.planning.sources import SourcesCurve
from mdad.planning.sources import sources_curve as sources_curve_of
from mdad.wording import plural

BASELINE = "random"
POPULATIONS = {"like-sources": "random", "stronger": "top"}  # new models -> where the held-out targets come from
POPULATION_TEXT = {"like-sources": "new models like the sources", "stronger": "new models stronger than the sources"}
NEW_MODELS = (*POPULATIONS, "both")
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
        Rungs of the ladder the simulation tried (empty for an exact answer); between the two
        rungs that bracket the answer, sizes about 10% apart are tried too, on the same runs.
    error : float
        ``size``: mean |estimate - accuracy| in points at ``items`` (simulated methods: over the held-out
        runs; uniform random: exact; NaN where no exact value is known).
    bracket : tuple of int, optional
        ``detect``, simulated: the answer lies above the first size and at most ``items``.
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
    error: float = math.nan  # size: the estimation error in points (simulated: mean over runs; uniform random: exact)
    bracket: tuple[int, int] | None = None  # detect, simulated: (largest size tried that falls short, items), sizes between rungs included


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
    tied: tuple[str, ...] = ()  # detect: the methods tied within noise with the one needing the fewest items, simplest first
    new_models: str = "like-sources"  # the population the rows answer for: "like-sources" or "stronger"
    populations: tuple[Plan, ...] = ()  # with new_models="both": the plan of each population, each with its own recommendation

    @property
    def stronger(self) -> Plan | None:
        """With ``new_models="both"``: the answers for new models stronger than the sources."""
        return next((p for p in self.populations if p.new_models == "stronger"), None)

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
                "error_points": [r.error for r in self.rows],
                "short_at": pd.array([r.bracket[0] if r.bracket else None for r in self.rows], dtype="Int64"),
            }
        )


SETS = ("all", "paper")  # "all": every registered method the data can serve; "paper": the paper's set (what `mdad run` runs by default)


def _names(methods: str | Sequence[str]) -> list[str]:
    names = [n.strip() for n in methods.split(",")] if isinstance(methods, str) else [str(n).strip() for n in methods]
    return [n for n in names if n]


def asks_all(methods: str | Sequence[str]) -> bool:
    """Whether ``methods`` names a set (``"all"`` or ``"paper"``) rather than methods: then the methods the
    data cannot serve are left out and named, not refused."""
    return _names(methods) in ([name] for name in SETS)


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
    """``"all"`` (every registered method, plug-ins included), ``"paper"`` (the paper's set: the methods ``mdad run``
    runs by default), a comma list, or a sequence of names; uniform random first."""
    names = _names(methods)
    if names == ["all"]:
        names = method_registry.available()
    elif names == ["paper"]:
        names = method_registry.defaults()
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
    new_models: str = "both",
    scheduler: str | None = None,
) -> Plan:
    """Answer one question for every method of ``methods`` and recommend one (see :class:`Plan`).

    ``detect`` alone: the fewest items per method; ``size``: each method's MDAD at that size;
    ``budget`` with ``detect``: each method's probability of ordering pairs ``detect`` points apart
    at ``budget`` items. ``on_runs(method, runs finished)`` reports the simulations' progress.
    ``sources_curve`` adds, for every method that learns from source models, its answer as a
    function of the number of source models (:func:`mdad.planning.sources.sources_curve`).
    ``new_models`` is the population the answer holds for: ``"like-sources"`` (random held-out
    models), ``"stronger"`` (the strongest models held out) or ``"both"`` (the returned plan answers
    for models like the sources, :attr:`Plan.stronger` for stronger ones, and the recommendation
    holds for both or says which to use when). ``scheduler``: a Dask scheduler's address that runs the
    simulations' held-out runs (as ``mdad run --scheduler``).
    """
    check_threshold(threshold)
    question = _question(detect, size, budget)
    if new_models not in NEW_MODELS:
        raise MdadError(f"--new-models is one of {', '.join(NEW_MODELS)}, got {new_models!r}.")
    if sources_curve and question == "budget":
        raise MdadError("--sources-curve answers --detect or --size, not --budget.")
    if sources_curve and scheduler:
        raise MdadError("--sources-curve runs in local processes; drop --scheduler or --sources-curve.")
    names, not_answered = _servable(matrix, method_names(methods), asks_all(methods))
    simulated = [n for n in names if not has_exact_answer(n)]
    if simulated and matrix.n_missing:
        raise MdadError(
            f"{matrix.source} has cells that were not evaluated; {', '.join(simulated)} can only be simulated on complete "
            "results: use --missing drop-items or drop-models, or only the random designs."
        )
    if scheduler and not simulated:
        raise MdadError("--scheduler runs simulations and every method asked is answered exactly; drop --scheduler.")
    options: dict[str, Any] = {"threshold": threshold, "runs": runs, "seed": seed, "workers": workers, "matrix": matrix, "scheduler": scheduler}
    asked = dict(detect=detect, size=size, budget=budget)
    populations = ("like-sources", "stronger") if new_models == "both" else (new_models,)
    plans, failed = [], []
    for population in populations:
        try:
            plans.append(_population_plan(matrix, names, question, asked, options, on_runs, population, len(populations) > 1))
        except MdadError as error:
            if len(populations) == 1:
                raise
            failed.append((population, str(error).rstrip(".")))
    if failed:
        population, why = failed[0]
        hint = f"; --new-models {plans[0].new_models} answers for {POPULATION_TEXT[plans[0].new_models]}" if plans else ""
        raise MdadError(f"For {POPULATION_TEXT[population]}: {why}{hint}.")
    curves = tuple(
        sources_curve_of(
            matrix,
            name,
            detect=detect,
            size=size,
            on_runs=_by_sources(on_runs, name),
            threshold=threshold,
            runs=runs,
            seed=seed,
            workers=workers,
        )
        for name in (simulated if sources_curve else [])
    )
    first = plans[0]
    if len(plans) == 1:
        return replace(first, sources_curves=curves, not_answered=not_answered)
    recommended, sentence = _recommend_both(first, plans[1])
    return replace(
        first, recommended=recommended, recommendation=sentence, sources_curves=curves, not_answered=not_answered, populations=tuple(plans)
    )


def _population_plan(
    matrix: ResponseMatrix,
    names: list[str],
    question: str,
    asked: dict[str, Any],
    options: dict[str, Any],
    on_runs: Progress | None,
    population: str,
    named: bool,
) -> Plan:
    """Every method's answer for one population of new models: exact designs over the pairs of that
    population's models, simulated methods on held-out runs whose targets are drawn from it."""
    detect, size, budget = asked["detect"], asked["size"], asked["budget"]
    targets_from = POPULATIONS[population]
    pairs_of = matrix
    if targets_from == "top":  # the strongest models, chosen by the rule of `run --targets-from top`
        top = make_splits(matrix, 1, default_targets(matrix.n_models), options["seed"], targets_from="top").targets[0]
        pairs_of = matrix.take(models=top)
    options = {**options, "targets_from": targets_from}
    suffix = f" ({POPULATION_TEXT[population]})" if named else ""

    def progress(name: str) -> Callable[[float], None] | None:
        report = on_runs
        return None if report is None else (lambda done: report(name + suffix, done))

    tied: tuple[str, ...] = ()
    if question == "detect":
        rows, sims = _detect_rows(pairs_of, names, detect, options, progress)
    elif question == "size":
        rows = _size_rows(pairs_of, names, size, options, progress)
    else:
        rows, sims = _budget_rows(pairs_of, names, detect, budget, options, progress)
    recommended, sentence, rule = _recommend(question, rows, detect, options["threshold"])
    if question != "size":
        settled = _settle(question, rows, sims, names, detect, options, progress)
        if settled is not None:
            recommended, sentence, tied = settled
    return Plan(
        question=question,
        source=matrix.source,
        detect=detect,
        size=size if size is not None else budget,
        threshold=options["threshold"],
        runs=options["runs"],
        rows=tuple(rows),
        recommended=recommended,
        recommendation=sentence,
        rule=rule,
        new_models=population,
        tied=tied,
    )


def _recommend_both(like: Plan, stronger: Plan) -> tuple[str, str]:
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
    return {key: options[key] for key in ("threshold", "runs", "seed", "workers", "targets_from", "scheduler")}


def _detect_rows(matrix, names, detect, options, progress) -> tuple[list[PlanRow], dict[str, SimulatedPlan]]:
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
            found = baseline if _as_baseline(name) else exact_smallest_size(matrix, design=name, start=baseline.smallest, **exact)
            items = found.smallest
            random_value = random_at(items, baseline.at_smallest)
            fewer = baseline.smallest is None or (items is not None and items < baseline.smallest)
            beats = items is not None and not _as_baseline(name) and fewer and exact_beats(found.at_smallest, random_value, found.pairs)
            rows.append(
                PlanRow(name, True, items, found.at_smallest, found.at_smallest, found.at_smallest, 0.0, random_value, beats, (), found.pairs)
            )
            continue
        ladder = simulated_plan(options["matrix"], name, detect=detect, on_runs=progress(name), **_simulated_kwargs(options))
        kwargs = {key: value for key, value in _simulated_kwargs(options).items() if key not in ("threshold", "runs")}
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


def _settle(
    question: str, rows: list[PlanRow], sims: dict[str, SimulatedPlan], names: list[str], detect: float, options: dict[str, Any], progress
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
            found = simulated_plan(options["matrix"], name, detect=detect, sizes=(size,), on_runs=on_runs, **_simulated_kwargs(options))
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
            error = exact_estimation_error(matrix, size) if name == BASELINE else math.nan
            rows.append(PlanRow(name, True, size, found.mdad, found.mdad, found.mdad, math.nan, baseline.mdad, beats, (), found.pairs, error))
            continue
        a = simulated_mdad_at_size(options["matrix"], name, size=size, on_runs=progress(name), **_simulated_kwargs(options)).assessment
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


def _budget_rows(matrix, names, detect, budget, options, progress) -> tuple[list[PlanRow], dict[str, SimulatedPlan]]:
    check_pairs(matrix)
    _, part = pairs_in_bin(matrix, detect)
    lower, pairs, random_value = exact_agreement_at_size(matrix, detect=detect, size=budget, design=BASELINE, seed=options["seed"], part=part)
    rows: list[PlanRow] = []
    sims: dict[str, SimulatedPlan] = {}
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
        sim = simulated_plan(options["matrix"], name, detect=detect, sizes=(budget,), on_runs=progress(name), **_simulated_kwargs(options))
        sims[name] = sim
        value, se = float(sim.agreement[0]), held_se(sim, budget, options["seed"])
        beats = value - random_value > PLAN_NOISE_SE * se
        rows.append(
            PlanRow(name, False, budget, value, value - PLAN_NOISE_SE * se, value + PLAN_NOISE_SE * se, se, random_value, beats, (budget,), sim.pairs)
        )
    return rows, sims


def _error_note(rows: list[PlanRow]) -> str:
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


def items_text(row: PlanRow) -> str:
    """A row's size as text, with its bracket when simulated: "130 items (121-130)"."""
    short = None if row.bracket is None else row.bracket[0] + 1
    size = f"{row.items} items" if row.items is None else plural(row.items, "item")  # None: not reached
    return size + ("" if short is None or short == row.items else f" ({short}-{row.items})")


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
            "the method with the smallest MDAD whose interval's upper end lies below uniform random's exact MDAD at the same size "
            "(exact designs: a smaller MDAD whose share in its bin exceeds uniform random's there by "
            f"{PLAN_NOISE_SE:g} binomial standard errors over the bin's pairs); ties go to the smaller upper end; otherwise uniform random"
        )
        note = _error_note(rows)
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
