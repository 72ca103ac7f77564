"""A micro-benchmark chosen from all the data (``select``) and its estimates of new models' accuracy."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from mdad import methods as method_registry
from mdad.assessment import Assessment, LengthCalibration
from mdad.data.matrix import ResponseMatrix, fingerprint
from mdad.data.readers.commands import ModelRun
from mdad.defaults import DEFAULT_LEVEL
from mdad.errors import MdadError
from mdad.estimates import BestProbability, EstimateIntervals, OrderProbabilities
from mdad.estimators.audit import check_audit_items
from mdad.exact import on_estimate_grid
from mdad.intervals.conformal import ConformalCalibration
from mdad.intervals.order import PairPrior
from mdad.intervals.posterior import AccuracyPrior
from mdad.methods.adaptive import AdaptiveBenchmark
from mdad.methods.base import MicroBenchmark, SourceView, check_size
from mdad.methods.names import canonical, parse
from mdad.micro import file_format, harness
from mdad.micro.audit import AuditItems, audited, without_unasked_audit
from mdad.micro.comparison import Comparison, mcnemar_mid_p
from mdad.micro.trust import (
    UNCALIBRATED,
    UNFINISHED,
    Strata,
    best_of_ranking,
    calibrated_marks,
    calibrated_probability,
    design_estimates,
    design_strata,
    estimate_intervals,
    neighbour_orders,
    one_event,
    pair_orders,
)
from mdad.registry import foreign_failure
from mdad.results_version import RESULTS_VERSION
from mdad.seeding import rng_for
from mdad.wording import plural

TASK_IDENTITY = ("harness", "version", "n_shot")  # what must match between the data and later results
COMPARE_BLOCK = 20_000  # pairs compared at once by ``every_comparison`` ...
COMPARE_BYTES = 64 * 2**20  # ... fewer when their scores (pairs x items, both models) would take more memory than this


@dataclass(frozen=True, eq=False, repr=False)
class SelectedMicroBenchmark:
    """A micro-benchmark chosen from a response matrix: item ids plus its estimator."""

    method: str
    item_ids: np.ndarray
    subtasks: np.ndarray
    micro: MicroBenchmark
    seed: int
    data_source: str
    data_fingerprint: str
    n_pool: int
    assessment: Assessment | None = None  # its reliability, measured on held-out splits (mdad.assess)
    tasks: dict = field(default_factory=dict)  # subtask -> what identifies its task (version, n-shot, task file)
    item_hashes: np.ndarray | None = None  # each item's content hash (document and gold answer), "" unknown
    pool_subtasks: dict[str, int] | None = None  # items per subtask in the pool (None: file of an older mdad)
    pair_prior: PairPrior | None = None  # how the source models' pairs split their discordant items (0/1 data)
    accuracy_prior: AccuracyPrior | None = None  # the source models' pool counts (0/1 data; None: older file)
    source_means: np.ndarray | None = None  # each source model's mean score on the pool, sorted (continuous scores; None: 0/1 data or older file)
    audit: AuditItems | None = None  # uniformly drawn items that check and correct the estimate (None: none)
    results_version: int | None = RESULTS_VERSION  # of the code that chose and fitted it (None: a file from before versions)

    def __repr__(self) -> str:
        """One short line (the fields hold thousands of numbers)."""
        kind = "adaptive test" if self.adaptive else "micro-benchmark"
        assessed = f", assessed on {self.assessment.runs} runs" if self.assessment is not None else ""
        audit = f" plus {self.audit.size} audit items" if self.audit is not None else ""
        return (
            f"<SelectedMicroBenchmark {self.method}: {kind} of {self.size} items{audit} from a pool of {self.n_pool} "
            f"of {self.data_source or 'unnamed data'}, seed {self.seed}{assessed}>"
        )

    @property
    def size(self) -> int:
        """Items each model answers (for an adaptive test: how many it is asked, from the whole pool)."""
        return self.micro.size

    @property
    def adaptive(self) -> bool:
        """Whether this is an adaptive test: each model answers its own items, one at a time."""
        return isinstance(self.micro, AdaptiveBenchmark)

    @property
    def source_scores(self) -> np.ndarray | None:
        """Each model it was chosen from: its mean score on the whole pool (its accuracy on 0/1 scores), sorted;
        None when the file does not store them (an older mdad)."""
        if self.accuracy_prior is not None:
            return np.asarray(self.accuracy_prior.counts, dtype=np.float64) / self.accuracy_prior.pool_items
        return self.source_means

    @property
    def best_source_accuracy(self) -> float | None:
        """The highest full-benchmark accuracy (mean score) among the models it was chosen from (None: not stored)."""
        sources = self.source_scores
        return None if sources is None else float(sources.max())

    def with_assessment(self, assessment: Assessment) -> SelectedMicroBenchmark:
        """The same micro-benchmark carrying ``assessment`` (what ``mdad.assess`` measured on held-out models)."""
        if (assessment.method, assessment.size) != (self.method, self.size):
            raise MdadError(
                f"The assessment is of {assessment.method} with {assessment.size} items, but the micro-benchmark "
                f"is {self.method} with {self.size} items."
            )
        return replace(self, assessment=assessment)

    def estimate(self, matrix: ResponseMatrix) -> pd.Series:
        """Estimated full-benchmark accuracy of every model of ``matrix`` from its answers on the items.

        Refuses results of another task version than the micro-benchmark was built on: a task
        whose version or n-shot differs, or an item whose document or gold answer differs.
        """
        return self.details(matrix)["estimate"]

    def details(self, matrix: ResponseMatrix) -> pd.DataFrame:
        """Per model of ``matrix``: the estimate and what the estimator adds. Model-based estimators
        add the extrapolation guard (``flagged``, ``reason``); an estimator with its own interval
        (``MicroBenchmark.own_intervals``, e.g. AIPW) adds it (``low``, ``high``);
        an adaptive test the number of items answered and the item it would ask next (``next_item``,
        empty once the test is over). A static micro-benchmark needs every model's answer on every
        item; an adaptive test takes whatever pool items each model answered."""
        index = pd.Index(matrix.models, name="model")
        if self.adaptive:
            return self._adaptive_details(matrix, {item: j for j, item in enumerate(matrix.items)}, index)
        scores, gold = self.item_scores(matrix)
        frame = pd.DataFrame({"estimate": on_estimate_grid(self._estimates(scores, gold))}, index=index)
        own = self.micro.own_intervals(scores, np.asarray(matrix.models))
        if own is not None:  # the estimator's own interval (AIPW's)
            frame["low"], frame["high"] = own.low, own.high
        return _with_flags(frame, self.micro.flags(scores))

    def intervals(self, matrix: ResponseMatrix, *, level: float = DEFAULT_LEVEL, population: bool = False, mid_p: bool = True) -> EstimateIntervals:
        """Every model's estimate with an interval for its full-benchmark accuracy (mdad.micro.trust).

        For the random designs: the mid-p interval (nominal coverage on average over accuracies); with
        ``mid_p=False`` the Clopper-Pearson one (at least nominal for every accuracy, wider); with
        ``population`` the empirical-Bayes interval calibrated on the source models' accuracies
        (narrower; nominal on average over models like the sources, not for a model unlike all of them)."""
        scores, estimates, lengths = self._scores_and_estimates(matrix)
        models = np.asarray(matrix.models)

        def at(rows: np.ndarray, calibration: ConformalCalibration | None) -> EstimateIntervals:
            return estimate_intervals(
                scores[rows],
                estimates[rows],
                models[rows],
                method=self.method,
                strata=self._strata(),
                calibration=calibration,
                prior=self.accuracy_prior,
                sources=self.source_scores,
                level=level,
                population=population,
                mid_p=mid_p,
            )

        full = self.assessment.interval_calibration if self.assessment is not None else None
        every = np.arange(len(models))
        if full is None or (lengths == self.size).all():
            return at(every, full)
        # an unfinished adaptive test: each model's interval is calibrated at its own length (docs/intervals.md#unfinished-adaptive-tests)
        low, high, mark = np.full(len(models), np.nan), np.full(len(models), np.nan), np.full(len(models), "", dtype=object)
        for length in np.unique(lengths):
            rows = np.flatnonzero(lengths == length)
            calibration = self._calibration_at(int(length))
            part = at(rows, None if calibration is None else calibration.intervals)
            low[rows], high[rows] = part.low, part.high
            if part.mark is not None:
                mark[rows] = part.mark
        how = f"{full.describe()}; a model that has not finished its test: {UNFINISHED}"
        return EstimateIntervals(models, np.clip(estimates, 0.0, 1.0), low, high, level, how, "calibrated", mark)

    def calibrated_lengths(self, matrix: ResponseMatrix) -> np.ndarray:
        """Per model of ``matrix``, the test length its intervals and order probabilities are calibrated at: the
        micro-benchmark's size, except for a model that has not finished an adaptive test, whose estimate rests on
        fewer items: the largest length not above its answered items at which the held-out tests were calibrated,
        0 when none is (docs/intervals.md#unfinished-adaptive-tests)."""
        return self._scores_and_estimates(matrix)[2]

    def _calibration_at(self, length: int) -> LengthCalibration | None:
        """The calibrations of held-out tests stopped at ``length`` items (None: none, or 0)."""
        return self.assessment.calibration_for(length) if self.assessment is not None and length > 0 else None

    def _at_lengths(
        self, probability: np.ndarray, estimates: np.ndarray, lengths: np.ndarray, first: np.ndarray, second: np.ndarray, *, neighbours: bool
    ) -> np.ndarray:
        """The pairs' order probabilities where one model has not finished its adaptive test: calibrated at the shorter
        of the two lengths (``lengths``: per model, ``calibrated_lengths``), NaN where that length has no calibration."""
        shortest = np.minimum(lengths[first], lengths[second])
        out = np.array(probability, dtype=np.float64)
        clipped = np.clip(estimates, 0.0, 1.0)
        for length in np.unique(shortest[shortest < self.size]):
            pairs = shortest == length
            calibration = self._calibration_at(int(length))
            if calibration is None or calibration.orders is None:
                out[pairs] = np.nan
            else:
                e1, e2 = clipped[first[pairs]], clipped[second[pairs]]
                out[pairs] = calibrated_probability(calibration.orders, e1, e2, len(estimates), neighbours=neighbours)
        return out

    def audited(self, matrix: ResponseMatrix, *, level: float = DEFAULT_LEVEL, learned: np.ndarray | None = None) -> pd.DataFrame | None:
        """Per model of ``matrix``: the learned estimate (``learned``, default: the printed one of ``intervals``),
        the estimate corrected by the audit items and its design-based interval at ``level``, and how many audit
        items it answered (mdad.micro.audit; NaN corrections for a model lacking some); None without audit items."""
        if self.audit is None:
            return None
        if learned is None:
            learned = self.intervals(matrix, level=level).estimate
        scores = np.empty((matrix.n_models, 0)) if self.adaptive else self.item_scores(matrix)[0]
        return audited(
            self.audit,
            np.asarray(learned, dtype=np.float64),
            scores,
            self.audit_scores(matrix),
            self.fixed_positions,
            self.n_pool,
            np.asarray(matrix.models),
            level,
        )

    def audit_scores(self, matrix: ResponseMatrix) -> np.ndarray:
        """The models' scores on the audit items (models x m), NaN where an item is absent or unanswered."""
        if self.audit is None:
            return np.empty((matrix.n_models, 0))
        lookup = {item: j for j, item in enumerate(matrix.items)}
        present = np.array([j for j, item in enumerate(self.audit.item_ids) if item in lookup], dtype=np.int64)
        out = np.full((matrix.n_models, self.audit.size), np.nan)
        if present.size:
            cols = np.array([lookup[self.audit.item_ids[j]] for j in present])
            self._check_same_tasks(matrix, cols, present, audit=True)
            out[:, present] = matrix.scores[:, cols]
        return out

    def own_intervals(self, matrix: ResponseMatrix) -> EstimateIntervals | None:
        """The interval the estimator itself gives every model of ``matrix`` (AIPW's; ``MicroBenchmark.own_intervals``),
        None when it gives none (most estimators, and every adaptive test)."""
        if self.adaptive:
            return None
        return self.micro.own_intervals(self.item_scores(matrix)[0], np.asarray(matrix.models))

    def order_probabilities(self, matrix: ResponseMatrix) -> OrderProbabilities:
        """For each neighbouring pair of the ranking by estimate: its gap and P(the full benchmark keeps the order)."""
        scores, estimates, lengths = self._scores_and_estimates(matrix)
        calibration = self.assessment.order_calibration if self.assessment is not None else None
        orders = neighbour_orders(
            scores,
            estimates,
            np.asarray(matrix.models),
            method=self.method,
            strata=self._strata(),
            calibration=calibration,
            prior=self.pair_prior,
            marks=self._marks(scores, estimates, lengths, pairs=True),
        )
        rows = pd.Index(matrix.models)
        first, second = rows.get_indexer(orders.first), rows.get_indexer(orders.second)
        probability = self._at_lengths(orders.probability, estimates, lengths, first, second, neighbours=True)
        first_only, second_only = self._discordant(scores, first, second)
        tied = self._whole_pool(scores) & (first_only == second_only)
        return replace(orders, probability=np.where(tied, np.nan, probability), tied=tied)

    def _marks(self, scores: np.ndarray, estimates: np.ndarray, lengths: np.ndarray, *, pairs: bool) -> np.ndarray | None:
        """Per model, the off-population mark its order probabilities carry (``pairs``) or its calibrated interval's,
        which P(best) carries (mdad.micro.trust.calibrated_marks), each from the calibration at its length."""
        marks: np.ndarray | None = None
        for length in np.unique(lengths):
            rows = np.flatnonzero(lengths == length)
            calibration = self._calibration_at(int(length))
            part = calibrated_marks(
                scores[rows],
                estimates[rows],
                method=self.method,
                strata=self._strata(),
                calibration=None if calibration is None else calibration.intervals,
                sources=self.source_scores,
                pairs=pairs,
            )
            if part is not None:
                marks = np.full(len(estimates), "", dtype=object) if marks is None else marks
                marks[rows] = part
        return marks

    def best_probability(self, matrix: ResponseMatrix) -> BestProbability:
        """P(the estimated best model of ``matrix`` is the true best of them on the full benchmark)
        (mdad.micro.trust.best_of_ranking), one probability per event: with two models it is the event that their
        order holds, so it is that pair's probability (``order_probabilities``); with more it cannot exceed the first
        neighbouring pair's, and is capped there (docs/intervals.md#the-best-of-a-ranking)."""
        return one_event(self._best_of_ranking(matrix), self.order_probabilities(matrix))

    def _best_of_ranking(self, matrix: ResponseMatrix) -> BestProbability:
        scores, estimates, lengths = self._scores_and_estimates(matrix)
        shortest = int(lengths.min())
        at_shortest = self._calibration_at(shortest)
        calibration = at_shortest.orders if at_shortest is not None else None
        best = best_of_ranking(
            scores,
            estimates,
            np.asarray(matrix.models),
            method=self.method,
            strata=self._strata(),
            calibration=calibration,
            prior=self.accuracy_prior,
            marks=self._marks(scores, estimates, lengths, pairs=False),
        )
        if shortest < self.size and self.assessment is not None and self.assessment.order_calibration is not None:
            if at_shortest is None or calibration is None:
                return replace(best, probability=float("nan"), calibration=f"not available: {UNCALIBRATED}", mark="")
            stopped = f"of held-out tests stopped at {plural(shortest, 'item')}, the fewest any model's estimate rests on"
            return replace(best, calibration=f"{best.calibration}, {stopped}")
        return best

    def compare(self, matrix: ResponseMatrix, first: str, second: str) -> Comparison:
        """Models ``first`` and ``second`` of ``matrix`` compared: estimates, gap, P(the full benchmark orders them
        as the estimates do; mdad.micro.trust, for any pair) and the exact mid-p McNemar test on the items
        (mdad.micro.comparison); one sentence naming unknown models."""
        return self.comparisons(matrix, [(first, second)])[0]

    def comparisons(self, matrix: ResponseMatrix, pairs: Sequence[tuple[str, str]]) -> list[Comparison]:
        """``compare`` for each of the ``pairs`` of models, the estimates and scores computed once."""
        rows = model_rows(matrix, [name for pair in pairs for name in pair])
        if not rows:
            return []
        return self._compared(self._pair_inputs(matrix), np.array(rows[0::2]), np.array(rows[1::2]))

    def every_comparison(self, matrix: ResponseMatrix, *, block: int = COMPARE_BLOCK) -> Iterator[list[Comparison]]:
        """``compare`` for every pair of models of ``matrix`` (in the order of the data: the first model with each later
        one, then the second, ...), in lists of about ``block`` pairs, so that memory stays bounded whatever the number
        of models (``mdad estimate --pairs all``)."""
        inputs = self._pair_inputs(matrix)
        block = max(1, min(block, COMPARE_BYTES // (8 * max(inputs[0].shape[1], 1))))  # a block's scores of both models
        n = matrix.n_models
        first: list[np.ndarray] = []
        held = 0
        for i in range(n - 1):
            first.append(np.full(n - 1 - i, i))
            held += n - 1 - i
            if held >= block or i == n - 2:
                a = np.concatenate(first)
                b = np.concatenate([np.arange(row + 1, n) for row in range(int(a[0]), i + 1)])
                yield self._compared(inputs, a, b)
                first, held = [], 0

    def _pair_inputs(self, matrix: ResponseMatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """What comparing any pair needs, computed once: scores, estimates, calibrated lengths, order marks, model names."""
        scores, raw, lengths = self._scores_and_estimates(matrix)
        return scores, raw, lengths, self._marks(scores, raw, lengths, pairs=True), np.asarray(matrix.models)

    def _compared(self, inputs: tuple, a: np.ndarray, b: np.ndarray) -> list[Comparison]:
        """The comparisons of the pairs of rows (``a``, ``b``) (``_pair_inputs``)."""
        scores, raw, lengths, marks, models = inputs
        estimates = design_estimates(self._strata(), scores, raw)
        swap = estimates[a] < estimates[b]
        ahead, behind = np.where(swap, b, a), np.where(swap, a, b)
        calibration = self.assessment.order_calibration if self.assessment is not None else None
        orders = pair_orders(
            scores, raw, models, ahead, behind, method=self.method, strata=self._strata(), calibration=calibration, prior=self.pair_prior, marks=marks
        )
        probability = self._at_lengths(orders.probability, raw, lengths, ahead, behind, neighbours=False)
        paired = _paired(scores)
        first_only, second_only = self._discordant(scores, a, b)
        whole = self._whole_pool(scores)
        out = []
        for i in range(len(a)):
            tied = whole and first_only[i] == second_only[i]  # as the table: a tie is known only with every item drawn
            out.append(
                Comparison(
                    first=str(models[a[i]]),
                    second=str(models[b[i]]),
                    estimate_first=float(estimates[a[i]]),
                    estimate_second=float(estimates[b[i]]),
                    gap=float(100.0 * (estimates[a[i]] - estimates[b[i]])),
                    order_probability=float("nan") if tied else float(probability[i]),
                    order_how=orders.calibration,
                    first_only=int(first_only[i]),
                    second_only=int(second_only[i]),
                    p_value=mcnemar_mid_p(int(first_only[i]), int(second_only[i])) if paired else float("nan"),
                    whole_pool=whole,
                    mark="" if tied or orders.mark is None else str(orders.mark[i]),
                )
            )
        return out

    @staticmethod
    def _discordant(scores: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per pair (rows ``a``, ``b``): the items only the first got right and those only the second did
        (-1 each when the scores are not 0/1 on a fixed set of items)."""
        if not _paired(scores):
            return np.full(len(a), -1), np.full(len(a), -1)
        return ((scores[a] == 1) & (scores[b] == 0)).sum(axis=1), ((scores[a] == 0) & (scores[b] == 1)).sum(axis=1)

    def _whole_pool(self, scores: np.ndarray) -> bool:
        """Whether every item of the pool is drawn and scored 0/1, so the counts are the full benchmark's."""
        strata = self._strata()
        return strata is not None and bool(np.array_equal(strata[1], strata[0])) and _paired(scores)

    def _estimates(self, scores: np.ndarray, gold: np.ndarray | None) -> np.ndarray:
        """The estimator's estimates of models with ``scores`` on the items, its contract checked when its method is
        installed (``SelectionMethod.check_estimates``): an estimator that raises or gives no finite number is one
        sentence naming it, not a wrong table."""
        installed = parse(self.method).base in method_registry.METHODS
        method = method_registry.get(self.method) if installed else None
        try:
            values = self.micro.estimate(scores, gold)
        except (MdadError, MemoryError):
            raise
        except Exception as exc:  # an extension's code: one sentence naming it
            who = method.described() if method is not None else f"the estimator of {self.method!r}"
            raise foreign_failure(exc, who, "to estimate the models' accuracy") from None
        return values if method is None else method.check_estimates(values, len(scores))

    def _strata(self) -> Strata | None:
        """The exact design's strata (mdad.micro.trust.design_strata), None when it has none."""
        return design_strata(self.method, self.n_pool, self.subtasks, self.pool_subtasks)

    def _scores_and_estimates(self, matrix: ResponseMatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The static items' scores (none for an adaptive test, which has no exact answer), the estimates and the
        length each model's answers are calibrated at (``calibrated_lengths``)."""
        details = self.details(matrix)
        estimates = details["estimate"].to_numpy(np.float64)
        if not self.adaptive:
            return self.item_scores(matrix)[0], estimates, np.full(matrix.n_models, self.size)
        return np.empty((matrix.n_models, 0)), estimates, details["calibrated_at"].to_numpy(np.int64)

    def item_scores(self, matrix: ResponseMatrix) -> tuple[np.ndarray, np.ndarray | None]:
        """The models' scores on the chosen items (models x k) and, if the estimator uses them, gold-option
        probabilities; refuses missing items, unanswered items and another task version."""
        lookup = {item: j for j, item in enumerate(matrix.items)}
        missing = [str(item) for item in self.item_ids if item not in lookup]
        if missing:
            raise MdadError(
                f"{len(missing)} of the {len(self.item_ids)} micro-benchmark items are not in {matrix.source} "
                f"(e.g. {missing[0]!r}); item ids must match those the micro-benchmark was built from."
            )
        cols = np.array([lookup[item] for item in self.item_ids])
        self._check_same_tasks(matrix, cols)
        scores = matrix.scores[:, cols]
        unanswered = np.isnan(scores).any(axis=1)
        if unanswered.any():
            model = str(matrix.models[np.flatnonzero(unanswered)[0]])
            raise MdadError(f"Model {model!r} has no score on some micro-benchmark items; every item must be answered.")
        gold = matrix.gold_prob()[:, cols] if self.micro.uses_gold_prob else None
        return scores, gold

    def check_results(self, matrix: ResponseMatrix) -> None:
        """Refuse ``matrix`` when its tasks or items differ from those the micro-benchmark was built on (another
        version or n-shot, another document or gold answer), checking the items it holds; what ``item_scores``
        checks, for a harness that runs the items (mdad.harness)."""
        lookup = {item: j for j, item in enumerate(matrix.items)}
        present = np.array([j for j, item in enumerate(self.item_ids) if item in lookup], dtype=np.int64)
        if present.size:
            self._check_same_tasks(matrix, np.array([lookup[self.item_ids[j]] for j in present]), present)
        self.audit_scores(matrix)  # the audit items, checked alike

    def first_item(self) -> str:
        """The item an adaptive test asks every new model first (it starts from one ability)."""
        if not self.adaptive:
            raise MdadError(f"{self.method} is not an adaptive test; every model answers all its items.")
        return str(self.item_ids[self._adaptive_test().next_items(np.full((1, len(self.item_ids)), np.nan))[0]])

    def _adaptive_test(self) -> AdaptiveBenchmark:
        """The estimator as the adaptive test it is (only called when ``adaptive``)."""
        assert isinstance(self.micro, AdaptiveBenchmark)
        return self.micro

    def _adaptive_details(self, matrix: ResponseMatrix, lookup: dict, index: pd.Index) -> pd.DataFrame:
        present = np.array([j for j, item in enumerate(self.item_ids) if item in lookup], dtype=np.int64)
        if not present.size:
            raise MdadError(
                f"None of the adaptive test's {len(self.item_ids)} pool items is in {matrix.source}; "
                "item ids must match those the test was built from."
            )
        cols = np.array([lookup[self.item_ids[j]] for j in present])
        self._check_same_tasks(matrix, cols, present)
        answers = np.full((matrix.n_models, len(self.item_ids)), np.nan)
        answers[:, present] = matrix.scores[:, cols]
        if self.audit is not None:  # an audit answer the test did not ask stays out of its estimate (mdad.micro.audit)
            answers = without_unasked_audit(self._adaptive_test(), answers, np.isin(self.item_ids, self.audit.item_ids))
        nxt = self._adaptive_test().next_items(answers)
        answered = (~np.isnan(answers)).sum(axis=1)
        length = np.where(nxt >= 0, np.minimum(answered, self.size), self.size)  # a finished (or stopped) test stands for the whole test
        frame = pd.DataFrame(
            {
                "estimate": on_estimate_grid(self.micro.estimate(answers)),
                "answered": answered,
                "next_item": np.where(nxt >= 0, self.item_ids[np.maximum(nxt, 0)], ""),
                "calibrated_at": [self._calibrated_length(int(n)) for n in length],
            },
            index=index,
        )
        return _with_flags(frame, self.micro.flags(answers))

    def _calibrated_length(self, answered: int) -> int:
        """The length whose calibration holds for a test that stands for ``answered`` items (0: none does); without an
        assessment, the size (nothing is calibrated at all, and the sentences say so)."""
        if self.assessment is None or self.assessment.interval_calibration is None or answered >= self.size:
            return self.size
        calibration = self._calibration_at(answered)
        return 0 if calibration is None else calibration.length

    def _check_same_tasks(self, matrix: ResponseMatrix, cols: np.ndarray, positions: np.ndarray | None = None, *, audit: bool = False) -> None:
        """Refuse another task version; ``cols`` are the matrix columns of the items at ``positions``
        of ``item_ids`` (default: all of them, in order), or of the audit items' ids with ``audit``."""
        ids_all, hashes_all, subtasks = self.item_ids, self.item_hashes, self.subtasks
        if audit and self.audit is not None:
            ids_all, hashes_all, subtasks = self.audit.item_ids, self.audit.item_hashes, self.audit.subtasks
        for subtask in dict.fromkeys(subtasks.tolist()):
            built, new = self.tasks.get(subtask, {}), matrix.tasks.get(subtask, {})
            for key in TASK_IDENTITY:
                if key in built and key in new and built[key] != new[key]:
                    raise MdadError(
                        f"Task {subtask!r} in {matrix.source} has {key.replace('_', '-')} {new[key]}, but the "
                        f"micro-benchmark was built on {key.replace('_', '-')} {built[key]}; its estimates do not apply."
                    )
        if hashes_all is None or matrix.item_hashes is None:
            return
        new = matrix.item_hashes[cols]
        own = hashes_all if positions is None else hashes_all[positions]
        ids = ids_all if positions is None else ids_all[positions]
        differ = (own != "") & (new != "") & (own != new)
        if differ.any():
            item = str(ids[np.argmax(differ)])
            raise MdadError(
                f"Item {item!r} in {matrix.source} has another document or gold answer than when the micro-benchmark "
                f"was built ({int(differ.sum())} of {len(differ)} items differ): the task changed; its estimates do not apply."
            )

    @property
    def fixed_positions(self) -> np.ndarray:
        """The pool positions every new model answers besides the audit items (none for an adaptive test)."""
        return np.empty(0, dtype=np.int64) if self.adaptive else self.micro.items

    @property
    def all_item_ids(self) -> np.ndarray:
        """Every item a new model may answer: the chosen items (an adaptive test's pool), then the audit items."""
        return self.item_ids if self.audit is None or self.adaptive else np.concatenate([self.item_ids, self.audit.item_ids])

    @property
    def all_subtasks(self) -> np.ndarray:
        """The subtask of each of ``all_item_ids``."""
        return self.subtasks if self.audit is None or self.adaptive else np.concatenate([self.subtasks, self.audit.subtasks])

    def items_by_task(self) -> dict[str, list[str]]:
        """The item ids per harness task, audit items included (mdad.micro.harness.items_by_task)."""
        return harness.items_by_task(self.all_item_ids, self.all_subtasks)

    @property
    def command_writer(self) -> harness.CommandWriter | None:
        """The harness command writer of the reader that read the data (None: its harness cannot be asked for chosen items)."""
        return harness.command_writer(self.tasks, self.all_subtasks.tolist())

    def harness_samples(self) -> object:
        """The items, audit items included, as the harness's samples file holds them (lm-eval ``--samples``:
        task name -> document indices); an error when the data's harness reads no samples file."""
        writer = self.command_writer
        if writer is None or writer.samples_file is None:
            raise MdadError(
                f"A samples file is written only for the logs of a harness that reads one ({harness.writers(samples_file=True)}); "
                f"{self.data_source} is not."
            )
        return writer.samples(self.items_by_task())

    def harness_commands(
        self,
        items: Sequence[str] | None = None,
        *,
        output: str = "NEW",
        samples_file: str | None = None,
        near: Sequence[str | Path] = (),
        model: ModelRun | None = None,
    ) -> harness.HarnessCommands:
        """The harness commands that run a model on ``items`` (default: every item, audit items included) only,
        with the options the source logs recorded, its logs going to ``output`` (mdad.micro.harness.commands;
        ``near``: paths around which a file the logs name, such as inspect's task file, is looked for, beside
        the data's; ``model``: a model that answered some already, as its logs recorded its run, else a new one)."""
        every, every_subtask = self.all_item_ids, self.all_subtasks
        chosen = list(every) if items is None else list(items)
        position = {str(item): j for j, item in enumerate(every)}
        unknown = [item for item in chosen if str(item) not in position]
        if unknown:
            raise MdadError(f"Item {unknown[0]!r} is not an item of this micro-benchmark.")
        subtasks = [str(every_subtask[position[str(item)]]) for item in chosen]
        return harness.commands(chosen, subtasks, self.tasks, output=output, samples_file=samples_file, near=[*near, self.data_source], model=model)

    def to_json(self) -> dict:
        """The micro.json object (mdad.micro.file_format)."""
        return file_format.encode({f.name: getattr(self, f.name) for f in fields(self)})

    def save(self, path: str | Path) -> None:
        """Write the micro-benchmark to ``path`` as micro.json."""
        file_format.write(self.to_json(), path)

    @classmethod
    def load(cls, path: str | Path) -> SelectedMicroBenchmark:
        """Read a micro-benchmark ``save`` wrote; one clear error for a broken or foreign file."""
        return cls(**file_format.read(path))


def model_rows(matrix: ResponseMatrix, names) -> list[int]:
    """The rows of the models ``names`` in ``matrix``; one sentence naming any unknown ones and the models present."""
    rows = {str(model): i for i, model in enumerate(matrix.models)}
    unknown = [str(name) for name in names if str(name) not in rows]
    if unknown:
        present = ", ".join(map(str, matrix.models[:20])) + (", ..." if matrix.n_models > 20 else "")
        raise MdadError(
            f"No model {' or '.join(map(repr, dict.fromkeys(unknown)))} in {matrix.source}; its {plural(matrix.n_models, 'model')}: {present}."
        )
    return [rows[str(name)] for name in names]


def _with_flags(frame: pd.DataFrame, flags) -> pd.DataFrame:
    """The frame with the extrapolation guard's flag and reason per model (when the estimator has one)."""
    if flags is not None:
        frame["flagged"] = flags.flagged
        frame["reason"] = [flags.reason(i) for i in range(len(frame))]
    return frame


def check_request(matrix: ResponseMatrix, method: str, size: int, audit_items: int = 0) -> None:
    """Refuse, before any work, what ``select`` would refuse once the held-out runs are under way:
    cells not evaluated, a size beyond the pool, audit items that cannot be drawn."""
    if matrix.n_missing:
        raise MdadError(f"{matrix.source} has cells that were not evaluated; drop incomplete items or models first.")
    check_size(size, matrix.n_items)
    if audit_items:
        check_audit_items(audit_items, matrix.n_items - (0 if method_registry.get(method).adaptive else size))


def select(matrix: ResponseMatrix, method: str, size: int, *, seed: int = 0, audit_items: int = 0) -> SelectedMicroBenchmark:
    """Choose ``size`` items of ``matrix`` with ``method``, using every model as a source model.

    Parameters
    ----------
    matrix : ResponseMatrix
        Complete results (no missing cells): every model is a source, every item is in the pool.
    method : str
        A selection method (``mdad.methods.available()``).
    size : int
        Items to choose.
    seed : int
        Seed of the selection.
    audit_items : int
        Items drawn uniformly at random from those not chosen (from the whole pool for an adaptive test), on
        top of them (0: none; at least 2): each new model answers them too, and they correct the estimate
        with an interval that holds whatever the source models are (``SelectedMicroBenchmark.audited``;
        docs/intervals.md#audit-items).

    Returns
    -------
    SelectedMicroBenchmark
        The item ids and the estimator; ``.estimate(new_matrix)`` estimates new models' accuracy.

    Examples
    --------
    >>> import mdad
    >>> matrix = mdad.simulate(seed=0, n_models=40, n_items=100)
    >>> micro = mdad.select(matrix, "random", 10, seed=0)
    >>> len(micro.item_ids), micro.estimate(matrix).shape
    (10, (40,))
    """
    check_request(matrix, method, size, audit_items)
    chosen = method_registry.get(method)
    method = canonical(method)
    view = SourceView.from_arrays(matrix.scores, matrix.gold_prob(), matrix.subtask_codes, matrix.has_option_probs)
    key = chosen.preparation or f"method:{method}"
    prepared = chosen.prepare_checked(view, rng_for(seed, "prepare", key, "all"))
    micro = chosen.select(view, size, rng_for(seed, "select", method, size, "all"), prepared)
    binary = bool(np.isin(matrix.scores, (0.0, 1.0)).all())
    fixed = np.empty(0, dtype=np.int64) if chosen.adaptive else micro.items  # an adaptive test's audit is drawn from the whole pool
    audit = AuditItems.draw(matrix, fixed, audit_items, seed=seed, method=method, size=size) if audit_items else None
    asked = matrix.subtasks[micro.items] if audit is None else np.concatenate([matrix.subtasks[micro.items], audit.subtasks])
    return SelectedMicroBenchmark(
        method=method,
        item_ids=matrix.items[micro.items],
        subtasks=matrix.subtasks[micro.items],
        micro=micro,
        seed=seed,
        data_source=matrix.source,
        data_fingerprint=fingerprint(matrix),
        n_pool=matrix.n_items,
        tasks={s: matrix.tasks[s] for s in dict.fromkeys(asked.tolist()) if s in matrix.tasks},
        item_hashes=None if matrix.item_hashes is None else matrix.item_hashes[micro.items],
        pool_subtasks={str(name): int(n) for name, n in zip(*np.unique(matrix.subtasks, return_counts=True), strict=True)},
        pair_prior=PairPrior.of_sources(matrix.scores) if binary and matrix.n_models >= 2 else None,
        accuracy_prior=AccuracyPrior.from_scores(matrix.scores) if binary else None,
        source_means=None if binary else np.sort(matrix.scores.mean(axis=1)),
        audit=audit,
    )


def _paired(scores: np.ndarray) -> bool:
    """Whether the exact paired counts apply: 0/1 scores on a fixed, non-empty set of items."""
    return bool(scores.shape[1]) and bool(np.isin(scores, (0.0, 1.0)).all())
