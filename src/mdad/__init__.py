"""mdad: build language-model micro-benchmarks and measure how reliably they rank models.

The public API, thin over the library:

    import mdad
    matrix = mdad.load("gpqa")                             # built in: gpqa, musr, math-hard; or a path,
                                                           # mdad.simulate(), mdad.from_frame(df)
    micro = mdad.select(matrix, "random", 100, seed=0)     # one micro-benchmark from all models
    check = mdad.assess(matrix, "random", 100, runs=20)    # its error and MDAD on held-out models
    config = mdad.ExperimentConfig.for_matrix(matrix, methods=["random"], sizes=[10, 100])
    result = mdad.Experiment(matrix, config).run()         # result.summary(), result.curves(), result.frames
    answer = mdad.plan(matrix, detect=2.0)                 # items needed to order models 2 points apart
    pairs = mdad.compare(matrix, size=100)                 # which comparisons 100 items keep (.to_frame())

Every option is keyword-only; results are small documented objects (see README.md, docs/).
"""

from mdad import intervals, methods, metrics
from mdad.assessment import Assessment, assess
from mdad.data import ResponseMatrix, from_frame, load, simulate, to_frame
from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD
from mdad.errors import MdadError
from mdad.experiment.grid import Experiment, ExperimentConfig, ExperimentResult
from mdad.micro import SelectedMicroBenchmark, select
from mdad.planning import compare, plan

__version__ = "0.1.0"

__all__ = [
    "Assessment", "DEFAULT_BIN_WIDTH", "DEFAULT_THRESHOLD", "Experiment", "ExperimentConfig", "ExperimentResult",
    "MdadError", "ResponseMatrix", "SelectedMicroBenchmark",
    "assess", "compare", "from_frame", "intervals", "load", "methods", "metrics", "plan", "select", "simulate", "to_frame",
]
