"""How many source models a learned method needs, from the user's own data (docs/plan.md#how-many-source-models).

The same held-out runs (same seed: same targets, same truths) are repeated with only the first
S non-target models of each run as sources, S on a 1-2-5 ladder (5, 10, 20, 50, 100, ...) up to
every non-target model; held-out targets are never sources. Fewer sources are nested in more, so
the curve differs between counts only by the sources. The answer is the count beyond which more
sources stop helping: the smallest count whose answer, and every larger count's, lies within the
noise of the answer with every source.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_THRESHOLD, PLAN_NOISE_SE, SOURCE_COUNTS
from mdad.errors import MdadError
from mdad.experiment.grid import default_targets
from mdad.metrics.analytic import has_exact_answer
from mdad.planning.simulated import simulated_mdad_at_size, simulated_plan


@dataclass(frozen=True, eq=False)
class SourcesCurve:
    """One method's answer as a function of the number of source models, and where more stop helping.

    Attributes
    ----------
    question : str
        ``"size"``: ``values`` are MDADs (points, NaN: not reached) at ``size`` items with their
        interval; ``"detect"``: ``values`` are the items needed (NaN: no size tried reaches the
        threshold) and ``share`` the share of pairs ``detect`` points apart ordered correctly at
        ``at_items`` (the answer with every source), with its standard error.
    enough : int or None
        The smallest count beyond which more sources stop helping (None: not even every source
        reaches an answer).
    undecided : tuple of int
        ``"detect"``: the counts whose items needed Monte Carlo noise can flip (a share deciding the
        answer lies within PLAN_NOISE_SE standard errors of the threshold; SimulatedPlan.undecided).
    runs_to_settle : int or None
        Held-out runs that would settle every one of them (None: none is undecided).
    """

    method: str
    question: str
    counts: np.ndarray
    values: np.ndarray
    low: np.ndarray
    high: np.ndarray
    share: np.ndarray
    stderr: np.ndarray
    at_items: int | None
    enough: int | None
    rule: str
    undecided: tuple[int, ...] = ()
    runs_to_settle: int | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per number of source models."""
        if self.question == "size":
            return pd.DataFrame({"sources": self.counts, "mdad": self.values, "mdad_low": self.low, "mdad_high": self.high})
        return pd.DataFrame({"sources": self.counts, "items_needed": self.values, "share_at_items": self.share, "stderr": self.stderr})


def source_counts(matrix: ResponseMatrix, targets: int | None = None) -> list[int]:
    """5, 10, 20, 50, 100, ... below the number of non-target models, then that number itself."""
    available = matrix.n_models - (targets if targets is not None else default_targets(matrix.n_models))
    if available < SOURCE_COUNTS[0]:
        raise MdadError(f"{matrix.source} leaves {available} source models besides the held-out targets; a curve needs at least {SOURCE_COUNTS[0]}.")
    return [s for s in SOURCE_COUNTS if s < available] + [available]


def sources_curve(
    matrix: ResponseMatrix,
    method: str,
    *,
    detect: float | None = None,
    size: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    runs: int = ASSESS_RUNS,
    seed: int = 0,
    workers: int = 1,
    on_runs: Callable[[int, float], None] | None = None,
) -> SourcesCurve:
    """MDAD at ``size`` (or the items needed for ``detect``) of ``method`` with 5, 10, 20, ... source models.

    ``on_runs(sources, runs finished)`` reports progress.

    Examples
    --------
    >>> import mdad
    >>> curve = sources_curve(mdad.simulate(seed=0, n_models=60, n_items=200), "anchor-points", size=25, runs=2)
    >>> curve.counts.tolist()
    [5, 10, 20, 30]
    """
    if has_exact_answer(method):
        raise MdadError(f"{method} uses no source models; a sources curve is for methods that learn from them.")
    if (detect is None) == (size is None):
        raise MdadError("A sources curve answers --detect or --size: give exactly one.")
    counts = source_counts(matrix)

    def progress(count: int) -> Callable[[float], None] | None:
        return None if on_runs is None else (lambda done: on_runs(count, done))

    options: dict[str, Any] = {"threshold": threshold, "runs": runs, "seed": seed, "workers": workers}
    if size is not None:
        found = [simulated_mdad_at_size(matrix, method, size=size, sources=s, on_runs=progress(s), **options).assessment for s in counts]
        values = np.array([a.mdad for a in found])
        low, high = np.array([a.mdad_low for a in found]), np.array([a.mdad_high for a in found])
        bound = high[-1] if not math.isnan(high[-1]) else math.inf
        within = ~np.isnan(values) & (values <= bound) if not math.isnan(values[-1]) else np.zeros(len(values), bool)
        rule = (
            "the smallest number of source models whose MDAD, and every larger number's, is no larger than the upper end "
            "of the interval of the MDAD with every source"
        )
        nan = np.full(len(counts), np.nan)
        return SourcesCurve(method, "size", np.array(counts), values, low, high, nan, nan, None, _first_for_good(counts, within), rule)
    assert detect is not None
    plans = [simulated_plan(matrix, method, detect=detect, sources=s, on_runs=progress(s), **options) for s in counts]
    values = np.array([np.nan if p.smallest is None else p.smallest for p in plans], dtype=float)
    full = plans[-1]
    at = len(full.sizes) - 1 if full.smallest is None else int(np.searchsorted(full.sizes, full.smallest))
    share = np.array([p.agreement[at] for p in plans])
    stderr = np.array([p.stderr[at] for p in plans])
    within = share >= share[-1] - PLAN_NOISE_SE * stderr[-1]
    rule = (
        f"the smallest number of source models whose share of pairs ordered correctly at {int(full.sizes[at])} items (the answer "
        f"with every source), and every larger number's, lies within {PLAN_NOISE_SE:g} standard errors of the share with every source"
    )
    enough = _first_for_good(counts, within) if full.smallest is not None else None
    nan = np.full(len(counts), np.nan)
    undecided = tuple(count for count, p in zip(counts, plans, strict=True) if len(p.undecided()))
    settle = [r for p in plans if (r := p.runs_to_settle()) is not None]
    return SourcesCurve(
        method, "detect", np.array(counts), values, nan, nan, share, stderr, int(full.sizes[at]), enough, rule, undecided, max(settle, default=None)
    )


def _first_for_good(counts: list[int], within: np.ndarray) -> int | None:
    """The first count from which every larger count is within the noise (None if the last is not)."""
    if not len(within) or not within[-1]:
        return None
    outside = np.flatnonzero(~within)
    return counts[int(outside[-1]) + 1] if len(outside) else counts[0]
