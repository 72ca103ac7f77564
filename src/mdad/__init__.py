"""mdad: build language-model micro-benchmarks and measure how reliably they rank models.

The public API, thin over the library:

    import mdad
    matrix = mdad.load("gpqa")                             # built in: gpqa, musr, math-hard; or a path,
                                                           # mdad.simulate(), mdad.from_frame(df)
    micro = mdad.select(matrix, "random", 100, seed=0)     # one micro-benchmark from all models
    check = mdad.assess(matrix, "random", 100, runs=20)    # its error and MDAD on held-out models
    config = mdad.ExperimentConfig.for_matrix(matrix, methods=["random"], sizes=[10, 100])
    result = mdad.Experiment(matrix, config).run()         # result.summary(), result.curves(), result.frames
    suite = mdad.Suite.load("gpqa,musr,math-hard")         # several benchmarks, one leaderboard average
    chosen = mdad.select_suite(suite, 600, allocation="optimal").chosen   # one budget split across them
    answer = mdad.plan(matrix, detect=2.0)                 # items needed to order models 2 points apart
    pairs = mdad.compare(matrix, size=100)                 # which comparisons 100 items keep (.to_frame())

Every option is keyword-only; results are small documented objects (see README.md, docs/).

The public names are imported on first use (PEP 562), so that ``import mdad`` is quick and the
command line can take charge of Ctrl-C and SIGTERM before the numerical libraries load.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# public name -> the module that defines it (a module itself when the two are equal)
_HOMES = {
    "Assessment": "mdad.assessment",
    "assess": "mdad.assessment",
    "ResponseMatrix": "mdad.data",
    "from_frame": "mdad.data",
    "load": "mdad.data",
    "simulate": "mdad.data",
    "to_frame": "mdad.data",
    "DEFAULT_BIN_WIDTH": "mdad.defaults",
    "DEFAULT_THRESHOLD": "mdad.defaults",
    "MdadError": "mdad.errors",
    "Experiment": "mdad.experiment.grid",
    "ExperimentConfig": "mdad.experiment.grid",
    "ExperimentResult": "mdad.experiment.grid",
    "SelectedMicroBenchmark": "mdad.micro",
    "select": "mdad.micro",
    "compare": "mdad.planning",
    "plan": "mdad.planning",
    "Suite": "mdad.suite",
    "SuiteMicroBenchmark": "mdad.suite",
    "select_suite": "mdad.suite",
    "Plan": "mdad.planning",
    "intervals": "mdad.intervals",
    "methods": "mdad.methods",
    "metrics": "mdad.metrics",
}

__all__ = [
    "Assessment",
    "DEFAULT_BIN_WIDTH",
    "DEFAULT_THRESHOLD",
    "Experiment",
    "ExperimentConfig",
    "ExperimentResult",
    "MdadError",
    "Plan",
    "ResponseMatrix",
    "SelectedMicroBenchmark",
    "Suite",
    "SuiteMicroBenchmark",
    "assess",
    "compare",
    "from_frame",
    "intervals",
    "load",
    "methods",
    "metrics",
    "plan",
    "select",
    "select_suite",
    "simulate",
    "to_frame",
]

if TYPE_CHECKING:  # what type checkers and the API reference read; at run time __getattr__ imports on first use
    from mdad import intervals, methods, metrics
    from mdad.assessment import Assessment, assess
    from mdad.data import ResponseMatrix, from_frame, load, simulate, to_frame
    from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD
    from mdad.errors import MdadError
    from mdad.experiment.grid import Experiment, ExperimentConfig, ExperimentResult
    from mdad.micro import SelectedMicroBenchmark, select
    from mdad.planning import Plan, compare, plan
    from mdad.suite import Suite, SuiteMicroBenchmark, select_suite


def __getattr__(name: str):
    """Import a public name on first use and keep it, so later uses cost nothing."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mdad' has no attribute {name!r}")
    module = import_module(home)
    value = module if home == f"mdad.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
