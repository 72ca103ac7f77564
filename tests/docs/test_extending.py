"""docs/extending.md holds: one new file adds a method, an estimator, a reader or a metric; an installed package adds them by entry points.

Each test runs a fresh Python in a subprocess: the extension must be found by discovery, not by
anything this test process imported.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT
from support.plugins import installed_plugin, run_python

import mdad

DOC = ROOT / "docs" / "extending.md"


def doc_files() -> dict[str, str]:
    """The code blocks of docs/extending.md that start with the file they belong in (``# src/mdad/...``)."""
    blocks = re.findall(r"```python\n# (src/mdad/\S+\.py)\n(.*?)```", DOC.read_text(), flags=re.S)
    return {path: code for path, code in blocks}


def test_one_new_file_each_adds_a_method_an_estimator_a_reader_and_a_metric(tmp_path):
    files = doc_files()
    assert sorted(files) == [
        "src/mdad/data/readers/scores_json.py",
        "src/mdad/estimators/calibrated_mean.py",
        "src/mdad/methods/difficulty_spread.py",
        "src/mdad/metrics/within_one_point.py",
    ]
    copy = tmp_path / "src"
    shutil.copytree(Path(mdad.__file__).parent, copy / "mdad", ignore=shutil.ignore_patterns("__pycache__"))
    for path, code in files.items():
        (tmp_path / path).write_text(code)  # the one new file; nothing else is edited
    sample = tmp_path / "results.scores.json"
    sample.write_text(json.dumps({f"model-{m}": {f"q{i}": float((m + i) % 3 == 0) for i in range(12)} for m in range(6)}))

    done = run_python(
        f"""
        import mdad
        assert mdad.__file__.startswith({str(copy)!r}), mdad.__file__
        from typer.testing import CliRunner
        from mdad.cli import app
        from mdad.data.readers import detect_format
        from mdad.metrics.base import METRICS
        from mdad.testing import check_method, check_metric, check_reader

        listed = CliRunner().invoke(app, ["methods"]).output
        assert "difficulty-spread" in listed and listed.index("aipw") < listed.index("difficulty-spread"), listed
        check_method("difficulty-spread")
        check_method("anchor-points@estimator=calibrated-mean")
        check_method("difficulty-spread@estimator=calibrated-mean@per-subtask")
        assert "calibrated-mean" in mdad.methods.estimators()

        matrix = mdad.load({str(sample)!r})
        assert detect_format({str(sample)!r}) == "scores-json" and matrix.scores.shape == (6, 12)
        check_reader("scores-json", {str(sample)!r})

        assert METRICS.names() == ["error", "kendall_tau", "within_1pt"]
        check_metric("within_1pt")
        check = mdad.assess(mdad.simulate(seed=0, n_models=30, n_items=80), "difficulty-spread", 10, runs=3)
        assert 0 <= check.metrics["within_1pt"] <= 1 and set(check.to_json()) >= {{"error", "kendall_tau", "within_1pt"}}
        print("extended")
    """,
        copy,
        tmp_path,
    )
    assert done.returncode == 0 and "extended" in done.stdout, done.stderr


def test_an_installed_package_registers_through_entry_points(tmp_path):
    site = tmp_path / "site"
    installed_plugin(site, "[mdad.methods]\nevery-other = mdad_every_other:EveryOther\n\n[mdad.metrics]\nbias = mdad_every_other.metric\n")
    done = run_python(
        """
        from typer.testing import CliRunner
        from mdad import methods
        from mdad.cli import app
        from mdad.metrics.base import METRICS
        from mdad.testing import check_method

        assert "every-other" in CliRunner().invoke(app, ["methods"]).output
        assert methods.available()[-1] == "every-other" and METRICS.names()[-1] == "bias"
        check_method("every-other")
        print("plugged in")
    """,
        site,
        tmp_path,
    )
    assert done.returncode == 0 and "plugged in" in done.stdout, done.stderr


def test_a_broken_plugin_is_one_sentence_and_the_rest_works(tmp_path):
    site = tmp_path / "site"
    installed_plugin(site, "[mdad.methods]\nwobbly = mdad_not_there.method:Wobbly\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "mdad.cli", "methods"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "random-stratified-equal" in done.stdout and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        "The method plug-in 'wobbly' (mdad_not_there.method:Wobbly) could not be loaded: No module named 'mdad_not_there'; it is left out."
    )
