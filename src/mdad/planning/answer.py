"""`plan`: how many items a micro-benchmark needs to order models D points apart, or its MDAD at a size.

One entry point, each question answered the best way available: exactly for the random designs
(:mod:`mdad.planning.exact`), by a quick simulation on held-out runs for every other method
(:mod:`mdad.planning.simulated`), or from the curves of a finished run (:mod:`mdad.planning.stored`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, overload

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.metrics.analytic import has_exact_answer
from mdad.planning.choose import Progress, plan_methods
from mdad.planning.exact import ExactMdadAtSize, ExactSmallestSize, exact_mdad_at_size, exact_smallest_size
from mdad.planning.method_sets import unmet_scores
from mdad.planning.result import Plan
from mdad.planning.simulated import SimulatedMdadAtSize, SimulatedPlan, simulated_mdad_at_size, simulated_plan
from mdad.planning.stored import StoredAnswer, plan_from_results

PlanAnswer = ExactSmallestSize | ExactMdadAtSize | SimulatedPlan | SimulatedMdadAtSize | StoredAnswer


@overload
def plan(
    matrix: ResponseMatrix | None = ...,
    *,
    detect: float | None = ...,
    size: int | None = ...,
    method: str = ...,
    threshold: float = ...,
    results: str | Path | None = ...,
    runs: int = ...,
    seed: int = ...,
    workers: int = ...,
    methods: None = ...,
    budget: None = ...,
    on_runs: Progress | None = ...,
    sources_curve: Literal[False] = ...,
    new_models: None = ...,
    scheduler: str | None = ...,
) -> PlanAnswer: ...


@overload
def plan(
    matrix: ResponseMatrix | None = ...,
    *,
    detect: float | None = ...,
    size: int | None = ...,
    method: str = ...,
    threshold: float = ...,
    results: str | Path | None = ...,
    runs: int = ...,
    seed: int = ...,
    workers: int = ...,
    methods: str | Sequence[str],
    budget: int | None = ...,
    on_runs: Progress | None = ...,
    sources_curve: bool = ...,
    new_models: str | None = ...,
    scheduler: str | None = ...,
) -> Plan: ...


@overload
def plan(
    matrix: ResponseMatrix | None = ...,
    *,
    detect: float | None = ...,
    size: int | None = ...,
    method: str = ...,
    threshold: float = ...,
    results: str | Path | None = ...,
    runs: int = ...,
    seed: int = ...,
    workers: int = ...,
    methods: str | Sequence[str] | None = ...,
    budget: int | None = ...,
    on_runs: Progress | None = ...,
    sources_curve: Literal[True],
    new_models: str | None = ...,
    scheduler: str | None = ...,
) -> Plan: ...


def plan(
    matrix: ResponseMatrix | None = None,
    *,
    detect: float | None = None,
    size: int | None = None,
    method: str = "random",
    threshold: float = DEFAULT_THRESHOLD,
    results: str | Path | None = None,
    runs: int = ASSESS_RUNS,
    seed: int = 0,
    workers: int = 1,
    methods: str | Sequence[str] | None = None,
    budget: int | None = None,
    on_runs: Progress | None = None,
    sources_curve: bool = False,
    new_models: str | None = None,
    scheduler: str | None = None,
) -> PlanAnswer | Plan:
    """The smallest size that orders pairs ``detect`` points apart, or the MDAD of ``size`` items;
    with ``methods``, every method's answer side by side and a recommendation.

    Parameters
    ----------
    matrix : ResponseMatrix, optional
        The results to plan on (missing cells allowed for the random designs); leave out with ``results``.
    detect, size : float, int
        Exactly one: the accuracy difference to tell apart (its bin of ``mdad.DEFAULT_BIN_WIDTH``
        points is used), or the number of items whose MDAD to report.
    method : str
        A random design (exact answer) or any other method (simulated on ``runs`` held-out runs).
    results : str or Path, optional
        Instead of ``matrix``: the folder of a finished run, whose stored curves give the answer.
    seed : int
        Seed of the simulation and of the proportional design's allocation draws.
    workers : int
        Local worker processes of the simulation.
    methods : str or sequence of str, optional
        ``"all"`` (every registered method the data can serve; the others are named with the reason),
        ``"paper"`` (the paper's set, the methods ``mdad run`` runs by default), a comma list or names:
        answer for each (uniform random always included) and recommend one by a stated rule (:class:`Plan`).
    budget : int, optional
        With ``methods`` and ``detect``: the probability that ``budget`` items order pairs ``detect``
        points apart, per method.
    on_runs : callable, optional
        Receives (method, held-out runs finished) as simulations advance.
    sources_curve : bool
        With ``methods``: add each learned method's answer as a function of the number of source
        models and where more stop helping (``Plan.sources_curves``).
    new_models : str
        With ``methods``: whom the answer is for: ``"like-sources"`` (random held-out models),
        ``"stronger"`` (the strongest models held out, as ``run --targets-from top``) or ``"both"``
        (``Plan.stronger`` holds the second population's answers); default ``"both"`` with ``methods``.
        Given with one ``method``, it is answered for that method beside uniform random (a :class:`Plan`).
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:8786``) that runs the simulations' held-out runs.

    Returns
    -------
    ExactSmallestSize, ExactMdadAtSize, SimulatedPlan, SimulatedMdadAtSize or StoredAnswer; Plan with ``methods``

    Examples
    --------
    >>> import mdad
    >>> matrix = mdad.simulate(seed=0, n_models=40, n_items=300)
    >>> mdad.plan(matrix, detect=10).smallest
    25
    >>> mdad.plan(matrix, size=50).reached
    True
    >>> choice = mdad.plan(matrix, detect=10, methods="random,random-stratified-equal,anchor-points", runs=3)
    >>> choice.to_frame()["method"].tolist()
    ['random', 'random-stratified-equal', 'anchor-points']
    >>> choice.recommended in choice.to_frame()["method"].tolist()
    True
    """
    if methods is not None or budget is not None or sources_curve or new_models is not None:
        if results is not None:
            raise MdadError(_not_from_results(budget, sources_curve))
        if matrix is None:
            raise MdadError("Give the results to plan on.")
        return plan_methods(
            matrix,
            detect=detect,
            size=size,
            budget=budget,
            methods=method if methods is None else methods,
            threshold=threshold,
            runs=runs,
            seed=seed,
            workers=workers,
            on_runs=on_runs,
            sources_curve=sources_curve,
            new_models="both" if new_models is None else new_models,
            scheduler=scheduler,
        )
    check_threshold(threshold)
    if (detect is None) == (size is None):
        raise MdadError("Give either --detect (points to tell apart) or --size (number of items), not both or neither.")
    method_registry.get(method)  # the registry is open to new methods: an unknown name is one clear error
    if results is not None:
        if matrix is not None:
            raise MdadError("--results answers from a finished run's own data; drop --data and --dataset.")
        if scheduler:
            raise MdadError("--results reads a finished run's curves and simulates nothing; drop --scheduler.")
        return plan_from_results(results, method, detect=detect, size=size, threshold=threshold)
    if matrix is None:
        raise MdadError("Give the results to plan on, or the folder of a finished run.")
    unmet = unmet_scores(method, matrix)
    if unmet is not None:
        raise MdadError(f"{method} {unmet}.")
    if scheduler and has_exact_answer(method):
        raise MdadError(f"--scheduler runs simulations and {method} is answered exactly; drop --scheduler.")
    report = on_runs
    one = None if report is None else (lambda done: report(method, done))
    if detect is not None:
        if has_exact_answer(method):
            return exact_smallest_size(matrix, detect=detect, design=method, threshold=threshold, seed=seed)
        return simulated_plan(
            matrix, method, detect=detect, threshold=threshold, runs=runs, seed=seed, workers=workers, on_runs=one, scheduler=scheduler
        )
    assert size is not None  # exactly one of the two is given
    if has_exact_answer(method):
        return exact_mdad_at_size(matrix, size=size, design=method, threshold=threshold, seed=seed)
    return simulated_mdad_at_size(
        matrix, method, size=size, threshold=threshold, runs=runs, seed=seed, workers=workers, on_runs=one, scheduler=scheduler
    )


def _not_from_results(budget: int | None, sources_curve: bool) -> str:
    """Why a question with several methods, a budget or a sources curve is not answered from a finished run."""
    if sources_curve:
        return (
            "--sources-curve simulates each method again with fewer source models, which a finished run's curves cannot answer; "
            "drop --results and give the data."
        )
    if budget is not None:
        return "--budget is answered from the data (exact, or simulated at that size), not from a finished run's curves; drop --results."
    return "A finished run answers each method from its own curves: ask mdad.planning.plans_from_results, which takes several methods."
