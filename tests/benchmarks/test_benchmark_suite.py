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


def test_select_grid_times_the_named_methods_cells_against_gpirt(tmp_path):
    """bench_select --grid: each named method's cells of the grid, paired with gp-IRT's, one result each."""
    record = smoke_record("bench_select", ("--grid", "--methods", "mrmr-krr,disco"), tmp_path)
    check_record(record, "bench_select")
    assert [r["name"] for r in record["results"]] == ["grid mrmr-krr", "grid disco"]
    for result in record["results"]:
        assert result["baseline_cpu_s"] > 0 and result["cpu_s"] > 0 and result["cpu_ratio"] > 0


def test_select_grid_refuses_the_options_it_would_ignore(tmp_path):
    done = run_script("bench_select", ("--grid", "--commands"), tmp_path / "record.json")
    assert done.returncode == 2 and "--commands cannot go with it" in done.stderr


def test_interval_columns_cover_both_kinds_of_targets_per_cell(tmp_path):
    """bench_intervals --columns: one result per dataset, targets, size and method, keyed as the side-by-side table's;
    the top targets are the strongest models, so all of them lie in the leaderboard's top fifth."""
    record = smoke_record("bench_intervals", ("--columns",), tmp_path)
    check_record(record, "bench_intervals")
    cells = {(r["dataset"], r["targets"], r["size"], r["method"]): r for r in record["results"]}
    assert set(cells) == {("simulated", t, 10, m) for t in ("random", "top") for m in ("random", "stratified-confidence")}
    for (_, targets, _, _), r in cells.items():
        assert 0 <= r["cover90"] <= 1 and r["cover90"] <= r["covered_or_marked"] <= 1 and r["reps"] == 1
        if targets == "top":
            assert r["cover90_top"] == r["cover90"]
    assert cells[("simulated", "random", 10, "random")]["marked"] == 0  # a random design's exact interval is never marked


def test_interval_columns_refuse_the_options_they_would_ignore(tmp_path):
    done = run_script("bench_intervals", ("--columns", "--new-top", "0.1"), tmp_path / "record.json")
    assert done.returncode == 2 and "--new-top cannot go with it" in done.stderr
    assert not (tmp_path / "record.json").exists()


def test_coverage_columns_against_a_hand_count():
    """coverage_columns: shares and cluster-robust standard errors over repetitions, counted by hand."""
    import bench_intervals
    import numpy as np
    import pandas as pd

    # two repetitions of 4 new models; covered: rep 0 3 of 4 (the top-fifth one missed), rep 1 1 of 4 (the top-fifth one covered)
    truth = np.array([0.5, 0.5, 0.5, 0.9] * 2)
    low = np.array([0.4, 0.4, 0.4, 0.95, 0.6, 0.6, 0.6, 0.8])
    frame = pd.DataFrame(
        {
            "dataset": "d",
            "targets": "random",
            "method": "m",
            "size": 10,
            "rep": [0] * 4 + [1] * 4,
            "truth": truth,
            "low": low,
            "high": low + 0.2,
            "fifth": [1, 2, 3, 4] * 2,
            "mark": ["", "", "", "x", "", "", "", ""],
        }
    )
    (row,) = bench_intervals.coverage_columns(frame).to_dict("records")
    share = 4 / 8
    # cluster-robust SE of a ratio of sums: sqrt(m / (m - 1) * sum((covered_c - share * n_c)^2)) / n, m = 2 clusters
    se = np.sqrt(2 * ((3 - share * 4) ** 2 + (1 - share * 4) ** 2)) / 8
    assert row["cover90"] == pytest.approx(share) and row["cover90_se"] == pytest.approx(se)
    assert row["cover90_top"] == pytest.approx(0.5) and row["cover90_top_se"] == pytest.approx(np.sqrt(2 * 2 * 0.5**2) / 2)
    assert row["covered_or_marked"] == pytest.approx(5 / 8) and row["marked"] == pytest.approx(1 / 8)
    assert (row["new_models"], row["reps"]) == (4, 2)


def test_the_table_joins_the_interval_columns_of_their_cell(tmp_path, capsys):
    """bench_baselines_table --coverage: each cell's coverage overall / top fifth [covered or marked], from the newest
    record that holds the cell."""
    import bench_baselines_table

    cell = {"dataset": "d", "targets": "top", "method": "lasso", "cover90_se": 0.02, "covered_or_marked": 0.96, "reps": 3}
    older = {"results": [{**cell, "size": 10, "cover90": 0.1, "cover90_top": 0.1, "cover90_top_se": 0.05}, {"name": "timing"}]}
    newer = {
        "results": [
            {**cell, "size": 10, "cover90": 0.812, "cover90_top": 0.5, "cover90_top_se": 0.07},
            {**cell, "size": 25, "cover90": 0.9, "cover90_top": float("nan"), "cover90_top_se": float("nan")},
            {**cell, "targets": "random", "size": 10, "cover90": 0.3, "cover90_top": 0.3, "cover90_top_se": 0.1},
        ]
    }
    path = tmp_path / "columns.json"
    path.write_text(json.dumps([older, newer]))
    coverage = bench_baselines_table.read_coverage([path])
    bench_baselines_table.print_coverage(coverage, "d", "top", ["lasso", "disco"], (10, 25, 50))
    lines = capsys.readouterr().out.splitlines()
    assert "| lasso | 81±2 / 50±7 [96] | 90±2 / - [96] | - |" in lines
    assert "| disco | - | - | - |" in lines
    bench_baselines_table.print_coverage(coverage, "d", "random", ["lasso"], (10,))
    assert "| lasso | 30±2 / 30±10 [96] |" in capsys.readouterr().out.splitlines()  # a cell of the newer record only


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
