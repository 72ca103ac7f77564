"""What ``mdad estimate`` reports: every new model's estimate, interval, gap and order probability, and notes.

``estimate_report`` computes it once for the command line and for Python users alike; the
command only draws the columns and prints the notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_LEVEL, DEFAULT_THRESHOLD
from mdad.estimates import EstimateIntervals, OrderProbabilities
from mdad.micro.notes import Note, beyond_sources_note, describe_assessment
from mdad.micro.selected import SelectedMicroBenchmark
from mdad.wording import plural


@dataclass(frozen=True)
class Column:
    """One column of the estimate table: its ``name``, one text cell per model (best first), which
    cells are warnings, and its layout (``numeric``: right-aligned and unbroken; ``fold``: long text
    broken anywhere)."""

    name: str
    cells: list[str]
    warned: list[bool] = field(default_factory=list)
    numeric: bool = False
    no_wrap: bool = False
    fold: bool = False


@dataclass(frozen=True, eq=False)
class EstimateReport:
    """Estimates of new models with a micro-benchmark: the numbers, the table and the notes below it.

    ``details``: per model, what the estimator adds (``SelectedMicroBenchmark.details``);
    ``intervals``/``orders``: mdad.micro.trust's answers; ``threshold``: the probability below
    which an order counts as unreliable (the assessment's, else the default)."""

    details: pd.DataFrame
    intervals: EstimateIntervals
    orders: OrderProbabilities
    own: EstimateIntervals | None
    threshold: float
    title: str
    columns: list[Column]
    notes: list[Note]

    @property
    def unreliable_orders(self) -> int:
        """Neighbouring pairs whose order holds with probability below the threshold."""
        return _unreliable(self.orders, self.threshold)


def _unreliable(orders: OrderProbabilities, threshold: float) -> int:
    return int(np.sum(orders.probability < threshold))


def estimate_report(chosen: SelectedMicroBenchmark, matrix: ResponseMatrix, *, level: float = DEFAULT_LEVEL,
                    population: bool = False) -> EstimateReport:
    """Estimate every model of ``matrix`` with ``chosen``, with intervals (``level``; ``population``:
    see ``SelectedMicroBenchmark.intervals``), order probabilities, table and notes."""
    details = chosen.details(matrix)
    intervals = chosen.intervals(matrix, level=level, population=population)
    orders = chosen.order_probabilities(matrix)
    own = chosen.own_intervals(matrix)
    threshold = chosen.assessment.threshold if chosen.assessment is not None else DEFAULT_THRESHOLD
    size_text = f"adaptive test of {chosen.size} items" if chosen.adaptive else f"{chosen.size} items"
    title = f"{chosen.method}, {size_text}: estimated full-benchmark accuracy (%), gap to the next model (points)"
    columns = _columns(chosen, details, intervals, orders, own, threshold, level)
    notes = _notes(chosen, details, intervals, orders, threshold)
    return EstimateReport(details, intervals, orders, own, threshold, title, columns, notes)


def _columns(
    chosen: SelectedMicroBenchmark,
    details: pd.DataFrame,
    intervals: EstimateIntervals,
    orders: OrderProbabilities,
    own: EstimateIntervals | None,
    threshold: float,
    level: float,
) -> list[Column]:
    """The table's columns, rows ranked by estimate (best first); a column only when it has something to show."""
    ranked = np.argsort(-intervals.estimate, kind="stable")
    n_pairs = len(orders.gap)
    columns = [
        Column("model", [str(intervals.models[i]) for i in ranked], fold=True),
        Column("estimate", [f"{100 * intervals.estimate[i]:.1f}" for i in ranked], numeric=True, no_wrap=True),
    ]
    if np.isfinite(intervals.low).any():
        columns.append(
            Column(
                f"{100 * level:g}% interval",
                ["" if np.isnan(intervals.low[i]) else f"{100 * intervals.low[i]:.1f} - {100 * intervals.high[i]:.1f}" for i in ranked],
                numeric=True,
                no_wrap=True,
            )
        )
    columns.append(Column("gap", [f"{orders.gap[p]:.1f}" if p < n_pairs else "" for p in range(len(ranked))], numeric=True, no_wrap=True))
    if np.isfinite(orders.probability).any():
        probability = [orders.probability[p] if p < n_pairs else np.nan for p in range(len(ranked))]
        columns.append(
            Column(
                "P(order holds)",
                ["" if np.isnan(p) else f"{p:.2f}" for p in probability],
                warned=[bool(p < threshold) for p in probability],
                numeric=True,
                no_wrap=True,
            )
        )
    if own is not None:
        columns.append(
            Column(
                f"{chosen.micro.own_interval_name} {100 * own.level:g}% interval",
                [f"{100 * own.low[i]:.1f} - {100 * own.high[i]:.1f}" for i in ranked],
                numeric=True,
            )
        )
    if chosen.adaptive:
        columns.append(Column("answered", [str(details["answered"].iloc[i]) for i in ranked], numeric=True))
        columns.append(Column("next item", [details["next_item"].iloc[i] or "(done)" for i in ranked], fold=True))
    if "flagged" in details:
        flagged = [bool(details["flagged"].iloc[i]) for i in ranked]
        columns.append(Column("guard", ["extrapolation" if f else "" for f in flagged], warned=flagged))
    return columns


def _notes(
    chosen: SelectedMicroBenchmark, details: pd.DataFrame, intervals: EstimateIntervals, orders: OrderProbabilities, threshold: float
) -> list[Note]:
    """The lines below the table: where the numbers come from, what they do not promise, what to do next."""
    notes = [Note(f"Intervals: {intervals.calibration}. Order probabilities: {orders.calibration}.")]
    if len(orders.gap) and np.isfinite(orders.probability).all():
        notes.append(
            Note(
                f"{_unreliable(orders, threshold)} of the {len(orders.gap)} neighbouring pairs keep their order on the full "
                f"benchmark with probability below {100 * threshold:g}%: those orders are not reliable."
            )
        )
    beyond = beyond_sources_note(chosen.best_source_accuracy, intervals.estimate, intervals.kind)
    if beyond:
        notes.append(Note(beyond, warning=True))
    if chosen.assessment is None:
        notes.append(Note("This micro-benchmark carries no assessment (select with --assess-runs > 0 to measure its MDAD)."))
    else:
        notes.append(Note(describe_assessment(chosen.assessment)))
    if "flagged" in details and details["flagged"].any():
        flagged = details[details["flagged"]]
        notes.append(
            Note(
                f"{plural(len(flagged), 'estimate')} of {len(details)} flagged as extrapolations, "
                "unreliable because the source models do not cover them:"
            )
        )
        notes.extend(Note(f"  {model}: {row['reason']}.") for model, row in flagged.iterrows())
    if chosen.adaptive and (details["next_item"] != "").any():
        notes.append(Note("Ask each model its next item, then run this command again with the new results."))
    return notes
