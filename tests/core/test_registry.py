"""The registry of methods, readers and metrics, and the method capabilities read from it."""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass

import pytest

from mdad import methods
from mdad.data.readers import READERS, formats
from mdad.errors import MdadError
from mdad.metrics import analytic
from mdad.metrics.base import METRICS
from mdad.micro.trust import design_of
from mdad.registry import Registry
from mdad.report.analytic import REPORT_DESIGNS


@dataclass(frozen=True)
class Thing:
    name: str


def test_lookup_listing_order_and_duplicates():
    things: Registry[Thing] = Registry("thing")
    late, early, plain = Thing("late"), Thing("early"), Thing("plain")
    things.add(late, order=20)
    things.add(plain)
    things.add(early, order=10)
    assert things.names() == ["early", "late", "plain"] and list(things) == [early, late, plain]
    assert things.get("late") is late and things["early"] is early and "plain" in things and len(things) == 3
    with pytest.raises(MdadError, match=r"^Unknown thing 'nope'; known things: early, late, plain\.$"):
        things.get("nope")
    with pytest.raises(MdadError, match="Two things are registered under the name 'late'"):
        things.add(Thing("late"))
    things.add(late)  # the same object again (a module imported twice) is no conflict
    decorated = things.register(name="renamed")(Thing("x"))
    assert things.get("renamed") is decorated


class FakePoint:
    """An entry point as importlib.metadata gives it: a name, a value and ``load``."""

    def __init__(self, name, value, loaded=None, error=None):
        self.name, self.value, self._loaded, self._error = name, value, loaded, error

    def load(self):
        if self._error is not None:
            raise self._error
        return self._loaded


def test_plugins_are_loaded_once_on_first_lookup(monkeypatch):
    calls = []
    plugin = Thing("from-plugin")

    def entry_points(group):
        calls.append(group)
        return [FakePoint("shiny", "pkg.mod:THING", plugin)]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    things: Registry[Thing] = Registry("thing", group="mdad.things")
    things.add(Thing("builtin"), order=1)
    assert calls == []  # nothing loaded at registration
    assert things.names() == ["builtin", "shiny"] and things.get("shiny") is plugin
    assert calls == ["mdad.things"]  # once


def test_a_broken_plugin_is_one_sentence_naming_it_and_left_out(monkeypatch, caplog):
    broken = FakePoint("wobbly", "wobbly_pkg.method:Wobbly", error=ImportError("No module named 'wobbly_pkg'"))
    fine = FakePoint("fine", "fine_pkg:FINE", Thing("fine"))
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [broken, fine])
    things: Registry[Thing] = Registry("method", group="mdad.methods")
    assert things.names() == ["fine"]
    assert [r.getMessage() for r in caplog.records] == [
        "The method plug-in 'wobbly' (wobbly_pkg.method:Wobbly) could not be loaded: No module named 'wobbly_pkg'; it is left out."
    ]


def test_a_plugin_taking_a_builtin_name_is_refused(monkeypatch, caplog):
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [FakePoint("random", "pkg:R", Thing("random"))])
    things: Registry[Thing] = Registry("method", group="mdad.methods")
    builtin = things.add(Thing("random"))
    assert things.get("random") is builtin
    assert "The method plug-in 'random' (pkg:R) could not be loaded: Two methods are registered under the name 'random'" in caplog.text


def test_builtin_order_is_kept():
    assert methods.available() == [
        "random",
        "random-stratified-equal",
        "random-stratified-proportional",
        "stratified-confidence",
        "anchor-points",
        "diversity",
        "tinybenchmarks",
        "tinybenchmarks-pirt",
        "tinybenchmarks-gpirt",
        "adaptive",
        "adaptive-1d",
        "aipw",
        "random-regression",
        "random-search-regression",
        "lasso",
        "metabench",
        "mrmr-krr",
        "disco",
    ]
    assert methods.defaults() == methods.available()[:9]
    assert methods.estimators() == ["ridge", "krr", "knn", "forest"]
    assert methods.on_request() == [
        "adaptive",
        "adaptive-1d",
        "aipw",
        "random-regression",
        "random-search-regression",
        "lasso",
        "metabench",
        "mrmr-krr",
        "disco",
    ]
    assert formats() == ("npz", "lm-eval", "lighteval", "inspect", "table") and READERS.get("table").fallback
    assert METRICS.names() == ["error", "kendall_tau"]


def test_design_tables_come_from_the_declared_capabilities():
    # the tables once written by hand in metrics/analytic.py, micro/trust.py and report/analytic.py
    assert analytic.DESIGNS == ("random", "random-stratified-equal", "random-stratified-proportional")
    assert REPORT_DESIGNS == ("random",)
    assert {name: design_of(name) for name in analytic.DESIGNS} == {
        "random": "uniform",
        "random-stratified-equal": "stratified",
        "random-stratified-proportional": "stratified",
    }
    assert design_of("random@per-subtask") == "stratified" and design_of("tinybenchmarks") is None
    assert design_of("anchor-points@per-subtask") is None and design_of("not-installed") is None


def test_names_are_parsed_in_one_place():
    spec = methods.parse("anchor-points@per-subtask")
    assert (spec.base, spec.per_subtask, str(spec)) == ("anchor-points", True, "anchor-points@per-subtask")
    assert methods.parse("aipw") == methods.MethodName("aipw") and str(methods.parse("aipw").variant()) == "aipw@per-subtask"
    variant = methods.get("random@per-subtask")
    assert (variant.design, variant.interval, variant.scores) == ("stratified", "exact", "either")
    assert methods.get("aipw@per-subtask").interval == "calibrated"  # AIPW's own interval is per micro-benchmark
    with pytest.raises(MdadError, match="adaptive chooses items per model from its answers; it has no per-subtask variant"):
        methods.get("adaptive@per-subtask")


def test_help_lists_methods_from_their_capabilities():
    from typer.testing import CliRunner

    from mdad.cli import app

    compare = CliRunner().invoke(app, ["compare", "--help"], env={"COLUMNS": "300"})
    assert "random, random-stratified-equal or random-stratified-proportional" in " ".join(compare.output.split())
    run = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "300"})
    on_request = "adaptive, adaptive-1d, aipw, random-regression, random-search-regression, lasso, metabench, mrmr-krr, disco"
    assert f"default: all but {on_request};" in " ".join(run.output.split())
