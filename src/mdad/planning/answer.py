"""`plan`: how many items a micro-benchmark needs to order models D points apart, or its MDAD at a size.

One entry point, each question answered the best way available: exactly for the random designs
(:mod:`mdad.planning.exact`), by a quick simulation on held-out runs for every other method
(:mod:`mdad.planning.simulated`), or from the curves of a finished run (:mod:`mdad.planning.stored`).
"""

from __future__ import annotations

from pathlib import Path

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.metrics.analytic import DESIGNS
from mdad.planning.exact import ExactMdadAtSize, ExactSmallestSize, exact_mdad_at_size, exact_smallest_size
from mdad.planning.simulated import SimulatedMdadAtSize, SimulatedPlan, simulated_mdad_at_size, simulated_plan
from mdad.planning.stored import StoredAnswer, plan_from_results

PlanAnswer = ExactSmallestSize | ExactMdadAtSize | SimulatedPlan | SimulatedMdadAtSize | StoredAnswer


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
) -> PlanAnswer:
    """The smallest size that orders pairs ``detect`` points apart, or the MDAD of ``size`` items.

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

    Returns
    -------
    ExactSmallestSize, ExactMdadAtSize, SimulatedPlan, SimulatedMdadAtSize or StoredAnswer

    Examples
    --------
    >>> import mdad
    >>> matrix = mdad.simulate(seed=0, n_models=40, n_items=300)
    >>> mdad.plan(matrix, detect=10).smallest
    25
    >>> mdad.plan(matrix, size=50).reached
    True
    """
    check_threshold(threshold)
    if (detect is None) == (size is None):
        raise MdadError("Give either --detect (points to tell apart) or --size (number of items), not both or neither.")
    method_registry.get(method)  # the registry is open to new methods: an unknown name is one clear error
    if results is not None:
        if matrix is not None:
            raise MdadError("--results answers from a finished run's own data; drop --data and --dataset.")
        return plan_from_results(results, method, detect=detect, size=size, threshold=threshold)
    if matrix is None:
        raise MdadError("Give the results to plan on, or the folder of a finished run.")
    if detect is not None:
        if method in DESIGNS:
            return exact_smallest_size(matrix, detect=detect, design=method, threshold=threshold, seed=seed)
        return simulated_plan(matrix, method, detect=detect, threshold=threshold, runs=runs, seed=seed, workers=workers)
    assert size is not None  # exactly one of the two is given
    if method in DESIGNS:
        return exact_mdad_at_size(matrix, size=size, design=method, threshold=threshold, seed=seed)
    return simulated_mdad_at_size(matrix, method, size=size, threshold=threshold, runs=runs, seed=seed, workers=workers)
