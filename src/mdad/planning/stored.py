"""Answers from the simulated agreement curves of a finished ``mdad run`` (seen items, most source models).

No new simulation: the stored runs are evaluated again at the asked threshold, and the answer is
read at the sizes the run holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np

from mdad.defaults import DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.metrics.pairwise import Mdad
from mdad.planning.bins import bin_label, bin_lower


@dataclass(frozen=True, eq=False)
class StoredAnswer:
    """What a finished run says about one method: the MDAD at ``size``, or the smallest stored size for a bin.

    Attributes
    ----------
    results : Path
        The run's folder.
    runs, sources : int
        Its runs and the number of source models read (the largest stored).
    size : int or None
        The size asked for (MDAD answer); None for the smallest-size answer.
    mdad, mdad_low, mdad_high : float
        MDAD at ``size`` and its interval (NaN when not reached or not asked).
    lower : float
        Lower edge of the bin of difference asked for (NaN when ``size`` was asked).
    smallest : int or None
        The smallest stored size whose agreement in that bin reaches the threshold.
    agreement : float
        The agreement at ``smallest`` (NaN when none).
    largest : int
        The largest stored size.
    pairs : int
        Pairs in the bin where the MDAD at ``size`` crosses the threshold (0 when not asked or reached).
    robust : Mdad or None
        The robust MDAD at ``size`` with its interval (None when not asked or not stored).
    warning : str
        Why the MDAD at ``size`` is noise or cannot be estimated at all ("" when it can be trusted).
    estimable : bool
        False when the run has too few targets or runs for any MDAD (``warning`` says why).
    note : str
        One sentence when the run was written under another results version (mdad.results_version), else "".
    """

    method: str
    results: Path
    runs: int | None
    sources: int
    threshold: float
    size: int | None = None
    mdad: float = float("nan")
    mdad_low: float = float("nan")
    mdad_high: float = float("nan")
    lower: float = float("nan")
    smallest: int | None = None
    agreement: float = float("nan")
    largest: int = 0
    pairs: int = 0
    robust: Mdad | None = None
    warning: str = ""
    estimable: bool = True
    note: str = ""

    @property
    def reached(self) -> bool:
        """At ``size``: whether MDAD is reached; for a bin: whether some stored size orders it."""
        return not np.isnan(self.mdad) if self.size is not None else self.smallest is not None

    @property
    def label(self) -> str:
        return bin_label(self.lower)


def plan_from_results(
    results: str | Path, method: str, *, detect: float | None = None, size: int | None = None, threshold: float = DEFAULT_THRESHOLD
) -> StoredAnswer:
    """The MDAD of ``method`` at ``size``, or the smallest stored size ordering pairs ``detect`` points apart.

    Parameters
    ----------
    results : str or Path
        A folder written by ``mdad run`` (or ``mdad.Experiment`` with a store).
    method : str
        A method the run holds.
    detect, size : float, int
        Exactly one: points to tell apart, or the number of items.

    Examples
    --------
    >>> import tempfile, mdad
    >>> from mdad.experiment.store import ResultStore
    >>> matrix = mdad.simulate(seed=0, n_models=40, n_items=100)
    >>> config = mdad.ExperimentConfig.for_matrix(matrix, methods="random", sizes=(10, 25), runs=5)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = mdad.Experiment(matrix, config, store=ResultStore(folder)).run()
    ...     found = plan_from_results(folder, "random", size=25)
    >>> found.runs, found.sources, found.largest
    (5, 20, 25)
    """
    return plans_from_results(results, [method], detect=detect, size=size, threshold=threshold)[0]


def plans_from_results(
    results: str | Path,
    methods: str | Sequence[str],
    *,
    detect: float | None = None,
    size: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[StoredAnswer]:
    """:func:`plan_from_results` for each of ``methods`` (a comma list, names, or ``"all"``: every method the
    run holds), the run's cells evaluated once; a method the run does not hold is one error sentence."""
    from mdad.experiment.evaluate import evaluate_store
    from mdad.experiment.store import ResultStore

    check_threshold(threshold)
    if (detect is None) == (size is None):
        raise MdadError("Give either the difference to detect or the size, not both or neither.")
    if detect is not None:
        bin_lower(detect)  # a difference out of range is refused before the run is read
    results = Path(results)
    store = ResultStore(results)
    config = store.read_config()
    summary, curves = evaluate_store(store, threshold=threshold, seed=config.get("seed", 0))
    stored = list(dict.fromkeys(summary["method"])) if not summary.empty else []
    names = [n.strip() for n in methods.split(",")] if isinstance(methods, str) else [str(n).strip() for n in methods]
    names = [n for n in names if n]
    if not names:
        raise MdadError("Name at least one method, or 'all'.")
    names = stored if names == ["all"] else list(dict.fromkeys(names))
    absent = [n for n in names if n not in stored]
    if absent or not stored:
        which = f"method {absent[0]!r}" if absent else "any method"
        raise MdadError(f"{results} holds no results for {which} (stored: {', '.join(sorted(stored)) or 'none'}).")
    note = store.version_note("plan answers from") or ""
    return [replace(_stored_answer(results, config, summary, curves, name, detect, size, threshold), note=note) for name in names]


def _stored_answer(
    results: Path, config: dict, summary, curves, method: str, detect: float | None, size: int | None, threshold: float
) -> StoredAnswer:
    """One method's answer from the evaluated cells of a run (``summary``, ``curves``)."""
    rows = summary[(summary["method"] == method) & (summary["view"] == "seen")]
    sources = int(rows["sources"].max())
    rows = rows[rows["sources"] == sources].sort_values("size")
    answer = partial(
        StoredAnswer, method=method, results=results, runs=config.get("runs"), sources=sources, threshold=threshold, largest=int(rows["size"].max())
    )
    if size is not None:
        row = rows[rows["size"] == size]
        if row.empty:
            raise MdadError(f"{results} has no {method} results at size {size} (stored sizes: {', '.join(str(s) for s in rows['size'])}).")
        r = row.iloc[0]
        robust = Mdad(float(r["mdad_robust"]), float(r["mdad_robust_low"]), float(r["mdad_robust_high"]), threshold) if "mdad_robust" in r else None
        answer = partial(
            answer,
            size=size,
            pairs=int(r.get("mdad_pairs", 0)),
            robust=robust,
            warning=str(r.get("mdad_warning", "")),
            estimable=bool(r.get("mdad_estimable", True)),
        )
        if not r["mdad_reached"]:
            return answer()
        return answer(mdad=float(r["mdad"]), mdad_low=float(r["mdad_low"]), mdad_high=float(r["mdad_high"]))
    assert detect is not None  # exactly one of the two is given
    lower = bin_lower(detect)
    seen = curves[(curves["method"] == method) & (curves["view"] == "seen") & (curves["sources"] == sources)]
    at = seen[np.isclose(seen["diff_low"], lower)].set_index("size")["agreement"]
    reached = [int(s) for s in rows["size"] if s in at.index and at[s] >= threshold]
    if not reached:
        return answer(lower=lower)
    k = min(reached)
    return answer(lower=lower, smallest=k, agreement=float(at[k]))
