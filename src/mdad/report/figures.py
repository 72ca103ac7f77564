"""Figures of the meta-evaluation (matplotlib, no display needed).

Every function takes the tidy frames of ``mdad.experiment.evaluate`` and returns a
matplotlib figure. Conventions shared by all figures: one colour per selection method
(its per-subtask variant dashed, in the same colour), sizes on a log axis labelled with
the count and its share of the seen pool, and MDAD "not reached" drawn as hollow
triangles in a grey strip above the axis, never as a number.
"""

from __future__ import annotations

import io
from functools import wraps
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from mdad.defaults import DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD, percent
from mdad.experiment.evaluate import METRICS, VIEWS
from mdad.methods.names import parse
from mdad.report.tables import NOT_REACHED, PAIR_METRICS
from mdad.wording import plural

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.typing import RcKeyType

STYLE: dict[RcKeyType, Any] = {
    "font.size": 9.5,
    "axes.titlesize": 10.5,
    "axes.labelsize": 9.5,
    "legend.fontsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "svg.hashsalt": "mdad",
}
# Embedded PNGs carry 1.5 pixels per CSS pixel (sharp on high-density screens) and are shown
# at their size in CSS pixels, never stretched.
PNG_DPI = 150
CSS_DPI = 100
STRIP_COLOR = "#ececec"
VIEW_WORDS = {"seen": "seen items (the pool it was built from)", "unseen": "unseen items (new items of the same task)"}


def subplots(nrows: int = 1, ncols: int = 1, *, figsize=None, **kwargs):
    """A figure and its axes, made without pyplot: no backend is chosen (a notebook's stays as it
    is) and nothing is left open; ``render`` draws it on its own Agg canvas."""
    fig = Figure(figsize=figsize)
    return fig, fig.subplots(nrows, ncols, **kwargs)


def styled(func):
    """Build the figure under the report's matplotlib style."""

    @wraps(func)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return func(*args, **kwargs)

    return wrapper


FORMATS = ("png", "svg", "pdf")


def render(fig, formats=("png",)) -> dict[str, bytes]:
    """The figure as PNG, SVG and/or PDF bytes (reproducible: no dates in the metadata)."""
    out = {}
    for fmt in formats:
        buffer = io.BytesIO()
        metadata = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
        with matplotlib.rc_context(STYLE):
            fig.savefig(buffer, format=fmt, bbox_inches="tight", metadata=metadata, dpi=PNG_DPI if fmt == "png" else None)
        out[fmt] = buffer.getvalue()
    return out


def css_width(png: bytes) -> int:
    """The width in CSS pixels at which a PNG of :func:`render` shows at its intended size."""
    pixels = int.from_bytes(png[16:20], "big")  # IHDR width
    return round(pixels * CSS_DPI / PNG_DPI)


# ---- shared pieces ------------------------------------------------------------------
def method_order(methods) -> list[str]:
    """Methods sorted by base method, each followed by its per-subtask variant."""
    return sorted(set(methods), key=parse)


def method_styles(methods) -> dict[str, dict]:
    """Colour by base method (stable, alphabetical), dashed line and hollow marker for per-subtask variants."""
    bases = sorted({parse(m).base for m in methods})
    cmap = matplotlib.colormaps["tab10" if len(bases) <= 10 else "tab20"]
    colors = {b: cmap(i % cmap.N) for i, b in enumerate(bases)}
    out = {}
    for m in methods:
        variant = parse(m).per_subtask
        out[m] = {
            "color": colors[parse(m).base],
            "linestyle": "--" if variant else "-",
            "marker": "s" if variant else "o",
            "markerfacecolor": "white" if variant else colors[parse(m).base],
        }
    return out


def panel_grid(n: int, ncols: int, width: float = 10.0, height: float = 3.0, sharey: bool = True):
    """A figure with ``n`` panels in rows of ``ncols``, and the list of those panels' axes (spare cells hidden)."""
    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    fig, axes = subplots(nrows, ncols, figsize=(width, height * nrows + 0.4), sharey=sharey, squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, list(axes.ravel()[:n])


def _size_axis(ax, sizes, n_seen: int | None) -> None:
    """Log-scaled size axis, ticks at the sizes, labelled with count and share of the seen pool."""
    sizes = sorted(int(s) for s in sizes)
    ax.set_xscale("log")
    labels = [f"{s}\n{100 * s / n_seen:.2g}%" if n_seen else str(s) for s in sizes]
    ax.set_xticks(sizes, labels, fontsize=8)
    ax.minorticks_off()
    if len(sizes) > 1:
        ax.set_xlim(sizes[0] / 1.25, sizes[-1] * 1.25)
    else:
        ax.set_xlim(sizes[0] / 2, sizes[0] * 2)


def mdad_top(rows: pd.DataFrame) -> float:
    """The top of the MDAD axis: above every reached MDAD and interval end, at least 2 points."""
    values = rows[[c for c in ("mdad", "mdad_low", "mdad_high", "mdad_exact") if c in rows]].to_numpy(float)
    values = values[np.isfinite(values)]
    top = float(values.max()) if values.size else 5.0
    return max(2.0, top * 1.12)


def _not_reached_strip(ax, top: float, show: bool = True) -> float:
    """Grey strip above ``top``, its tick labelled "not reached", where those MDADs are drawn; returns its y."""
    height = top * 0.14 if show else 0.0
    ax.set_ylim(0, top + height)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
    ticks = [t for t in ax.get_yticks() if 0 <= t <= top - 0.04 * top]
    labels = [f"{t:g}" for t in ticks]
    middle = top + height * 0.5
    if show:
        ax.axhspan(top, top + height, color=STRIP_COLOR, zorder=0, linewidth=0)
        ticks, labels = [*ticks, middle], [*labels, NOT_REACHED]
    ax.set_yticks(ticks, labels)
    return middle


def _mdad_lines(
    ax, rows: pd.DataFrame, x: str, styles: dict, top: float, y_missing: float, linestyle=None, band: bool = True, label_suffix: str = ""
) -> None:
    """MDAD of each method against ``x``: line with markers, interval band, hollow triangles where not reached."""
    for method, part in rows.groupby("method", sort=True):
        part = part.sort_values(x)
        st = styles[method]
        xs = part[x].to_numpy(float)
        value = part["mdad"].to_numpy(float)
        ls = linestyle or st["linestyle"]
        ax.plot(
            xs,
            value,
            color=st["color"],
            linestyle=ls,
            marker=st["marker"],
            markersize=5,
            markerfacecolor=st["markerfacecolor"],
            linewidth=1.8,
            label=f"{method}{label_suffix}",
            zorder=3,
        )
        if band:
            low = np.where(np.isfinite(part["mdad_low"]), part["mdad_low"], top)
            high = np.where(np.isfinite(part["mdad_high"]), part["mdad_high"], top)
            ax.fill_between(xs, low, high, color=st["color"], alpha=0.13, linewidth=0, zorder=1)
        missed = ~part["mdad_reached"].to_numpy(bool)
        if missed.any():
            ax.scatter(
                xs[missed],
                np.full(missed.sum(), y_missing),
                marker="^",
                s=38,
                facecolors="white",
                edgecolors=st["color"],
                linewidths=1.5,
                zorder=4,
                clip_on=False,
            )


def _not_reached_handle() -> Line2D:
    return Line2D([], [], linestyle="none", marker="^", markerfacecolor="white", markeredgecolor="#555", markersize=7, label=f"MDAD {NOT_REACHED}")


def _legend_below(fig, handles) -> None:
    """A legend under the panels, as many columns as fit the figure's width (the tight bounding box takes it in)."""
    longest = max(len(h.get_label()) for h in handles)
    fits = int(fig.get_figwidth() * 100 / ((longest + 6) * 6.2))
    fig.legend(handles=handles, loc="upper center", ncol=max(1, min(fits, len(handles))), frameon=False, bbox_to_anchor=(0.5, 0.0))


def method_handles(methods, styles, markers: bool = True) -> list:
    """Legend entries of the methods, in their styles."""
    return [
        Line2D(
            [],
            [],
            color=styles[m]["color"],
            linestyle=styles[m]["linestyle"],
            marker=styles[m]["marker"] if markers else None,
            markerfacecolor=styles[m]["markerfacecolor"],
            label=m,
        )
        for m in method_order(methods)
    ]


def _headline(frame: pd.DataFrame, sources: int | None) -> tuple[pd.DataFrame, int]:
    sources = int(frame["sources"].max()) if sources is None else sources
    return frame[frame["sources"] == sources], sources


def finish_figure(fig, handles) -> None:
    """Lay the figure out, with the legend ``handles`` below its panels."""
    fig.tight_layout()
    _legend_below(fig, handles)


def _any_missing(rows: pd.DataFrame, exact_too: bool = False) -> bool:
    """Whether any MDAD of ``rows`` is not reached: a first crossing, or (``exact_too``: where the figure
    draws them) an exact MDAD of uniform random."""
    known = exact_too and "mdad_exact_reached" in rows
    exact = rows["mdad_exact_reached"].dropna().astype(bool) if known else pd.Series([], dtype=bool)
    return bool((~rows["mdad_reached"].astype(bool)).any() or (~exact).any())


# ---- the figures --------------------------------------------------------------------
@styled
def mdad_vs_size(summary: pd.DataFrame, n_seen: int | None = None, sources: int | None = None, threshold: float = DEFAULT_THRESHOLD):
    """The paper's main figure: MDAD against the number of items, seen and unseen side by side."""
    data, sources = _headline(summary, sources)
    styles = method_styles(data["method"].unique())
    top, missing = mdad_top(data), _any_missing(data, exact_too=True)
    fig, axes = panel_grid(2, 2, height=3.6)
    for ax, view in zip(axes, ("seen", "unseen"), strict=True):
        rows = data[data["view"] == view]
        y_missing = _not_reached_strip(ax, top, missing)
        _mdad_lines(ax, rows, "size", styles, top, y_missing)
        exact = _exact_marks(ax, rows, styles, y_missing)
        _size_axis(ax, rows["size"].unique(), n_seen)
        ax.set_title(f"on the {VIEW_WORDS[view]}")
        ax.set_xlabel("items in the micro-benchmark (share of the seen pool)")
    axes[0].set_ylabel(f"MDAD (accuracy points)\nordered correctly {threshold:.0%} of the time")
    fig.suptitle(
        f"Smallest accuracy difference ordered correctly, by size ({sources} source models; band: {percent(DEFAULT_CONFIDENCE)} interval)",
        fontsize=11,
    )
    methods = data["method"].unique()
    marks = [Line2D([], [], linestyle="none", marker="x", color="#555", label="exact MDAD (uniform random, no simulation)")] if exact else []
    finish_figure(fig, [*method_handles(methods, styles), *marks, *([_not_reached_handle()] if missing else [])])
    return fig


def _exact_marks(ax, rows: pd.DataFrame, styles: dict, y_missing: float) -> bool:
    """A cross at the exact MDAD of every uniform random cell (beside its simulated line; in the "not
    reached" strip when not reached); whether there was any."""
    if "mdad_exact_reached" not in rows:
        return False
    known = rows[rows["mdad_exact_reached"].notna()]
    for method, part in known.groupby("method", sort=True):
        reached = part["mdad_exact_reached"].astype(bool)
        y = part["mdad_exact"].where(reached, y_missing)
        ax.scatter(part["size"], y, marker="x", s=42, linewidths=1.6, color=styles[method]["color"], zorder=6)
    return len(known) > 0


MIN_PAIRS = 25  # agreement-curve bins with fewer pairs are drawn as faint dots, not joined by the line


def size_title(k: int, n_seen: int | None) -> str:
    """A panel title for a size: its items, and their share of the seen pool when known."""
    return f"{plural(k, 'item')} ({100 * k / n_seen:.2g}% of the seen pool)" if n_seen else plural(k, "item")


def _curve_range(data: pd.DataFrame, marks: pd.DataFrame, share: float = 0.995) -> float:
    """The x range of the agreement curves: where 99.5% of the pairs lie, and every MDAD."""
    if data.empty:
        return 10.0
    per_bin = data.groupby("diff_low")["pairs"].sum().sort_index()
    cum = per_bin.cumsum() / per_bin.sum()
    right = float(per_bin.index[int(np.searchsorted(cum.to_numpy(), share))]) + 1.0
    reached = marks.loc[marks["mdad_reached"].astype(bool), "mdad"]
    return max(right, float(reached.max()) + 1.0 if len(reached) else 0.0)


@styled
def agreement_curves(
    curves: pd.DataFrame,
    summary: pd.DataFrame,
    sizes,
    n_seen: int | None = None,
    view: str = "seen",
    sources: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    max_diff: float | None = None,
):
    """Probability that the micro-benchmark orders a pair as the full benchmark does, by accuracy difference.

    One panel per size; dotted vertical lines mark each method's MDAD; bins with fewer than
    ``MIN_PAIRS`` pairs are faint dots.
    """
    data, sources = _headline(curves[curves["view"] == view], sources)
    marks, _ = _headline(summary[summary["view"] == view], sources)
    styles = method_styles(data["method"].unique())
    if max_diff is None:
        max_diff = _curve_range(data[data["size"].isin(sizes)], marks[marks["size"].isin(sizes)])
    fig, axes = panel_grid(len(sizes), 3 if len(sizes) > 4 else len(sizes), height=3.4)
    for ax, size in zip(axes, sizes, strict=True):
        rows = data[(data["size"] == size) & (data["diff_low"] <= max_diff)]
        for method, part in rows.groupby("method", sort=True):
            st = styles[method]
            x = part["diff_low"].to_numpy(float) + 0.25  # bin centres
            y = part["agreement"].to_numpy(float)
            dense = part["pairs"].to_numpy() >= MIN_PAIRS
            ax.plot(x, np.where(dense, y, np.nan), color=st["color"], linestyle=st["linestyle"], linewidth=1.6)
            ax.scatter(x[~dense], y[~dense], s=7, color=st["color"], alpha=0.45, linewidths=0)
            mark = marks[(marks["method"] == method) & (marks["size"] == size)]
            if len(mark) and bool(mark["mdad_reached"].iloc[0]):
                ax.axvline(float(mark["mdad"].iloc[0]), color=st["color"], linestyle=":", linewidth=1.2)
        ax.axhline(threshold, color="#444", linestyle="--", linewidth=1)
        ax.text(0.2, threshold, f"{threshold:.0%}", va="bottom", ha="left", fontsize=8, color="#444")
        ax.axhline(0.5, color="#999", linewidth=0.8)
        ax.set_ylim(0, 1.02)
        ax.set_xlim(0, max_diff)
        ax.set_title(size_title(int(size), n_seen))
        ax.set_xlabel("true accuracy difference (points)")
    axes[0].set_ylabel("share of pairs ordered correctly")
    fig.suptitle(f"Agreement with the full benchmark by accuracy difference ({view} items, {sources} source models)", fontsize=11)
    methods = data["method"].unique()
    handles = [
        *method_handles(methods, styles, markers=False),
        Line2D([], [], color="#555", linestyle=":", label="MDAD"),
        Line2D([], [], linestyle="none", marker="o", markersize=3, color="#555", alpha=0.5, label=f"bin with < {MIN_PAIRS} pairs"),
    ]
    finish_figure(fig, handles)
    return fig


@styled
def error_and_tau(summary: pd.DataFrame, n_seen: int | None = None, sources: int | None = None):
    """Every metric of ``METRICS`` (estimation error, Kendall tau) against size, on seen and unseen items."""
    data, sources = _headline(summary, sources)
    styles = method_styles(data["method"].unique())
    n_rows = len(METRICS)
    fig, axes = subplots(n_rows, 2, figsize=(10, 3.2 * n_rows), sharex=True, sharey="row", squeeze=False)
    for col, view in enumerate(VIEWS):
        rows = data[data["view"] == view]
        for method, part in rows.groupby("method", sort=True):
            part = part.sort_values("size")
            st = styles[method]
            kw = {
                "color": st["color"],
                "linestyle": st["linestyle"],
                "marker": st["marker"],
                "markersize": 4.5,
                "markerfacecolor": st["markerfacecolor"],
                "linewidth": 1.6,
            }
            estimable = part["mdad_estimable"].astype(bool) if "mdad_estimable" in part else True
            for row, metric in enumerate(METRICS):
                values = metric.scale * part[metric.key]
                if metric.key in PAIR_METRICS:  # not drawn where it cannot be estimated (too few target pairs)
                    values = values.where(estimable)
                axes[row, col].plot(part["size"], values, **kw)
        axes[0, col].set_title(f"on the {VIEW_WORDS[view]}")
        for row in range(n_rows):
            _size_axis(axes[row, col], rows["size"].unique(), n_seen)
        axes[-1, col].set_xlabel("items in the micro-benchmark (share of the seen pool)")
    for row, metric in enumerate(METRICS):
        unit = f"{metric.unit}, " if metric.unit else ""
        axes[row, 0].set_ylabel(f"{metric.description}\n({unit}{metric.better} is better)")
    fig.suptitle(f"Estimation error and rank correlation by size ({sources} source models)", fontsize=11)
    methods = data["method"].unique()
    finish_figure(fig, method_handles(methods, styles))
    return fig


@styled
def mdad_vs_sources(summary: pd.DataFrame, n_seen: int | None = None, view: str = "seen"):
    """MDAD against the number of source models, one panel per size (each with its own MDAD scale)."""
    data = summary[summary["view"] == view]
    styles = method_styles(data["method"].unique())
    sizes = sorted(int(s) for s in data["size"].unique())
    fig, axes = panel_grid(len(sizes), 3, height=3.0, sharey=False)
    for ax, size in zip(axes, sizes, strict=True):
        rows = data[data["size"] == size]
        top = mdad_top(rows)
        y_missing = _not_reached_strip(ax, top, _any_missing(rows))
        _mdad_lines(ax, rows, "sources", styles, top, y_missing)
        ticks = sorted(int(s) for s in rows["sources"].unique())
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.set_title(size_title(size, n_seen))
        ax.set_xlabel("source models")
    for ax in axes[:: min(3, len(axes))]:
        ax.set_ylabel("MDAD (points)")
    fig.suptitle(f"MDAD by number of source models ({view} items; band: {percent(DEFAULT_CONFIDENCE)} interval)", fontsize=11)
    methods = data["method"].unique()
    finish_figure(fig, [*method_handles(methods, styles), *([_not_reached_handle()] if _any_missing(data) else [])])
    return fig


@styled
def seen_vs_unseen(summary: pd.DataFrame, n_seen: int | None = None, sources: int | None = None):
    """Generalisation to new items: seen (solid) and unseen (dashed) MDAD by size, one panel per method."""
    data, sources = _headline(summary, sources)
    methods = method_order(data["method"].unique())
    styles = method_styles(methods)
    top, missing = mdad_top(data), _any_missing(data)
    fig, axes = panel_grid(len(methods), 3, height=2.9)
    for ax, method in zip(axes, methods, strict=True):
        rows = data[data["method"] == method]
        y_missing = _not_reached_strip(ax, top, missing)
        for view, ls in (("seen", "-"), ("unseen", ":")):
            _mdad_lines(ax, rows[rows["view"] == view], "size", styles, top, y_missing, linestyle=ls)
        _size_axis(ax, rows["size"].unique(), n_seen)
        ax.set_title(method, color=styles[method]["color"])
    for ax in axes[:: min(3, len(axes))]:
        ax.set_ylabel("MDAD (points)")
    fig.suptitle(f"MDAD on the seen items vs on new (unseen) items ({sources} source models)", fontsize=11)
    handles = [
        Line2D([], [], color="#333", linestyle="-", label="seen items (built from)"),
        Line2D([], [], color="#333", linestyle=":", label="unseen items (new draw of the task)"),
        *([_not_reached_handle()] if missing else []),
    ]
    finish_figure(fig, handles)
    return fig


@styled
def group_histogram(differences: np.ndarray, shares: pd.DataFrame, group: str, n_seen: int | None = None):
    """The group's pairwise accuracy differences, with each size's MDAD marked, one panel per method.

    ``shares`` has columns method, size, mdad, mdad_reached, share_below (see ``report.group``);
    each MDAD line is labelled with its size and the share of the group's pairs below it.
    """
    methods = method_order(shares["method"].unique())
    sizes = sorted(int(s) for s in shares["size"].unique())
    cmap = matplotlib.colormaps["viridis"]
    size_color = {s: cmap(0.72 * i / max(1, len(sizes) - 1)) for i, s in enumerate(sizes)}
    reached = shares.loc[shares["mdad_reached"].astype(bool), "mdad"].to_numpy(float)
    right = max(float(np.max(differences)) if len(differences) else 1.0, *(reached if reached.size else [0.0])) * 1.06
    bins = np.arange(0, right + 0.5, 0.5 if right <= 30 else 1.0)
    fig, axes = panel_grid(len(methods), 2, height=3.3)
    for ax, method in zip(axes, methods, strict=True):
        counts = ax.hist(differences, bins=bins, color="#b7c4d6", edgecolor="white", linewidth=0.4)[0]
        ax.set_xlim(0, right)
        ymax = (counts.max() if len(counts) else 1) * 1.05
        for _, row in shares[shares["method"] == method].sort_values("size").iterrows():
            size = int(row["size"])
            if not row["mdad_reached"]:
                continue
            ax.axvline(row["mdad"], color=size_color[size], linewidth=1.8)
            ax.text(
                row["mdad"],
                ymax,
                f"{plural(size, 'item')}: {row['share_below']:.0%} below ",
                rotation=90,
                ha="right",
                va="top",
                fontsize=7.5,
                color=size_color[size],
            )
        missed = shares[(shares["method"] == method) & ~shares["mdad_reached"].astype(bool)]["size"].tolist()
        if missed:
            ax.text(
                0.99,
                0.5,
                f"MDAD {NOT_REACHED} at {', '.join(map(str, missed))} items:\nno pair reliably ordered",
                transform=ax.transAxes,
                ha="right",
                fontsize=7.5,
                color="#555",
                style="italic",
            )
        ax.set_title(method)
        ax.set_xlabel("|full-benchmark accuracy difference| of a pair (points)")
    for ax in axes[:: min(2, len(axes))]:
        ax.set_ylabel("pairs in the group")
    fig.suptitle(f"Group {group}: pairs closer than the MDAD (left of a line) are unlikely to be ordered correctly", fontsize=11)
    handles: list[Artist] = [Patch(color="#b7c4d6", label="pairs of the group")]
    handles += [Line2D([], [], color=size_color[s], linewidth=1.8, label=f"MDAD with {plural(s, 'item')}") for s in sizes]
    finish_figure(fig, handles)
    return fig
