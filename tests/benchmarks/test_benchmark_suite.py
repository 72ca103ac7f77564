"""The maintained benchmark scripts (benchmarks/) run on tiny inputs and write sane records, so that none rots.

Each script runs as a user runs it (``python benchmarks/<script>.py --smoke --out FILE``, this checkout's
sources); its record must say which code, machine, date and command made it, and its timings and ratios
must be positive and finite. The harness's paired timing is checked against work of known relative cost.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.paths import ROOT, SHARED_DATA

from mdad import methods as method_registry

BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import suite  # noqa: E402  (benchmarks/suite.py, the harness under test)

# script: (extra arguments, needs the shared data, takes more than 10 s of wall time)
SCRIPTS = {
    "bench_plan": ((), True, False),
    "bench_irt": ((), False, False),
    "bench_intervals": ((), False, False),
    "bench_mdad_coverage": ((), False, False),
    "bench_simulator": ((), False, False),
    "bench_plan_agreement": ((), False, False),
    "bench_baselines_table": ((), True, False),
    "bench_beyond_sources": ((), False, False),
    "bench_adaptive_coverage": ((), False, False),
    "bench_suite": ((), False, False),
    "bench_paper_grid": ((), False, True),  # a fresh process per phase
    "bench_run": (("--workers", "1"), False, True),  # fresh processes time the commands' start-up
    "bench_reproducibility": ((), False, True),  # whole commands under two configurations
    "bench_dask": ((), False, True),  # starts a scheduler and workers
    "audit_hostile": ((), True, True),  # each case a command in its own process
}


def run_script(name: str, extra: tuple[str, ...], out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MDAD_DATA_DIR": str(SHARED_DATA)}
    command = [sys.executable, str(BENCHMARKS / f"{name}.py"), "--smoke", "--threads", "1", "--out", str(out), *extra]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_every_kept_script_has_a_smoke_test():
    """A script added to benchmarks/ (but the harness and the helpers maintained scripts call) gets a smoke test here."""
    helpers = {"suite", "pyirt_fit", "calibrate_simulator"}  # calibrate_simulator: tests/data/test_simulator_calibration.py
    assert {path.stem for path in BENCHMARKS.glob("*.py")} - helpers == {*SCRIPTS, "bench_select"}


@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=[pytest.mark.slow] if slow else []) for name, (_, _, slow) in SCRIPTS.items()],
)
def test_script_runs_on_tiny_inputs_and_records_its_run(name, tmp_path):
    extra, needs_data, _ = SCRIPTS[name]
    if needs_data and not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED_DATA}")
    check_record(smoke_record(name, extra, tmp_path), name)


def smoke_record(name: str, extra: tuple[str, ...], folder: Path) -> dict:
    """The one record a smoke run of ``name`` wrote."""
    out = folder / f"{name}.json"
    done = run_script(name, extra, out)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    (record,) = json.loads(out.read_text())
    return record


def check_record(record: dict, name: str) -> None:
    """The record names its code, machine, date and command; its times and ratios are positive and finite."""
    assert tuple(record) == suite.RECORD_KEYS
    assert record["script"] == name and record["smoke"] is True and record["threads"] == 1
    assert record["command"].startswith(f"python benchmarks/{name}.py --smoke")
    assert len(record["commit"]) == 40 and all(c in "0123456789abcdef" for c in record["commit"])
    assert record["date"].endswith("+00:00") and record["machine"]["cores"] >= 1 and record["machine"]["numpy"]
    assert record["total"]["wall_s"] > 0 and record["total"]["cpu_s"] > 0
    assert record["results"], "the run recorded no result"
    for result in record["results"]:
        assert isinstance(result["name"], str) and result["name"]
        for key, value in result.items():
            if key.endswith(("_s", "_ratio")) and value is not None:
                assert math.isfinite(value) and value >= 0, (result["name"], key, value)
            if key.endswith("_ratio") and value is not None:
                assert value > 0, (result["name"], key)


def test_select_times_every_registered_static_method_against_gpirt(tmp_path):
    """bench_select iterates the registry: a newly registered static method is timed without editing the script."""
    record = smoke_record("bench_select", (), tmp_path)
    check_record(record, "bench_select")
    static = [name for name in method_registry.available() if not method_registry.get(name).adaptive]
    assert [r["name"] for r in record["results"]] == static
    for result in record["results"]:
        assert result["baseline_cpu_s"] > 0 and result["cpu_ratio"] > 0
        assert result["repeats"] == 1


def busy(seconds: float) -> None:
    """Spin this process's CPU for ``seconds`` of CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_paired_ratio_matches_work_of_known_cost():
    """A candidate that burns twice the baseline's CPU comes out at a CPU ratio of about 2."""
    timing = suite.paired(lambda: busy(0.02), lambda: busy(0.04), repeats=3)
    assert 1.7 < timing.cpu_ratio < 2.4
    assert timing.repeats == 3 and timing.candidate.cpu > timing.baseline.cpu
    assert set(timing.fields()) == {"baseline_wall_s", "baseline_cpu_s", "wall_s", "cpu_s", "cpu_ratio", "wall_ratio", "repeats"}


def test_paired_alternates_which_goes_first():
    order: list[str] = []
    suite.paired(lambda: order.append("base"), lambda: order.append("new"), repeats=4, warmup=True)
    assert order == ["base", "new"] + ["base", "new", "new", "base", "base", "new", "new", "base"]


def test_measure_counts_a_child_process_cpu():
    """Commands run as subprocesses: their CPU time counts, as the child's own getrusage says."""
    spin = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    timing = suite.measure(lambda: subprocess.run([sys.executable, "-c", spin], check=True))
    assert timing.cpu >= 0.3 and timing.wall >= 0.3


def test_records_accumulate_as_strict_json(tmp_path):
    """A second run appends; NaN and numpy numbers become what strict JSON holds; no temporary file is left."""
    import numpy as np

    path = tmp_path / "results" / "x.json"
    suite.append(path, {"a": float("nan"), "b": np.float64(1.5), "c": [np.int64(2), float("inf")]})
    suite.append(path, {"a": 1})
    assert json.loads(path.read_text()) == [{"a": None, "b": 1.5, "c": [2, None]}, {"a": 1}]
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]


def test_a_smoke_run_writes_nothing_unless_told(tmp_path, monkeypatch):
    monkeypatch.setattr(suite, "RESULTS", tmp_path)
    args = suite.parser("x").parse_args(["--smoke"])
    with suite.Session("x", args) as session:
        session.add("one", cpu_s=0.1)
    assert not list(tmp_path.iterdir())
    args = suite.parser("x").parse_args([])
    assert suite.Session("x", args).out == tmp_path / "x.json"


def test_the_plan_rule_table_keeps_each_cell_and_resumes_from_them(tmp_path):
    """bench_plan_agreement --rule: each (dataset, question, population) cell is kept in --cells as it is done,
    and a second run reads the kept cells instead of computing them again."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED_DATA}")
    cells = tmp_path / "cells"
    first = run_script("bench_plan_agreement", ("--rule", "--cells", str(cells)), tmp_path / "first.json")
    assert first.returncode == 0, first.stderr[-3000:]
    kept = sorted(path.name for path in cells.glob("*.json"))
    assert kept == sorted(f"gpqa_{q}_{p}.json" for q in ("detect-5.0", "size-25") for p in ("like-sources", "stronger"))
    cell = json.loads((cells / "gpqa_size-25_like-sources.json").read_text())
    assert cell["judged"] and cell["size"] == 25 and set(cell["truth"]) >= set(cell["judged"])
    cell["recommended"] = "a-kept-cell"
    (cells / "gpqa_size-25_like-sources.json").write_text(json.dumps(cell))
    second = run_script("bench_plan_agreement", ("--rule", "--cells", str(cells)), tmp_path / "second.json")
    assert second.returncode == 0, second.stderr[-3000:]
    (record,) = json.loads((tmp_path / "second.json").read_text())
    by_name = {result["name"]: result for result in record["results"]}
    assert by_name["gpqa_size-25_like-sources"]["recommended"] == "a-kept-cell"
    assert {"named", "wrong"} <= set(by_name["rule error rate"])
