"""mdad: build language-model micro-benchmarks and measure how reliably they rank models.

The public API, thin over the library:

    import mdad
    matrix = mdad.load("gpqa")                             # built in: gpqa, musr, math-hard; or a path,
                                                           # mdad.simulate(), mdad.from_frame(df)
    micro = mdad.select(matrix, "random", 100, seed=0)     # one micro-benchmark from all models
    check = mdad.assess(matrix, "random", 100, runs=20)    # its error and MDAD on held-out models
    config = mdad.ExperimentConfig.for_matrix(matrix, methods=["random"], sizes=[10, 100])
    result = mdad.Experiment(matrix, config).run()         # result.summary(), result.curves(), result.frames

Every option is keyword-only; results are small documented objects (see README.md, docs/).
"""

from mdad import intervals, metrics, methods
from mdad.assessment import Assessment, assess
from mdad.data import ResponseMatrix, from_frame, load, simulate, to_frame
from mdad.errors import MdadError
from mdad.defaults import DEFAULT_BIN_WIDTH, DEFAULT_THRESHOLD
from mdad.experiment.grid import Experiment, ExperimentConfig, ExperimentResult
from mdad.micro import SelectedMicroBenchmark, select

__version__ = "0.1.0"

__all__ = [
    "Assessment", "DEFAULT_BIN_WIDTH", "DEFAULT_THRESHOLD", "Experiment", "ExperimentConfig", "ExperimentResult",
    "MdadError", "ResponseMatrix", "SelectedMicroBenchmark",
    "assess", "from_frame", "intervals", "load", "methods", "metrics", "select", "simulate", "to_frame",
]
