"""Intervals and order probabilities for one saved micro-benchmark: which answer applies (docs/intervals.md#which-answer-applies), and applying it.

- Random designs on 0/1 scores: finite-population answers from the pool's size (per subtask
  for the stratified designs and the per-subtask variants), the model's answers and the priors
  ``select`` stored from the source models (mdad.intervals.random_designs: the empirical-Bayes
  interval of mdad.intervals.posterior, or without a prior the mid-p one of mdad.intervals.finite,
  nominal on average over accuracies, or its Clopper-Pearson version, at least nominal for every
  accuracy; mdad.intervals.order): nothing is calibrated on held-out runs.
- Every other method, and any method on continuous scores: the calibration of its held-out
  assessment (split-conformal residuals, logistic order fit on the gap over the residual spread
  at the two estimates), stored with the micro-benchmark.
- Neither available: NaN, and the sentence says why.
- P(the estimated best is the true best): ``best_of_ranking`` (docs/intervals.md#the-best-of-a-ranking).

The functions take the fields of the micro-benchmark they need (mdad.micro.selected calls them).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from mdad.defaults import DEFAULT_LEVEL
from mdad.errors import MdadError
from mdad.estimates import BestProbability, EstimateIntervals, OrderProbabilities, written
from mdad.exact import on_estimate_grid
from mdad.intervals.conformal import ConformalCalibration
from mdad.intervals.finite import check_level, stratified_estimate
from mdad.intervals.order import OrderCalibration, PairPrior
from mdad.intervals.posterior import AccuracyPrior
from mdad.intervals.random_designs import exact_bounds, exact_pair_probabilities, per_stratum
from mdad.intervals.ranking import best_probabilities, count_posteriors, normal_posteriors
from mdad.memory import require_memory
from mdad.methods import get as get_method
from mdad.methods.names import parse

Strata = tuple[np.ndarray, np.ndarray, np.ndarray]  # pool sizes, drawn items, stratum of each chosen item
EXACT_BYTES = 56  # memory of the exact intervals per (count drawn, pool count) cell: measured 48-52 bytes


def design_of(method: str) -> str | None:
    """'uniform' or 'stratified' for the random designs (items uniform within each stratum given its count), else None."""
    return parse(method).design


def design_strata(method: str, n_pool: int, subtasks: np.ndarray, pool_subtasks: dict[str, int] | None) -> Strata | None:
    """(pool sizes, drawn items, stratum of each chosen item) of the exact design, or None when unknown.

    ``subtasks``: the subtask of each chosen item; ``pool_subtasks``: items per subtask in the pool."""
    design = design_of(method)
    if design == "uniform":
        return np.array([n_pool]), np.array([len(subtasks)]), np.zeros(len(subtasks), np.int64)
    if design == "stratified" and pool_subtasks and set(subtasks.tolist()) <= set(pool_subtasks):
        names = sorted(pool_subtasks)
        codes = np.searchsorted(names, subtasks)
        sizes = np.array([pool_subtasks[name] for name in names], dtype=np.int64)
        return sizes, np.bincount(codes, minlength=len(names)), codes
    return None


def _exact_strata(strata: Strata | None, scores: np.ndarray) -> Strata | None:
    """The design's strata when its exact answers apply: a known random design and 0/1 scores."""
    binary = bool(np.isin(scores, (0.0, 1.0)).all())
    return strata if strata is not None and binary else None


def _design_estimates(strata: Strata | None, scores: np.ndarray, estimates: np.ndarray) -> np.ndarray:
    """The estimates the exact answers belong to: a stratified design's own (finite.stratified_estimate), which its
    plain mean is not when subtasks got unequal shares of the items; else ``estimates``, clipped to [0, 1] (an
    accuracy; AIPW's correction can carry an estimate past either end, and its interval stops there)."""
    if strata is None or len(strata[0]) == 1:
        return np.clip(estimates, 0.0, 1.0)
    sizes, drawn, codes = strata
    return on_estimate_grid(stratified_estimate(sizes, drawn, per_stratum(scores, codes, len(sizes))))


def _why_not(method: str, strata: Strata | None, scores: np.ndarray) -> str:
    if design_of(method) is not None and not np.isin(scores, (0.0, 1.0)).all():
        return "no interval: exact answers need 0/1 scores and the micro-benchmark carries no held-out assessment (select it with assessment runs)"
    if design_of(method) == "stratified" and strata is None:
        return "no interval: the file does not record the pool's subtask sizes (saved by an older mdad); select it again"
    return "no interval: the micro-benchmark carries no held-out assessment (select it with assessment runs)"


def estimate_intervals(
    scores: np.ndarray,
    estimates: np.ndarray,
    models: np.ndarray,
    *,
    method: str,
    strata: Strata | None,
    calibration: ConformalCalibration | None,
    prior: AccuracyPrior | None,
    sources: np.ndarray | None = None,
    level: float = DEFAULT_LEVEL,
    population: bool = False,
    mid_p: bool = True,
) -> EstimateIntervals:
    """Intervals around ``estimates`` (models) from the models' ``scores`` on the chosen items (models x k).

    Parameters
    ----------
    method, strata
        The selection method and its exact design (``design_strata``; None: not a random design).
    calibration
        The held-out assessment's interval calibration (None: not assessed).
    prior
        The source models' accuracies (stored by ``select``); used only with ``population``.
    sources
        Each source model's mean score on the pool: what the calibrated interval's marks are measured against
        (``off_population_marks``; None: not stored).
    level, population, mid_p
        Random designs get the mid-p interval, nominal on average over accuracies; with ``mid_p=False``
        the Clopper-Pearson one, at least nominal for every accuracy (wider); with ``population``, the
        empirical-Bayes interval for models like the sources.
    """
    level = check_level(level)
    exact = _exact_strata(strata, scores)
    estimates = _design_estimates(exact, scores, estimates)
    if exact is not None:
        pool, k = int(exact[0].sum()), scores.shape[1]
        require_memory(EXACT_BYTES * (k + 1) * (pool + 1), f"Exact intervals for {k} items of a pool of {pool:,}")
        if not population or prior is None or prior.pool_items != int(exact[0].sum()):
            prior = None
        low, high, how = exact_bounds(*exact, scores, level=level, prior=prior, mid_p=mid_p)
        return EstimateIntervals(models, estimates, low, high, level, how, "exact" if prior is None else "population")
    if calibration is not None:
        low, high = calibration.bounds(estimates, level=level)
        how = calibration.describe()
        return EstimateIntervals(
            models, estimates, low, high, level, how, "calibrated", off_population_marks(estimates, sources, calibration, method=method)
        )
    nan = np.full(len(estimates), np.nan)
    return EstimateIntervals(models, estimates, nan, nan, level, _why_not(method, strata, scores), "none")


# an unfinished adaptive test (docs/intervals.md#unfinished-adaptive-tests)
UNFINISHED = "the calibration of the held-out tests stopped at the largest calibrated length not above its answered items"
UNCALIBRATED = (
    "a model's estimate rests on fewer answered items than any length the held-out tests were calibrated at, so no "
    "calibrated answer holds for it until it answers more"
)

OFF_POPULATION_SHARE = 0.1  # a calibrated interval is marked from the best tenth of the source models up ...
OFF_POPULATION_REACH = 0.05  # ... and an ability-based estimate's when its 90% interval reaches the best twentieth
OFF_POPULATION_FIT_REACH = 0.0  # ... and a fitted estimate's when its 90% interval reaches the best source's accuracy ...
OFF_POPULATION_FIT_FLOOR = 0.4  # ... from an estimate among the best two fifths of the source models up
OFF_POPULATION_ORDER_REACH = 0.0  # every calibrated method's order probabilities when the interval reaches the best source
_RANDOM_DESIGNS = (
    "a random design's interval does not rest on the sources (with --clopper-pearson it covers at least its level for "
    "every accuracy, the mid-p default only on average)"
)
OFF_POPULATION_MARK = (
    "interval not valid for this model: it is estimated among the best tenth of the source models or above, and for "
    "models better than every source the calibrated 90% intervals of the learned methods covered as little as 37% of "
    f"them on real leaderboards (docs/intervals.md); {_RANDOM_DESIGNS}"
)
OFF_POPULATION_ORDER_MARK = (
    "90% interval reaches the best source's accuracy, so the model may be better than every source, "
    "and the order fit was calibrated on pairs of sources: on real leaderboards, pairs of models better than every "
    "source that only this rule marks held 43-59% of the time where 54-74% was printed (docs/intervals.md); for the "
    "order of models near the top, use a random design's exact probability"
)
OFF_POPULATION_REACH_MARK = (
    "interval not valid for this model: its 90% interval reaches the best twentieth of the source models, and this "
    "method's ability estimate pulls models better than every source down until they look ordinary (the calibrated "
    f"90% intervals of those the other rule left unmarked covered 29-57% of them on real leaderboards, docs/intervals.md); {_RANDOM_DESIGNS}"
)

OFF_POPULATION_CEILING_MARK = (
    "interval not valid for this model: its estimate lies in the top fifth of this method's estimates of the held-out "
    "source models, where a learned estimate caps the best models (with the best tenth of the models held out as new "
    "ones, the calibrated 90% intervals of the learned methods covered as little as 36% of them on real leaderboards, "
    f"docs/intervals.md); {_RANDOM_DESIGNS}"
)
OFF_POPULATION_FIT_MARK = (
    "interval not valid for this model: it is estimated among the best two fifths of the source models and its 90% "
    "interval reaches the best source's accuracy, and this method's estimate, fitted to the source models, caps "
    "models better than every source below their accuracy (with the best tenth of the models held out as new ones, "
    "the calibrated 90% intervals of those only this rule marks covered 80% of them, as little as 62% on one real "
    f"leaderboard, docs/intervals.md); {_RANDOM_DESIGNS}"
)
OFF_POPULATION_PILED_MARK = (
    "interval not valid for this model: other models share its estimate at the ceiling of this method's estimates of the "
    "held-out source models, so the estimate cannot tell them apart and their true accuracies may lie far above it "
    f"(docs/intervals.md); {_RANDOM_DESIGNS}"
)


def off_population_marks(
    estimates: np.ndarray, sources: np.ndarray | None, calibration: ConformalCalibration | None = None, *, method: str = ""
) -> np.ndarray:
    """Per model, the mark of a calibrated interval that may not hold ("" where nothing is known against it).

    The calibration's promise is for models like the calibration targets (source models). A model
    estimated at or above the source models' 90th percentile of accuracy is marked. For the estimates
    read off an IRT ability (methods declaring ``ability_estimate``: such estimates pull a model better than every
    source down until it looks ordinary, docs/intervals.md#models-better-than-the-sources), which place models better than every source among
    ordinary ones, so is a model whose 90% calibrated interval (whatever level is printed) reaches the
    sources' 95th percentile (``calibration``: the interval's). ``sources``: each source model's mean score on
    the whole pool (its accuracy on 0/1 scores). Measured on real leaderboards with the best tenth held out as
    new models and in random splits (the share of ordinary models marked):
    docs/intervals.md#models-better-than-the-sources. Without the sources' scores (older files) these two rules
    mark nothing.

    Whatever the method, a model estimated at or above the ceiling of its estimates of the calibration targets
    (``calibration.ceiling``: where their top fifth starts) is marked too: a learned estimate caps the best models
    near the sources' ceiling, below the sources' best accuracies, so the rule on accuracies misses them
    (docs/intervals.md#the-ceiling-of-a-learned-estimate). Such a model whose estimate another model shares gets
    the piled-up mark (``piled_at_ceiling``) before any other. For the estimates fitted to the sources' scores on
    the chosen items (methods declaring ``fitted_estimate``), whose estimates of such models can also fall just
    below the ceiling, so is a model estimated at or above the sources' 60th percentile of accuracy whose 90%
    calibrated interval reaches the best source's accuracy; the other rules' marks take precedence."""
    estimates = np.asarray(estimates, dtype=np.float64)
    marks = np.full(len(estimates), "", dtype=object)
    known = sources if sources is not None and len(sources) else None
    if known is not None and calibration is not None and _declares(method, "fitted_estimate"):
        reaches = _reaches(estimates, calibration, _source_quantile(known, OFF_POPULATION_FIT_REACH))
        marks[reaches & (estimates >= _source_quantile(known, OFF_POPULATION_FIT_FLOOR))] = OFF_POPULATION_FIT_MARK
    if calibration is not None and np.isfinite(calibration.ceiling):
        marks[estimates >= calibration.ceiling] = OFF_POPULATION_CEILING_MARK
    if known is not None and calibration is not None and _declares(method, "ability_estimate"):
        marks[_reaches(estimates, calibration, _source_quantile(known, OFF_POPULATION_REACH))] = OFF_POPULATION_REACH_MARK
    if known is not None:
        marks[estimates >= _source_quantile(known, OFF_POPULATION_SHARE)] = OFF_POPULATION_MARK
    marks[piled_at_ceiling(estimates, calibration)] = OFF_POPULATION_PILED_MARK
    return marks


def piled_at_ceiling(estimates: np.ndarray, calibration: ConformalCalibration | None) -> np.ndarray:
    """Whether each model's estimate lies at or above the ceiling of the method's estimates of the calibration targets
    (``ConformalCalibration.ceiling``) and is shared by another model: a regression capped at its fit's ceiling gives
    models of very different accuracies one estimate there, and cannot tell them apart."""
    estimates = np.asarray(estimates, dtype=np.float64)
    if calibration is None or not np.isfinite(calibration.ceiling):
        return np.zeros(len(estimates), dtype=bool)
    _, inverse, counts = np.unique(written(estimates), return_inverse=True, return_counts=True)
    return (estimates >= calibration.ceiling) & (counts[inverse] > 1)


def _declares(method: str, capability: str) -> bool:
    """Whether ``method`` (a registered name, with its suffixes) declares ``capability``: ``ability_estimate`` (estimates
    read off an IRT ability) or ``fitted_estimate`` (a regression fitted to the sources' scores on the chosen items)."""
    try:  # the method as its name builds it: a paired estimator declares its own capabilities
        return bool(getattr(get_method(method), capability))
    except MdadError:  # not a method this mdad knows (a plug-in's, not installed): nothing declared
        return False


def order_marks(
    estimates: np.ndarray, sources: np.ndarray | None, calibration: ConformalCalibration | None = None, *, method: str = ""
) -> np.ndarray:
    """Per model, the mark its order probabilities carry: its interval's (``off_population_marks``), else, for every
    calibrated method, the order mark when its 90% calibrated interval reaches the best source's accuracy.

    The order fit is calibrated on pairs of source models; two models that may both be better than every source are
    closer than the pairs it saw, and off-population pairs of unmarked models were overconfident by up to 0.29
    (docs/intervals.md#models-better-than-the-sources). The interval itself is not marked by this rule: it was
    covered or marked for enough of those models without it."""
    marks = off_population_marks(estimates, sources, calibration, method=method)
    if sources is None or not len(sources) or calibration is None:
        return marks
    best_source = _source_quantile(sources, OFF_POPULATION_ORDER_REACH)
    marks[(marks == "") & _reaches(np.asarray(estimates, dtype=np.float64), calibration, best_source)] = OFF_POPULATION_ORDER_MARK
    return marks


def _source_quantile(sources: np.ndarray, share: float) -> float:
    """The mean score (accuracy) from which the best ``share`` of the source models lie (0: the best source's)."""
    return float(np.quantile(np.asarray(sources, dtype=np.float64), 1.0 - share))


def _reaches(estimates: np.ndarray, calibration: ConformalCalibration, reach: float) -> np.ndarray:
    """Whether each model's 90% calibrated interval (whatever level is printed) reaches ``reach``."""
    return calibration.bounds(estimates, level=DEFAULT_LEVEL)[1] >= reach


def pair_marks(marks: np.ndarray | None, first: np.ndarray, second: np.ndarray, models: np.ndarray) -> np.ndarray | None:
    """Per pair (rows ``first``, ``second``): the mark of an order probability that rests on a marked interval
    (the same calibration) or on a model the order mark names (``order_marks``), naming the model, the one with a
    marked interval first; None when no model is marked."""
    if marks is None or not any(marks):
        return None
    marks = np.asarray(marks, dtype=object)
    interval = (marks != "") & (marks != OFF_POPULATION_ORDER_MARK)
    on_first = np.where(interval[first] | interval[second], interval[first], marks[first] != "")
    which = np.where(on_first, first, second)
    named = "order probability not valid: model " + np.asarray(models, dtype=str)[which].astype(object) + "'s " + marks[which]
    return np.where(on_first | (marks[second] != ""), named, "").astype(object)


def neighbour_orders(
    scores: np.ndarray,
    estimates: np.ndarray,
    models: np.ndarray,
    *,
    method: str,
    strata: Strata | None,
    calibration: OrderCalibration | None,
    prior: PairPrior | None,
    marks: np.ndarray | None = None,
) -> OrderProbabilities:
    """For each neighbouring pair of the ranking by estimate (best first): gap and P(the order holds).

    ``calibration``: the held-out assessment's order calibration; ``prior``: the source models' pairs;
    ``marks``: per model, the mark its order probabilities carry (``calibrated_marks`` with ``pairs``).
    Random designs: the exact probability of each pair. Calibrated methods, 3 models or more: the fit on
    neighbouring pairs of held-out rankings (docs/intervals.md#neighbouring-pairs-of-a-ranking), when the file has it."""
    design = design_estimates(strata, scores, estimates)
    order = np.argsort(-design, kind="stable")
    first, second = order[:-1], order[1:]
    orders = pair_orders(scores, estimates, models, first, second, method=method, strata=strata, calibration=calibration, prior=prior, marks=marks)
    rankings = calibration.rankings if calibration is not None else None
    if _exact_strata(strata, scores) is not None or calibration is None or rankings is None or len(design) < 3:
        return orders
    n = len(design)
    probability = calibrated_probability(calibration, design[first], design[second], n, neighbours=True)
    how = f"{calibration.describe()}; for neighbouring pairs, fitted on the neighbouring pairs of held-out rankings of {rankings.fitted_on(n)}"
    return replace(orders, probability=probability, calibration=how)


def calibrated_probability(calibration: OrderCalibration, first: np.ndarray, second: np.ndarray, n_models: int, *, neighbours: bool) -> np.ndarray:
    """P(the order of estimates ``first`` over ``second`` holds) from a held-out calibration: for ``neighbours`` in a
    ranking of 3 models or more, the fit on neighbouring pairs of held-out rankings (when the file has it), else the
    pair fit (docs/intervals.md#calibrated-order-probability)."""
    rankings = calibration.rankings
    if neighbours and rankings is not None and n_models >= 3:
        return rankings.adjacent_probability(calibration.scaled_gap(first, second), n_models)
    return calibration.probability(first, second)


def calibrated_marks(
    scores: np.ndarray,
    estimates: np.ndarray,
    *,
    method: str,
    strata: Strata | None,
    calibration: ConformalCalibration | None,
    sources: np.ndarray | None,
    pairs: bool = False,
) -> np.ndarray | None:
    """Per model, the off-population mark of its calibrated interval (``off_population_marks``), or with ``pairs`` the
    mark its order probabilities carry (``order_marks``); None when its answers are the exact ones of a random design
    (which do not rest on the sources) or nothing is calibrated. ``sources``: each source model's mean score on the pool."""
    if _exact_strata(strata, scores) is not None or calibration is None:
        return None
    marks_of = order_marks if pairs else off_population_marks
    return marks_of(_design_estimates(None, scores, estimates), sources, calibration, method=method)


def design_estimates(strata: Strata | None, scores: np.ndarray, estimates: np.ndarray) -> np.ndarray:
    """The estimates the intervals and order probabilities belong to (a stratified design's own, else ``estimates``)."""
    return _design_estimates(_exact_strata(strata, scores), scores, estimates)


def pair_orders(
    scores: np.ndarray,
    estimates: np.ndarray,
    models: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    *,
    method: str,
    strata: Strata | None,
    calibration: OrderCalibration | None,
    prior: PairPrior | None,
    marks: np.ndarray | None = None,
) -> OrderProbabilities:
    """For the pairs of rows (``first``, ``second``), any two models: gap (first minus second) and
    P(the full benchmark ranks ``first`` above ``second``); see ``neighbour_orders``."""
    exact = _exact_strata(strata, scores)
    estimates = _design_estimates(exact, scores, estimates)
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    gap = 100.0 * (estimates[first] - estimates[second])
    if exact is not None:
        probability = exact_pair_probabilities(*exact, scores, first, second, prior=prior)
        best_fifth = prior.best_fifth if prior is not None else None
        if prior is not None and best_fifth is not None:  # both among the sources' best fifth: the prior of those pairs
            best = prior.among_best(estimates[first], estimates[second])
            probability[best] = exact_pair_probabilities(*exact, scores, first[best], second[best], prior=best_fifth)
        source = (
            "the source leaderboard's pairs (how many items they differ on, how they split them) as prior"
            + ("; for two models both estimated among its best fifth, the pairs of its best fifth" if best_fifth is not None else "")
            if prior is not None
            else "a uniform prior"
        )
        how = f"exact: from the items only one model of the pair got right (finite population), with {source}"
    elif calibration is not None:
        probability = calibration.probability(estimates[first], estimates[second])
        how = calibration.describe()
    else:
        probability = np.full(len(gap), np.nan)
        how = _why_not(method, strata, scores).replace("no interval", "no order probability")
    return OrderProbabilities(models[first], models[second], gap, probability, how, mark=pair_marks(marks, first, second, models))


def best_of_ranking(
    scores: np.ndarray,
    estimates: np.ndarray,
    models: np.ndarray,
    *,
    method: str,
    strata: Strata | None,
    calibration: OrderCalibration | None,
    prior: AccuracyPrior | None,
    marks: np.ndarray | None = None,
) -> BestProbability:
    """P(the estimated best is the true best of the models estimated together) (docs/intervals.md#the-best-of-a-ranking);
    ``marks``: per model, the mark of its interval (``calibrated_marks``), which the estimated best's probability carries.

    Random designs on 0/1 scores with the source models' accuracies (``prior``): from each model's
    empirical-Bayes posterior of its pool count (a stratified design: the uniform design's posterior for
    as many correct of its items as its own estimate gives). Other methods: the held-out fit on rankings
    of as many models (``OrderCalibration.rankings``) of the probability from normal posteriors with the
    held-out residual spread. Neither: NaN and the reason."""
    exact = _exact_strata(strata, scores)
    estimates = _design_estimates(exact, scores, estimates)
    row = int(np.argsort(-estimates, kind="stable")[0])
    n = len(estimates)
    rankings = calibration.rankings if calibration is not None else None
    if exact is not None and prior is not None and prior.pool_items == int(exact[0].sum()):
        k = scores.shape[1]
        correct = scores.sum(axis=1) if len(exact[0]) == 1 else np.rint(estimates * k)
        probability = float(best_probabilities(count_posteriors(prior, k, correct.astype(np.int64)))[row])
        how = "from each model's posterior given its answers, with the source models' accuracies as prior"
    elif calibration is not None and rankings is not None:
        raw = best_probabilities(normal_posteriors(estimates, calibration.spread_at(estimates) / 100.0))[row]
        probability = float(rankings.best_probability(np.array([raw]), n)[0])
        how = f"calibrated on the estimated best of held-out rankings of {rankings.fitted_on(n)}"
    else:
        probability = float("nan")
        how = (
            "not available: it needs the source models' accuracies (random designs on 0/1 scores) or a held-out "
            "assessment of rankings (select it again with assessment runs)"
        )
    mark = str(marks[row]) if marks is not None and np.isfinite(probability) else ""
    return BestProbability(models, row, probability, how, mark=mark)


def one_event(best: BestProbability, orders: OrderProbabilities) -> BestProbability:
    """P(best) made one with the neighbouring orders (``orders``, best first) where the events coincide or nest: with
    two models "the estimated best is the true best" is "their order holds", so it takes the pair's probability (and a
    tied pair has no best); with more it implies the first pair's order, so it is capped at that pair's probability."""
    if not len(orders.gap) or (not np.isfinite(best.probability) and len(best.models) > 2):
        return best
    pair = float(orders.probability[0])
    if len(best.models) == 2:
        if orders.ties[0]:
            how = "not available: the two are tied on the full benchmark (every item drawn, as many right each), so neither is the best"
        elif not np.isfinite(pair):
            how = "not available: " + orders.calibration.removeprefix("no order probability: ")
        else:
            how = "the same event as their order holding, so the same probability as the table's"
        return replace(best, probability=pair, calibration=how, mark=best.mark if np.isfinite(pair) else "")
    if np.isfinite(pair) and best.probability > pair:
        how = f"{best.calibration}; capped at the probability that the first neighbouring order holds, which it implies"
        return replace(best, probability=pair, calibration=how)
    return best
