"""Analytic agreement curves of a stored run, and the figure that sets them beside the simulated ones.

For the random designs the expected agreement of every target pair in every run is exact
given that run's split: the micro-benchmark is drawn from the run's seen items, the truth
is the pair's accuracy on the seen items (``seen`` view) or on the unseen items (``unseen``
view). Averaging these probabilities per 0.5-point bin gives the curve the simulated runs
estimate, so the two should agree up to the simulation's Monte Carlo error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix, fingerprint
from mdad.data.provenance import read_again
from mdad.defaults import BIN_TEXT, DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD
from mdad.errors import MdadError
from mdad.experiment.splits import make_splits
from mdad.experiment.store import ResultStore
from mdad.metrics import analytic
from mdad.metrics.exact import agreement
from mdad.metrics.pairwise import AgreementCurve
from mdad.report.figures import method_styles, styled, subplots
from mdad.wording import plural

CURVE_COLUMNS = ["method", "size", "sources", "view", "diff_low", "pairs", "agreed", "agreement"]


# The report computes exact curves for uniform sampling only: it is instant for every run's
# pairs, while the stratified designs' convolutions over all runs' pairs take minutes on large
# pools (`mdad plan` / `mdad compare` answer them for the data's own pairs).
REPORT_DESIGNS = tuple(name for name in analytic.DESIGNS if method_registry.get(name).design == "uniform")


def _stack(parts: list[analytic.PairStats]) -> analytic.PairStats:
    fields = ("first", "second", "sizes", "n_plus", "n_minus", "sum_d", "sum_d2")
    return analytic.PairStats(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in fields}, binary=parts[0].binary, strata=parts[0].strata)


def run_pair_stats(matrix: ResponseMatrix, config: dict) -> tuple[analytic.PairStats, np.ndarray]:
    """Target pairs of every run of a stored experiment: stats on the seen items, and the unseen difference (points)."""
    if fingerprint(matrix) != config.get("data_fingerprint"):
        raise MdadError(
            f"The data given ({matrix.source}) is not the data the stored run used ({config.get('data_source')}); pass the same response matrix."
        )
    splits = make_splits(
        matrix, config["runs"], config["targets"], config["seed"], config.get("group"), targets_from=config.get("targets_from", "random")
    )
    seen, unseen = [], []
    for run in range(splits.n_runs):
        targets = splits.targets[run]
        seen.append(analytic.pair_stats(matrix, models=targets, items=splits.seen[run]))
        unseen.append(analytic.pair_stats(matrix, models=targets, items=splits.unseen[run]).diff_points)
    return _stack(seen), np.concatenate(unseen)


def matrix_of_run(config: dict) -> tuple[ResponseMatrix | None, str]:
    """The response matrix a stored run used, read again from what its config records (see
    :mod:`mdad.data.provenance`): (matrix, "") or (None, a sentence naming why not)."""
    spec = config.get("data") or {"dataset": config.get("data_source"), "missing": "error"}
    return read_again(spec, config.get("data_fingerprint", ""))


def analytic_curves_for_store(
    out_dir: str | Path, matrix: ResponseMatrix, bin_width: float = DEFAULT_BIN_WIDTH, designs: tuple[str, ...] = analytic.DESIGNS
) -> pd.DataFrame:
    """Analytic curves (columns as the run's curves frame) for every random-design cell of a stored run.

    ``agreed`` is the expected number of agreeing pair-runs (a float). Random designs ignore
    the source models, so every number of sources of a (method, size) gets the same curve.
    """
    store = ResultStore(out_dir)
    config = store.read_config()
    cells = [c for c in store.cells() if c.method in designs]
    if not cells:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    stats, unseen_diff = run_pair_stats(matrix, config)
    frames = []
    for method, size in sorted({(c.method, c.size) for c in cells}):
        pos, neg = analytic.sign_probabilities(stats, size, method, config.get("seed", 0))
        for view, diff in (("seen", stats.diff_points), ("unseen", unseen_diff)):
            curve = analytic.expected_curve(agreement(pos, neg, diff), diff, bin_width=bin_width)
            for sources in sorted({c.sources for c in cells if (c.method, c.size) == (method, size)}):
                frames.append(
                    pd.DataFrame(
                        {
                            "method": method,
                            "size": size,
                            "sources": sources,
                            "view": view,
                            "diff_low": curve.lower,
                            "pairs": curve.pairs,
                            "agreed": curve.agreed,
                            "agreement": curve.rate,
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)


@styled
def analytic_vs_simulated(
    curves: pd.DataFrame,
    analytic_curves: pd.DataFrame,
    size: int,
    view: str = "seen",
    sources: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    max_diff: float = 20.0,
):
    """Simulated agreement (points) and analytic expectation (line) against the true difference, per random design."""

    def pick(frame):
        return frame[(frame["view"] == view) & (frame["size"] == size) & (frame["method"].isin(analytic_curves["method"]))]

    sim, exact = pick(curves), pick(analytic_curves)
    sources = sources if sources is not None else int(exact["sources"].max()) if len(exact) else None
    fig, ax = subplots(figsize=(6.4, 4.2))
    styles = method_styles(exact["method"].unique())
    for method, rows in exact[exact["sources"] == sources].groupby("method", sort=True):
        rows = rows[rows["diff_low"] <= max_diff]
        color = styles[method]["color"]
        ax.plot(rows["diff_low"], rows["agreement"], color=color, label=f"{method} (exact)")
        dots = sim[(sim["method"] == method) & (sim["sources"] == sources) & (sim["diff_low"] <= max_diff)]
        ax.scatter(dots["diff_low"], dots["agreement"], s=12, color=color, alpha=0.6, label=f"{method} (simulated)")
    ax.axhline(threshold, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel(f"true accuracy difference (points, {BIN_TEXT} bins)")
    ax.set_ylabel(f"P(same order as the {view} items)")
    ax.set_title(f"{plural(size, 'item')}: exact expectation and simulated runs ({view} items)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


def exact_curves_of_run(out_dir: str | Path, matrix: ResponseMatrix | None = None) -> tuple[pd.DataFrame, str]:
    """The exact curves of a stored run's uniform random cells (:func:`analytic_curves_for_store`), computed
    once for the report, the tables and the figures; with an empty frame, a sentence saying why there are none.
    ``matrix`` is the run's data when the caller holds it; otherwise it is read again from the run's config."""
    reason = ""
    if matrix is None:
        matrix, reason = matrix_of_run(ResultStore(out_dir).read_config())
    if matrix is None:
        return pd.DataFrame(columns=CURVE_COLUMNS), reason
    curves = analytic_curves_for_store(out_dir, matrix, designs=REPORT_DESIGNS)
    return curves, "" if len(curves) else "the run has no uniform random cells"


def analytic_figures(
    out_dir: str | Path,
    curves: pd.DataFrame,
    threshold: float = DEFAULT_THRESHOLD,
    matrix: ResponseMatrix | None = None,
    exact: tuple[pd.DataFrame, str] | None = None,
) -> tuple[list[tuple[str, object]], str]:
    """(title, figure) pairs setting exact and simulated curves side by side for the smallest and largest
    size of a stored run (seen items), and why there are none when there are none (a sentence).
    ``exact`` is :func:`exact_curves_of_run`'s answer when the caller has it already."""
    exact_curves, reason = exact if exact is not None else exact_curves_of_run(out_dir, matrix)
    if exact_curves.empty:
        return [], reason
    sizes = sorted(exact_curves["size"].unique())
    return [
        (
            f"Exact and simulated agreement, {plural(size, 'item')} (uniform random sampling)",
            analytic_vs_simulated(curves, exact_curves, int(size), threshold=threshold),
        )
        for size in sorted({sizes[0], sizes[-1]})
    ], ""


def exact_mdads(
    out_dir: str | Path, threshold: float = DEFAULT_THRESHOLD, matrix: ResponseMatrix | None = None, exact_curves: pd.DataFrame | None = None
) -> dict[tuple[str, int], float]:
    """(method, size) -> exact MDAD on the seen items (NaN: not reached) of every uniform random cell of a
    stored run: the same runs' targets and seen halves, no simulation. Empty when the run has no such
    cells or its data cannot be read again. ``exact_curves``: :func:`exact_curves_of_run`'s frame, if at hand."""
    exact = exact_curves if exact_curves is not None else exact_curves_of_run(out_dir, matrix)[0]
    if exact.empty:
        return {}
    crossings = exact_crossings(exact, threshold)
    seen = crossings[(crossings["view"] == "seen") & (crossings["sources"] == crossings["sources"].max())]
    return {(str(r.method), int(r.size)): float(r.mdad_exact) for r in seen.itertuples()}


def exact_crossings(exact_curves: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
    """One row per (method, size, sources, view) of :func:`exact_curves_of_run`'s frame: the exact MDAD
    (``mdad_exact``, points; NaN: not reached), where the exact agreement curve first reaches ``threshold``."""
    keys = ["method", "size", "sources", "view"]
    rows = []
    for key, part in exact_curves.groupby(keys, sort=True):
        curve = AgreementCurve(part["diff_low"].to_numpy(float), part["pairs"].to_numpy(), part["agreed"].to_numpy(), DEFAULT_BIN_WIDTH)
        rows.append((*key, curve.crossing(threshold)))
    return pd.DataFrame(rows, columns=[*keys, "mdad_exact"])


def with_exact(summary: pd.DataFrame, exact_curves: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
    """``summary`` with the exact MDAD beside the simulated one in every row of a uniform random cell:
    ``mdad_exact`` (points; NaN when not reached or not such a cell) and ``mdad_exact_reached`` (True,
    False, or NA in the rows of other methods, in rows whose target pairs are too few for any MDAD, and
    in every row when the data could not be read again)."""
    keys = ["method", "size", "sources", "view"]
    out = summary.drop(columns=["mdad_exact", "mdad_exact_reached"], errors="ignore")
    exact = {tuple(key): value for *key, value in exact_crossings(exact_curves, threshold).itertuples(index=False)} if len(exact_curves) else {}
    found = [exact.get((str(m), int(k), int(s), str(v))) for m, k, s, v in zip(*(out[key] for key in keys), strict=True)]
    if "mdad_estimable" in out:  # too few target pairs for any MDAD: the exact one rests on the same few pairs
        found = [value if ok else None for value, ok in zip(found, out["mdad_estimable"].astype(bool), strict=True)]
    out["mdad_exact"] = [np.nan if value is None else value for value in found]
    out["mdad_exact_reached"] = pd.array([pd.NA if value is None else not np.isnan(value) for value in found], dtype="boolean")
    return out


def exact_mdad_table(summary: pd.DataFrame, exact: dict[tuple[str, int], float]) -> pd.DataFrame:
    """The exact MDAD of :func:`exact_mdads` beside the simulated first-crossing and robust MDAD (seen items)."""
    from mdad.report.tables import format_mdad, format_points, format_robust

    columns = ["method", "size", "exact MDAD (pts)", "simulated MDAD (pts)", "robust MDAD (pts)"]
    sim = summary[(summary["view"] == "seen") & (summary["sources"] == summary["sources"].max())]
    rows = []
    for (method, size), value in exact.items():
        row = sim[(sim["method"] == method) & (sim["size"] == size)]
        rows.append(
            {
                "method": method,
                "size": size,
                "exact MDAD (pts)": format_points(value),
                "simulated MDAD (pts)": format_mdad(row.iloc[0]) if len(row) else "",
                "robust MDAD (pts)": format_robust(row.iloc[0]) if len(row) else "",
            }
        )
    return pd.DataFrame(rows, columns=columns)
