"""One seed, one micro-benchmark: the golden grid's chosen items and estimates, on every BLAS kernel.

Every method (the adaptive family and aipw included), its per-subtask variant where it has one,
three sizes, few (8, tie-heavy: many items alike) and many sources, on option-probability and
0/1 data: the chosen items of every (method, size, sources, run) cell and every target's
estimate must equal the recorded ones (tests/fixtures/grid_golden.json): the items exactly, the
estimates to 1e-9. The same grid is computed again in subprocesses under every OpenBLAS kernel
that runs on this CPU other than this process's own (the first of KERNELS that does), with 2 BLAS threads, beside
this process's own kernel and threads; before a release, the grid runs whole under two more (docs/reproducibility.md).

The matrices come from a fixed textbook simulation (tests/support/sim_params.py), so a new calibration
of the simulator's defaults does not move them. Regenerate only on purpose, when a change of
numbers is intended, and say why in docs/deviations.md and CHANGELOG.md:
``python tests/experiment/test_perf_identical.py --write``. The file records the results version it was
recorded under (mdad.results_version): ``--write`` refuses to record a grid whose recorded cells
moved until RESULTS_VERSION is raised, and the test fails until a raised version is recorded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from mdad import methods as method_registry
from mdad.data import simulate
from mdad.experiment.grid import Task, task_outcomes
from mdad.experiment.splits import make_splits
from mdad.results_version import RESULTS_VERSION

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for support when run as a script
from support.paths import FIXTURES
from support.sim_params import TEXTBOOK_2PL

GOLDEN = FIXTURES / "grid_golden.json"
SIZES = (10, 60, 150)
CASES = {
    # option probabilities, several subtasks, two numbers of sources
    "probs": {"data": {"seed": 5, "n_models": 70, "n_items": 400, "n_subtasks": 4, "params": TEXTBOOK_2PL}, "sources": (8, 50)},
    # 0/1 answers only: anchor-points and diversity work on the scores (constant items at 8 sources)
    "binary": {
        "data": {"seed": 6, "n_models": 60, "n_items": 330, "n_subtasks": 3, "with_option_probs": False, "params": TEXTBOOK_2PL},
        "sources": (8,),
    },
}
RUNS, TARGETS, SEED = 2, 12, 11
ESTIMATE_TOLERANCE = 1e-9  # what agrees to rounding (docs/reproducibility.md)
# OpenBLAS kernels tried in the subprocess, in order: the first that runs on this CPU, other than this process's own, is used
KERNELS = ("Haswell", "SkylakeX", "Sandybridge", "Nehalem", "Prescott")
KERNELS_USED = 1


def golden_methods() -> list[str]:
    """Every registered method, and the per-subtask variant of every method that has one."""
    names = method_registry.available()
    return names + [f"{name}@per-subtask" for name in names if not method_registry.get(name).adaptive]


def grid(case: str) -> dict[str, dict[str, list]]:
    """Every (method, size, sources) cell: the chosen items and the targets' estimates of each run."""
    spec = CASES[case]
    matrix = simulate(**spec["data"])
    splits = make_splits(matrix, RUNS, TARGETS, SEED)
    groups: dict[str, list[str]] = {}
    for name in golden_methods():
        groups.setdefault(method_registry.get(name).preparation or name, []).append(name)
    out: dict[str, dict[str, list]] = {}
    for names in groups.values():
        for sources in spec["sources"]:
            for _, outcomes in task_outcomes(matrix, splits, Task(tuple(names), sources, SIZES)):
                for cell, outcome in outcomes.items():
                    entry = out.setdefault(f"{cell.method}/k{cell.size}/s{cell.sources}", {"items": [], "estimates": []})
                    entry["items"].append(np.asarray(outcome.items).tolist())
                    entry["estimates"].append(np.asarray(outcome.estimates).tolist())
    return out


def moved_cells(now: dict, recorded: dict) -> list[str]:
    """The recorded cells whose chosen items or estimates differ in ``now`` (cells only one side has are not counted)."""
    return [
        key
        for key, cell in recorded.items()
        if key in now
        and (
            now[key]["items"] != cell["items"]
            or not np.allclose(now[key]["estimates"], cell["estimates"], rtol=0, atol=ESTIMATE_TOLERANCE, equal_nan=True)
        )
    ]


def assert_same_grid(now: dict, recorded: dict, where: str) -> None:
    assert sorted(now) == sorted(recorded), where
    moved = [key for key in recorded if now[key]["items"] != recorded[key]["items"]]
    assert not moved, f"{where}: other items chosen in {len(moved)} cells, e.g. {moved[:5]}"
    for key, cell in recorded.items():
        np.testing.assert_allclose(now[key]["estimates"], cell["estimates"], rtol=0, atol=ESTIMATE_TOLERANCE, err_msg=f"{where}: {key}")


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


def test_the_golden_grid_was_recorded_under_this_results_version(golden):
    assert golden["results_version"] == RESULTS_VERSION, (
        f"{GOLDEN.name} was recorded under results version {golden['results_version']}, and RESULTS_VERSION is "
        f"{RESULTS_VERSION}: record it again (python tests/experiment/test_perf_identical.py --write)"
    )


def test_moved_cells_are_the_recorded_cells_whose_items_or_estimates_differ():
    recorded = {"a": {"items": [[1, 2]], "estimates": [[0.5]]}, "b": {"items": [[3]], "estimates": [[0.25]]}}
    assert moved_cells(recorded, recorded) == []
    assert moved_cells({**recorded, "new": {"items": [[9]], "estimates": [[0.0]]}}, recorded) == []  # a cell added
    assert moved_cells({**recorded, "a": {"items": [[2, 1]], "estimates": [[0.5]]}}, recorded) == ["a"]
    assert moved_cells({**recorded, "b": {"items": [[3]], "estimates": [[0.25 + 1e-6]]}}, recorded) == ["b"]
    assert moved_cells({**recorded, "b": {"items": [[3]], "estimates": [[0.25 + 1e-12]]}}, recorded) == []


def write_golden() -> None:
    """Record the grid, refusing when recorded cells moved under the results version they were recorded with."""
    now = {case: grid(case) for case in CASES}
    recorded = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    moved = [f"{case}: {key}" for case in CASES if case in recorded for key in moved_cells(now[case], recorded[case])]
    if moved and recorded.get("results_version") == RESULTS_VERSION:
        sys.exit(
            f"{len(moved)} recorded cells moved (e.g. {', '.join(moved[:3])}): raise RESULTS_VERSION in "
            "src/mdad/results_version.py, say why in CHANGELOG.md and docs/deviations.md, then record again."
        )
    GOLDEN.write_text(json.dumps({"results_version": RESULTS_VERSION, **now}, separators=(",", ":")))


@pytest.mark.parametrize("case", sorted(CASES))
def test_grid_is_the_recorded_one(case, golden):
    assert_same_grid(grid(case), golden[case], f"{case}, this process")


def blas_architecture(kernel: str | None) -> str | None:
    """The OpenBLAS kernel a Python process runs under ``OPENBLAS_CORETYPE=kernel`` (None: that
    kernel does not run on this CPU, or numpy does not use OpenBLAS)."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    if kernel is not None:
        env["OPENBLAS_CORETYPE"] = kernel
    probe = (
        "import numpy, threadpoolctl; a = numpy.arange(4096.0).reshape(64, 64); a @ a; "
        "print(next((i.get('architecture') for i in threadpoolctl.threadpool_info() "
        "if i.get('internal_api') == 'openblas'), ''))"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300, check=False)
    arch = done.stdout.strip()
    return arch if done.returncode == 0 and arch else None


def grid_in_subprocess(kernel: str, threads: int) -> dict:
    env = dict(os.environ, OPENBLAS_CORETYPE=kernel, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    done = subprocess.run([sys.executable, __file__, "--print"], env=env, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, f"the grid under {kernel} with {threads} threads failed:\n{done.stderr[-2000:]}"
    return json.loads(done.stdout)


def test_same_items_under_every_blas_kernel_and_thread_count(golden):
    with ThreadPoolExecutor(2) as pool:
        found = dict(zip(KERNELS, pool.map(blas_architecture, KERNELS), strict=True))
    kernels = {arch: kernel for kernel, arch in found.items() if arch == kernel}  # those that run as asked
    if not kernels:
        pytest.skip("numpy does not use OpenBLAS here: no BLAS kernels to compare")
    own = blas_architecture(None)
    others = [kernel for kernel in kernels.values() if kernel != own]
    assert others, f"no OpenBLAS kernel other than this process's own ({own}) runs on this CPU: {found}"
    runs = [(kernel, 2) for kernel in others[:KERNELS_USED]]
    with ThreadPoolExecutor(2) as pool:  # two subprocesses at a time, one per core
        results = list(pool.map(lambda run: grid_in_subprocess(*run), runs))
    for (kernel, threads), result in zip(runs, results, strict=True):
        for case in CASES:
            assert_same_grid(result[case], golden[case], f"{case}, {kernel} kernel, {threads} threads")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write_golden()
    elif sys.argv[1:] == ["--print"]:
        print(json.dumps({case: grid(case) for case in CASES}))
