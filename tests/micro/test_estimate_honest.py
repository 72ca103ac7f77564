"""`mdad estimate` says one thing once: one probability per event, --compare answering only what was asked, options
used or refused, every pair in bounded memory, numbers written as the fractions they stand for."""

from __future__ import annotations

import re
import shutil
import unicodedata
from collections import namedtuple

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import mdad
from mdad.cli import app
from mdad.data import ResponseMatrix, write_npz
from mdad.errors import MdadError
from mdad.micro.comparison import comparisons_frame
from mdad.micro.estimation import compare_every_pair, estimate_report

runner = CliRunner()


def one_line(text: str) -> str:
    return " ".join(text.split())


def _matrix(scores: np.ndarray, models) -> ResponseMatrix:
    """0/1 (or continuous) scores of the named models on items i0, i1, ... of one subtask."""
    n = scores.shape[1]
    return ResponseMatrix(scores=scores, models=np.array(models), items=np.array([f"i{j}" for j in range(n)]), subtasks=np.array(["s"] * n))


@pytest.fixture(scope="module")
def assessed(tmp_path_factory):
    """anchor-points (calibrated) and random (exact) micro-benchmarks of 20 items on 60 sources, 12 new models."""
    folder = tmp_path_factory.mktemp("honest")
    matrix = mdad.simulate(seed=3, n_models=72, n_items=200)
    sources, new = matrix.take(models=np.arange(60)), matrix.take(models=np.arange(60, 72))
    files = {}
    for method in ("anchor-points", "random"):
        chosen = mdad.select(sources, method, 20, seed=0).with_assessment(mdad.assess(sources, method, 20, runs=4, seed=0))
        chosen.save(folder / f"{method}.json")
        files[method] = folder / f"{method}.json"
    write_npz(new, folder / "new.npz")
    write_npz(new.take(models=np.arange(2)), folder / "two.npz")
    return folder, files, new


@pytest.mark.parametrize("method", ["anchor-points", "random"])
def test_two_models_get_one_probability_and_one_verdict(assessed, method):
    folder, files, new = assessed
    chosen = mdad.SelectedMicroBenchmark.load(files[method])
    two = new.take(models=np.arange(2))
    report = estimate_report(chosen, two)
    assert report.best.probability == report.orders.probability[0]  # "the best is best" is "their order holds"
    shown = runner.invoke(app, ["estimate", str(files[method]), str(folder / "two.npz")])
    assert shown.exit_code == 0, shown.output
    text = one_line(shown.output)
    assert "neighbouring pairs keep their order" not in text  # no second verdict on the same event
    assert text.count("reliable") == 1 and f"stays above {report.best.models[1 - report.best.row]}" in text


@pytest.mark.parametrize("method", ["anchor-points", "random"])
def test_the_best_of_more_models_is_never_surer_than_its_first_pair(assessed, method):
    _, files, new = assessed
    report = estimate_report(mdad.SelectedMicroBenchmark.load(files[method]), new)
    assert len(report.best.models) == 12 and report.best.probability <= report.orders.probability[0] + 1e-12


def test_compare_prints_only_the_comparison_and_the_two_rows(assessed):
    folder, files, new = assessed
    a, b = str(new.models[0]), str(new.models[5])
    whole = runner.invoke(app, ["estimate", str(files["random"]), str(folder / "new.npz")])
    shown = runner.invoke(app, ["estimate", str(files["random"]), str(folder / "new.npz"), "--compare", a, "--compare", b])
    assert shown.exit_code == 0, shown.output
    assert len(shown.output.splitlines()) < len(whole.output.splitlines()) / 2
    others = [str(m) for m in new.models if str(m) not in (a, b)]
    assert not any(re.search(rf"\b{re.escape(m)}\b", shown.output) for m in others)
    assert "P(order holds)" not in shown.output and f"{a} " in shown.output and f"vs {b} " in one_line(shown.output)


def _named(names: list[str]) -> ResponseMatrix:
    matrix = mdad.simulate(seed=1, n_models=len(names), n_items=40)
    return ResponseMatrix(scores=matrix.scores, models=np.array(names), items=matrix.items, subtasks=matrix.subtasks, source="names")


def test_a_model_named_with_a_comma_can_be_compared(tmp_path):
    names = ["a,b", "c", "d", "e", "f", "g"]
    matrix = _named(names)
    write_npz(matrix, tmp_path / "m.npz")
    mdad.select(matrix, "random", 20, seed=0).save(tmp_path / "micro.json")
    shown = runner.invoke(app, ["estimate", str(tmp_path / "micro.json"), str(tmp_path / "m.npz"), "--compare", "a,b", "--compare", "c"])
    assert shown.exit_code == 0, shown.output
    assert "a,b " in shown.output and " vs c " in one_line(shown.output)
    both = runner.invoke(app, ["estimate", str(tmp_path / "micro.json"), str(tmp_path / "m.npz"), "--compare", "d,e", "--compare", "a,b,f"])
    assert both.exit_code == 0, both.output  # 'a,b,f' splits one way only into two models: a,b and f
    assert " vs e " in one_line(both.output) and " vs f " in one_line(both.output)


def test_names_that_differ_only_in_unicode_normalisation_get_a_note(tmp_path):
    composed, decomposed = unicodedata.normalize("NFC", "modèle"), unicodedata.normalize("NFD", "modèle")
    matrix = _named([composed, decomposed, "x", "y", "z", "w"])
    write_npz(matrix, tmp_path / "m.npz")
    mdad.select(matrix, "random", 20, seed=0).save(tmp_path / "micro.json")
    shown = runner.invoke(app, ["estimate", str(tmp_path / "micro.json"), str(tmp_path / "m.npz"), "--compare", composed, "--compare", decomposed])
    assert shown.exit_code == 0, shown.output
    assert "print alike: their names differ only in Unicode spelling" in one_line(shown.output)
    only = _named([decomposed, "x", "y", "z"])
    write_npz(only, tmp_path / "n.npz")
    mdad.select(only, "random", 20, seed=0).save(tmp_path / "n.json")
    taken = runner.invoke(app, ["estimate", str(tmp_path / "n.json"), str(tmp_path / "n.npz"), "--compare", f"{composed},x"])
    assert taken.exit_code == 0, taken.output
    assert "differs from it only in Unicode spelling" in one_line(taken.output)


def test_a_pair_the_table_does_not_call_tied_is_not_tied_in_compare(tmp_path):
    scores = (np.random.default_rng(0).random((6, 60)) < 0.5).astype(np.float32)
    scores[1] = scores[0]  # the same answers: equal estimates on any draw
    matrix = _matrix(scores, [f"m{i}" for i in range(6)])
    chosen = mdad.select(matrix, "random", 20, seed=0)
    orders = chosen.order_probabilities(matrix)
    pair = next(i for i, (a, b) in enumerate(zip(orders.first, orders.second, strict=True)) if {a, b} == {"m0", "m1"})
    assert orders.gap[pair] == 0 and not orders.ties[pair]
    compared = chosen.compare(matrix, str(orders.first[pair]), str(orders.second[pair]))
    assert not compared.tied and compared.order_probability == pytest.approx(orders.probability[pair])
    assert "tied" not in compared.describe() and "no item separates them" in compared.describe()


def test_equal_calibrated_estimates_are_an_even_chance(assessed):
    _, files, _ = assessed
    calibration = mdad.SelectedMicroBenchmark.load(files["anchor-points"]).assessment.order_calibration
    assert calibration.probability(0.4, 0.4) == 0.5
    assert calibration.rankings.adjacent_probability(np.array([0.0]), 10)[0] == 0.5


def test_interval_options_of_the_random_designs_are_refused_where_they_change_nothing(assessed, tmp_path):
    folder, files, new = assessed
    for option in ("--clopper-pearson", "--population"):
        shown = runner.invoke(app, ["estimate", str(files["anchor-points"]), str(folder / "new.npz"), option])
        assert shown.exit_code == 2 and "Traceback" not in shown.output
        assert f"{option} chooses among the exact intervals of the random designs, but anchor-points is not a random design" in one_line(shown.output)
    continuous = ResponseMatrix(np.full((4, 200), 0.5, dtype=np.float32), np.array(list("abcd")), new.items, new.subtasks)
    chosen = mdad.SelectedMicroBenchmark.load(files["random"])
    with pytest.raises(MdadError, match="get no exact interval"):
        estimate_report(chosen, continuous, mid_p=False)
    applied = runner.invoke(app, ["estimate", str(files["random"]), str(folder / "new.npz"), "--clopper-pearson"])
    assert applied.exit_code == 0 and "Clopper-Pearson" in applied.output


def test_every_pair_streams_in_blocks_and_matches_the_pairs_one_by_one(assessed):
    _, files, new = assessed
    chosen = mdad.SelectedMicroBenchmark.load(files["anchor-points"])
    blocks = list(chosen.every_comparison(new, block=7))
    assert len(blocks) > 5 and all(len(block) < 7 + new.n_models for block in blocks)
    streamed = comparisons_frame([c for block in blocks for c in block])
    pairs = [(str(a), str(b)) for i, a in enumerate(new.models) for b in new.models[i + 1 :]]
    direct = comparisons_frame(chosen.comparisons(new, pairs))
    pd.testing.assert_frame_equal(streamed, direct)
    found = compare_every_pair(chosen, new)
    assert found.pairs == 66 and len(found.closest) == 30
    gaps = sorted(abs(c.gap) for block in blocks for c in block)
    assert [abs(c.gap) for c in found.closest] == gaps[:30]


def test_pairs_all_refuses_up_front_what_the_disk_cannot_hold(assessed, tmp_path, monkeypatch):
    folder, files, _ = assessed
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**6, 10**6 - 100, 100))
    out = tmp_path / "all.csv"
    shown = runner.invoke(app, ["estimate", str(files["random"]), str(folder / "new.npz"), "--pairs", "all", "--compare-csv", str(out)])
    assert shown.exit_code == 2 and "compares 66 pairs; their comparisons CSV would need about" in one_line(shown.output)
    assert not out.exists() and not list(tmp_path.iterdir())


def test_pairs_all_prints_the_closest_and_writes_every_pair(assessed, tmp_path):
    folder, files, _ = assessed
    out = tmp_path / "all.csv"
    shown = runner.invoke(app, ["estimate", str(files["random"]), str(folder / "new.npz"), "--pairs", "all", "--compare-csv", str(out)])
    assert shown.exit_code == 0, shown.output
    assert "Every pair (66), the 30 closest by estimate" in one_line(shown.output) and f"36 more pairs in {out}" in one_line(shown.output)
    assert len(pd.read_csv(out)) == 66 and [p.name for p in tmp_path.iterdir()] == ["all.csv"]  # no temporary file left


def test_csv_values_are_the_fractions_they_stand_for(tmp_path):
    scores = np.zeros((3, 10), dtype=np.float32)
    scores[0, :1], scores[1, :2], scores[2, :3] = 1, 1, 1
    matrix = _matrix(scores, ["a", "b", "c"])
    write_npz(matrix, tmp_path / "m.npz")
    mdad.select(matrix, "random", 10, seed=0).save(tmp_path / "micro.json")
    files = {name: tmp_path / f"{name}.csv" for name in ("models", "pairs", "compared")}
    shown = runner.invoke(
        app,
        ["estimate", str(tmp_path / "micro.json"), str(tmp_path / "m.npz"), "--csv", str(files["models"]), "--pairs-csv", str(files["pairs"])]
        + ["--compare", "a,b", "--compare-csv", str(files["compared"])],
    )
    assert shown.exit_code == 0, shown.output
    text = "".join(path.read_text() for path in files.values())
    assert "0.1," in text and "0.3," in text and "999999" not in text and "000000" not in text
    assert set(pd.read_csv(files["pairs"])["gap"]) == {10.0}


def test_one_item_is_one_item(tmp_path):
    matrix = mdad.simulate(seed=2, n_models=6, n_items=30)
    report = estimate_report(mdad.select(matrix, "random", 1, seed=0), matrix)
    assert "random, 1 item:" in report.title and "1 items" not in report.title


def test_info_rounds_the_accuracy_range_as_its_list(tmp_path):
    scores = np.zeros((2, 80), dtype=np.float32)
    scores[0, :13] = 1  # 13/80 = 0.1625: float32 means round it to 0.162, float64 to 0.163 (half to even of the binary value)
    scores[1, :40] = 1
    write_npz(_matrix(scores, ["low", "high"]), tmp_path / "m.npz")
    shown = runner.invoke(app, ["info", str(tmp_path / "m.npz"), "--models"])
    assert shown.exit_code == 0, shown.output
    low = re.search(r"accuracy: (\d\.\d{3}) to", shown.output).group(1)
    assert re.search(rf"^\s+{low}\s+low$", shown.output, re.MULTILINE), shown.output
