"""The simulator's defaults: where they come from, and what they refuse."""

from __future__ import annotations

import dataclasses
import importlib.util

import pytest
from support.paths import ROOT

from mdad.data.simulate import SimulationParams
from mdad.errors import MdadError

SCRIPT = ROOT / "benchmarks" / "calibrate_simulator.py"


@pytest.mark.slow
def test_defaults_are_what_the_calibration_script_derives_from_the_builtin_matrices():
    spec = importlib.util.spec_from_file_location("calibrate_simulator", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    derived = script.pooled([script.summarise(name) for name in script.DATASETS])
    assert derived == dataclasses.asdict(SimulationParams())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"floors": (1.0,)}, "Guessing floors must lie in \\[0, 1\\)"),
        ({"above_floor": (0.0,)}, "Accuracies above the floor must lie strictly between 0 and 1"),
        ({"floors": ()}, "floors and above_floor need at least one value each"),
        ({"negative_share": 1.0}, "negative_share must lie in \\[0, 1\\)"),
    ],
)
def test_bad_parameters_are_one_clear_error(kwargs, message):
    with pytest.raises(MdadError, match=message):
        SimulationParams(**kwargs)
