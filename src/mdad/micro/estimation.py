"""What ``mdad estimate`` reports: every new model's estimate, interval, gap and order probability, and notes.

``estimate_report`` computes it once for the command line and for Python users alike; the
command only draws the columns and prints the notes.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_LEVEL, DEFAULT_THRESHOLD
from mdad.errors import MdadError
from mdad.estimates import BestProbability, EstimateIntervals, OrderProbabilities, written
from mdad.micro.audit import audit_sentences
from mdad.micro.comparison import Comparison, format_probability
from mdad.micro.notes import Note, beyond_sources_note, command_notes, describe_assessment, version_note
from mdad.micro.selected import SelectedMicroBenchmark, model_rows
from mdad.micro.trust import OFF_POPULATION_ORDER_MARK, OFF_POPULATION_PILED_MARK, design_of
from mdad.wording import plural


@dataclass(frozen=True)
class Column:
    """One column of the estimate table: its ``name``, one text cell per model (best first), which
    cells are warnings, and its layout (``numeric``: right-aligned; ``identifier``: a model name or
    item id, shown whole below the table when the table would not fit; no cell is ever broken)."""

    name: str
    cells: list[str]
    warned: list[bool] = field(default_factory=list)
    numeric: bool = False
    identifier: bool = False


@dataclass(frozen=True, eq=False)
class EstimateReport:
    """Estimates of new models with a micro-benchmark: the numbers, the table and the notes below it.

    ``details``: per model, what the estimator adds (``SelectedMicroBenchmark.details``);
    ``intervals``/``orders``/``best``: mdad.micro.trust's answers; ``threshold``: the probability below
    which an order counts as unreliable (the assessment's, else the default); ``audit``: per model,
    the learned and the audit-corrected estimate with its interval (``SelectedMicroBenchmark.audited``;
    None without audit items)."""

    details: pd.DataFrame
    intervals: EstimateIntervals
    orders: OrderProbabilities
    own: EstimateIntervals | None
    threshold: float
    title: str
    columns: list[Column]
    notes: list[Note]
    comparisons: list[Comparison] = field(default_factory=list)
    audit: pd.DataFrame | None = None
    best: BestProbability | None = None

    def model_frame(self) -> pd.DataFrame:
        """One row per model: the intervals' columns (``EstimateIntervals.to_frame``); ``p_best``: on the estimated
        best's row, P(it is the true best of the models estimated), empty elsewhere; with audit items the
        audit-corrected estimate and interval."""
        frame = self.intervals.to_frame()
        if self.best is not None:
            frame["p_best"] = self.best.column()
        if self.audit is not None:
            audit = self.audit.loc[frame["model"].to_numpy()]
            frame["corrected"], frame["corrected_low"], frame["corrected_high"] = (written(audit[c].to_numpy()) for c in ("corrected", "low", "high"))
        return frame

    @property
    def unreliable_orders(self) -> int:
        """Neighbouring pairs whose order holds with probability below the threshold."""
        return _unreliable(self.orders, self.threshold)


def _unreliable(orders: OrderProbabilities, threshold: float) -> int:
    """Pairs whose order holds with probability below ``threshold``; a pair the full benchmark ties has no
    order to keep (docs/own-results.md) and is not counted."""
    return int(np.sum((orders.probability < threshold) & ~orders.ties))


def estimate_report(
    chosen: SelectedMicroBenchmark,
    matrix: ResponseMatrix,
    *,
    level: float = DEFAULT_LEVEL,
    population: bool = False,
    mid_p: bool = True,
    pairs: Sequence[tuple[str, str]] = (),
    results: str | Path | None = None,
    near: Sequence[str | Path] = (),
) -> EstimateReport:
    """Estimate every model of ``matrix`` with ``chosen``, with intervals (``level``; ``population``, ``mid_p``:
    see ``SelectedMicroBenchmark.intervals``), order probabilities, table and notes, and each of the
    ``pairs`` of models compared (``SelectedMicroBenchmark.compare``). For an adaptive test on harness
    logs read from ``results``, the notes end with the command that asks each model its next item there
    (an inspect task file is looked for around ``results``, then around the paths ``near``)."""
    model_rows(matrix, [name for pair in pairs for name in pair])  # unknown names and options that change nothing before any work
    check_interval_options(chosen, clopper_pearson=not mid_p, population=population)
    details = chosen.details(matrix)
    intervals = chosen.intervals(matrix, level=level, population=population, mid_p=mid_p)
    _check_interval_kind(intervals, mid_p=mid_p, population=population)
    orders = chosen.order_probabilities(matrix)
    best = chosen.best_probability(matrix)
    own = chosen.own_intervals(matrix)
    audit = chosen.audited(matrix, level=level, learned=intervals.estimate)
    threshold = chosen.assessment.threshold if chosen.assessment is not None else DEFAULT_THRESHOLD
    size_text = f"adaptive test of {plural(chosen.size, 'item')}" if chosen.adaptive else plural(chosen.size, "item")
    title = f"{chosen.method}, {size_text}: estimated full-benchmark accuracy (%){TITLE_GAP}"
    columns = _columns(chosen, details, intervals, orders, own, threshold, level) + _audit_columns(audit, intervals, level)
    notes = _notes(chosen, details, intervals, orders, threshold, best)
    if audit is not None:
        notes.extend(Note(text, warning=warning) for text, warning in audit_sentences(audit))
    if chosen.adaptive and results is not None:
        notes.extend(next_item_commands(chosen, details, Path(results), near, matrix))
    comparisons = chosen.comparisons(matrix, pairs)
    return EstimateReport(details, intervals, orders, own, threshold, title, columns, notes, comparisons, audit, best)


def check_interval_options(chosen: SelectedMicroBenchmark, *, clopper_pearson: bool = False, population: bool = False) -> None:
    """Refuse, before any work, the interval options of the random designs (--clopper-pearson, --population) for a
    micro-benchmark that is not one: its intervals are calibrated on held-out runs, which neither option changes."""
    asked = [flag for flag, given in (("--clopper-pearson", clopper_pearson), ("--population", population)) if given]
    if asked and design_of(chosen.method) is None:
        raise MdadError(
            f"{' and '.join(asked)} choose{'s' if len(asked) == 1 else ''} among the exact intervals of the random designs, but "
            f"{chosen.method} is not a random design (its intervals are calibrated on held-out runs), so it would change nothing; leave it out."
        )


def _check_interval_kind(intervals: EstimateIntervals, *, mid_p: bool, population: bool) -> None:
    """Refuse the random designs' interval options when the intervals are not the exact ones (continuous scores)."""
    asked = [flag for flag, given in (("--clopper-pearson (mid_p=False)", not mid_p), ("--population", population)) if given]
    if asked and intervals.kind not in ("exact", "population"):
        raise MdadError(
            f"{' and '.join(asked)} choose among the exact intervals of a random design on 0/1 scores, but these results get "
            f"no exact interval ({intervals.calibration}), so it would change nothing; leave it out."
        )


def _audit_columns(audit: pd.DataFrame | None, intervals: EstimateIntervals, level: float) -> list[Column]:
    """The audit-corrected estimate and its interval, rows as the table's (best learned estimate first);
    a cell warned where the learned estimate lies outside the corrected interval."""
    if audit is None or audit["corrected"].isna().all():
        return []
    ranked = np.argsort(-intervals.estimate, kind="stable")
    rows = audit.iloc[ranked]
    off = ((rows["learned"] < rows["low"]) | (rows["learned"] > rows["high"])).tolist()
    return [
        Column("corrected", ["" if np.isnan(v) else f"{100 * v:.1f}" for v in rows["corrected"]], warned=off, numeric=True),
        Column(
            f"audit {100 * level:g}% interval",
            ["" if np.isnan(lo) else f"{100 * lo:.1f} - {100 * hi:.1f}" for lo, hi in zip(rows["low"], rows["high"], strict=True)],
            numeric=True,
        ),
    ]


def best_note(best: BestProbability, threshold: float) -> Note:
    """The sentence under the table: P(the estimated best model is the true best of the models estimated), and,
    when the estimated best is marked (``best.mark``), that this probability may not hold either."""
    n, name = len(best.models), best.model
    if not best.available:
        return Note(f"P(the estimated best is the true best of the {n} models): {best.calibration}.")
    p = best.probability
    verdict = (
        "more likely than not another of them is the true best"
        if p < 0.5
        else "the first place is not reliable"
        if p < threshold
        else "the first place is reliable"
    )
    head = (
        f"P({name}, the estimated best, is the true best of the {n} models on the full benchmark)"
        if n > 2
        else f"P({name} stays above {best.models[1 - best.row]} on the full benchmark, the order holds and it is the true best of the two)"
    )
    text = f"{head} = {format_probability(p)}: {verdict} ({best.calibration})."
    if best.mark:  # the calibration does not hold for this model: say so where the number is
        return Note(
            f"{text} ! {name}'s interval is marked '!' (below): this probability rests on the same calibration and may not hold either.", warning=True
        )
    return Note(text)


def next_item_commands(
    chosen: SelectedMicroBenchmark,
    details: pd.DataFrame,
    results: Path,
    near: Sequence[str | Path] = (),
    matrix: ResponseMatrix | None = None,
) -> list[Note]:
    """The harness command that asks each model of an adaptive test its next item, into the folder its
    answers so far were read from: one per model still asking, with that model's own name and model
    arguments as its logs in ``matrix`` recorded them (``ResponseMatrix.model_runs``), so that its next
    answer is read as the same model; none when the test is done or the data's reader writes no commands."""
    writer = chosen.command_writer
    if writer is None:
        return []
    runs = matrix.model_runs if matrix is not None else {}
    output = writer.output_folder(results)
    notes: list[Note] = []
    for model, item in details["next_item"].items():
        if not item:
            continue
        who = "" if len(details) == 1 else f" of {model}"
        found = chosen.harness_commands([str(item)], output=output, near=[results, *near], model=runs.get(str(model)))
        lines = command_notes(found, f"The next item{who}, {item}, into the same folder ({output}):")
        notes.extend(n for n in lines if n.command or n not in notes)  # what to fill in, once
    return notes


def compared_rows(title: str, columns: list[Column], models: Sequence[str]) -> tuple[str, list[Column]]:
    """The table (``title``, ``columns``) with the rows of ``models`` only, without what belongs to the neighbouring
    pair of the whole ranking (gap, P(order holds)): what ``--compare`` shows beside its comparisons."""
    names = columns[0].cells
    rows = [i for i, name in enumerate(names) if name in set(models)]
    kept = [
        Column(c.name, [c.cells[i] for i in rows], [c.warned[i] for i in rows] if c.warned else [], c.numeric, c.identifier)
        for c in columns
        if c.name not in NEIGHBOUR_COLUMNS
    ]
    return title.removesuffix(TITLE_GAP), kept


TITLE_GAP = ", gap to the next model (points)"
NEIGHBOUR_COLUMNS = ("gap", "P(order holds)")  # a row's gap and probability to the next model of the whole ranking
SHOWN_PAIRS = 30  # pairs '--pairs all' prints, closest first; the comparisons CSV holds every pair


@dataclass(frozen=True)
class EveryPair:
    """What comparing every pair found: how many pairs, and the ``SHOWN_PAIRS`` closest (smallest gap, then in the
    order of the data)."""

    pairs: int
    closest: list[Comparison]


def compare_every_pair(
    chosen: SelectedMicroBenchmark, matrix: ResponseMatrix, on_block: Callable[[list[Comparison]], None] | None = None
) -> EveryPair:
    """Compare every pair of models of ``matrix`` in bounded memory (``SelectedMicroBenchmark.every_comparison``), each
    block handed to ``on_block`` (e.g. appended to a CSV), only the closest ``SHOWN_PAIRS`` kept."""
    total = 0
    closest: list[tuple[float, int, Comparison]] = []
    for block in chosen.every_comparison(matrix):
        if on_block is not None:
            on_block(block)
        closest = heapq.nsmallest(
            SHOWN_PAIRS, [*closest, *((abs(c.gap), total + i, c) for i, c in enumerate(block))], key=lambda entry: (entry[0], entry[1])
        )
        total += len(block)
    return EveryPair(total, [c for _, _, c in closest])


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
        Column("model", [str(intervals.models[i]) for i in ranked], identifier=True),
        Column("estimate", [f"{100 * intervals.estimate[i]:.1f}" for i in ranked], numeric=True),
    ]
    if np.isfinite(intervals.low).any():
        marked = [bool(intervals.mark is not None and intervals.mark[i]) for i in ranked]
        columns.append(
            Column(
                f"{100 * level:g}% interval",
                [
                    "" if np.isnan(intervals.low[i]) else f"{100 * intervals.low[i]:.1f} - {100 * intervals.high[i]:.1f}" + (" !" if m else "")
                    for i, m in zip(ranked, marked, strict=True)
                ],
                warned=marked,
                numeric=True,
            )
        )
    columns.append(Column("gap", [f"{orders.gap[p]:.1f}" if p < n_pairs else "" for p in range(len(ranked))], numeric=True))
    if np.isfinite(orders.probability).any() or orders.ties.any():
        probability = [orders.probability[p] if p < n_pairs else np.nan for p in range(len(ranked))]
        tied = [p < n_pairs and bool(orders.ties[p]) for p in range(len(ranked))]
        with_marked = [p < n_pairs and orders.mark is not None and bool(orders.mark[p]) for p in range(len(ranked))]
        columns.append(
            Column(
                "P(order holds)",
                ["tied" if t else format_probability(p) + (" !" if m else "") for p, m, t in zip(probability, with_marked, tied, strict=True)],
                warned=[not t and (bool(p < threshold) or m) for p, m, t in zip(probability, with_marked, tied, strict=True)],
                numeric=True,
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
        columns.append(Column("next item", [details["next_item"].iloc[i] or "(done)" for i in ranked], identifier=True))
    if "flagged" in details:
        flagged = [bool(details["flagged"].iloc[i]) for i in ranked]
        columns.append(Column("guard", ["extrapolation" if f else "" for f in flagged], warned=flagged))
    return columns


def _notes(
    chosen: SelectedMicroBenchmark,
    details: pd.DataFrame,
    intervals: EstimateIntervals,
    orders: OrderProbabilities,
    threshold: float,
    best: BestProbability,
) -> list[Note]:
    """The lines below the table: where the numbers come from, what they do not promise, what to do next."""
    notes = [Note(f"Intervals: {intervals.calibration}. Order probabilities: {orders.calibration}.")]
    ties = int(orders.ties.sum())
    if len(orders.gap) > 1 and np.isfinite(orders.probability[~orders.ties]).all():  # two models: one event, said once (best_note)
        ordered = len(orders.gap) - ties
        notes.append(
            Note(
                f"{_unreliable(orders, threshold)} of the {ordered} neighbouring pairs "
                + ("not tied " if ties else "")
                + f"keep their order on the full benchmark with probability below {100 * threshold:g}%: those orders are not reliable."
            )
        )
    if len(best.models) > 1:
        notes.append(best_note(best, threshold))
    if ties:
        notes.append(
            Note(
                f"{plural(ties, 'neighbouring pair')} {'is' if ties == 1 else 'are'} tied on the full benchmark (every item of "
                "it drawn, as many right each): 'tied', no order to keep, not counted as unreliable."
            )
        )
    if intervals.mark is not None and any(intervals.mark):
        marked = int(sum(bool(m) for m in intervals.mark))
        notes.append(
            Note(
                f"{plural(marked, 'interval')} marked '!': {'. Or: '.join(dict.fromkeys(m for m in intervals.mark if m))}. "
                "The order probabilities of their pairs rest on the same calibration and are marked too.",
                warning=True,
            )
        )
    piled = piled_note(intervals)
    if piled:
        notes.append(Note(piled, warning=True))
    reaching = sum(bool(m) and m.endswith(OFF_POPULATION_ORDER_MARK) for m in (orders.mark if orders.mark is not None else ()))
    if reaching:
        notes.append(
            Note(
                f"{plural(reaching, 'neighbouring pair')} marked '!' although neither interval is: the named model's {OFF_POPULATION_ORDER_MARK}.",
                warning=True,
            )
        )
    beyond = beyond_sources_note(chosen.best_source_accuracy, intervals.estimate, intervals.kind)
    if beyond:
        notes.append(Note(beyond, warning=True))
    if (version := version_note(chosen.results_version)) is not None:
        notes.append(Note(version, warning=True))
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
    if chosen.adaptive and chosen.assessment is not None:
        notes.extend(unfinished_notes(chosen.size, details, chosen.assessment.by_length != ()))
    if chosen.adaptive and (details["next_item"] != "").any():
        notes.append(Note("Ask each model its next item, then run this command again with the new results."))
    return notes


def piled_note(intervals: EstimateIntervals) -> str:
    """The sentence for models whose estimates pile up at the ceiling of the method's estimates of the source models
    (the piled-up mark, mdad.micro.trust.piled_at_ceiling), "" when there are none."""
    if intervals.mark is None:
        return ""
    piled = np.asarray(intervals.mark, dtype=object) == OFF_POPULATION_PILED_MARK
    if not piled.any():
        return ""
    values = ", ".join(f"{100 * v:.1f}%" for v in sorted(set(written(intervals.estimate[piled]).tolist()), reverse=True))
    return (
        f"{plural(int(piled.sum()), 'model')} share the estimate {values} at the ceiling of this "
        "method's estimates of the source models: the estimate cannot tell those models apart, and their true accuracies "
        "may differ widely and lie above it."
    )


def unfinished_notes(size: int, details: pd.DataFrame, by_length: bool) -> list[Note]:
    """What an unfinished adaptive test's numbers rest on (docs/intervals.md#unfinished-adaptive-tests): the models
    calibrated at a shorter length, and those with no calibrated answer at all until they answer more."""
    calibrated = details["calibrated_at"]
    shorter = details[(calibrated > 0) & (calibrated < size)]
    none = details[calibrated == 0]
    notes = []
    if len(shorter):
        lengths = ", ".join(str(n) for n in sorted(set(shorter["calibrated_at"])))
        notes.append(
            Note(
                f"{plural(len(shorter), 'model')} ({', '.join(map(str, shorter.index[:5]))}{', ...' if len(shorter) > 5 else ''}) "
                f"{'has' if len(shorter) == 1 else 'have'} not finished the adaptive test of {plural(size, 'item')}: "
                f"their intervals, their pairs' order probabilities and P(best) are calibrated on held-out tests stopped at "
                f"{lengths} {'item' if lengths == '1' else 'items'} (the largest calibrated length not above the items answered), "
                "so they are wider and less sure than the finished test's."
            )
        )
    if len(none):
        until = (
            "answer the first item"
            if by_length
            else f"finish the test of {plural(size, 'item')} (this file calibrates only the full test; select it again to calibrate shorter ones)"
        )
        notes.append(
            Note(
                f"No interval, order probability or verdict for {plural(len(none), 'model')} "
                f"({', '.join(map(str, none.index[:5]))}{', ...' if len(none) > 5 else ''}) until {'it' if len(none) == 1 else 'they'} {until}: "
                "no held-out test was calibrated at so few answered items.",
                warning=True,
            )
        )
    return notes
