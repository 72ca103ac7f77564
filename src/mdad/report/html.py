"""The self-contained HTML report and the files beside it, rebuilt from the results store alone.

The page is a list of sections. A section builder takes the ``ReportData`` and returns a
``Section`` (or None when it has nothing to show, e.g. the source-model sweep with one
number of source models). ``SECTIONS`` lists the builders in page order; a further
analysis adds its builder there (or passes it in ``extra_sections``), nothing else changes.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import BIN_TEXT, DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD, check_threshold, percent
from mdad.errors import MdadError
from mdad.experiment.evaluate import VIEWS, evaluate_store_with
from mdad.experiment.executors import ordered_map
from mdad.experiment.sizes import size_requests_note
from mdad.experiment.store import Cell, ResultStore, commands
from mdad.methods.names import SUFFIX, parse
from mdad.outputs import atomic_file, write_bytes, write_csv, write_text, writing
from mdad.report import figures
from mdad.report.analytic import analytic_figures, exact_curves_of_run, exact_mdad_table, exact_mdads, with_exact
from mdad.report.group import group_differences, group_shares
from mdad.report.tables import NOT_REACHED, format_mdad, group_table, headline, warnings, wide_summary
from mdad.report.trust import cell_trust, combine_trust, coverage_table, decision_curves
from mdad.wording import plural, points


@dataclass(frozen=True)
class Outputs:
    summary: pd.DataFrame
    curves: pd.DataFrame
    report: Path
    figure_files: tuple[Path, ...] = ()
    exact: dict[tuple[str, int], float] = field(default_factory=dict)  # exact MDAD of the uniform random cells


@dataclass(frozen=True)
class ReportData:
    """Everything a section may draw on: the stored config, the evaluated frames and the chosen settings."""

    store: ResultStore
    config: dict
    summary: pd.DataFrame
    curves: pd.DataFrame
    threshold: float
    curve_sizes: tuple[int, ...]
    exact_curves: pd.DataFrame = field(default_factory=pd.DataFrame)  # the uniform random cells' exact curves
    exact_reason: str = ""  # why exact_curves is empty, in words
    exact_mdads: dict[tuple[str, int], float] = field(default_factory=dict)
    trust: tuple[pd.DataFrame, pd.DataFrame] | None = None  # trust_frames of the headline cells (None: fewer than 2 runs)

    @property
    def n_seen(self) -> int | None:
        return self.config.get("n_seen")

    @property
    def headline_sources(self) -> int:
        return int(self.summary["sources"].max())


@dataclass
class Figure:
    key: str  # file stem in OUT/figures/
    title: str
    figure: object  # a matplotlib figure, rendered when the page is written
    png: str = ""
    width: int = 0  # CSS pixels
    files: dict[str, bytes] = field(default_factory=dict)  # the figure in other formats (svg, pdf), when asked


@dataclass
class Section:
    key: str
    title: str
    intro: str
    figures: list[Figure] = field(default_factory=list)
    table_html: str = ""


# ---- sections -----------------------------------------------------------------------
def main_section(d: ReportData) -> Section:
    return Section(
        "mdad-by-size",
        "MDAD by number of items",
        f"The smallest accuracy difference (in points) that a micro-benchmark orders like the full benchmark at least "
        f"{d.threshold:.0%} of the time, by number of items; lower is better. The band is the {percent(DEFAULT_CONFIDENCE)} bootstrap interval. "
        "Left: judged against accuracy on the seen pool the items were chosen from; right: on the unseen half.",
        [Figure("mdad_vs_size", "MDAD by number of items", figures.mdad_vs_size(d.summary, d.n_seen, threshold=d.threshold))],
    )


def agreement_section(d: ReportData) -> Section:
    sizes = ", ".join(str(s) for s in d.curve_sizes)
    return Section(
        "agreement",
        "Agreement by accuracy difference",
        f"For pairs of target models grouped by their true accuracy difference ({BIN_TEXT} bins, seen items), the share "
        f"the micro-benchmark orders correctly. MDAD is where a curve first reaches {d.threshold:.0%}. Sizes: {sizes}.",
        [
            Figure(
                "agreement_curves",
                "Agreement by accuracy difference",
                figures.agreement_curves(d.curves, d.summary, d.curve_sizes, d.n_seen, threshold=d.threshold),
            )
        ],
    )


def exact_section(d: ReportData) -> Section | None:
    """Exact agreement of the random designs beside the simulated runs; when the run's data cannot be
    read again, a sentence saying why the section is empty (never a silent gap)."""
    pairs, reason = analytic_figures(d.store.root, d.curves, d.threshold, exact=(d.exact_curves, d.exact_reason))
    title = "Exact agreement of uniform random sampling"
    if not pairs:
        if reason == "the run has no uniform random cells":
            return None
        return Section("exact", title, f"Not drawn: {reason}. The rest of this page comes from the stored results alone.")
    table = exact_mdad_table(d.summary, d.exact_mdads)
    return Section(
        "exact",
        title,
        "For uniform random sampling the probability of ordering each pair correctly can be computed exactly from the "
        "data (hypergeometric sampling of the items on which the two models differ), on the same runs' targets and seen "
        f"halves. Line: exact expectation per {BIN_TEXT} bin; dots: the simulated runs. They agree up to Monte Carlo error. "
        "The table sets the exact MDAD beside the simulated one (first crossing and robust): where they differ, the "
        "exact one is the number to trust.",
        [Figure(f"exact_vs_simulated_{i}", title, fig) for i, (title, fig) in enumerate(pairs)],
        _html_table(table) if not table.empty else "",
    )


def estimation_section(d: ReportData) -> Section:
    return Section(
        "estimation",
        "Estimation error and rank correlation",
        "Mean absolute difference between estimated and true accuracy, and Kendall's tau between the estimated and true "
        "ranking of the target models (per run, averaged). A high tau can hide that close pairs are ordered badly.",
        [Figure("error_and_tau", "Estimation error and Kendall tau", figures.error_and_tau(d.summary, d.n_seen))],
    )


def sources_section(d: ReportData) -> Section | None:
    if d.summary["sources"].nunique() < 2:
        return None
    return Section(
        "sources",
        "Number of source models",
        "MDAD (seen items) as the selection methods see more source models; one panel per size.",
        [Figure("mdad_vs_sources", "MDAD by number of source models", figures.mdad_vs_sources(d.summary, d.n_seen))],
    )


def generalisation_section(d: ReportData) -> Section:
    return Section(
        "generalisation",
        "Seen vs unseen items",
        "Does a micro-benchmark built from one half of the items order models as well on the other half (a new draw of "
        "the same task)? Solid: seen half; dotted: unseen half.",
        [Figure("seen_vs_unseen", "MDAD on seen vs unseen items", figures.seen_vs_unseen(d.summary, d.n_seen))],
    )


def group_section(d: ReportData) -> Section | None:
    group = d.config.get("group")
    if not group:
        return None
    diffs = group_differences(d.store)
    shares = group_shares(d.summary, diffs, d.headline_sources)
    write_csv(shares, d.store.root / "group.csv")
    n_models = round((1 + np.sqrt(1 + 8 * len(diffs))) / 2) if len(diffs) else 0  # pairs = n (n - 1) / 2
    return Section(
        "group",
        f"Fixed group: {group}",
        f"The {n_models} models of group {group} ({len(diffs)} pairs) are the targets of every run. Histogram: their "
        "pairwise accuracy differences on all items; lines: the MDAD (seen items) of each size. Pairs closer than the "
        "MDAD are unlikely to be ordered correctly by a micro-benchmark of that size; the table gives their share "
        f"(in brackets: over the MDAD's {percent(DEFAULT_CONFIDENCE)} interval).",
        [Figure("group_histogram", f"Group {group}", figures.group_histogram(diffs, shares, group, d.n_seen))],
        table_html=_html_table(group_table(shares, d.n_seen)),
    )


def trust_section(d: ReportData) -> Section | None:
    """Decision curves and interval coverage on runs not used to calibrate them (mdad.report.trust)."""
    if d.trust is None:  # fewer than 2 runs: nothing to calibrate on and check
        return None
    coverage, decision = d.trust
    if coverage.empty:
        return None
    return Section(
        "trust",
        "Trust in single estimates: decision curves and interval coverage",
        "What a user of one micro-benchmark sees is the estimated gap, not the true difference. The first half of the "
        "runs calibrates, as mdad select does, an interval for each estimate (split-conformal on the residuals) and "
        "the probability that an order seen with a given estimated gap holds (logistic fit on the gap over the residual "
        "spread at the two estimates); the second half, runs the calibration never saw, checks them. Lines: the mean "
        "fitted probability of the pairs in each bin of estimated gap; dots: the share of "
        "pairs of the unseen runs whose order held; dotted: the agreement curve by true difference, for comparison. "
        "The table gives the share of targets of the unseen runs whose interval covers their true accuracy (seen "
        "items), and the mean width: at equal coverage, narrower is better.",
        [Figure("decision_curves", "Decision curves", decision_curves(decision, d.curves, d.curve_sizes, d.headline_sources, threshold=d.threshold))]
        if not decision.empty
        else [],
        table_html=_html_table(coverage_table(coverage)),
    )


SECTIONS: list[Callable[[ReportData], Section | None]] = [
    main_section,
    agreement_section,
    exact_section,
    estimation_section,
    sources_section,
    generalisation_section,
    group_section,
    trust_section,
]


# ---- words and tables ---------------------------------------------------------------
def summary_sentences(
    summary: pd.DataFrame, threshold: float, n_seen: int | None = None, exact: dict[tuple[str, int], float] | None = None
) -> list[str]:
    """One plain sentence per method (seen items, the largest number of source models); uniform random
    leads with its exact MDAD (``exact``), a marked first crossing gives way to the robust MDAD, and data
    too few for any MDAD get the sentence why."""
    if summary.empty:
        return ["No finished cells yet."]
    seen = summary[(summary["view"] == "seen") & (summary["sources"] == summary["sources"].max())]
    out = []
    for method, rows in seen.groupby("method", sort=True):
        clauses, explained = [], False
        for i, (_, row) in enumerate(rows.sort_values("size").iterrows()):
            k = int(row["size"])
            items = plural(k, "item") + (f" ({round(100 * k / n_seen, 1):g}% of the seen pool)" if i == 0 and n_seen else "")
            value, name = headline(row, exact)
            noise = (
                ""
                if name == "MDAD"
                else f" (the exact MDAD; simulated: {format_mdad(row)})"
                if name == "exact MDAD"
                else f" (the robust MDAD; the first crossing, {row['mdad']:g} points, is noise)"
            )
            if name != "MDAD" and np.isnan(value):
                clauses.append(
                    f"with {items}, no accuracy difference is ordered correctly {threshold:.0%} of the time "
                    f"({name} {NOT_REACHED}{'' if name == 'exact MDAD' else '; the first crossing is noise'})"
                )
                continue
            if not row.get("mdad_estimable", True):
                clauses.append(f"with {items}, the {method} {row['mdad_warning'].rstrip('.')}")
            elif np.isnan(value):
                clauses.append(f"with {items}, no accuracy difference is ordered correctly {threshold:.0%} of the time (MDAD {NOT_REACHED})")
            elif not explained:
                explained = True
                clauses.append(f"with {items}, {method} orders models at least {points(value)} apart correctly {threshold:.0%} of the time{noise}")
            else:
                clauses.append(f"with {items}, models at least {points(value)} apart{noise}")
        text = "; ".join(clauses)
        out.append(text[0].upper() + text[1:] + ".")
    return out


def comparison_sentences(summary: pd.DataFrame, baseline: str = "random", exact: dict[tuple[str, int], float] | None = None) -> list[str]:
    """One sentence per size comparing the methods (seen items, the largest number of source models):
    the lowest MDAD, by which methods, and where uniform random stands, with whether its 95%
    interval overlaps the best one's (then the data cannot tell them apart). Each method's number is
    the one its plain words lead with (:func:`~mdad.report.tables.headline`). Empty for one method."""
    if summary.empty or summary["method"].nunique() < 2:
        return []
    seen = summary[(summary["view"] == "seen") & (summary["sources"] == summary["sources"].max())].copy()
    if "mdad_estimable" in seen:
        seen = seen[seen["mdad_estimable"].astype(bool)]
    leads = [headline(row, exact) for _, row in seen.iterrows()]
    seen["lead"] = [value for value, _ in leads]
    seen["lead_kind"] = [name for _, name in leads]
    out = []
    for size, rows in seen.groupby("size", sort=True):
        reached = rows[rows["lead"].notna()]
        if reached.empty:
            out.append(f"With {plural(size, 'item')}, no method reaches the threshold (MDAD {NOT_REACHED} for all).")
            continue
        best_value = reached["lead"].min()
        best = reached[reached["lead"] == best_value]
        names = ", ".join(f"{row['method']}{_lead_note(row, '; ')}" for _, row in best.sort_values("method").iterrows())
        text = f"With {plural(size, 'item')}, the lowest MDAD is {points(best_value)} ({names})"
        base = rows[rows["method"] == baseline]
        if not base.empty and baseline not in set(best["method"]):
            b = base.iloc[0]
            if pd.isna(b["lead"]):
                text += f"; uniform {baseline}: {NOT_REACHED}{_lead_note(b)}"
            else:
                overlap = any(_intervals_overlap(b, row) for _, row in best.iterrows())
                text += f"; uniform {baseline}: {points(b['lead'])}{_lead_note(b)}" + (
                    f" (its {percent(DEFAULT_CONFIDENCE)} interval overlaps the best one's: no clear difference)" if overlap else ""
                )
        elif not base.empty:
            text += f", uniform {baseline} among them"
        out.append(text + ".")
    return out


def _lead_note(row: pd.Series, before: str = " (") -> str:
    """What stands beside a number that is not the simulated first crossing: the simulated one beside
    an exact MDAD, the noisy first crossing beside a robust one ('' for a plain first crossing)."""
    after = "" if before == "; " else ")"
    if row["lead_kind"] == "exact MDAD":
        return f"{before}exact; simulated: {format_mdad(row)}{after}"
    if row["lead_kind"] == "robust MDAD":
        return f"{before}robust MDAD; the first crossing, {format_mdad(row)}, is noise{after}"
    return ""


def _intervals_overlap(a: pd.Series, b: pd.Series) -> bool:
    """Whether two MDAD intervals share a value (an open upper end reaches to infinity)."""

    def bounds(row):
        kind = row.get("lead_kind", "MDAD")
        value = row.get("lead", row["mdad"])
        if kind == "exact MDAD":  # exact: no interval
            return value, value
        prefix = "mdad_robust" if kind == "robust MDAD" else "mdad"
        low, high = row.get(f"{prefix}_low", value), row.get(f"{prefix}_high", value)
        return (value if pd.isna(low) else low), (np.inf if pd.isna(high) else high)

    (a_low, a_high), (b_low, b_high) = bounds(a), bounds(b)
    return a_low <= b_high and b_low <= a_high


def _html_table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, border=0, na_rep="-", classes="results")


def results_tables(table: pd.DataFrame) -> list[tuple[str, str]]:
    """The page's main table (:func:`~mdad.report.tables.wide_summary`) as one table per view, (title,
    HTML) each: both views side by side would be wider than the page. A view's columns drop the view
    from their headers; the number of source models is a column only when the run has several."""
    keys = ["method", "size", "% of seen"] + (["sources"] if table["sources"].nunique() > 1 else [])
    out = []
    for view in VIEWS:
        others = [v for v in VIEWS if v != view]
        columns = {c: c.replace(f" {view}", "") for c in table.columns if c not in (*keys, "sources") and not any(f" {v}" in c for v in others)}
        if view != VIEWS[0]:  # columns of no view (flagged targets, items used) are shown once, with the first view
            columns = {c: name for c, name in columns.items() if f" {view}" in c}
        out.append((f"{view.capitalize()} items", _html_table(table[keys + list(columns)].rename(columns=columns))))
    return out


def code_spans(text: str) -> Markup:
    """``text`` escaped for HTML, its `backticked` spans as code (sentences written for the terminal)."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def _size_requests_note(config: dict) -> str:
    """The sizes as asked and as run: shares resolved to counts, and shares that fell on the same count."""
    return size_requests_note(config.get("size_requests", []))


def _default_curve_sizes(summary: pd.DataFrame) -> tuple[int, ...]:
    sizes = sorted(int(s) for s in summary["size"].unique())
    return tuple(sorted({sizes[0], sizes[-1]}))


def _check_curve_sizes(requested: Sequence[int], summary: pd.DataFrame) -> tuple[int, ...]:
    stored = sorted(int(s) for s in summary["size"].unique())
    missing = [k for k in requested if k not in stored]
    if missing:
        raise MdadError(f"No stored results for curve size {missing[0]}; stored sizes: {', '.join(map(str, stored))}.")
    return tuple(sorted({int(k) for k in requested}))


# ---- the page -----------------------------------------------------------------------
PHASES = (
    "Computing every cell's MDAD (with its bootstrap interval), estimation error and Kendall tau ...",
    "Drawing the figures and writing the tables and report.html ...",
)


def build_outputs(
    out_dir: str | Path,
    threshold: float | None = None,
    curve_sizes: Sequence[int] | None = None,
    figure_format: str | None = None,
    extra_sections: Sequence[Callable[[ReportData], Section | None]] = (),
    workers: int = 1,
    on_phase: Callable[[str], None] | None = None,
    matrix: ResponseMatrix | None = None,
    frames: Mapping[Cell, pd.DataFrame] | None = None,
    on_summary: Callable[[pd.DataFrame, dict[tuple[str, int], float]], None] | None = None,
) -> Outputs:
    """Recompute the metrics of every stored cell; write summary/curves (parquet, CSV), table.csv and report.html.

    ``threshold`` and ``curve_sizes`` default to the values the run stored in config.json;
    ``figure_format`` ('png', 'svg' or 'pdf') also writes every figure to OUT/figures/.
    ``workers`` > 1 evaluates the cells and builds the sections in that many local processes
    (the same page and numbers, sooner). ``on_phase`` is told each phase as it starts (``PHASES``),
    for a progress display. ``matrix``: the run's data when the caller holds it (else read again for
    the exact curves of the uniform random cells, which are computed once for the page and the tables);
    ``frames``: the cells' frames as stored, when the caller holds them (else each cell's file is read).
    ``on_summary`` is called with the summary and the uniform random cells' exact MDADs (``Outputs.exact``)
    once they are written, while worker processes draw the figures (the command line prints its tables then).
    """
    store = ResultStore(out_dir)
    config = store.read_config()
    threshold = check_threshold(threshold if threshold is not None else config.get("threshold", DEFAULT_THRESHOLD))
    if figure_format is not None and figure_format not in figures.FORMATS:
        raise MdadError(f"The figure format must be one of {', '.join(figures.FORMATS)}, got {figure_format!r}.")
    if on_phase is not None:
        on_phase(PHASES[0])
    root = Path(out_dir)
    cells = store.cells()
    # the trust section's calibration checks of the headline cells, from the same reading of each cell,
    # and the uniform random cells' exact curves here while the workers evaluate
    headline = max((cell.sources for cell in cells), default=0)
    checks = (lambda cell, frame: cell_trust(cell, frame) if cell.sources == headline else None) if config.get("runs", 0) >= 2 else None
    exact_run: list[tuple[pd.DataFrame, str]] = []
    summary, curves, trusts = evaluate_store_with(
        store,
        checks,
        threshold=threshold,
        seed=config.get("seed", 0),
        workers=workers,
        meanwhile=(lambda: exact_run.append(exact_curves_of_run(root, matrix))) if cells else None,
        frames=frames,
    )
    exact_curves, exact_reason = exact_run[0] if exact_run else (pd.DataFrame(), "the run has no cells")
    exact: dict[tuple[str, int], float] = {}
    if not summary.empty:
        summary = with_exact(summary, exact_curves, threshold)  # the exact MDAD beside the simulated one, in every table
        exact = exact_mdads(root, threshold, exact_curves=exact_curves)
    for name, frame in (("summary", summary), ("curves", curves)):
        with atomic_file(root / f"{name}.parquet", "the results file") as temp, writing(root / f"{name}.parquet", "the results file"):
            frame.to_parquet(temp, index=False)
        write_csv(frame, root / f"{name}.csv")
    table = wide_summary(summary, config.get("n_seen"))
    write_csv(table, root / "table.csv")

    sections: list[Section] = []
    if on_phase is not None:
        on_phase(PHASES[1])
    if not summary.empty:
        chosen = curve_sizes if curve_sizes else config.get("curve_sizes")
        data = ReportData(
            store,
            config,
            summary,
            curves,
            threshold,
            _check_curve_sizes(chosen, summary) if chosen else _default_curve_sizes(summary),
            exact_curves,
            exact_reason,
            exact,
            combine_trust([part for cell in cells if (part := trusts.get(cell)) is not None]) if checks is not None else None,
        )
        formats = ("png",) if figure_format in (None, "png") else ("png", figure_format)
        shown = (lambda: on_summary(summary, exact)) if on_summary is not None else None
        built = ordered_map(lambda build: _rendered(build(data), formats), [*SECTIONS, *extra_sections], workers=workers, meanwhile=shown)
        sections = [section for section in built if section is not None]
    elif on_summary is not None:
        on_summary(summary, exact)
    files = _write_figures(sections, root, figure_format)

    methods = sorted(summary["method"].unique()) if not summary.empty else []
    env = Environment(loader=PackageLoader("mdad.report"), autoescape=select_autoescape(["html"]))
    env.filters["code"] = code_spans
    html = env.get_template("report.html").render(
        config=config,
        threshold=threshold,
        sections=sections,
        sources=sorted(int(s) for s in summary["sources"].unique()) if not summary.empty else [],
        inputs=_inputs(config),
        per_subtask=any(parse(m).per_subtask for m in methods),
        suffix=SUFFIX,
        methods=methods,
        size_note=_size_requests_note(config),
        commands=commands(config),
        targets_text=targets_text(config),
        pairs_text=pairs_text(summary),
        warnings=warnings(summary),
        sentences=summary_sentences(summary, threshold, config.get("n_seen"), exact),
        comparisons=comparison_sentences(summary, exact=exact),
        tables=results_tables(table) if not table.empty else [],
    )
    report = root / "report.html"
    write_text(report, html, "the report")
    return Outputs(summary=summary, curves=curves, report=report, figure_files=tuple(files), exact=exact)


def targets_text(config: dict) -> str:
    """Where the targets came from, in words: "the 50 strongest models as targets", a group, or a draw per run."""
    n = config.get("targets")
    if config.get("group"):
        return f"the group {config['group']} as targets"
    if config.get("targets_from") == "top":
        return f"the {n} strongest models (accuracy on all items) as targets of every run"
    return f"{n} target models drawn afresh in every run"


def pairs_text(summary: pd.DataFrame) -> str:
    """How many pair-runs every MDAD rests on (runs x target pairs), in words."""
    if summary.empty or "target_pairs" not in summary:
        return ""
    counts = sorted({int(v) for v in summary["target_pairs"]})
    shown = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,}"
    return (
        f"each MDAD rests on {shown} pairs of target models (every run's pairs); the tables give the pairs in the bin where it crosses the threshold"
    )


def _inputs(config: dict) -> str:
    """What the probability-based methods read: option probabilities, 0/1 correctness, or both."""
    if not config.get("has_option_probs"):
        return "0/1 correctness (the data holds no option probabilities)"
    with_probs, n_items = config.get("items_with_option_probs"), config.get("n_items")
    if with_probs is not None and n_items is not None and with_probs < n_items:
        return (
            f"option probabilities (each model's probability of the gold option) on the {with_probs} of {n_items} "
            "items that have them, 0/1 correctness on the others"
        )
    return "option probabilities (each model's probability of the gold option)"


def _rendered(section: Section | None, formats: tuple[str, ...]) -> Section | None:
    """The section with every figure drawn: its embedded PNG, and the bytes of the other format if asked."""
    for fig in section.figures if section is not None else ():
        rendered = figures.render(fig.figure, formats)
        fig.png = base64.b64encode(rendered["png"]).decode()
        fig.width = figures.css_width(rendered["png"])
        fig.files = {fmt: data for fmt, data in rendered.items() if fmt != "png"}
        fig.figure = None
    return section


def _write_figures(sections: list[Section], root: Path, figure_format: str | None) -> list[Path]:
    """With a figure format, write OUT/figures/<key>.<format> for every figure."""
    if not figure_format:
        return []
    (root / "figures").mkdir(exist_ok=True)
    files = []
    for section in sections:
        for fig in section.figures:
            path = root / "figures" / f"{fig.key}.{figure_format}"
            write_bytes(path, base64.b64decode(fig.png) if figure_format == "png" else fig.files[figure_format], "the figure")
            files.append(path)
    return files
