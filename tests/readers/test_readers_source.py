"""Format detection, convert (to npz and back), describe, and load on every source."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.lm_eval_samples import build_known
from support.paths import FIXTURES

from mdad.data import (
    ResponseMatrix,
    convert,
    describe,
    detect_format,
    format_description,
    load,
    read_npz,
    read_source,
    simulate,
    write_npz,
)
from mdad.errors import MdadError

FIXTURE = FIXTURES / "lm_eval"


def _same(a: ResponseMatrix, b: ResponseMatrix) -> None:
    np.testing.assert_array_equal(a.scores, b.scores)
    assert list(a.models) == list(b.models) and list(a.items) == list(b.items)
    assert list(a.subtasks) == list(b.subtasks)
    assert a.has_option_probs == b.has_option_probs
    if a.has_option_probs:
        np.testing.assert_array_equal(a.option_probs, b.option_probs)
        np.testing.assert_array_equal(a.gold, b.gold)


def test_detects_every_format(tmp_path):
    build_known(tmp_path / "lm")
    write_npz(simulate(seed=1, n_models=5, n_items=20, n_subtasks=2), tmp_path / "sim.npz")
    (tmp_path / "folder").mkdir()
    write_npz(simulate(seed=1, n_models=5, n_items=20, n_subtasks=2), tmp_path / "folder" / "responses.npz")
    (tmp_path / "t.csv").write_text("model,item,score\na,x,1\nb,x,0\n")
    (tmp_path / "log.json").write_text(json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "samples": []}))
    assert detect_format(tmp_path / "lm") == "lm-eval"
    assert detect_format(FIXTURE / "model-a" / next((FIXTURE / "model-a").glob("samples_*")).name) == "lm-eval"
    assert detect_format(tmp_path / "sim.npz") == "npz"
    assert detect_format(tmp_path / "folder") == "npz"
    assert detect_format(tmp_path / "t.csv") == "table"
    assert detect_format(tmp_path / "log.json") == "inspect"


def test_unreadable_sources_give_one_clear_sentence(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(MdadError, match=r"notes\.txt is not a response file mdad can read \(expected an \.npz"):
        read_source(tmp_path / "notes.txt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MdadError, match=r"empty holds nothing mdad can read"):
        read_source(tmp_path / "empty")
    with pytest.raises(MdadError, match="No such file or folder"):
        read_source(tmp_path / "absent")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(MdadError, match="not a response file"):
        read_source(tmp_path / "other.json")
    (tmp_path / "broken.json").write_text('{"eval": {"model": "m",\n "task": ')
    with pytest.raises(MdadError, match=r"broken\.json line 2 is not valid JSON"):
        read_source(tmp_path / "broken.json")


def test_a_folder_with_two_formats_is_refused(tmp_path):
    build_known(tmp_path)
    (tmp_path / "log.json").write_text(json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "samples": []}))
    with pytest.raises(MdadError, match=r"several formats \(lm-eval, inspect\)"):
        read_source(tmp_path)


def test_a_results_summary_without_samples_is_explained(tmp_path):
    (tmp_path / "results_2026-01-01T00-00-00.000001.json").write_text(json.dumps({"results": {}, "versions": {}}))
    with pytest.raises(MdadError, match="without per-document samples; rerun with --log_samples"):
        read_source(tmp_path / "results_2026-01-01T00-00-00.000001.json")


@pytest.mark.parametrize("metric", [None, "acc_norm"])
def test_convert_writes_an_npz_that_reads_back_identically(tmp_path, metric):
    build_known(tmp_path / "lm")
    out = tmp_path / "data.npz"
    matrix = convert(tmp_path / "lm", out, metric=metric)
    assert matrix.has_option_probs
    _same(read_npz(out), matrix)
    _same(load(out), matrix)


def test_convert_keeps_missing_cells(tmp_path):
    out = tmp_path / "genuine.npz"
    matrix = convert(FIXTURE, out)
    back = read_npz(out)
    assert back.n_missing == matrix.n_missing == 2
    _same(back, matrix)
    with pytest.raises(MdadError, match=r"must end in \.npz"):
        convert(FIXTURE, tmp_path / "x.csv")


def test_describe_reports_what_the_matrix_holds():
    scores = np.array([[1, 0, np.nan, 1], [0, 0, 1, 1], [1, np.nan, np.nan, 0]], dtype=float)
    m = ResponseMatrix(scores=scores, models=["a", "b", "c"], items=list("wxyz"), subtasks=["s", "s", "t", "u"])
    info = describe(m)
    assert info["models"] == 3 and info["items"] == 4
    assert info["subtasks"] == {"s": 2, "t": 1, "u": 1}
    assert info["missing_cells"] == 3 and info["models_missing_items"] == {"a": 1, "c": 2}
    assert info["items_missing_for_some_model"] == 2
    assert info["accuracy"] == {"min": pytest.approx(0.5), "mean": pytest.approx((2 / 3 + 0.5 + 0.5) / 3), "max": pytest.approx(2 / 3)}
    assert info["scores"] == "binary" and info["option_probs"] is False and info["options"] is None
    text = "\n".join(format_description(info))
    assert "missing cells: 3 on 2 items; 2 models miss items: c (2), a (1)" in text
    sim = describe(simulate(seed=0, n_models=10, n_items=30, n_subtasks=3))
    assert sim["option_probs"] and sim["options"] >= 2 and sim["missing_cells"] == 0


def test_load_keeps_dataset_names_and_refuses_options_for_them():
    assert load("simulated").simulated
    with pytest.raises(MdadError, match="apply to result files"):
        load("no-such-thing", metric="acc")
