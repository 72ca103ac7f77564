"""mdad reads what a method can do from its declared attributes, never from its name: a renamed copy of a built-in,
registered as docs/extending.md instructs, gets the built-in's exact answers, intervals, order probabilities and marks."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

import mdad
from mdad.data import ResponseMatrix
from mdad.intervals.conformal import ConformalCalibration
from mdad.methods.base import METHODS, SelectionMethod
from mdad.metrics import analytic
from mdad.micro.trust import OFF_POPULATION_FIT_MARK, OFF_POPULATION_REACH_MARK, off_population_marks
from mdad.testing import check_method

RANDOM_DESIGNS = ("random", "random-stratified-equal", "random-stratified-proportional")


@contextmanager
def renamed_copy(name: str) -> Iterator[str]:
    """A subclass of the built-in ``name`` under another name, registered for the duration."""
    original = METHODS.get(name)
    copy: type[SelectionMethod] = type(f"{original.__name__}Copy", (original,), {"name": f"my-{name}"})
    METHODS.add(copy)
    try:
        yield copy.name
    finally:
        METHODS.remove(copy.name)


@pytest.mark.parametrize("name", RANDOM_DESIGNS)
def test_a_renamed_random_design_gets_the_built_in_sign_probabilities(name):
    """The reproduced bug: on simulate(seed=0) a copy of random was off by up to 0.040, and the stratified copies had no exact answer
    (here on fewer models, so that the test is quick)."""
    stats = analytic.pair_stats(mdad.simulate(seed=0, n_models=60))
    with renamed_copy(name) as copy:
        assert analytic.has_exact_answer(copy)
        for k in (5, 20):
            built_in, renamed = analytic.sign_probabilities(stats, k, name), analytic.sign_probabilities(stats, k, copy)
            np.testing.assert_array_equal(renamed.higher, built_in.higher)
            np.testing.assert_array_equal(renamed.lower, built_in.lower)


def test_a_renamed_stratified_design_gets_the_built_in_plan():
    """Continuous scores take the allocation draws, seeded by the design, not by the method's name."""
    matrix = mdad.simulate(seed=1, n_models=30, n_items=120, n_subtasks=3)
    fractional = ResponseMatrix(
        scores=matrix.gold_prob().astype(np.float32), models=matrix.models, items=matrix.items, subtasks=matrix.subtasks, source="fractional"
    )
    for name in RANDOM_DESIGNS[1:]:
        with renamed_copy(name) as copy:
            assert mdad.plan(matrix, method=copy, detect=5.0).smallest == mdad.plan(matrix, method=name, detect=5.0).smallest
            assert analytic.analytic_mdad(matrix, 30, design=copy).value == analytic.analytic_mdad(matrix, 30, design=name).value
            stats = analytic.pair_stats(fractional)
            np.testing.assert_array_equal(analytic.sign_probabilities(stats, 30, copy).higher, analytic.sign_probabilities(stats, 30, name).higher)


def test_a_renamed_random_plans_the_same_items_on_musr(musr):
    """The reproduced bug: mdad.plan(musr, detect=2.0) answered 292 items for the copy where random answers 294."""
    with renamed_copy("random") as copy:
        assert mdad.plan(musr, method=copy, detect=2.0).smallest == mdad.plan(musr, method="random", detect=2.0).smallest == 294


def test_plan_counts_a_renamed_random_as_the_baseline():
    matrix = mdad.simulate(seed=2, n_models=30, n_items=150)
    with renamed_copy("random") as copy:
        chosen = mdad.plan(matrix, methods=["random", copy], detect=5.0)
        rows = {row.method: row for row in chosen.rows}
        assert rows[copy].items == rows["random"].items and rows[copy].exact and not rows[copy].beats_random


def test_declared_designs_decide_the_exact_design():
    kinds = {name: METHODS.get(name).exact_design() for name in RANDOM_DESIGNS}
    assert kinds == {"random": "uniform", "random-stratified-equal": "stratified-equal", "random-stratified-proportional": "stratified-proportional"}
    unknown = type("Unknown", (SelectionMethod,), {"name": "u", "description": "d", "design": "stratified", "choose": lambda *a: None})
    assert unknown.exact_design() is None  # a stratified design without a declared allocation has exact intervals only


@pytest.mark.parametrize("name", ["tinybenchmarks-pirt", "tinybenchmarks"])
def test_the_ability_mark_follows_the_declared_attribute(name):
    """Estimates read off an IRT ability (``ability_estimate``) are also marked where their 90% interval reaches the
    sources' best twentieth; a copy under another name is marked the same, a weighted mean is not."""
    rng = np.random.default_rng(0)
    sources = (rng.random((40, 100)) < np.linspace(0.2, 0.8, 40)[:, None]).astype(float).mean(axis=1)  # their accuracies
    truth = rng.uniform(0.2, 0.8, 400)
    calibration = ConformalCalibration.fit(truth + rng.normal(0, 0.05, 400), truth)
    estimates = np.linspace(0.3, 0.75, 30)
    with renamed_copy(name) as copy:
        built_in = off_population_marks(estimates, sources, calibration, method=name)
        np.testing.assert_array_equal(off_population_marks(estimates, sources, calibration, method=copy), built_in)
    assert (built_in == OFF_POPULATION_REACH_MARK).any() == METHODS.get(name).ability_estimate


@pytest.mark.parametrize("name", ["lasso", "disco", "anchor-points"])
def test_the_fitted_mark_follows_the_declared_attribute(name):
    """Estimates fitted to the sources' scores (``fitted_estimate``) among the sources' best two fifths are also marked
    where their 90% interval reaches the best source's accuracy, below the ceiling of the method's estimates; a copy
    under another name is marked the same, anchor-points' weighted mean is not, and any selection paired with an
    estimator (@estimator=krr) is."""
    rng = np.random.default_rng(0)
    sources = (rng.random((40, 100)) < np.linspace(0.2, 0.8, 40)[:, None]).astype(float).mean(axis=1)  # their accuracies
    truth = rng.uniform(0.2, 0.8, 400)
    calibration = ConformalCalibration.fit(truth + rng.normal(0, 0.2, 400), truth)
    estimates = np.linspace(0.3, 0.75, 30)
    with renamed_copy(name) as copy:
        built_in = off_population_marks(estimates, sources, calibration, method=name)
        np.testing.assert_array_equal(off_population_marks(estimates, sources, calibration, method=copy), built_in)
    fitted = METHODS.get(name).fitted_estimate
    interval_reaches = calibration.bounds(estimates, level=0.9)[1] >= np.quantile(sources, 1.0)
    floor = estimates >= np.quantile(sources, 0.6)  # estimated among the sources' best two fifths
    reaches = interval_reaches & floor
    below = estimates < min(calibration.ceiling, np.quantile(sources, 0.9))  # no other rule marks these
    assert (reaches & below).any() and (interval_reaches & ~floor).any()  # the floor leaves some reaching intervals unmarked
    np.testing.assert_array_equal(built_in[below] == OFF_POPULATION_FIT_MARK, (reaches & below)[below] & fitted)
    paired = off_population_marks(estimates, sources, calibration, method=f"{name}@estimator=krr")
    assert ((paired == OFF_POPULATION_FIT_MARK) == (reaches & below)).all()  # kernel ridge is a fit whatever the items


@pytest.mark.parametrize("name", RANDOM_DESIGNS)
def test_check_method_runs_the_renamed_copy_check(name, monkeypatch):
    """check_method compares a renamed copy's answers with the method's: an answer keyed on the name fails it."""
    check_method(name)
    real = analytic.sign_probabilities

    def keyed_on_name(stats, k, design="random", seed=0, law_sizes=None):
        out = real(stats, k, design, seed, law_sizes)
        return out._replace(higher=out.higher * 0.5) if design.endswith("renamed-copy") else out

    monkeypatch.setattr(analytic, "sign_probabilities", keyed_on_name)
    with pytest.raises(AssertionError, match="renamed copy"):
        check_method(name)
