"""Speed work changes no number: every method's estimates on a small grid equal the recorded ones.

The recorded numbers (tests/fixtures/grid_golden.json) were computed by the code before the
speed work (anchor-points distances, DPP sampler, k-means, IRT, loading) and recorded again,
unchanged in method, on a fixed textbook simulation (tests/sim_params.py) so that a new
calibration of the simulator's defaults does not move them; the grid's summary is
a function of these estimates and of the targets' true accuracies, so equal estimates mean an
equal summary. Recorded again on purpose since, each time for one method, the others' numbers
unchanged: anchor-points, when FasterPAM began visiting swaps in its own order from a start
drawn by the selection's generator (docs/deviations.md#anchor-points-swap-order); diversity, when the DPP sampler became blocked
with exact rejection draws (same distribution, other draws; docs/protocol.md#diversity).
Regenerate only on purpose, when a change of numbers is intended:
``python tests/test_perf_identical.py --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from mdad import methods as method_registry
from mdad.data import simulate
from mdad.experiment.grid import Task, run_task
from mdad.experiment.splits import make_splits
from sim_params import TEXTBOOK_2PL

GOLDEN = Path(__file__).parent / "fixtures" / "grid_golden.json"
SIZES = (10, 60, 150)
CASES = {
    # option probabilities, several subtasks, two numbers of sources
    "probs": dict(data=dict(seed=5, n_models=70, n_items=400, n_subtasks=4, params=TEXTBOOK_2PL), sources=(8, 50)),
    # 0/1 answers only: anchor-points and diversity work on the scores (constant items at 8 sources)
    "binary": dict(data=dict(seed=6, n_models=60, n_items=330, n_subtasks=3, with_option_probs=False,
                             params=TEXTBOOK_2PL), sources=(8,)),
}
RUNS, TARGETS, SEED = 3, 12, 11


def grid_estimates(case: str) -> dict[str, list]:
    """Every (method, size, sources) cell's estimates (runs x targets) on the case's matrix."""
    spec = CASES[case]
    matrix = simulate(**spec["data"])
    splits = make_splits(matrix, RUNS, TARGETS, SEED)
    groups: dict[str, list[str]] = {}
    for name in method_registry.defaults():  # the methods recorded before the speed work
        groups.setdefault(method_registry.get(name).preparation or name, []).append(name)
    out = {}
    for names in groups.values():
        for sources in spec["sources"]:
            result = run_task(matrix, splits, Task(tuple(names), sources, SIZES))
            for cell, estimates in result.items():
                out[f"{cell.method}/k{cell.size}/s{cell.sources}"] = estimates["estimate"].tolist()
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_grid_estimates_are_the_recorded_ones(case):
    recorded = json.loads(GOLDEN.read_text())[case]
    now = grid_estimates(case)
    assert sorted(now) == sorted(recorded)
    for key, values in recorded.items():
        np.testing.assert_allclose(now[key], values, rtol=0, atol=1e-12, err_msg=key)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    GOLDEN.write_text(json.dumps({case: grid_estimates(case) for case in CASES}))
