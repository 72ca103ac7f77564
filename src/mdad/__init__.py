"""mdad: build language-model micro-benchmarks and measure how reliably they rank models.

The public API, thin over the library:

    import mdad
    matrix = mdad.load("path/to/responses.npz")           # or mdad.simulate(), mdad.from_frame(df)
    micro = mdad.select(matrix, "random", 100)             # one micro-benchmark from all models
    report = mdad.assess(matrix, "random", 100)            # its error and MDAD on held-out models
    frames = mdad.Experiment(matrix, mdad.ExperimentConfig(("random",), (10, 100))).run()
"""

from mdad import intervals, metrics, methods
from mdad.assessment import Assessment, assess
from mdad.data import ResponseMatrix, from_frame, load, simulate, to_frame
from mdad.errors import MdadError
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.microbenchmark import SelectedMicroBenchmark, select

__version__ = "0.1.0"

__all__ = [
    "Assessment", "Experiment", "ExperimentConfig", "MdadError", "ResponseMatrix", "SelectedMicroBenchmark",
    "assess", "from_frame", "intervals", "load", "methods", "metrics", "select", "simulate", "to_frame",
]
