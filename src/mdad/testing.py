"""Conformance checks for extensions: a method, a reader or a metric against the contract mdad relies on.

Like scikit-learn's ``check_estimator``: each check runs the real code on a small simulated
response matrix (``mdad.simulate``) and raises ``AssertionError`` with one sentence naming what
broke. mdad's own tests run them over every registered method, reader and metric; an extension's
tests call them on their own class (docs/extending.md).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import get_args

import numpy as np

from mdad.data.matrix import ResponseMatrix
from mdad.data.readers import READERS, Reader, ReadOptions
from mdad.data.readers.commands import CommandWriter
from mdad.data.simulate import simulate
from mdad.errors import MdadError
from mdad.methods import get as get_method
from mdad.methods.base import METHODS, Allocation, Design, IntervalKind, MicroBenchmark, ScoresNeeded, SelectionMethod, SourceView
from mdad.metrics import analytic
from mdad.metrics.base import METRICS, Metric, ViewData
from mdad.metrics.pairwise import pair_differences
from mdad.seeding import rng_for

SIZES = (5, 12)
DESIGNS = (None, *get_args(Design))
ALLOCATIONS = (None, *get_args(Allocation))
SCORES = get_args(ScoresNeeded)
INTERVALS = get_args(IntervalKind)


def _check(condition: bool, sentence: str) -> None:
    if not condition:
        raise AssertionError(sentence)


def _small_matrix(seed: int = 0) -> ResponseMatrix:
    """24 models x 90 items in 3 subtasks, 0/1 scores with option probabilities."""
    return simulate(seed=seed, n_models=24, n_items=90, n_subtasks=3)


def _view(matrix: ResponseMatrix, models: np.ndarray, *, option_probs: bool, fractional: bool = False) -> SourceView:
    """The source view of ``models``: 0/1 scores (or the gold option's probability as the score when
    ``fractional``), with or without the option probabilities."""
    scores = matrix.scores[models]
    gold = matrix.gold_prob()[models]
    return SourceView.from_arrays(gold if fractional else scores, gold if option_probs else None, matrix.subtask_codes, has_option_probs=option_probs)


def _method(method: type[SelectionMethod] | SelectionMethod | str) -> SelectionMethod:
    if isinstance(method, str):
        return get_method(method)
    return method() if isinstance(method, type) else method


def _select(method: SelectionMethod, view: SourceView, k: int, seed: int) -> MicroBenchmark:
    return method.select(view, k, rng_for(seed, "check", method.name, k))


def check_method(method: type[SelectionMethod] | SelectionMethod | str) -> None:
    """Check a selection method (class, instance or registered name) against the method contract.

    Its declared capabilities must be known values; on a simulated matrix it must choose distinct
    pool items, as many as asked (an adaptive method: that many per model), the same for the same
    seed, with finite estimates in [0, 1] (unless it declares ``bounded = False``); a method that
    needs 0/1 scores or option probabilities refuses other data with an ``MdadError``, and one that
    takes either accepts both; a random design must ignore the sources and estimate with the plain
    mean; an exact interval needs a random design and an own interval an estimator that gives one. A registered
    method (given by name or class) is also copied under another name: the copy must get the same exact answers,
    intervals and order probabilities, as mdad reads what a method can do from its attributes, never its name.
    """
    chosen = _method(method)
    name = getattr(chosen, "name", type(chosen).__name__)
    _check(isinstance(name, str) and bool(name), f"The method {type(chosen).__name__} has no name.")
    _check(isinstance(getattr(chosen, "description", None), str) and bool(chosen.description), f"The method {name!r} has no description.")
    _check(chosen.design in DESIGNS, f"The method {name!r} declares the unknown design {chosen.design!r}.")
    _check(chosen.allocation in ALLOCATIONS, f"The method {name!r} declares the unknown allocation {chosen.allocation!r}.")
    _check(
        chosen.allocation is None or chosen.design == "stratified",
        f"The method {name!r} declares an allocation to subtasks but not the stratified design.",
    )
    ability = chosen.ability_estimate
    _check(isinstance(ability, bool), f"The method {name!r} declares ability_estimate = {ability!r}, not True or False.")
    fitted = chosen.fitted_estimate
    _check(isinstance(fitted, bool), f"The method {name!r} declares fitted_estimate = {fitted!r}, not True or False.")
    _check(chosen.scores in SCORES, f"The method {name!r} declares unknown scores {chosen.scores!r}.")
    _check(chosen.interval in INTERVALS, f"The method {name!r} declares the unknown interval kind {chosen.interval!r}.")
    _check(chosen.interval != "exact" or chosen.design is not None, f"The method {name!r} declares exact intervals but no random design.")
    _check(not (chosen.adaptive and chosen.design is not None), f"The method {name!r} is adaptive, so its items cannot follow a random design.")

    matrix = _small_matrix()
    sources, targets = np.arange(0, 16), np.arange(16, matrix.n_models)
    probs = chosen.scores != "binary"
    view = _view(matrix, sources, option_probs=probs)
    for k in SIZES:
        _check_outcomes(chosen, name, view, matrix, targets, k)
    _check_refusals(chosen, name, matrix, sources)
    if chosen.design is not None:
        _check_design(chosen, name, matrix, sources)
    if not isinstance(method, SelectionMethod) and name in METHODS and METHODS.get(name) is type(chosen):
        _check_renamed_copy(chosen, name, matrix)
    if chosen.interval == "own":
        micro = _select(chosen, view, SIZES[-1], 0)
        _check(
            callable(getattr(micro, "interval", None)),
            f"The method {name!r} declares its own interval but its micro-benchmark has no interval method.",
        )


def _check_outcomes(chosen: SelectionMethod, name: str, view: SourceView, matrix: ResponseMatrix, targets: np.ndarray, k: int) -> None:
    scores, gold = matrix.scores[targets].astype(np.float64), matrix.gold_prob()[targets].astype(np.float64)

    def run() -> dict:  # as the experiment grid calls it: prepared once per run, then every size
        prepared = chosen.prepare(view, rng_for(0, "check-prepare", name))
        return chosen.outcomes(view, (k,), scores=scores, gold_prob=gold, rng_of=lambda size: rng_for(0, "check", name, size), prepared=prepared)

    try:
        first, again = run()[k], run()[k]
    except MdadError as exc:  # a contract mdad checks at run time (SelectionMethod.check_choice), in its words
        raise AssertionError(str(exc)) from None
    items = np.atleast_2d(np.asarray(first.items))
    expected_rows = len(targets) if chosen.adaptive else 1
    _check(items.shape == (expected_rows, k), f"The method {name!r} chose items of shape {items.shape} at size {k}; expected {(expected_rows, k)}.")
    for row in items:
        _check(len(np.unique(row)) == k, f"The method {name!r} chose the same item twice at size {k}.")
        _check(
            bool((row >= 0).all() and (row < view.n_items).all()),
            f"The method {name!r} chose an item outside the pool of {view.n_items} at size {k}.",
        )
    _check(
        np.array_equal(np.asarray(first.items), np.asarray(again.items)), f"The method {name!r} chose different items from the same seed at size {k}."
    )
    _check(np.array_equal(first.estimates, again.estimates), f"The method {name!r} gave different estimates from the same seed at size {k}.")
    estimates = np.asarray(first.estimates)
    _check(estimates.shape == (len(targets),), f"The method {name!r} gave {estimates.shape} estimates for {len(targets)} models at size {k}.")
    _check(bool(np.isfinite(estimates).all()), f"The method {name!r} gave an estimate that is not a number at size {k}.")
    _check(
        not chosen.bounded or bool((estimates >= 0).all() and (estimates <= 1).all()),
        f"The method {name!r} gave an estimate outside [0, 1] at size {k} (set bounded = False if it may).",
    )


def _refuses(chosen: SelectionMethod, view: SourceView) -> bool:
    try:
        _select(chosen, view, SIZES[0], 0)
    except MdadError:
        return True
    return False


def _check_refusals(chosen: SelectionMethod, name: str, matrix: ResponseMatrix, sources: np.ndarray) -> None:
    binary = _view(matrix, sources, option_probs=False)
    fractional = _view(matrix, sources, option_probs=True, fractional=True)
    if chosen.scores == "binary":
        _check(_refuses(chosen, fractional), f"The method {name!r} says it needs 0/1 scores but accepted fractional ones without an MdadError.")
    else:
        _check(not _refuses(chosen, fractional), f"The method {name!r} refused fractional scores it says it takes.")
    if chosen.scores == "option-probabilities":
        _check(
            _refuses(chosen, binary),
            f"The method {name!r} says it needs option probabilities but accepted 0/1 data without them without an MdadError.",
        )
    else:
        _check(not _refuses(chosen, binary), f"The method {name!r} refused 0/1 data without option probabilities.")


def _check_design(chosen: SelectionMethod, name: str, matrix: ResponseMatrix, sources: np.ndarray) -> None:
    view = _view(matrix, sources, option_probs=chosen.scores != "binary")
    others = _view(matrix, sources[::-1][: len(sources) // 2], option_probs=chosen.scores != "binary")
    k = SIZES[-1]
    micro = _select(chosen, view, k, 0)
    _check(
        np.array_equal(np.sort(micro.items), np.sort(_select(chosen, others, k, 0).items)),
        f"The method {name!r} declares the {chosen.design} random design but its items depend on the source models.",
    )
    _check(
        bool(np.allclose(micro.weights, 1.0 / k)) and not micro.uses_gold_prob,
        f"The method {name!r} declares a random design but does not estimate with the plain mean of the scores.",
    )


def _check_renamed_copy(chosen: SelectionMethod, name: str, matrix: ResponseMatrix) -> None:
    """A copy of the method under another name, registered as a plug-in would be, must get the same answers: mdad
    reads what a method can do from its declared attributes, never from its name (docs/extending.md)."""
    from mdad.micro.selected import select  # the micro-benchmark layer, above the methods

    copy_name = f"{name}-renamed-copy"
    copy = type(f"{type(chosen).__name__}Copy", (type(chosen),), {"name": copy_name, "__module__": __name__})
    METHODS.add(copy)
    try:
        if chosen.exact_design() is not None:
            stats = analytic.pair_stats(matrix)
            for k in SIZES:
                original, renamed = analytic.sign_probabilities(stats, k, name), analytic.sign_probabilities(stats, k, copy_name)
                _check(
                    np.array_equal(original.higher, renamed.higher) and np.array_equal(original.lower, renamed.lower),
                    f"A renamed copy of the method {name!r} gets other exact order probabilities at size {k}.",
                )
        if chosen.scores == "option-probabilities" and not matrix.has_option_probs:
            return
        micro = select(matrix, name, SIZES[-1])
        relabelled = replace(micro, method=copy_name)
        models = matrix.take(models=np.arange(16, matrix.n_models))
        first, second = micro.intervals(models), relabelled.intervals(models)
        _check(
            np.array_equal(first.low, second.low, equal_nan=True)
            and np.array_equal(first.high, second.high, equal_nan=True)
            and first.calibration == second.calibration,
            f"A renamed copy of the method {name!r} gets other intervals for the same items.",
        )
        orders, copied = micro.order_probabilities(models), relabelled.order_probabilities(models)
        _check(
            np.array_equal(orders.probability, copied.probability, equal_nan=True) and orders.calibration == copied.calibration,
            f"A renamed copy of the method {name!r} gets other order probabilities for the same items.",
        )
    finally:
        METHODS.remove(copy_name)


def check_reader(reader: Reader | str, sample: str | Path) -> None:
    """Check a reader (or a registered reader's name) on ``sample``, results in its format.

    It must claim the sample, be the only non-fallback reader to claim it, read it into a valid
    response matrix (scores in [0, 1] or NaN, at least one model and item), the same twice, and
    leave an empty folder alone (no claim, no error). A reader that declares harness commands
    (``Reader.commands``) must give a ``CommandWriter`` and record its own name as each task's
    ``harness``, which is how a micro-benchmark finds its commands.
    """
    chosen = READERS.get(reader) if isinstance(reader, str) else reader
    name = chosen.name
    path = Path(sample)
    _check(bool(chosen.expects), f"The reader {name!r} does not say what it expects.")
    _check(chosen.detect(path) is True, f"The reader {name!r} does not claim its own sample {path.name}.")
    if not chosen.fallback:
        rivals = [other.name for other in READERS if other is not chosen and not other.fallback and other.detect(path)]
        _check(not rivals, f"The reader {name!r}'s sample is claimed by {', '.join(rivals)} too.")
    first = chosen.read(path, ReadOptions())
    again = chosen.read(path, ReadOptions())
    _check(isinstance(first, ResponseMatrix), f"The reader {name!r} returned {type(first).__name__}, not a ResponseMatrix.")
    _check(first.n_models >= 1 and first.n_items >= 1, f"The reader {name!r} read no models or no items.")
    observed = first.scores[~np.isnan(first.scores)]
    _check(bool(((observed >= 0) & (observed <= 1)).all()), f"The reader {name!r} read a score outside [0, 1].")
    _check(
        list(first.models) == list(again.models)
        and list(first.items) == list(again.items)
        and np.array_equal(first.scores, again.scores, equal_nan=True),
        f"The reader {name!r} read its sample differently the second time.",
    )
    with tempfile.TemporaryDirectory() as empty:
        _check(chosen.detect(Path(empty)) is False, f"The reader {name!r} claims an empty folder.")
    if chosen.commands is not None:
        _check(isinstance(chosen.commands, CommandWriter), f"The reader {name!r}'s commands are not a CommandWriter.")
        named = sorted({str(spec.get("harness", "")) for spec in first.tasks.values()} or {""})
        _check(named == [name], f"The reader {name!r} writes harness commands but records its tasks' harness as {', '.join(map(repr, named))}.")


def check_metric(metric: Metric | str) -> None:
    """Check a metric (or a registered metric's key): a finite number on simulated estimates, the same
    twice, and its declared direction ("lower" or "higher" is better) right for perfect estimates
    against noisy ones."""
    chosen = METRICS.get(metric) if isinstance(metric, str) else metric
    key = chosen.key
    _check(bool(key) and bool(chosen.label), f"The metric {key!r} needs a key and a label.")
    _check(chosen.better in ("lower", "higher"), f"The metric {key!r} says {chosen.better!r} is better; use 'lower' or 'higher'.")
    matrix = _small_matrix()
    truth = np.tile(matrix.scores.mean(axis=1)[None, :], (4, 1)).astype(np.float64)
    rng = np.random.default_rng(0)
    noisy = np.clip(truth + rng.normal(0.0, 0.1, truth.shape), 0.0, 1.0)

    def value(estimates: np.ndarray) -> float:
        data = ViewData(estimates, truth, pair_differences(estimates), pair_differences(truth))
        return float(chosen.compute(data))

    perfect, rough = value(truth.copy()), value(noisy)
    _check(bool(np.isfinite(perfect) and np.isfinite(rough)), f"The metric {key!r} is not a finite number.")
    _check(rough == value(noisy), f"The metric {key!r} gives a different value for the same estimates.")
    better = perfect <= rough if chosen.better == "lower" else perfect >= rough
    _check(better, f"The metric {key!r} says {chosen.better} is better, but perfect estimates score {perfect:g} and noisy ones {rough:g}.")
