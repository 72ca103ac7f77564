"""`compare`: for each pair of chosen models, the probability that a random micro-benchmark keeps its order.

Each pair's probability is exact (``mdad.metrics.analytic``); the MDAD it is set against comes
from every pair of models of the data, so a pair below it is a comparison unlikely to be kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.memory import require_memory
from mdad.metrics import analytic
from mdad.metrics.pairwise import AgreementCurve
from mdad.outputs import neutralise_formulas
from mdad.planning.exact import check_pairs

PAIR_ROW_BYTES = 400  # one row of the pair table: numbers, names, sorting and a printed copy


@dataclass(frozen=True, eq=False)
class PairComparison:
    """Every pair of the chosen models at one size, against the MDAD of all pairs of the data.

    Attributes
    ----------
    label : str
        Which models were compared ("all 40 models", "group frontier", "3 chosen models").
    mdad : float
        MDAD of a ``size``-item ``method`` micro-benchmark over all pairs of the data (NaN: not reached).
    all_pairs : int
        The pairs behind that MDAD.
    pairs : DataFrame
        One row per chosen pair (see :meth:`to_frame`).
    """

    method: str
    source: str
    size: int
    threshold: float
    label: str
    mdad: float
    all_pairs: int
    pairs: pd.DataFrame

    @property
    def below_mdad(self) -> int:
        """Pairs that differ by less than the MDAD (all of them when it is not reached)."""
        return int(self.pairs["below_mdad"].sum())

    @property
    def mean_probability(self) -> float:
        return float(self.pairs["p_correct_order"].mean())

    @property
    def share_below_threshold(self) -> float:
        """Share of pairs whose probability of the correct order is below the threshold."""
        return float((self.pairs["p_correct_order"] < self.threshold).mean())

    def to_frame(self) -> pd.DataFrame:
        """One row per pair, the better model first, closest pairs first: accuracies, difference (points),
        probability of the correct order, shared items, and whether the difference is below the MDAD."""
        return self.pairs.copy()


def chosen_models(matrix: ResponseMatrix, group: str | None, models: Sequence[str] | None) -> tuple[np.ndarray, str]:
    """Indices of the models to compare and how to name them: a group, named models, or every model."""
    if group is not None and models is not None and len(models):
        raise MdadError("Give --group or --models, not both.")
    if group is not None:
        return matrix.group_index(group), f"group {group}"
    if models is not None and len(models):
        chosen = matrix.model_index(list(models))
        if len(np.unique(chosen)) < 2:
            raise MdadError("--models must name at least two different models.")
        chosen = np.unique(chosen)
        return chosen, f"{len(chosen)} chosen models"
    return np.arange(matrix.n_models), f"all {matrix.n_models} models"


def pair_frame(
    matrix: ResponseMatrix, stats: analytic.PairStats, probs: np.ndarray, mdad: float, *, names=None, accuracy=None, sort: bool = True
) -> pd.DataFrame:
    """One row per pair, the better model first, closest pairs first (``sort``; else in the pairs' order).

    ``names`` and ``accuracy`` (per model, points) may be given once for many blocks of pairs."""
    diff = stats.diff_points
    flip = diff < 0
    a = np.where(flip, stats.second, stats.first)
    b = np.where(flip, stats.first, stats.second)
    acc = matrix.accuracy() * 100.0 if accuracy is None else accuracy
    names = matrix.models if names is None else names
    frame = pd.DataFrame(
        {
            "model_a": names[a],
            "model_b": names[b],
            "accuracy_a": acc[a],
            "accuracy_b": acc[b],
            "difference_points": np.abs(diff),
            "p_correct_order": probs,
            "pool_items": stats.pool,
            "below_mdad": np.abs(diff) < mdad if not np.isnan(mdad) else np.ones(len(diff), bool),
        }
    )
    return _closest_first(frame) if sort else frame


def compare(
    matrix: ResponseMatrix,
    *,
    size: int,
    method: str = "random",
    threshold: float = DEFAULT_THRESHOLD,
    group: str | None = None,
    models: Sequence[str] | None = None,
    seed: int = 0,
) -> PairComparison:
    """Which comparisons of models a ``size``-item ``method`` micro-benchmark can be trusted with, exactly.

    Parameters
    ----------
    matrix : ResponseMatrix
        Results; missing cells are allowed (each pair is judged on the items both models answered).
    size : int
        Items of the micro-benchmark.
    method : str
        One of the random designs (``mdad.metrics.analytic.DESIGNS``).
    group, models : optional
        The models to compare: a named group (groups.json beside the data) or model names
        (default: every model).

    Examples
    --------
    >>> import mdad
    >>> matrix = mdad.simulate(seed=0, n_models=40, n_items=300)
    >>> found = mdad.compare(matrix, size=50, models=matrix.models[:3])
    >>> found.label, len(found.to_frame()), found.mdad
    ('3 chosen models', 3, 6.0)
    """
    chosen, label, curve, mdad = _checked_models_and_curve(matrix, size, method, threshold, group, models, seed, whole_table=True)
    stats = analytic.pair_stats(matrix, models=chosen)
    probs = analytic.agreement_probabilities(stats, size, method, seed=seed)
    return PairComparison(
        method=method,
        source=matrix.source,
        size=size,
        threshold=threshold,
        label=label,
        mdad=mdad,
        all_pairs=int(curve.pairs.sum()),
        pairs=pair_frame(matrix, stats, probs, mdad),
    )


COMPARE_BLOCK_PAIRS = 1 << 18  # pairs x strata per block of a streamed comparison (names are shared, not copied)


@dataclass(frozen=True, eq=False)
class StreamedComparison:
    """What :func:`compare_streamed` keeps of every pair: totals and the ``top`` closest pairs."""

    method: str
    source: str
    size: int
    threshold: float
    label: str
    mdad: float
    all_pairs: int
    n_pairs: int
    below_mdad: int
    mean_probability: float
    share_below_threshold: float
    closest: pd.DataFrame  # the closest pairs, sorted as :meth:`PairComparison.to_frame`


def compare_streamed(
    matrix: ResponseMatrix,
    *,
    size: int,
    method: str = "random",
    threshold: float = DEFAULT_THRESHOLD,
    group: str | None = None,
    models: Sequence[str] | None = None,
    seed: int = 0,
    top: int = 30,
    on_block: Callable[[pd.DataFrame], None] | None = None,
) -> StreamedComparison:
    """:func:`compare` in bounded memory: pairs in blocks, each handed to ``on_block`` (e.g. appended to a
    CSV) in the order of the models, only the ``top`` closest kept (``top`` <= 0: all of them).

    Examples
    --------
    >>> import mdad
    >>> matrix = mdad.simulate(seed=0, n_models=40, n_items=300)
    >>> found = compare_streamed(matrix, size=50, top=3)
    >>> found.n_pairs, len(found.closest), found.mdad
    (780, 3, 6.0)
    """
    chosen, label, curve, mdad = _checked_models_and_curve(matrix, size, method, threshold, group, models, seed, whole_table=top <= 0)
    names = neutralise_formulas(pd.DataFrame({"model": matrix.models}))["model"].to_numpy(object)
    accuracy = matrix.accuracy() * 100.0
    n_pairs = below = below_threshold = 0
    total = 0.0
    closest = pd.DataFrame()
    every: list[pd.DataFrame] = []  # top <= 0: every block, sorted once at the end
    for stats in analytic.iter_pair_stats(matrix, chosen, block_elements=COMPARE_BLOCK_PAIRS):
        probs = analytic.agreement_probabilities(stats, size, method, seed=seed)
        frame = pair_frame(matrix, stats, probs, mdad, names=names, accuracy=accuracy, sort=False)
        if on_block is not None:
            on_block(frame)
        n_pairs += len(frame)
        below += int(frame["below_mdad"].sum())
        total += float(probs.sum())
        below_threshold += int((probs < threshold).sum())
        if top <= 0:
            every.append(frame)
            continue
        if len(frame) > top:  # the block's closest first: memory stays at ``top`` rows
            keep = np.argpartition(frame["difference_points"].to_numpy(), top - 1)[:top]
            cut = frame["difference_points"].to_numpy()[keep].max()
            frame = frame[frame["difference_points"].to_numpy() <= cut]  # ties at the cut kept: the order stays exact
        closest = _closest_first(pd.concat([closest, frame], ignore_index=True) if len(closest) else frame).head(top)
    if every:
        closest = _closest_first(pd.concat(every, ignore_index=True))
    return StreamedComparison(
        method=method,
        source=matrix.source,
        size=size,
        threshold=threshold,
        label=label,
        mdad=mdad,
        all_pairs=int(curve.pairs.sum()),
        n_pairs=n_pairs,
        below_mdad=below,
        mean_probability=total / n_pairs,
        share_below_threshold=below_threshold / n_pairs,
        closest=closest,
    )


def _closest_first(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["difference_points", "model_a", "model_b"], kind="stable", ignore_index=True)


def _checked_models_and_curve(
    matrix: ResponseMatrix, size: int, method: str, threshold: float, group: str | None, models: Sequence[str] | None, seed: int, *, whole_table: bool
) -> tuple[np.ndarray, str, AgreementCurve, float]:
    """What both comparisons start with: the options checked, the chosen models, every pair's exact
    agreement curve and its MDAD; a table of every chosen pair (``whole_table``) is refused up front
    when it cannot fit in memory."""
    check_threshold(threshold)
    analytic.check_design(method)
    check_pairs(matrix)
    chosen, label = chosen_models(matrix, group, models)
    if whole_table:
        n_chosen = len(chosen) * (len(chosen) - 1) // 2
        require_memory(n_chosen * PAIR_ROW_BYTES, f"A table of {n_chosen:,} pairs of models")
    curve = analytic.streamed_curve(matrix, size, method, seed=seed)
    return chosen, label, curve, curve.crossing(threshold)
