"""Every method side by side on the user's data, and one recommendation by a stated rule (docs/plan.md#choose-for-me).

Three questions, each answered per method the best way available (exact for the random designs,
a quick simulation on held-out runs for the others): the fewest items that order pairs D points
apart (``detect``), the MDAD of K items (``size``), or the probability that K items order pairs D
points apart (``budget`` with ``detect``), for one or both populations of new models. The pieces
have their own modules: which methods (:mod:`~mdad.planning.method_sets`), each method's answer
(:mod:`~mdad.planning.rows`), the tie rule (:mod:`~mdad.planning.ties`) and the sentences
(:mod:`~mdad.planning.recommend`); this module puts them together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.experiment.grid import default_targets
from mdad.experiment.splits import make_splits
from mdad.metrics.analytic import has_exact_answer
from mdad.planning.method_sets import asks_all, method_names, servable
from mdad.planning.recommend import error_note, recommend, recommend_both
from mdad.planning.result import POPULATION_TEXT, Plan
from mdad.planning.rows import budget_rows, detect_rows, size_rows
from mdad.planning.sources import sources_curve as sources_curve_of
from mdad.planning.ties import settle, settle_size

POPULATIONS = {"like-sources": "random", "stronger": "top"}  # new models -> where the held-out targets come from
NEW_MODELS = (*POPULATIONS, "both")
Progress = Callable[[str, float], None]  # (method, held-out runs finished) as a simulation advances


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
    names, not_answered = servable(matrix, method_names(methods), asks_all(methods))
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
    recommended, sentence = recommend_both(first, plans[1])
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
    judged: tuple[str, ...] = ()
    if question == "size":
        rows, runs_of = size_rows(pairs_of, names, size, options, progress)
        recommended, sentence, rule = recommend(question, rows, detect, options["threshold"])
        settled = settle_size(rows, runs_of, names, size, options, progress)
        if settled is not None:
            recommended, sentence, tied, judged = settled
            sentence += error_note(rows)
    else:
        rows, sims = (
            detect_rows(pairs_of, names, detect, options, progress)
            if question == "detect"
            else budget_rows(pairs_of, names, detect, budget, options, progress)
        )
        recommended, sentence, rule = recommend(question, rows, detect, options["threshold"])
        settled = settle(question, rows, sims, names, detect, options, progress)
        if settled is not None:
            recommended, sentence, tied, judged = settled
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
        judged=judged,
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
